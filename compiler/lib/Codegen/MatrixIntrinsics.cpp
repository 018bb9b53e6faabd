//===- MatrixIntrinsics.cpp - Matrix-core instructions as data ------------===//
//
// Layouts from the vendors' definitions:
//  - mma.sync m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
//    floating point type"): groupID = lane / 4, t = lane % 4;
//    A register r (two halves h) holds row groupID + 8 * (r % 2), columns
//    2t + h + 8 * (r / 2); B register r holds rows 2t + h + 8r of column
//    groupID; the f32 accumulators c0..c3 hold row groupID (c0, c1) or
//    groupID + 8 (c2, c3), column 2t + (i % 2).
//  - mma.sync m16n8k32 .s8 (PTX ISA, "Matrix Fragments for mma.m16n8k32"):
//    A element i (4 per register) holds row groupID + 8 * ((i / 4) % 2),
//    column 4t + i % 4 + 16 * (i / 8); B element i holds rows 4t + i % 4 +
//    16 * (i / 4) of column groupID; the s32 accumulators as for f32.
//  - v_mfma_{f32,i32}_16x16xK_{f16,bf16,i8} (AMD CDNA ISA, matrix instruction
//    calculator): with e = K / 4 elements per lane,
//    lane l = 16 * g + j holds A[j][e * g + i], B[e * g + i][j] (i < e) and
//    C[4 * g + i][j] (i < 4).
//  - v_wmma_{f32,i32}_16x16x16_{f16,bf16,iu8} on RDNA 3 (gfx11, wave32; AMD's
//  RDNA 3
//    WMMA guide): lane l holds row l % 16 of A and column l % 16 of B, all
//    16 K elements (lanes 16-31 repeat lanes 0-15), and C[2 * i + l / 16]
//    [l % 16], i < 8.
//  - the same instructions on RDNA 4 (gfx12; RDNA 4 ISA): lanes 0-15 hold
//    K 0-7 and lanes 16-31 K 8-15 of row l % 16 of A and column l % 16 of
//    B; C[8 * (l / 16) + i][l % 16], i < 8.
//  - wgmma.mma_async .m64nNk16 .f32 (PTX ISA, "Register Fragments and
//    Shared Memory Matrix Layouts", accumulator D): thread t of the
//    warpgroup, warp w = t / 32, groupID = (t % 32) / 4: element i holds
//    row 16w + groupID + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2 * (t % 4)
//    + i % 2 (the mma.sync m16n8 accumulators, one 16-row band per warp,
//    repeated along N). A and B are not in registers: the instruction reads
//    them from shared memory through matrix descriptors.
//
//===----------------------------------------------------------------------===//

#include "MatrixIntrinsics.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kiln {

