//===- GPULowerContractionPass.cpp - Tiled matrix-core matmul kernels -----===//
//
// The contraction recipe: one workgroup computes a BM x BN tile of C (one
// batch of a batched contraction; B may be stored N x K) with subgroups
// arranged WM x WN, each owning a (BM/WM) x (BN/WN) block of accumulators in
// registers. The K loop stages BK-wide slices of A and B in shared memory
// with 128-bit copies (on NVIDIA: cp.async into pipeline_depth swizzled
// stages; partial tiles copy zeros past the operands' extents), then every
// subgroup reads its fragments from shared memory in the layout of the
// matrix instruction (MatrixIntrinsics.h) and issues the instruction per
// (16 x n) tile. On sm_90a (wgmma) a subgroup is a warpgroup whose
// instructions read A and B from the stages themselves, through matrix
// descriptors of the 128-byte swizzle layout the copies write. The fused
// elementwise consumer of the matmul (bias, activation, truncation) is
// applied to the accumulators in registers and stored once, adjacent
// columns as one vector.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"
#include "MatrixIntrinsics.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPULOWERCONTRACTIONPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Without swizzling (the AMD forms and layout fragments), shared-memory
// rows are padded by 16 bytes so that the lanes of a subgroup reading a
// fragment hit distinct banks and rows stay 16-byte aligned.
constexpr int64_t kCopyBits = 128;
// Shared memory is read in 16-byte chunks; 8 of them span the 32 banks.
constexpr int64_t kChunkBytes = 16;
constexpr int64_t kChunksPerBankLine = 8;
// The warpgroup (wgmma) form's shared tiles are in the 128-byte swizzle
// layout the instruction reads: rows of 128 bytes whose 16-byte chunk c of
// row r sits at chunk c ^ (r % 8), in atoms of 8 rows (1024 bytes) that
// start 1024-byte aligned.
constexpr int64_t kSwizzleRowBytes = 128;
constexpr int64_t kSwizzleAtomBytes = 1024;

struct ContractionConfig {
  // The matrix instruction; none for the SIMT form (f32 FMAs).
  std::optional<MatrixIntrinsic> intrinsic;
  int64_t tileM, tileN, tileK;      // workgroup tile
  int64_t subgroupsM = 0, subgroupsN = 0;  // subgroup grid (matrix cores)
  int64_t threadM = 0, threadN = 0;        // outputs per thread (SIMT)
  int64_t workgroupSize;
  // Shared-memory stages of the K loop filled by asynchronous copies
  // (cp.async forms): slices k+1 .. k+depth-1 stream in while slice k is
  // multiplied.
  int64_t pipelineDepth = 0;
  // The NVIDIA form: cp.async stages into swizzled buffers, fragments read
  // with ldmatrix. Otherwise (AMD, or mma.sync with `layout_fragments`)
  // one padded stage filled through registers, fragments read by the
  // layout table.
  bool ldmatrix = false;
  // The NVIDIA sm_90a form: cp.async stages in the 128-byte swizzle layout,
  // read by wgmma through descriptors; a subgroup is a warpgroup.
  bool warpgroup = false;
  // Whether K slices stream into shared stages by cp.async (both NVIDIA
  // forms), with partial tiles masked.
  bool asyncCopies() const { return ldmatrix || warpgroup; }
};

// What the recipe replaces: C (+)= A * B (one workgroup's batch of a
// matmul-like op, see matchRecipeContraction), with an optional fill of C
// before and an optional elementwise consumer reading C (then C is a shared
// temporary that disappears).
struct Contraction {
  linalg::LinalgOp matmul;
  RecipeContraction dims;
  linalg::FillOp fill;        // may be null
  linalg::GenericOp consumer; // may be null
  memref::AllocOp temporary;  // C when it is a shared temporary
  // The dynamically shaped view of the temporary that C is, for a partial
  // tile (bufferization allocates the whole tile and casts it).
  memref::ReinterpretCastOp temporaryView;
};

// The fill of `c` right before `matmul` in its block, if any.
static linalg::FillOp findFill(Operation *matmul, Value c) {
  for (Operation *op = matmul->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      if (fill.getDpsInits()[0] == c)
        return fill;
    // Anything else touching c ends the search.
    if (llvm::is_contained(op->getOperands(), c))
      return nullptr;
  }
  return nullptr;
}

// Whether `generic` reads `c` only through the identity map (element (i, j)
// of the iteration space is C[i][j]).
static bool readsIdentically(linalg::GenericOp generic, Value c) {
  bool found = false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    if (input->get() != c)
      continue;
    if (!generic.getMatchingIndexingMap(input).isIdentity())
      return false;
    found = true;
  }
  return found;
}

static FailureOr<Contraction> matchContraction(linalg::LinalgOp matmul,
                                               const RecipeContraction &dims) {
  Contraction contraction;
  contraction.matmul = matmul;
  contraction.dims = dims;
  Value c = matmul.getDpsInits()[0];
  int64_t rank = cast<MemRefType>(c.getType()).getRank();
  contraction.fill = findFill(matmul, c);
  Value base = c;
  if (auto view = c.getDefiningOp<memref::ReinterpretCastOp>()) {
    contraction.temporaryView = view;
    base = view.getSource();
  }
  auto alloc = base.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return contraction;
  contraction.temporary = alloc;
  if (contraction.temporaryView &&
      llvm::any_of(alloc->getUsers(), [&](Operation *user) {
        return user != contraction.temporaryView &&
               !isa<memref::DeallocOp>(user);
      }))
    return matmul.emitError() << "contraction strategy: the matmul's shared "
                                 "temporary is used beside its view";
  for (Operation *user : c.getUsers()) {
    if (user == matmul.getOperation() || user == contraction.fill ||
        isa<memref::DeallocOp>(user))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || contraction.consumer || generic->getBlock() !=
                                                matmul->getBlock() ||
        !matmul->isBeforeInBlock(generic) ||
        generic.getNumLoops() != rank ||
        generic.getNumParallelLoops() != rank ||
        generic.getNumDpsInits() != 1 ||
        llvm::is_contained(generic.getDpsInits(), c) ||
        !readsIdentically(generic, c) ||
        !generic.getBody()->getOps<linalg::IndexOp>().empty())
      return matmul.emitError()
             << "contraction strategy: the matmul's shared temporary has a "
                "use that is not one elementwise consumer: "
             << *user;
    contraction.consumer = generic;
  }
  if (!contraction.consumer)
    return matmul.emitError()
           << "contraction strategy: the matmul's result is never read";
  return contraction;
}

// A wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format") of a
// 128-byte-swizzled tile at shared-memory byte address `address` (index):
// bits 0-13 the address, 16-29 the leading-dimension byte offset, 32-45 the
// stride-dimension byte offset (each in 16-byte units), 62-63 the swizzle
// mode (1: 128 bytes). The tile's atoms start 1024-byte aligned, so the
// base offset (bits 49-51) is 0.
static Value createSwizzledDescriptor(OpBuilder &b, Location loc, Value address,
                                      int64_t leadingBytes,
                                      int64_t strideBytes) {
  Type i64 = b.getI64Type();
  auto constant = [&](uint64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  };
  Value start = arith::IndexCastUIOp::create(b, loc, i64, address);
  start = arith::AndIOp::create(b, loc, start, constant(0x3FFFF));
  start = arith::ShRUIOp::create(b, loc, start, constant(4));
  uint64_t fields = (uint64_t(leadingBytes >> 4) & 0x3FFF) << 16 |
                    (uint64_t(strideBytes >> 4) & 0x3FFF) << 32 |
                    uint64_t(1) << 62;
  return arith::OrIOp::create(b, loc, start, constant(fields));
}

