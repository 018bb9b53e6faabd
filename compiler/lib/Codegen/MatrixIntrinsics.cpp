//===- MatrixIntrinsics.cpp - Matrix-core instructions as data ------------===//
//
// Layouts from the vendors' definitions:
//  - mma.sync m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
//    floating point type"): groupID = lane / 4, t = lane % 4;
//    A register r (two halves h) holds row groupID + 8 * (r % 2), columns
//    2t + h + 8 * (r / 2); B register r holds rows 2t + h + 8r of column
//    groupID; the f32 accumulators c0..c3 hold row groupID (c0, c1) or
//    groupID + 8 (c2, c3), column 2t + (i % 2).
//  - v_mfma_f32_16x16x16f16 (AMD matrix instruction calculator): lane
//    l = 16 * g + j holds A[j][4g + i], B[4g + i][j], C[4g + i][j], i < 4.
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

const MatrixIntrinsicInfo kIntrinsics[] = {
    {MatrixIntrinsic::MMA_SYNC_F32_16x8x16_F16, "mma_sync_f32_16x8x16_f16", 16,
     8, 16, 32, 8, 4, 4},
    {MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16, "mma_sync_f32_16x8x16_bf16",
     16, 8, 16, 32, 8, 4, 4},
    {MatrixIntrinsic::MFMA_F32_16x16x16_F16, "mfma_f32_16x16x16_f16", 16, 16,
     16, 64, 4, 4, 4},
};

bool isMmaSync(MatrixIntrinsic kind) {
  return kind == MatrixIntrinsic::MMA_SYNC_F32_16x8x16_F16 ||
         kind == MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16;
}

} // namespace

std::optional<MatrixIntrinsic> symbolizeMatrixIntrinsic(StringRef name) {
  for (const MatrixIntrinsicInfo &info : kIntrinsics)
    if (info.name == name)
      return info.kind;
  return std::nullopt;
}

const MatrixIntrinsicInfo &getMatrixIntrinsicInfo(MatrixIntrinsic kind) {
  for (const MatrixIntrinsicInfo &info : kIntrinsics)
    if (info.kind == kind)
      return info;
  llvm_unreachable("every MatrixIntrinsic is in the table");
}

AffineMap getFragmentLayoutA(MatrixIntrinsic kind, MLIRContext *context) {
  AffineExpr lane, e;
  bindDims(context, lane, e);
  if (isMmaSync(kind)) {
    AffineExpr r = e.floorDiv(2), h = e % 2;
    return AffineMap::get(2, 0,
                          {lane.floorDiv(4) + (r % 2) * 8,
                           (lane % 4) * 2 + h + r.floorDiv(2) * 8},
                          context);
  }
  return AffineMap::get(2, 0, {lane % 16, lane.floorDiv(16) * 4 + e}, context);
}

AffineMap getFragmentLayoutB(MatrixIntrinsic kind, MLIRContext *context) {
  AffineExpr lane, e;
  bindDims(context, lane, e);
  if (isMmaSync(kind)) {
    AffineExpr r = e.floorDiv(2), h = e % 2;
    return AffineMap::get(2, 0,
                          {lane.floorDiv(4), (lane % 4) * 2 + h + r * 8},
                          context);
  }
  return AffineMap::get(2, 0, {lane % 16, lane.floorDiv(16) * 4 + e}, context);
}

AffineMap getFragmentLayoutC(MatrixIntrinsic kind, MLIRContext *context) {
  AffineExpr lane, e;
  bindDims(context, lane, e);
  if (isMmaSync(kind))
    return AffineMap::get(
        2, 0, {lane.floorDiv(4) + e.floorDiv(2) * 8, (lane % 4) * 2 + e % 2},
        context);
  return AffineMap::get(2, 0, {lane.floorDiv(16) * 4 + e, lane % 16}, context);
}

bool usesLdMatrix(MatrixIntrinsic kind) { return isMmaSync(kind); }

int64_t getContiguousAElements(MatrixIntrinsic kind) {
  return isMmaSync(kind) ? 2 : 4;
}

Type getMatrixInputType(MatrixIntrinsic kind, MLIRContext *context) {
  if (kind == MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16)
    return BFloat16Type::get(context);
  return Float16Type::get(context);
}

Value createMatrixInstruction(OpBuilder &b, Location loc,
                              MatrixIntrinsic kind, Value a, Value bValue,
                              Value c) {
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(kind);
  auto accType = cast<VectorType>(c.getType());
  if (kind == MatrixIntrinsic::MFMA_F32_16x16x16_F16)
    return amdgpu::MFMAOp::create(b, loc, accType, info.m, info.n, info.k,
                                  /*blocks=*/1, a, bValue, c);

  // nvvm.mma.sync takes 32-bit registers: pairs of 16-bit elements (f16 as
  // vector<2xf16>, bf16 as i32), and the accumulators one by one.
  bool bf16 = kind == MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16;
  Type elementType = getMatrixInputType(kind, b.getContext());
  auto pairType = VectorType::get({2}, elementType);
  auto registers = [&](Value v, int64_t count) {
    SmallVector<Value> out;
    for (int64_t r = 0; r < count / 2; ++r) {
      Value low = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{2 * r});
      Value high =
          vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{2 * r + 1});
      Value pair = vector::FromElementsOp::create(b, loc, pairType,
                                                  ValueRange{low, high});
      if (bf16) {
        Value word = vector::BitCastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), pair);
        pair = vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
      }
      out.push_back(pair);
    }
    return out;
  };
  SmallVector<Value> aRegs = registers(a, info.aCount);
  SmallVector<Value> bRegs = registers(bValue, info.bCount);
  SmallVector<Value> cRegs;
  for (int64_t i = 0; i < info.cCount; ++i)
    cRegs.push_back(vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{i}));
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(info.cCount, f32));
  std::optional<std::array<NVVM::MMATypes, 2>> ptxTypes;
  if (bf16)
    ptxTypes = {NVVM::MMATypes::bf16, NVVM::MMATypes::bf16};
  else
    ptxTypes = {NVVM::MMATypes::f16, NVVM::MMATypes::f16};
  Value result = NVVM::MmaOp::create(
      b, loc, resultType, aRegs, bRegs, cRegs,
      ArrayRef<int64_t>{info.m, info.n, info.k}, std::nullopt, std::nullopt,
      ptxTypes,
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> elements;
  for (int64_t i = 0; i < info.cCount; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
  return vector::FromElementsOp::create(b, loc, accType, elements);
}

} // namespace mlir::kiln