namespace {

using MI = MatrixIntrinsic;

// clang-format off
const MatrixIntrinsicInfo kIntrinsics[] = {
    // kind                           m   n   k   lanes A   B   C  replication
    {MI::MMA_SYNC_F32_16x8x16_F16,    16, 8,  16, 32, 8, 4, 4, 1},
    {MI::MMA_SYNC_F32_16x8x16_BF16,   16, 8,  16, 32, 8, 4, 4, 1},
    {MI::MFMA_F32_16x16x16_F16,       16, 16, 16, 64, 4, 4, 4, 1},
    {MI::MFMA_F32_16x16x16_BF16,      16, 16, 16, 64, 4, 4, 4, 1},
    {MI::MFMA_F32_16x16x32_F16,       16, 16, 32, 64, 8, 8, 4, 1},
    {MI::MFMA_F32_16x16x32_BF16,      16, 16, 32, 64, 8, 8, 4, 1},
    {MI::WMMA_GFX11_F32_16x16x16_F16, 16, 16, 16, 32, 16, 16, 8, 2},
    {MI::WMMA_GFX11_F32_16x16x16_BF16,16, 16, 16, 32, 16, 16, 8, 2},
    {MI::WMMA_GFX12_F32_16x16x16_F16, 16, 16, 16, 32, 8, 8, 8, 1},
    {MI::WMMA_GFX12_F32_16x16x16_BF16,16, 16, 16, 32, 8, 8, 8, 1},
    {MI::MMA_SYNC_I32_16x8x32_S8,     16, 8,  32, 32, 16, 8, 4, 1},
    {MI::MFMA_I32_16x16x16_I8,        16, 16, 16, 64, 4, 4, 4, 1},
    {MI::MFMA_I32_16x16x32_I8,        16, 16, 32, 64, 8, 8, 4, 1},
    {MI::MFMA_I32_16x16x64_I8,        16, 16, 64, 64, 16, 16, 4, 1},
    {MI::WMMA_GFX11_I32_16x16x16_I8,  16, 16, 16, 32, 16, 16, 8, 2},
    {MI::WMMA_GFX12_I32_16x16x16_I8,  16, 16, 16, 32, 8, 8, 8, 1},
    {MI::WGMMA_F32_64x128x16_F16,     64, 128, 16, 128, 0, 0, 64, 1},
    {MI::WGMMA_F32_64x128x16_BF16,    64, 128, 16, 128, 0, 0, 64, 1},
    {MI::WGMMA_F32_64x256x16_F16,     64, 256, 16, 128, 0, 0, 128, 1},
    {MI::WGMMA_F32_64x256x16_BF16,    64, 256, 16, 128, 0, 0, 128, 1},
    {MI::WGMMA_F32_64x64x16_F16,      64, 64,  16, 128, 0, 0, 32, 1},
    {MI::WGMMA_F32_64x64x16_BF16,     64, 64,  16, 128, 0, 0, 32, 1},
};
// clang-format on

enum class Family { MmaSync, MmaSyncS8, Mfma, WmmaGfx11, WmmaGfx12, Wgmma };

Family getFamily(MatrixIntrinsic kind) {
  switch (kind) {
  case MI::MMA_SYNC_F32_16x8x16_F16:
  case MI::MMA_SYNC_F32_16x8x16_BF16:
    return Family::MmaSync;
  case MI::MMA_SYNC_I32_16x8x32_S8:
    return Family::MmaSyncS8;
  case MI::MFMA_I32_16x16x16_I8:
  case MI::MFMA_I32_16x16x32_I8:
  case MI::MFMA_I32_16x16x64_I8:
  case MI::MFMA_F32_16x16x16_F16:
  case MI::MFMA_F32_16x16x16_BF16:
  case MI::MFMA_F32_16x16x32_F16:
  case MI::MFMA_F32_16x16x32_BF16:
    return Family::Mfma;
  case MI::WMMA_GFX11_F32_16x16x16_F16:
  case MI::WMMA_GFX11_F32_16x16x16_BF16:
  case MI::WMMA_GFX11_I32_16x16x16_I8:
    return Family::WmmaGfx11;
  case MI::WMMA_GFX12_F32_16x16x16_F16:
  case MI::WMMA_GFX12_F32_16x16x16_BF16:
  case MI::WMMA_GFX12_I32_16x16x16_I8:
    return Family::WmmaGfx12;
  case MI::WGMMA_F32_64x128x16_F16:
  case MI::WGMMA_F32_64x128x16_BF16:
  case MI::WGMMA_F32_64x256x16_F16:
  case MI::WGMMA_F32_64x256x16_BF16:
  case MI::WGMMA_F32_64x64x16_F16:
  case MI::WGMMA_F32_64x64x16_BF16:
    return Family::Wgmma;
  }
  llvm_unreachable("unknown matrix intrinsic");
}

bool isMmaSync(MatrixIntrinsic kind) {
  Family family = getFamily(kind);
  return family == Family::MmaSync || family == Family::MmaSyncS8;
}

bool hasI8Inputs(MatrixIntrinsic kind) {
  switch (kind) {
  case MI::MMA_SYNC_I32_16x8x32_S8:
  case MI::MFMA_I32_16x16x16_I8:
  case MI::MFMA_I32_16x16x32_I8:
  case MI::MFMA_I32_16x16x64_I8:
  case MI::WMMA_GFX11_I32_16x16x16_I8:
  case MI::WMMA_GFX12_I32_16x16x16_I8:
    return true;
  default:
    return false;
  }
}

bool hasBF16Inputs(MatrixIntrinsic kind) {
  switch (kind) {
  case MI::MMA_SYNC_F32_16x8x16_BF16:
  case MI::MFMA_F32_16x16x16_BF16:
  case MI::MFMA_F32_16x16x32_BF16:
  case MI::WMMA_GFX11_F32_16x16x16_BF16:
  case MI::WMMA_GFX12_F32_16x16x16_BF16:
  case MI::WGMMA_F32_64x128x16_BF16:
  case MI::WGMMA_F32_64x256x16_BF16:
  case MI::WGMMA_F32_64x64x16_BF16:
    return true;
  default:
    return false;
  }
}

// The elements of a 1-D vector, one vector.extract each.
SmallVector<Value> elementsOf(OpBuilder &b, Location loc, Value vector) {
  SmallVector<Value> elements;
  int64_t count = cast<VectorType>(vector.getType()).getNumElements();
  for (int64_t i = 0; i < count; ++i)
    elements.push_back(
        vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{i}));
  return elements;
}