class ContractionEmitter {
public:
  ContractionEmitter(OpBuilder &b, Location loc, const ContractionConfig &config,
                     const Contraction &contraction)
      : b(b), loc(loc), config(config), contraction(contraction) {}

  LogicalResult emit() {
    makeViews();
    return config.intrinsic ? emitMatrix() : emitSimt();
  }

private:
  // 2-D views of the workgroup's A (M x K), B (K x N, or N x K when
  // transposed) and C (M x N): the batch dims, of extent 1 in a workgroup,
  // dropped.
  void makeViews() {
    size_t batch = contraction.dims.batch.size();
    auto view = [&](Value v) -> Value {
      if (batch == 0)
        return v;
      auto type = cast<MemRefType>(v.getType());
      return memref::createCanonicalRankReducingSubViewOp(
          b, loc, v, type.getShape().drop_front(batch));
    };
    aView = view(contraction.matmul.getDpsInputs()[0]);
    bView = view(contraction.matmul.getDpsInputs()[1]);
    cView = view(contraction.matmul.getDpsInits()[0]);
  }
  LogicalResult emitMatrix();
  // The SIMT form: each thread of a 16 x 16 grid computes a threadM x
  // threadN block of C with f32 FMAs; A is staged K-major in shared memory
  // so that a thread reads its threadM values of one K step as vectors.
  LogicalResult emitSimt();
  // The K loop (K = k) pipelined through registers: slice 0 is staged
  // before the loop; each iteration loads slice k+1 into registers,
  // multiplies slice k from shared memory, and stores slice k+1 between two
  // barriers; the last slice is multiplied after the loop. Returns the
  // final accumulators.
  SmallVector<Value> pipelineThroughRegisters(
      int64_t k, ArrayRef<Value> init,
      llvm::function_ref<SmallVector<Value>(Value)> loadSlice,
      llvm::function_ref<void(ArrayRef<Value>)> storeSlice,
      llvm::function_ref<SmallVector<Value>(SmallVector<Value>)> computeSlice);
  // Writes the accumulators `values` of C[row][col + i] (tile coordinates,
  // consecutive columns, `col` a multiple of their count): each through the
  // consumer's body into its output, or into C; one vector store when the
  // output is laid out as C.
  void storeResults(ArrayRef<Value> values, Value row, Value col);


  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  // affine.apply of `expr` over `operands` (dims in order).
  Value apply(AffineExpr expr, ValueRange operands) {
    return affine::AffineApplyOp::create(
        b, loc, AffineMap::get(operands.size(), 0, expr), operands);
  }

  // Position `result` of `layout` at element `e`, as an expression of the
  // lane (dim 0).
  AffineExpr layoutExpr(AffineMap layout, unsigned result, int64_t e) {
    MLIRContext *context = b.getContext();
    return layout.getResult(result).replaceDims(
        {getAffineDimExpr(0, context), getAffineConstantExpr(e, context)});
  }

  // The 128-bit vectors of a rows x cols slice of `source` at (rowOffset,
  // colOffset) that this thread loads (the slice is spread over the
  // workgroup's threads, chunk c = thread + i * workgroupSize), and their
  // stores into `target` (rows x >= cols) at the same positions.
  SmallVector<Value> loadTile(Value source, Value rowOffset, Value colOffset,
                              int64_t rows, int64_t cols, Type elementType);
  void storeTile(ArrayRef<Value> values, Value target, int64_t cols,
                 Type elementType);
  // cp.async of the same chunks straight into `target` at `stage`; returns
  // the copies' tokens.
  // With `rowLimit` / `colLimit` (partial tiles), chunks at or past them
  // copy no bytes and fill zeros.
  // With `blockColumns` (the warpgroup form's K x N B), `target` is
  // [stage][cols / blockColumns][rows][blockColumns]: column blocks of
  // 128-byte rows, each in the swizzle layout.
  SmallVector<Value> asyncCopyTile(Value source, Value rowOffset,
                                   Value colOffset, Value target, Value stage,
                                   int64_t rows, int64_t cols, Type elementType,
                                   Value rowLimit = Value(),
                                   Value colLimit = Value(),
                                   int64_t blockColumns = 0);
  // Whether (row, col) is inside the limits (at least one given).
  Value inside(Value row, Value col, Value rowLimit, Value colLimit);
  // This thread's chunks of the K slice at k0: A's (tileM x tileK), then
  // B's (tileK x tileN).
  SmallVector<Value> loadKSlice(Value a, Value bMatrix, Value k0,
                                Type elementType) {
    SmallVector<Value> values =
        loadTile(a, index(0), k0, config.tileM, config.tileK, elementType);
    if (contraction.dims.transposedB)
      llvm::append_range(values, loadTile(bMatrix, index(0), k0, config.tileN,
                                          config.tileK, elementType));
    else
      llvm::append_range(values, loadTile(bMatrix, k0, index(0), config.tileK,
                                          config.tileN, elementType));
    return values;
  }
  // The physical column of element (row, col) of a shared buffer with
  // `cols` columns: unpadded buffers (swizzle) XOR the 16-byte chunk index
  // with a function of the row, so that the 8 rows one ldmatrix matrix or
  // one copy round touches at the same logical chunk fall in distinct banks
  // (a row of C chunks shares a 128-byte bank line with 8/C - 1 others when
  // C < 8).
  Value sharedColumn(Value row, Value col, int64_t cols, Type elementType) {
    if (!swizzle)
      return col;
    MLIRContext *context = b.getContext();
    int64_t perChunk = kChunkBytes * 8 / elementType.getIntOrFloatBitWidth();
    int64_t chunks = cols / perChunk;
    int64_t rowsPerLine = std::max<int64_t>(1, kChunksPerBankLine / chunks);
    int64_t period = std::min(chunks, kChunksPerBankLine);
    AffineExpr d0, d1;
    bindDims(context, d0, d1);
    Value chunk = apply(d1.floorDiv(perChunk), {row, col});
    Value phase = apply(d0.floorDiv(rowsPerLine) % period, {row, col});
    Value swizzled = arith::XOrIOp::create(b, loc, chunk, phase);
    return apply(d0 * perChunk + d1 % perChunk, {swizzled, col});
  }
  int64_t tileChunks(int64_t rows, int64_t cols, Type elementType) {
    return rows * cols / (kCopyBits / elementType.getIntOrFloatBitWidth()) /
           config.workgroupSize;
  }

  OpBuilder &b;
  Location loc;
  const ContractionConfig &config;
  Contraction contraction;
  Value threadId;
  Value aView, bView, cView;
  // Shared buffers are unpadded and XOR-swizzled (see sharedColumn).
  bool swizzle = false;
};

SmallVector<Value> ContractionEmitter::loadTile(Value source, Value rowOffset,
                                                Value colOffset, int64_t rows,
                                                int64_t cols,
                                                Type elementType) {
  MLIRContext *context = b.getContext();
  int64_t vector = kCopyBits / elementType.getIntOrFloatBitWidth();
  int64_t perRow = cols / vector;
  int64_t chunks = rows * perRow;
  auto vectorType = VectorType::get({vector}, elementType);
  AffineExpr tid, row0, col0;
  bindDims(context, tid, row0, col0);
  SmallVector<Value> values;
  for (int64_t first = 0; first < chunks; first += config.workgroupSize) {
    AffineExpr idx = tid + first;
    Value row = apply(idx.floorDiv(perRow) + row0,
                      {threadId, rowOffset, colOffset});
    Value col = apply((idx % perRow) * vector + col0,
                      {threadId, rowOffset, colOffset});
    // 16-byte aligned: tiles, rows and K slices are multiples of 8 elements
    // (strategy selection) and bindings are 16-byte aligned.
    values.push_back(vector::LoadOp::create(b, loc, vectorType, source,
                                            ValueRange{row, col},
                                            /*nontemporal=*/false,
                                            llvm::MaybeAlign(kCopyBits / 8)));
  }
  return values;
}