// The LLVM struct the NVVM matrix ops (and inline PTX) hold `accType`'s
// elements in, one member each.
LLVM::LLVMStructType structOf(VectorType accType) {
  return LLVM::LLVMStructType::getLiteral(
      accType.getContext(),
      SmallVector<Type>(accType.getNumElements(), accType.getElementType()));
}

// The members of `value` (a structOf(accType)) as a vector of `accType`.
Value vectorOf(OpBuilder &b, Location loc, Value value, VectorType accType) {
  SmallVector<Value> elements;
  for (int64_t i = 0, e = accType.getNumElements(); i < e; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(b, loc, value, i));
  return vector::FromElementsOp::create(b, loc, accType, elements);
}

} // namespace

const MatrixIntrinsicInfo &getMatrixIntrinsicInfo(MatrixIntrinsic kind) {
  for (const MatrixIntrinsicInfo &info : kIntrinsics)
    if (info.kind == kind)
      return info;
  llvm_unreachable("every MatrixIntrinsic is in the table");
}

// A and B share one form on the AMD instructions: (lane, e) -> (row of A or
// column of B, k).
static AffineMap getAMDOperandLayout(MatrixIntrinsic kind,
                                     MLIRContext *context) {
  AffineExpr lane, e;
  bindDims(context, lane, e);
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(kind);
  switch (getFamily(kind)) {
  case Family::Mfma:
  case Family::WmmaGfx12:
    return AffineMap::get(
        2, 0, {lane % 16, lane.floorDiv(16) * info.aCount + e}, context);
  case Family::WmmaGfx11:
    return AffineMap::get(2, 0, {lane % 16, e}, context);
  case Family::MmaSync:
  case Family::MmaSyncS8:
  case Family::Wgmma:
    break;
  }
  llvm_unreachable("not an AMD intrinsic");
}

AffineMap getFragmentLayoutA(MatrixIntrinsic kind, MLIRContext *context) {
  if (isWarpgroupIntrinsic(kind))
    return AffineMap();
  if (!isMmaSync(kind))
    return getAMDOperandLayout(kind, context);
  AffineExpr lane, e;
  bindDims(context, lane, e);
  if (getFamily(kind) == Family::MmaSyncS8)
    return AffineMap::get(2, 0,
                          {lane.floorDiv(4) + (e.floorDiv(4) % 2) * 8,
                           (lane % 4) * 4 + e % 4 + e.floorDiv(8) * 16},
                          context);
  AffineExpr r = e.floorDiv(2), h = e % 2;
  return AffineMap::get(
      2, 0,
      {lane.floorDiv(4) + (r % 2) * 8, (lane % 4) * 2 + h + r.floorDiv(2) * 8},
      context);
}