Value ContractionEmitter::inside(Value row, Value col, Value rowLimit,
                                 Value colLimit) {
  Value result;
  auto conjoin = [&](Value index, Value limit) {
    if (!limit)
      return;
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        index, limit);
    result = result ? arith::AndIOp::create(b, loc, result, below).getResult()
                    : below;
  };
  conjoin(row, rowLimit);
  conjoin(col, colLimit);
  assert(result && "inside() needs at least one limit");
  return result;
}

SmallVector<Value> ContractionEmitter::asyncCopyTile(
    Value source, Value rowOffset, Value colOffset, Value target, Value stage,
    int64_t rows, int64_t cols, Type elementType, Value rowLimit,
    Value colLimit, int64_t blockColumns) {
  MLIRContext *context = b.getContext();
  int64_t vector = kCopyBits / elementType.getIntOrFloatBitWidth();
  int64_t perRow = cols / vector;
  int64_t chunks = rows * perRow;
  AffineExpr tid, row0, col0;
  bindDims(context, tid, row0, col0);
  SmallVector<Value> tokens;
  for (int64_t first = 0; first < chunks; first += config.workgroupSize) {
    AffineExpr idx = tid + first;
    SmallVector<Value, 3> operands = {threadId, rowOffset, colOffset};
    Value sourceRow = apply(idx.floorDiv(perRow) + row0, operands);
    Value sourceCol = apply((idx % perRow) * vector + col0, operands);
    Value row = apply(idx.floorDiv(perRow), {threadId});
    SmallVector<Value, 4> targetIndices;
    if (blockColumns) {
      Value block =
          apply(((idx % perRow) * vector).floorDiv(blockColumns), {threadId});
      Value col = sharedColumn(
          row, apply(((idx % perRow) * vector) % blockColumns, {threadId}),
          blockColumns, elementType);
      targetIndices = {stage, block, row, col};
    } else {
      Value col = sharedColumn(row, apply((idx % perRow) * vector, {threadId}),
                               cols, elementType);
      targetIndices = {stage, row, col};
    }
    // A chunk past the limits reads nothing (0 source elements: zeros) from
    // a clamped address inside the operand.
    Value srcElements;
    if (rowLimit || colLimit) {
      Value valid = inside(sourceRow, sourceCol, rowLimit, colLimit);
      Value zero = index(0);
      srcElements =
          arith::SelectOp::create(b, loc, valid, index(vector), zero);
      sourceRow = arith::SelectOp::create(b, loc, valid, sourceRow, zero);
      sourceCol = arith::SelectOp::create(b, loc, valid, sourceCol, zero);
    }
    // 16-byte copies that skip L1 (the tile is read once per workgroup).
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
                         b, loc, target, targetIndices, source,
                         ValueRange{sourceRow, sourceCol},
                         b.getIndexAttr(vector), srcElements, b.getUnitAttr())
                         .getResult());
  }
  return tokens;
}

void ContractionEmitter::storeTile(ArrayRef<Value> values, Value target,
                                   int64_t cols, Type elementType) {
  MLIRContext *context = b.getContext();
  int64_t vector = kCopyBits / elementType.getIntOrFloatBitWidth();
  int64_t perRow = cols / vector;
  AffineExpr tid = getAffineDimExpr(0, context);
  for (auto [i, value] : llvm::enumerate(values)) {
    AffineExpr idx = tid + int64_t(i) * config.workgroupSize;
    Value row = apply(idx.floorDiv(perRow), {threadId});
    Value col = apply((idx % perRow) * vector, {threadId});
    // Shared buffers are 16-byte aligned and their rows padded by 8
    // elements, so every row starts 16-byte aligned.
    vector::StoreOp::create(b, loc, value, target, ValueRange{row, col},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(kCopyBits / 8));
  }
}

LogicalResult ContractionEmitter::emitMatrix() {
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(*config.intrinsic);
  MLIRContext *context = b.getContext();
  Value a = aView, bMatrix = bView, c = cView;
  auto aType = cast<MemRefType>(a.getType());
  int64_t k = aType.getDimSize(1);
  Type inType = aType.getElementType();
  bool transposedB = contraction.dims.transposedB;
  // B's shared slice: K x N, or N x K when B is transposed.
  int64_t bRows = transposedB ? config.tileN : config.tileK;
  int64_t bCols = transposedB ? config.tileK : config.tileN;
  // f32 accumulators, or i32 for 8-bit integers.
  Type accElement = getMatrixAccumulatorType(*config.intrinsic, context);
  auto sharedSpace =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);

  int64_t subgroupTileM = config.tileM / config.subgroupsM;
  int64_t subgroupTileN = config.tileN / config.subgroupsN;
  int64_t tilesM = subgroupTileM / info.m, tilesN = subgroupTileN / info.n;

  threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  AffineExpr d0, d1;
  bindDims(context, d0, d1);
  int64_t s = info.subgroupSize;
  // Partial tiles (cp.async form): the extent of this workgroup's M and N
  // when it is less than the tile, and K when the last slice is partial.
  // Copies past them fill zeros; results past them are not stored.
  auto extent = [&](Value view, unsigned dim, int64_t tile) -> Value {
    auto type = cast<MemRefType>(view.getType());
    if (!type.isDynamicDim(dim) && type.getDimSize(dim) == tile)
      return Value();
    return memref::DimOp::create(b, loc, view, dim).getResult();
  };
  Value mLimit = extent(a, 0, config.tileM);
  Value nLimit = extent(bMatrix, transposedB ? 0 : 1, config.tileN);
  Value kLimit = k % config.tileK ? index(k) : Value();
  Value lane = apply(d0 % s, {threadId});
  Value subgroupRow = apply(d0.floorDiv(s).floorDiv(config.subgroupsN),
                            {threadId});
  Value subgroupCol = apply(d0.floorDiv(s) % config.subgroupsN, {threadId});

  // 16-byte aligned rows (padded or swizzled) for the 128-bit copies.
  // On NVIDIA (cp.async) each buffer has pipelineDepth stages: the next
  // slices stream into them while slice k is multiplied, and the buffers
  // are swizzled instead of padded.
  bool asyncCopies = config.asyncCopies();
  bool warpgroup = config.warpgroup;
  swizzle = asyncCopies;
  SmallVector<int64_t> stages;
  if (asyncCopies)
    stages.push_back(config.pipelineDepth);
  auto sharedType = [&](int64_t rows, int64_t cols) {
    SmallVector<int64_t> shape(stages);
    shape.append(
        {rows,
         cols + (swizzle ? 0 : kCopyBits / inType.getIntOrFloatBitWidth())});
    return MemRefType::get(shape, inType, nullptr, sharedSpace);
  };
  // The warpgroup form's stages start on swizzle atoms; a K x N B is kept
  // as column blocks of 128-byte rows ([stage][N / block][K][block]), the
  // N-major layout wgmma reads.
  int64_t elementBytes = inType.getIntOrFloatBitWidth() / 8;
  int64_t blockColumns =
      warpgroup && !transposedB ? kSwizzleRowBytes / elementBytes : 0;
  IntegerAttr alignment =
      b.getI64IntegerAttr(warpgroup ? kSwizzleAtomBytes : kCopyBits / 8);
  auto sharedA = memref::AllocOp::create(
      b, loc, sharedType(config.tileM, config.tileK), alignment);
  auto sharedB = memref::AllocOp::create(
      b, loc,
      blockColumns
          ? MemRefType::get({config.pipelineDepth, bCols / blockColumns, bRows,
                             blockColumns},
                            inType, nullptr, sharedSpace)
          : sharedType(bRows, bCols),
      alignment);

  // Row of C element `e` of tile (tm, tn) for this lane, and its column.
  AffineMap layoutC = getFragmentLayoutC(*config.intrinsic, context);
  auto cRow = [&](int64_t tm, int64_t e) {
    return apply(layoutExpr(layoutC, 0, e) + d1 * subgroupTileM + tm * info.m,
                 {lane, subgroupRow});
  };
  auto cCol = [&](int64_t tn, int64_t e) {
    return apply(layoutExpr(layoutC, 1, e) + d1 * subgroupTileN + tn * info.n,
                 {lane, subgroupCol});
  };

  // Accumulators: the fill's value, else C's contents.
  auto accType = VectorType::get({info.cCount}, accElement);
  SmallVector<Value> init;
  for (int64_t tm = 0; tm < tilesM; ++tm) {
    for (int64_t tn = 0; tn < tilesN; ++tn) {
      if (contraction.fill) {
        Value value = contraction.fill.getDpsInputs()[0];
        if (value.getType() != accElement)
          value =
              isa<FloatType>(accElement)
                  ? arith::ExtFOp::create(b, loc, accElement, value).getResult()
                  : arith::ExtSIOp::create(b, loc, accElement, value)
                        .getResult();
        init.push_back(vector::BroadcastOp::create(b, loc, accType, value));
        continue;
      }
      SmallVector<Value> elements;
      for (int64_t e = 0; e < info.cCount; ++e) {
        Value row = cRow(tm, e), col = cCol(tn, e);
        if (!mLimit && !nLimit) {
          elements.push_back(
              memref::LoadOp::create(b, loc, c, ValueRange{row, col}));
          continue;
        }
        auto guarded = scf::IfOp::create(b, loc, TypeRange{accElement},
                                         inside(row, col, mLimit, nLimit),
                                         /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(guarded.thenBlock());
        scf::YieldOp::create(
            b, loc, memref::LoadOp::create(b, loc, c, ValueRange{row, col})
                        .getResult());
        b.setInsertionPointToStart(guarded.elseBlock());
        scf::YieldOp::create(
            b, loc,
            arith::ConstantOp::create(b, loc, b.getZeroAttr(accElement))
                .getResult());
        elements.push_back(guarded.getResult(0));
      }
      init.push_back(vector::FromElementsOp::create(b, loc, accType, elements));
    }
  }

  AffineMap layoutA = getFragmentLayoutA(*config.intrinsic, context);
  AffineMap layoutB = getFragmentLayoutB(*config.intrinsic, context);
  // A lane's runs of consecutive K elements of A, read with vector loads of
  // at most 16 bytes (shared rows are 16-byte aligned).
  int64_t contiguous =
      std::min(getContiguousAElements(*config.intrinsic),
               kCopyBits / int64_t(inType.getIntOrFloatBitWidth()));
  // One K slice from shared memory into the accumulators.
  bool ldmatrix = config.ldmatrix;
  // Shared-memory indices of (row, col) in `stage` (null: one stage).
  auto at = [](Value stage, Value row, Value col) -> SmallVector<Value> {
    if (stage)
      return {stage, row, col};
    return {row, col};
  };
  auto computeSlice = [&](SmallVector<Value> acc, Value stage) {
    for (int64_t ks = 0; ks < config.tileK; ks += info.k) {
      SmallVector<Value> aFragments, bFragments;
      if (ldmatrix) {
        // ldmatrix.x4 of each 16x16 A tile: lane l gives the address of row
        // l % 16, columns 8 * (l / 16): the four 8x8 matrices come back as
        // registers a0a1, a2a3, a4a5, a6a7 of the mma.sync layout.
        // ldmatrix.x4.trans of each 16 (K) x 16 (N) B block: lanes give K
        // rows l % 16 at column 8 * (l / 16), and the registers are b0b1,
        // b2b3 of two adjacent 16x8 tiles.
        auto x4Type = VectorType::get({4, 2}, inType);
        for (int64_t tm = 0; tm < tilesM; ++tm) {
          Value row = apply(d0 % 16 + d1 * subgroupTileM + tm * info.m,
                            {lane, subgroupRow});
          Value col = sharedColumn(row, apply(d0.floorDiv(16) * 8 + ks, {lane}),
                                   config.tileK, inType);
          Value x4 = nvgpu::LdMatrixOp::create(b, loc, x4Type, sharedA,
                                               at(stage, row, col),
                                               /*transpose=*/false, 4);
          aFragments.push_back(vector::ShapeCastOp::create(
              b, loc, VectorType::get({info.aCount}, inType), x4));
        }
        // An N x K B gives the same registers through ldmatrix.x4 without
        // .trans: lane l addresses N row l % 8 + 8 * (l / 16) at K column
        // 8 * ((l / 8) % 2), so the matrices are (n0-7, k0-7), (n0-7,
        // k8-15), (n8-15, k0-7), (n8-15, k8-15).
        for (int64_t tn = 0; tn < tilesN; tn += 2) {
          Value nBase = apply(d0 * subgroupTileN + tn * info.n, {subgroupCol});
          Value row, col;
          if (transposedB) {
            row = apply(d0 % 8 + d0.floorDiv(16) * 8 + d1, {lane, nBase});
            col = apply((d0.floorDiv(8) % 2) * 8 + ks, {lane});
          } else {
            row = apply(d0 % 16 + ks, {lane});
            col = apply(d0.floorDiv(16) * 8 + d1, {lane, nBase});
          }
          col = sharedColumn(row, col, bCols, inType);
          Value x4 = nvgpu::LdMatrixOp::create(b, loc, x4Type, sharedB,
                                               at(stage, row, col),
                                               /*transpose=*/!transposedB, 4);
          Value flat = vector::ShapeCastOp::create(
              b, loc, VectorType::get({8}, inType), x4);
          for (int64_t half = 0; half < 2; ++half) {
            SmallVector<Value> elements;
            for (int64_t e = 0; e < 4; ++e)
              elements.push_back(vector::ExtractOp::create(
                  b, loc, flat, ArrayRef<int64_t>{4 * half + e}));
            bFragments.push_back(vector::FromElementsOp::create(
                b, loc, VectorType::get({info.bCount}, inType), elements));
          }
        }
      } else {
        for (int64_t tm = 0; tm < tilesM; ++tm) {
          SmallVector<Value> elements;
          for (int64_t e = 0; e < info.aCount; e += contiguous) {
            Value row = apply(layoutExpr(layoutA, 0, e) + d1 * subgroupTileM +
                                  tm * info.m,
                              {lane, subgroupRow});
            Value col = apply(layoutExpr(layoutA, 1, e) + ks, {lane});
            // The layout puts runs of `contiguous` elements at multiples of
            // `contiguous` along K.
            Value v = vector::LoadOp::create(
                b, loc, VectorType::get({contiguous}, inType), sharedA,
                ValueRange{row, col}, /*nontemporal=*/false,
                llvm::MaybeAlign(contiguous * inType.getIntOrFloatBitWidth() /
                                 8));
            for (int64_t i = 0; i < contiguous; ++i)
              elements.push_back(
                  vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i}));
          }
          aFragments.push_back(vector::FromElementsOp::create(
              b, loc, VectorType::get({info.aCount}, inType), elements));
        }
        for (int64_t tn = 0; tn < tilesN; ++tn) {
          SmallVector<Value> elements;
          for (int64_t e = 0; e < info.bCount; ++e) {
            Value kIndex = apply(layoutExpr(layoutB, 1, e) + ks, {lane});
            Value nIndex = apply(layoutExpr(layoutB, 0, e) +
                                     d1 * subgroupTileN + tn * info.n,
                                 {lane, subgroupCol});
            elements.push_back(memref::LoadOp::create(
                b, loc, sharedB,
                transposedB ? ValueRange{nIndex, kIndex}
                            : ValueRange{kIndex, nIndex}));
          }
          bFragments.push_back(vector::FromElementsOp::create(
              b, loc, VectorType::get({info.bCount}, inType), elements));
        }
      }
      for (int64_t tm = 0; tm < tilesM; ++tm)
        for (int64_t tn = 0; tn < tilesN; ++tn) {
          Value &tile = acc[tm * tilesN + tn];
          tile = createMatrixInstruction(b, loc, *config.intrinsic,
                                         aFragments[tm], bFragments[tn], tile);
        }
    }
    return acc;
  };

  // The warpgroup form: per K slice, each warpgroup's instructions read A
  // and B straight from the stage through descriptors (one per K step of
  // info.k), accumulate asynchronously, and are waited for before the next
  // slice's barrier lets the stage be refilled.
  Value aBase, bBase;
  if (warpgroup) {
    aBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, sharedA);
    bBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, sharedB);
  }
  int64_t aStageBytes = config.tileM * config.tileK * elementBytes;
  int64_t bStageBytes = config.tileN * config.tileK * elementBytes;
  // A K x N B's column block: tileK rows of 128 bytes.
  int64_t blockBytes = config.tileK * kSwizzleRowBytes;
  auto computeWarpgroupSlice = [&](SmallVector<Value> acc, Value stage) {
    AffineExpr base, slot, group;
    bindDims(context, base, slot, group);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t tm = 0; tm < tilesM; ++tm) {
      for (int64_t tn = 0; tn < tilesN; ++tn) {
        SmallVector<std::pair<Value, Value>> descriptors;
        for (int64_t ks = 0; ks < config.tileK; ks += info.k) {
          // A: rows of this warpgroup's tile, K step ks within the rows.
          Value aAt =
              apply(base + slot * aStageBytes +
                        group * subgroupTileM * kSwizzleRowBytes +
                        tm * info.m * kSwizzleRowBytes + ks * elementBytes,
                    {aBase, stage, subgroupRow});
          // B: an N x K B like A; a K x N B at its first column block and
          // K row ks.
          Value bAt = transposedB
                          ? apply(base + slot * bStageBytes +
                                      group * subgroupTileN * kSwizzleRowBytes +
                                      tn * info.n * kSwizzleRowBytes +
                                      ks * elementBytes,
                                  {bBase, stage, subgroupCol})
                          : apply(base + slot * bStageBytes +
                                      (group * subgroupTileN + tn * info.n)
                                              .floorDiv(blockColumns) *
                                          blockBytes +
                                      ks * kSwizzleRowBytes,
                                  {bBase, stage, subgroupCol});
          // Within a swizzle atom the instruction walks 128-byte rows; atoms
          // of 8 rows follow each other along M (N) at 1024 bytes. A K x N
          // B's column blocks follow each other along N at blockBytes.
          descriptors.push_back(
              {createSwizzledDescriptor(b, loc, aAt, kChunkBytes,
                                        kSwizzleAtomBytes),
               createSwizzledDescriptor(b, loc, bAt,
                                        transposedB ? kChunkBytes : blockBytes,
                                        kSwizzleAtomBytes)});
        }
        Value &tile = acc[tm * tilesN + tn];
        tile = createWarpgroupMatrixInstructions(
            b, loc, *config.intrinsic, descriptors, transposedB, tile);
      }
    }
    // This slice's instructions stay in flight while the next slice is
    // waited for and issued; the previous slice's are done after this.
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
    return acc;
  };

  // Software pipeline: the next K slice is loaded into registers while the
  // current one is multiplied from shared memory, then stored once every
  // subgroup is done reading (the global latency hides behind the mmas).
  auto loadSlice = [&](Value k0) {
    return loadKSlice(a, bMatrix, k0, inType);
  };
  auto storeSlice = [&](ArrayRef<Value> values) {
    size_t aChunks = values.size() -
                     tileChunks(config.tileK, config.tileN, inType);
    storeTile(values.take_front(aChunks), sharedA, config.tileK, inType);
    storeTile(values.drop_front(aChunks), sharedB, bCols, inType);
  };
  SmallVector<Value> results = init;
  if (asyncCopies) {
    // cp.async multi-buffering with depth D and L = D-1 slices ahead:
    // slices 0 .. L-1 are in flight before the loop; iteration i waits for
    // slice i (at most L-1 younger groups pending), passes one barrier
    // (slice i is visible, and every subgroup is done with slice i-1),
    // refills slice i-1's stage with slice i+L, and multiplies slice i.
    // The last L slices are multiplied after the loop with the waits
    // counting down. The warpgroup form leaves each slice's instructions in
    // flight until the next slice's are issued, so a stage is free only two
    // iterations after it was multiplied: L = D-2, refilling slice i-2's
    // stage.
    int64_t depth = config.pipelineDepth;
    int64_t lead = warpgroup ? depth - 2 : depth - 1;
    int64_t slices = llvm::divideCeil(k, config.tileK);
    auto copySlice = [&](Value slice) {
      Value k0 = apply(d0 * config.tileK, {slice});
      Value stage = apply(d0 % depth, {slice});
      SmallVector<Value> tokens =
          asyncCopyTile(a, index(0), k0, sharedA, stage, config.tileM,
                        config.tileK, inType, mLimit, kLimit);
      if (transposedB)
        llvm::append_range(tokens, asyncCopyTile(bMatrix, index(0), k0,
                                                 sharedB, stage, bRows, bCols,
                                                 inType, nLimit, kLimit));
      else
        llvm::append_range(tokens, asyncCopyTile(bMatrix, k0, index(0), sharedB,
                                                 stage, bRows, bCols, inType,
                                                 kLimit, nLimit, blockColumns));
      return nvgpu::DeviceAsyncCreateGroupOp::create(
                 b, loc, nvgpu::DeviceAsyncTokenType::get(context), tokens)
          .getResult();
    };
    // The wait lowers to cp.async.wait_group `pending`; its token operand
    // only orders it after the first group.
    Value first;
    for (int64_t i = 0; i < std::min(lead, slices); ++i) {
      Value group = copySlice(index(i));
      if (!first)
        first = group;
    }
    auto waitAndSync = [&](int64_t pending) {
      nvgpu::DeviceAsyncWaitOp::create(b, loc, first,
                                       b.getI32IntegerAttr(pending));
      // wgmma reads shared memory through the async proxy: the copies'
      // writes must be made visible to it.
      if (warpgroup)
        NVVM::FenceProxyOp::create(
            b, loc, NVVM::ProxyKind::async_shared,
            NVVM::SharedSpaceAttr::get(context, NVVM::SharedSpace::shared_cta));
      gpu::BarrierOp::create(b, loc);
    };
    auto multiply = [&](SmallVector<Value> acc, Value stage) {
      return warpgroup ? computeWarpgroupSlice(std::move(acc), stage)
                       : computeSlice(std::move(acc), stage);
    };
    int64_t steady = std::max<int64_t>(0, slices - lead);
    if (steady > 0) {
      auto loop = scf::ForOp::create(
          b, loc, index(0), index(steady), index(1), init,
          [&](OpBuilder &, Location, Value slice, ValueRange accumulators) {
            waitAndSync(lead - 1);
            copySlice(apply(d0 + lead, {slice}));
            SmallVector<Value> acc =
                multiply({accumulators.begin(), accumulators.end()},
                         apply(d0 % depth, {slice}));
            scf::YieldOp::create(b, loc, acc);
          });
      results.assign(loop.getResults().begin(), loop.getResults().end());
    }
    for (int64_t i = steady; i < slices; ++i) {
      waitAndSync(slices - 1 - i);
      results = multiply(results, index(i % depth));
    }
    if (warpgroup)
      for (Value &tile : results)
        tile = waitForWarpgroupMatrixInstructions(b, loc, tile);
  } else {
    results = pipelineThroughRegisters(
        k, init, loadSlice, storeSlice,
        [&](SmallVector<Value> acc) { return computeSlice(acc, Value()); });
  }

  // Epilogue: each accumulator through the consumer's body (or as it is)
  // into the output, where the consumer was (its operands are defined by
  // then).
  if (contraction.consumer)
    b.setInsertionPoint(contraction.consumer);
  // Elements e .. e+r-1 of a lane's fragment that sit in one row at
  // consecutive columns (pairs in mma.sync's C layout) are stored together.
  auto runAt = [&](int64_t e) {
    int64_t run = 1;
    for (; e + run < info.cCount; ++run) {
      AffineExpr rowStep = layoutExpr(layoutC, 0, e + run) -
                           layoutExpr(layoutC, 0, e + run - 1);
      AffineExpr colStep = layoutExpr(layoutC, 1, e + run) -
                           layoutExpr(layoutC, 1, e + run - 1);
      auto rowConst = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(rowStep, 1, 0));
      auto colConst = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(colStep, 1, 0));
      if (!rowConst || rowConst.getValue() != 0 || !colConst ||
          colConst.getValue() != 1)
        break;
    }
    // Runs must start at a multiple of their length (vector alignment).
    while (run > 1 && (e % run != 0 || !llvm::isPowerOf2_64(run)))
      --run;
    return run;
  };
  for (int64_t tm = 0; tm < tilesM; ++tm) {
    for (int64_t tn = 0; tn < tilesN; ++tn) {
      Value tile = results[tm * tilesN + tn];
      for (int64_t e = 0; e < info.cCount;) {
        int64_t run = runAt(e);
        SmallVector<Value> values;
        for (int64_t i = 0; i < run; ++i)
          values.push_back(vector::ExtractOp::create(
              b, loc, tile, ArrayRef<int64_t>{e + i}));
        Value row = cRow(tm, e), col = cCol(tn, e);
        if (mLimit || nLimit) {
          // A run lies wholly inside or outside: N is a multiple of 8.
          auto guarded = scf::IfOp::create(
              b, loc, inside(row, col, mLimit, nLimit),
              /*withElseRegion=*/false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(guarded.thenBlock()->getTerminator());
          storeResults(values, row, col);
        } else {
          storeResults(values, row, col);
        }
        e += run;
      }
    }
  }
  return success();
}