AffineMap getFragmentLayoutB(MatrixIntrinsic kind, MLIRContext *context) {
  if (isWarpgroupIntrinsic(kind))
    return AffineMap();
  if (!isMmaSync(kind))
    return getAMDOperandLayout(kind, context);
  AffineExpr lane, e;
  bindDims(context, lane, e);
  if (getFamily(kind) == Family::MmaSyncS8)
    return AffineMap::get(
        2, 0, {lane.floorDiv(4), (lane % 4) * 4 + e % 4 + e.floorDiv(4) * 16},
        context);
  AffineExpr r = e.floorDiv(2), h = e % 2;
  return AffineMap::get(2, 0, {lane.floorDiv(4), (lane % 4) * 2 + h + r * 8},
                        context);
}

AffineMap getFragmentLayoutC(MatrixIntrinsic kind, MLIRContext *context) {
  AffineExpr lane, e;
  bindDims(context, lane, e);
  switch (getFamily(kind)) {
  case Family::MmaSync:
  case Family::MmaSyncS8:
    return AffineMap::get(
        2, 0, {lane.floorDiv(4) + e.floorDiv(2) * 8, (lane % 4) * 2 + e % 2},
        context);
  case Family::Mfma:
    return AffineMap::get(2, 0, {lane.floorDiv(16) * 4 + e, lane % 16},
                          context);
  case Family::WmmaGfx11:
    return AffineMap::get(2, 0, {e * 2 + lane.floorDiv(16), lane % 16},
                          context);
  case Family::WmmaGfx12:
    return AffineMap::get(2, 0, {lane.floorDiv(16) * 8 + e, lane % 16},
                          context);
  case Family::Wgmma:
    return AffineMap::get(2, 0,
                          {lane.floorDiv(32) * 16 + (lane % 32).floorDiv(4) +
                               (e.floorDiv(2) % 2) * 8,
                           e.floorDiv(4) * 8 + (lane % 4) * 2 + e % 2},
                          context);
  }
  llvm_unreachable("unknown matrix intrinsic");
}

bool usesLdMatrix(MatrixIntrinsic kind) {
  return getFamily(kind) == Family::MmaSync;
}

bool isWarpgroupIntrinsic(MatrixIntrinsic kind) {
  return getFamily(kind) == Family::Wgmma;
}

int64_t getContiguousAElements(MatrixIntrinsic kind) {
  // mma.sync: the elements of one 32-bit register; AMD: a lane's whole
  // fragment is one run of K.
  switch (getFamily(kind)) {
  case Family::MmaSync:
    return 2;
  case Family::MmaSyncS8:
    return 4;
  default:
    return getMatrixIntrinsicInfo(kind).aCount;
  }
}

Type getMatrixInputType(MatrixIntrinsic kind, MLIRContext *context) {
  if (hasBF16Inputs(kind))
    return BFloat16Type::get(context);
  if (hasI8Inputs(kind))
    return IntegerType::get(context, 8);
  return Float16Type::get(context);
}

Type getMatrixAccumulatorType(MatrixIntrinsic kind, MLIRContext *context) {
  if (hasI8Inputs(kind))
    return IntegerType::get(context, 32);
  return Float32Type::get(context);
}

std::optional<MatrixIntrinsic> getNvidiaMatrixIntrinsic(Type inputType) {
  if (inputType.isF16())
    return MI::MMA_SYNC_F32_16x8x16_F16;
  if (inputType.isBF16())
    return MI::MMA_SYNC_F32_16x8x16_BF16;
  if (inputType.isInteger(8))
    return MI::MMA_SYNC_I32_16x8x32_S8;
  return std::nullopt;
}