SmallVector<Value> ContractionEmitter::pipelineThroughRegisters(
    int64_t k, ArrayRef<Value> init,
    llvm::function_ref<SmallVector<Value>(Value)> loadSlice,
    llvm::function_ref<void(ArrayRef<Value>)> storeSlice,
    llvm::function_ref<SmallVector<Value>(SmallVector<Value>)> computeSlice) {
  AffineExpr d0 = getAffineDimExpr(0, b.getContext());
  storeSlice(loadSlice(index(0)));
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> results(init.begin(), init.end());
  if (k > config.tileK) {
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(k - config.tileK), index(config.tileK), init,
        [&](OpBuilder &, Location, Value k0, ValueRange accumulators) {
          SmallVector<Value> next = loadSlice(apply(d0 + config.tileK, {k0}));
          SmallVector<Value> acc =
              computeSlice({accumulators.begin(), accumulators.end()});
          gpu::BarrierOp::create(b, loc);
          storeSlice(next);
          gpu::BarrierOp::create(b, loc);
          scf::YieldOp::create(b, loc, acc);
        });
    results.assign(loop.getResults().begin(), loop.getResults().end());
  }
  return computeSlice(results);
}

void ContractionEmitter::storeResults(ArrayRef<Value> values, Value row,
                                      Value col) {
  linalg::GenericOp consumer = contraction.consumer;
  Value c = contraction.matmul.getDpsInits()[0];
  AffineExpr d0 = getAffineDimExpr(0, b.getContext());
  auto column = [&](int64_t i) { return i ? apply(d0 + i, {col}) : col; };
  // The consumer's loops: the batch loops (index 0 in a workgroup), M, N.
  auto indicesOf = [&](AffineMap map, Value n) {
    SmallVector<Value> loops(contraction.dims.batch.size(), index(0));
    loops.append({row, n});
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults())
      indices.push_back(apply(expr, loops));
    return indices;
  };
  // The output: C, or the consumer's output through its indexing map.
  Value target = cView;
  AffineMap outputMap;
  if (consumer) {
    OpOperand *output = consumer.getDpsInitOperand(0);
    target = output->get();
    outputMap = consumer.getMatchingIndexingMap(output);
  }
  auto indicesAt = [&](int64_t i) {
    return outputMap ? indicesOf(outputMap, column(i))
                     : SmallVector<Value>{row, column(i)};
  };
  bool contiguous = !outputMap || outputMap.isIdentity();
  SmallVector<Value> results(values);
  if (consumer) {
    Block *body = consumer.getBody();
    for (auto [i, value] : llvm::enumerate(values)) {
      Value n = column(i);
      IRMapping mapping;
      for (OpOperand &operand : consumer->getOpOperands()) {
        BlockArgument argument = body->getArgument(operand.getOperandNumber());
        if (operand.get() == c) {
          mapping.map(argument, value);
          continue;
        }
        if (consumer.isDpsInit(&operand) && argument.use_empty())
          continue;
        mapping.map(argument,
                    memref::LoadOp::create(
                        b, loc, operand.get(),
                        indicesOf(consumer.getMatchingIndexingMap(&operand),
                                  n)));
      }
      for (Operation &op : body->without_terminator())
        b.clone(op, mapping);
      auto yield = cast<linalg::YieldOp>(body->getTerminator());
      results[i] = mapping.lookupOrDefault(yield.getOperand(0));
    }
  }
  // One vector store when the output is laid out as C (identity map, unit
  // innermost stride). Aligned to the vector's size: runs start at columns
  // that are multiples of their length, and N, the tile offsets and the
  // bindings are multiples of it (strategy selection).
  auto targetType = cast<MemRefType>(target.getType());
  auto [strides, offset] = targetType.getStridesAndOffset();
  if (results.size() > 1 && contiguous && !strides.empty() &&
      strides.back() == 1) {
    Type element = targetType.getElementType();
    auto vectorType = VectorType::get({int64_t(results.size())}, element);
    Value vector = vector::FromElementsOp::create(b, loc, vectorType, results);
    vector::StoreOp::create(
        b, loc, vector, target, indicesAt(0), /*nontemporal=*/false,
        llvm::MaybeAlign(results.size() * element.getIntOrFloatBitWidth() / 8));
    return;
  }
  for (auto [i, result] : llvm::enumerate(results))
    memref::StoreOp::create(b, loc, result, target, indicesAt(i));
}

LogicalResult ContractionEmitter::emitSimt() {
  MLIRContext *context = b.getContext();
  Value a = aView, bMatrix = bView, c = cView;
  int64_t k = cast<MemRefType>(a.getType()).getDimSize(1);
  Type f32 = b.getF32Type();
  auto sharedSpace =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  const int64_t tm = config.threadM, tn = config.threadN;
  const int64_t threadsN = config.tileN / tn;

  threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  AffineExpr d0, d1;
  bindDims(context, d0, d1);
  // Thread (ty, tx) owns rows ty * tm .. and columns tx * tn .. of the tile.
  Value rowBase = apply(d0.floorDiv(threadsN) * tm, {threadId});
  Value colBase = apply((d0 % threadsN) * tn, {threadId});

  // A^T (K x BM) and B (K x BN) slices; rows padded by 4 floats (16 bytes).
  IntegerAttr alignment = b.getI64IntegerAttr(kCopyBits / 8);
  auto sharedAT = memref::AllocOp::create(
      b, loc,
      MemRefType::get({config.tileK, config.tileM + 4}, f32, nullptr,
                      sharedSpace),
      alignment);
  auto sharedB = memref::AllocOp::create(
      b, loc,
      MemRefType::get({config.tileK, config.tileN + 4}, f32, nullptr,
                      sharedSpace),
      alignment);

  // Accumulators: one vector of tn columns per row.
  auto rowType = VectorType::get({tn}, f32);
  SmallVector<Value> init;
  for (int64_t i = 0; i < tm; ++i) {
    if (contraction.fill) {
      Value value = contraction.fill.getDpsInputs()[0];
      if (value.getType() != f32)
        value = arith::ExtFOp::create(b, loc, f32, value);
      init.push_back(vector::BroadcastOp::create(b, loc, rowType, value));
      continue;
    }
    Value row = apply(d0 + i, {rowBase});
    init.push_back(vector::LoadOp::create(b, loc, rowType, c,
                                          ValueRange{row, colBase}));
  }

  auto loadSlice = [&](Value k0) { return loadKSlice(a, bMatrix, k0, f32); };
  // A's 4-float chunks (4 K values of one row) are scattered into A^T.
  auto storeSlice = [&](ArrayRef<Value> values) {
    size_t aChunks = values.size() - tileChunks(config.tileK, config.tileN, f32);
    int64_t perRow = config.tileK / 4;
    for (auto [i, value] : llvm::enumerate(values.take_front(aChunks))) {
      AffineExpr idx = d0 + int64_t(i) * config.workgroupSize;
      Value m = apply(idx.floorDiv(perRow), {threadId});
      for (int64_t j = 0; j < 4; ++j) {
        Value kk = apply((idx % perRow) * 4 + j, {threadId});
        Value element =
            vector::ExtractOp::create(b, loc, value, ArrayRef<int64_t>{j});
        memref::StoreOp::create(b, loc, element, sharedAT, ValueRange{kk, m});
      }
    }
    storeTile(values.drop_front(aChunks), sharedB, config.tileN, f32);
  };
  auto computeSlice = [&](SmallVector<Value> acc) {
    for (int64_t kk = 0; kk < config.tileK; ++kk) {
      Value kIndex = index(kk);
      Value aValues = vector::LoadOp::create(
          b, loc, VectorType::get({tm}, f32), sharedAT,
          ValueRange{kIndex, rowBase}, /*nontemporal=*/false,
          llvm::MaybeAlign(kCopyBits / 8));
      Value bValues = vector::LoadOp::create(
          b, loc, rowType, sharedB, ValueRange{kIndex, colBase},
          /*nontemporal=*/false, llvm::MaybeAlign(kCopyBits / 8));
      for (int64_t i = 0; i < tm; ++i) {
        Value ai =
            vector::ExtractOp::create(b, loc, aValues, ArrayRef<int64_t>{i});
        Value splat = vector::BroadcastOp::create(b, loc, rowType, ai);
        acc[i] = vector::FMAOp::create(b, loc, splat, bValues, acc[i]);
      }
    }
    return acc;
  };

  SmallVector<Value> results =
      pipelineThroughRegisters(k, init, loadSlice, storeSlice, computeSlice);

  if (contraction.consumer)
    b.setInsertionPoint(contraction.consumer);
  for (int64_t i = 0; i < tm; ++i) {
    SmallVector<Value> values;
    for (int64_t j = 0; j < tn; ++j)
      values.push_back(
          vector::ExtractOp::create(b, loc, results[i], ArrayRef<int64_t>{j}));
    storeResults(values, apply(d0 + i, {rowBase}), colBase);
  }
  return success();
}