bool hasWarpgroupMatrixInstructions(StringRef chip) { return chip == "sm_90a"; }

std::optional<MatrixIntrinsic> getWarpgroupIntrinsic(Type inputType,
                                                     int64_t n) {
  bool f16 = inputType.isF16(), bf16 = inputType.isBF16();
  if (n == 64 && (f16 || bf16))
    return f16 ? MI::WGMMA_F32_64x64x16_F16 : MI::WGMMA_F32_64x64x16_BF16;
  if (n == 128 && (f16 || bf16))
    return f16 ? MI::WGMMA_F32_64x128x16_F16 : MI::WGMMA_F32_64x128x16_BF16;
  if (n == 256 && (f16 || bf16))
    return f16 ? MI::WGMMA_F32_64x256x16_F16 : MI::WGMMA_F32_64x256x16_BF16;
  return std::nullopt;
}

std::optional<MatrixIntrinsic>
getAMDMatrixIntrinsic(StringRef chip, int64_t subgroupSize, Type inputType) {
  bool f16 = inputType.isF16(), bf16 = inputType.isBF16();
  if (inputType.isInteger(8)) {
    if (subgroupSize == 64 && chip == "gfx90a")
      return MI::MFMA_I32_16x16x16_I8;
    if (subgroupSize == 64 && chip == "gfx942")
      return MI::MFMA_I32_16x16x32_I8;
    if (subgroupSize == 64 && chip == "gfx950")
      return MI::MFMA_I32_16x16x64_I8;
    if (subgroupSize == 32 && chip.starts_with("gfx11"))
      return MI::WMMA_GFX11_I32_16x16x16_I8;
    if (subgroupSize == 32 && chip.starts_with("gfx12"))
      return MI::WMMA_GFX12_I32_16x16x16_I8;
    return std::nullopt;
  }
  if (!f16 && !bf16)
    return std::nullopt;
  if (subgroupSize == 64) {
    if (chip == "gfx950")
      return f16 ? MI::MFMA_F32_16x16x32_F16 : MI::MFMA_F32_16x16x32_BF16;
    if (chip == "gfx90a" || chip == "gfx942")
      return f16 ? MI::MFMA_F32_16x16x16_F16 : MI::MFMA_F32_16x16x16_BF16;
    return std::nullopt;
  }
  if (subgroupSize == 32) {
    if (chip.starts_with("gfx11"))
      return f16 ? MI::WMMA_GFX11_F32_16x16x16_F16
                 : MI::WMMA_GFX11_F32_16x16x16_BF16;
    if (chip.starts_with("gfx12"))
      return f16 ? MI::WMMA_GFX12_F32_16x16x16_F16
                 : MI::WMMA_GFX12_F32_16x16x16_BF16;
  }
  return std::nullopt;
}