// Reads the contraction parameters of the strategy (see
// GPUSelectStrategyPass; the attribute's verifier saw that they are there).
static FailureOr<ContractionConfig> readConfig(func::FuncOp func,
                                               GPUStrategyAttr strategy) {
  std::optional<MatrixIntrinsic> intrinsic = strategy.getIntrinsic();
  // The workgroup tile's M and N entries: the ones above 1 (batch loops
  // are tiled by 1, K by 0), M's first.
  SmallVector<int64_t, 2> mn;
  llvm::copy_if(strategy.getWorkgroupTile(), std::back_inserter(mn),
                [](int64_t size) { return size > 1; });
  if (mn.size() != 2)
    return func.emitError() << "contraction strategy: expected a workgroup "
                               "tile with M and N sizes above 1, got ["
                            << strategy.getWorkgroupTile() << "]";
  ContractionConfig config;
  config.intrinsic = intrinsic;
  config.tileM = mn[0];
  config.tileN = mn[1];
  config.tileK = strategy.getKTile();
  config.workgroupSize = strategy.getWorkgroupSize();
  config.pipelineDepth = strategy.getPipelineDepth();
  if (!intrinsic) {
    config.threadM = strategy.getSimtTile()[0];
    config.threadN = strategy.getSimtTile()[1];
    // 4-float chunks for the copies, 16-byte vectors of shared memory.
    if (config.threadM <= 0 || config.threadN <= 0 ||
        config.tileM % config.threadM != 0 ||
        config.tileN % config.threadN != 0 ||
        (config.tileM / config.threadM) * (config.tileN / config.threadN) !=
            config.workgroupSize ||
        config.threadM % 4 != 0 || config.threadN % 4 != 0 ||
        config.tileK % 4 != 0 ||
        (config.tileM * config.tileK / 4) % config.workgroupSize != 0 ||
        (config.tileN * config.tileK / 4) % config.workgroupSize != 0)
      return func.emitError()
             << "contraction strategy: workgroup tile " << config.tileM << "x"
             << config.tileN << "x" << config.tileK << " with "
             << config.threadM << "x" << config.threadN
             << " outputs per thread does not fit " << config.workgroupSize
             << " threads";
    return config;
  }
  config.subgroupsM = strategy.getSubgroupGrid()[0];
  config.subgroupsN = strategy.getSubgroupGrid()[1];
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(*intrinsic);
  // `layout_fragments` reads mma.sync fragments by the layout table instead
  // of ldmatrix: the data path of the AMD forms, on NVIDIA GPUs.
  config.ldmatrix = usesLdMatrix(*intrinsic) && !strategy.getLayoutFragments();
  config.warpgroup = isWarpgroupIntrinsic(*intrinsic);
  // Copies are 16-byte chunks spread evenly over the threads; swizzled
  // buffers (cp.async forms) need a power-of-two number of chunks per row.
  int64_t perChunk =
      kCopyBits / getMatrixInputType(*intrinsic, func.getContext())
                      .getIntOrFloatBitWidth();
  auto copiesFit = [&](int64_t rows, int64_t cols) {
    return cols % perChunk == 0 &&
           (rows * cols / perChunk) % config.workgroupSize == 0 &&
           (!config.ldmatrix || llvm::isPowerOf2_64(uint64_t(cols / perChunk)));
  };
  if (config.warpgroup) {
    // Rows of exactly one 128-byte swizzle row along K; a K x N B in column
    // blocks of 128 bytes that each warpgroup's N range covers whole.
    int64_t rowElements = kSwizzleRowBytes * 8 /
                          getMatrixInputType(*intrinsic, func.getContext())
                              .getIntOrFloatBitWidth();
    if (strategy.getLayoutFragments() || config.tileK != rowElements ||
        (config.tileN / config.subgroupsN) % rowElements != 0)
      return func.emitError()
             << "contraction strategy: " << stringifyMatrixIntrinsic(*intrinsic)
             << " needs a k_tile of " << rowElements
             << " (one 128-byte swizzle row), N per warpgroup a multiple of "
             << rowElements << ", and no layout_fragments";
  }
  // The warpgroup form keeps a stage for the instructions in flight.
  int64_t minDepth = config.warpgroup ? 3 : 2;
  if (config.asyncCopies() &&
      (config.pipelineDepth < minDepth || config.pipelineDepth > 8))
    return func.emitError()
           << "contraction strategy: pipeline_depth " << config.pipelineDepth
           << " is outside " << minDepth << "..8";
  if (config.workgroupSize <= 0 || !copiesFit(config.tileM, config.tileK) ||
      !copiesFit(config.tileK, config.tileN) ||
      config.subgroupsM * config.subgroupsN * info.subgroupSize !=
          config.workgroupSize ||
      config.tileM % (config.subgroupsM * info.m) != 0 ||
      config.tileN % (config.subgroupsN * info.n) != 0 ||
      config.tileK % info.k != 0 ||
      (config.ldmatrix && (config.tileN / config.subgroupsN / info.n) % 2 != 0))
    return func.emitError()
           << "contraction strategy: workgroup tile " << config.tileM << "x"
           << config.tileN << "x" << config.tileK << " with subgroup grid "
           << config.subgroupsM << "x" << config.subgroupsN << " and "
           << config.workgroupSize << " threads does not fit "
           << stringifyMatrixIntrinsic(*intrinsic);
  return config;
}

static LogicalResult checkOperands(const ContractionConfig &config,
                                   linalg::LinalgOp matmul,
                                   const RecipeContraction &dims) {
  StringRef name = config.intrinsic
                       ? stringifyMatrixIntrinsic(*config.intrinsic)
                       : StringRef("f32 FMA");
  auto aType = dyn_cast<MemRefType>(matmul.getDpsInputs()[0].getType());
  auto bType = dyn_cast<MemRefType>(matmul.getDpsInputs()[1].getType());
  auto cType = dyn_cast<MemRefType>(matmul.getDpsInits()[0].getType());
  Type in = config.intrinsic
                ? getMatrixInputType(*config.intrinsic, matmul.getContext())
                : Float32Type::get(matmul.getContext());
  Type acc = config.intrinsic ? getMatrixAccumulatorType(*config.intrinsic,
                                                         matmul.getContext())
                              : Float32Type::get(matmul.getContext());
  // The operands' dims are batch..., then M, K / K, N (N, K) / M, N; the
  // batch dims are one batch per workgroup. The cp.async form also takes
  // partial tiles (M or N below the tile, possibly dynamic; K a multiple of
  // the 16-byte chunk, rows of whole chunks), which it masks.
  size_t batch = dims.batch.size();
  bool masked = config.asyncCopies();
  int64_t chunk = kCopyBits / in.getIntOrFloatBitWidth();
  auto shaped = [&](MemRefType type, bool copied) {
    if (!type || type.getRank() != int64_t(batch) + 2 ||
        !llvm::all_of(type.getShape().take_front(batch),
                      [](int64_t size) { return size == 1; }))
      return false;
    if (type.hasStaticShape())
      return true;
    if (!copied)
      return masked;
    // Rows of whole 16-byte chunks for the masked copies.
    auto [strides, offset] = type.getStridesAndOffset();
    return masked && !ShapedType::isDynamic(strides[batch]) &&
           strides[batch] % chunk == 0;
  };
  auto fitsTile = [&](MemRefType type, unsigned dim, int64_t tile) {
    if (type.isDynamicDim(dim))
      return masked;
    return type.getDimSize(dim) == tile ||
           (masked && type.getDimSize(dim) < tile);
  };
  bool fits =
      shaped(aType, true) && shaped(bType, true) && shaped(cType, false) &&
      (config.intrinsic || !dims.transposedB) &&
      fitsTile(aType, batch, config.tileM) &&
      fitsTile(bType, dims.transposedB ? batch : batch + 1, config.tileN) &&
      !aType.isDynamicDim(batch + 1) &&
      (aType.getDimSize(batch + 1) % config.tileK == 0 ||
       (masked && aType.getDimSize(batch + 1) % chunk == 0)) &&
      aType.getElementType() == in && bType.getElementType() == in &&
      cType.getElementType() == acc;
  if (!fits)
    return matmul.emitError()
           << "contraction strategy: the workgroup's matmul does not fit "
           << name << " tiles of " << config.tileM << "x" << config.tileN << "x"
           << config.tileK << ": expected " << (masked ? "up to " : "")
           << config.tileM << "xK " << in << " * Kx" << config.tileN << " "
           << in << (config.intrinsic ? " (or B as " : "")
           << (config.intrinsic ? std::to_string(config.tileN) + "xK)" : "")
           << " -> " << acc << " with K a multiple of "
           << (masked ? chunk : config.tileK)
           << (masked ? " and rows of whole 16-byte chunks" : "")
           << (batch ? ", one batch per workgroup" : "");
  return success();
}

struct GPULowerContractionPass
    : public kiln::impl::GPULowerContractionPassBase<GPULowerContractionPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto strategy = func->getAttrOfType<GPUStrategyAttr>(kGPUStrategyAttrName);
    if (!strategy || strategy.getKind() != KernelKind::Contraction)
      return;
    FailureOr<ContractionConfig> config = readConfig(func, strategy);
    if (failed(config))
      return signalPassFailure();
    SmallVector<std::pair<linalg::LinalgOp, RecipeContraction>> matmuls;
    func.walk([&](linalg::LinalgOp op) {
      if (std::optional<RecipeContraction> dims = matchRecipeContraction(op))
        matmuls.push_back({op, *dims});
    });
    if (matmuls.size() != 1) {
      func.emitError() << "contraction strategy: expected one matmul-like "
                          "op per workgroup, found "
                       << matmuls.size();
      return signalPassFailure();
    }
    auto [matmul, dims] = matmuls.front();
    if (failed(checkOperands(*config, matmul, dims)))
      return signalPassFailure();
    FailureOr<Contraction> contraction = matchContraction(matmul, dims);
    if (failed(contraction))
      return signalPassFailure();

    OpBuilder b(matmul);
    ContractionEmitter emitter(b, matmul.getLoc(), *config, *contraction);
    if (failed(emitter.emit()))
      return signalPassFailure();
    if (contraction->consumer)
      contraction->consumer->erase();
    matmul->erase();
    if (contraction->fill)
      contraction->fill->erase();
    if (memref::ReinterpretCastOp view = contraction->temporaryView) {
      for (Operation *user : llvm::make_early_inc_range(view->getUsers()))
        user->erase();
      view->erase();
    }
    if (memref::AllocOp temporary = contraction->temporary) {
      for (Operation *user : llvm::make_early_inc_range(temporary->getUsers()))
        user->erase();
      temporary->erase();
    }
  }
};

} // namespace