Value createMatrixInstruction(OpBuilder &b, Location loc,
                              MatrixIntrinsic kind, Value a, Value bValue,
                              Value c) {
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(kind);
  auto accType = cast<VectorType>(c.getType());
  switch (getFamily(kind)) {
  case Family::Mfma:
    return amdgpu::MFMAOp::create(b, loc, accType, info.m, info.n, info.k,
                                  /*blocks=*/1, a, bValue, c);
  case Family::WmmaGfx11:
  case Family::WmmaGfx12:
    return amdgpu::WMMAOp::create(b, loc, accType, info.m, info.n, info.k, a,
                                  bValue, c);
  case Family::MmaSync:
  case Family::MmaSyncS8:
    break;
  case Family::Wgmma:
    llvm_unreachable(
        "wgmma takes descriptors: createWarpgroupMatrixInstructions");
  }

  // nvvm.mma.sync takes 32-bit registers: pairs of 16-bit elements (f16 as
  // vector<2xf16>, bf16 as i32) or quadruples of s8 (as i32), and the
  // accumulators one by one.
  bool bf16 = hasBF16Inputs(kind), s8 = hasI8Inputs(kind);
  Type elementType = getMatrixInputType(kind, b.getContext());
  int64_t perRegister = 32 / elementType.getIntOrFloatBitWidth();
  auto partType = VectorType::get({perRegister}, elementType);
  auto registers = [&](Value v, int64_t count) {
    SmallVector<Value> out;
    for (int64_t r = 0; r < count / perRegister; ++r) {
      SmallVector<Value> parts;
      for (int64_t i = 0; i < perRegister; ++i)
        parts.push_back(vector::ExtractOp::create(
            b, loc, v, ArrayRef<int64_t>{perRegister * r + i}));
      Value reg = vector::FromElementsOp::create(b, loc, partType, parts);
      if (bf16 || s8) {
        Value word = vector::BitCastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), reg);
        reg = vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
      }
      out.push_back(reg);
    }
    return out;
  };
  SmallVector<Value> aRegs = registers(a, info.aCount);
  SmallVector<Value> bRegs = registers(bValue, info.bCount);
  SmallVector<Value> cRegs = elementsOf(b, loc, c);
  NVVM::MMATypes ptxType = s8     ? NVVM::MMATypes::s8
                           : bf16 ? NVVM::MMATypes::bf16
                                  : NVVM::MMATypes::f16;
  // Integer products wrap like the i32 arithmetic they stand for.
  std::optional<NVVM::MMAIntOverflow> overflow;
  if (s8)
    overflow = NVVM::MMAIntOverflow::wrapped;
  Value result = NVVM::MmaOp::create(
      b, loc, structOf(accType), aRegs, bRegs, cRegs,
      ArrayRef<int64_t>{info.m, info.n, info.k}, std::nullopt, overflow,
      std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  return vectorOf(b, loc, result, accType);
}

Value createWarpgroupMatrixInstructions(
    OpBuilder &b, Location loc, MatrixIntrinsic kind,
    ArrayRef<std::pair<Value, Value>> descriptors, bool transposedB, Value c) {
  assert(isWarpgroupIntrinsic(kind) && "not a warpgroup instruction");
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(kind);
  auto accType = cast<VectorType>(c.getType());
  LLVM::LLVMStructType structType = structOf(accType);
  Value acc = LLVM::UndefOp::create(b, loc, structType);
  for (auto [i, element] : llvm::enumerate(elementsOf(b, loc, c)))
    acc = LLVM::InsertValueOp::create(b, loc, acc, element, i);
  NVVM::WGMMATypes input =
      hasBF16Inputs(kind) ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  // A is K-major (row); B is N-major when stored K x N (row: the
  // instruction transposes it), K-major when stored N x K (col).
  auto shape = NVVM::MMAShapeAttr::get(b.getContext(), info.m, info.n, info.k);
  for (auto [descriptorA, descriptorB] : descriptors)
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, structType, acc, descriptorA, descriptorB, shape, input, input,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        transposedB ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        /*satfinite=*/nullptr);
  return vectorOf(b, loc, acc, accType);
}

Value waitForWarpgroupMatrixInstructions(OpBuilder &b, Location loc, Value c) {
  auto accType = cast<VectorType>(c.getType());
  int64_t count = accType.getNumElements();
  // "=f" outputs tied to the inputs ("0", "1", ...): the registers pass
  // through the wait untouched, and every later use depends on it.
  std::string constraints;
  for (int64_t i = 0; i < count; ++i)
    constraints += i ? ",=f" : "=f";
  for (int64_t i = 0; i < count; ++i)
    constraints += "," + std::to_string(i);
  Value waited =
      LLVM::InlineAsmOp::create(
          b, loc, structOf(accType), elementsOf(b, loc, c),
          "wgmma.wait_group.sync.aligned 0;", constraints,
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr())
          .getResult(0);
  return vectorOf(b, loc, waited, accType);
}

} // namespace mlir::kiln
