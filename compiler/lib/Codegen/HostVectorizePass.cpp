//===- HostVectorizePass.cpp - Register tiling and vectorization ----------===//
//
// Inside each workgroup, tiles every linalg op to the register tile of the
// host strategy with scf.for loops, peels partial tiles and vectorizes the
// statically shaped tile ops; the rest stays linalg (scalar loops later).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"

#include "HostRegisterTiles.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTVECTORIZEPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Reduction steps of a contraction per cache block (see
// blockReductionLoops): f32 panels of 256 x 64 are 64 KiB. Measured on this
// machine's 2 cores (docs/performance.md), 2048^3 f32: 370 ms unblocked,
// 200 ms with blocks of 128, 256 or 512.
constexpr int64_t kReductionBlock = 256;

// Marks the register tile loops until they are peeled.
constexpr llvm::StringLiteral kPeelMarker = "kiln.peel";

// Element types whose memory layout matches their vector layout in LLVM
// (i1 vectors are bit-packed while memrefs of i1 hold bytes). f16/bf16
// arithmetic runs in f32 and their conversions become integer vector code
// (kiln-host-expand-small-floats), so they vectorize like the others.
static bool hasVectorizableElementTypes(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    Type element = getElementTypeOrSelf(type);
    return element.isF32() || element.isF64() || element.isF16() ||
           element.isBF16() || element.isInteger(8) ||
           element.isInteger(16) || element.isInteger(32) ||
           element.isInteger(64);
  });
}

// A linalg.generic writing `convert` of each element of `source` into
// `dest` (same shape; identity maps; `convert` null: a plain copy).
static linalg::GenericOp createElementwiseCopy(
    OpBuilder &builder, Location loc, Value source, Value dest,
    function_ref<Value(OpBuilder &, Location, Value)> convert = nullptr) {
  int64_t rank = cast<ShapedType>(source.getType()).getRank();
  SmallVector<AffineMap> maps(2, builder.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
      builder, loc, ValueRange{source}, ValueRange{dest}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value value = convert ? convert(nested, nestedLoc, args[0]) : args[0];
        linalg::YieldOp::create(nested, nestedLoc, value);
      });
}

// f32 staging buffers of one workgroup's narrow matmul operands live on the
// kernel's stack: at most this much of it (kernels run on the local
// driver's queue and pool threads, which have the default 8 MiB stacks;
// 512 KiB stages 32-row/column panels with K up to 2048).
constexpr int64_t kMaxStagingBytes = 512 * 1024;

// A matmul or batch_matmul with f16/bf16 operands and an f32 result reads
// each operand element once per register tile that uses it, and converts it
// each time. Widening the workgroup's operands once into f32 stack buffers
// and multiplying those moves the conversions out of the K loop. Only
// statically shaped operands within kMaxStagingBytes are staged.
static void stageNarrowOperands(func::FuncOp func) {
  SmallVector<linalg::LinalgOp> matmuls;
  func.walk([&](linalg::LinalgOp op) {
    // At the kernel's top level only: a stack buffer in a loop would grow
    // the stack every iteration.
    if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
        op.hasPureBufferSemantics() && op->getParentOp() == func)
      matmuls.push_back(op);
  });
  for (linalg::LinalgOp op : matmuls) {
    auto isNarrow = [](Value v) {
      return isa<Float16Type, BFloat16Type>(getElementTypeOrSelf(v.getType()));
    };
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
    Value c = op.getDpsInits()[0];
    auto aType = dyn_cast<MemRefType>(a.getType());
    auto bType = dyn_cast<MemRefType>(b.getType());
    // Each narrow operand is staged; the others must already be f32.
    auto stagedBytes = [&](Value v, MemRefType type) -> int64_t {
      return isNarrow(v) ? type.getNumElements() * 4 : 0;
    };
    auto usable = [&](Value v, MemRefType type) {
      return type && type.hasStaticShape() &&
             (isNarrow(v) || getElementTypeOrSelf(v.getType()).isF32());
    };
    if (!usable(a, aType) || !usable(b, bType) ||
        (!isNarrow(a) && !isNarrow(b)) ||
        !getElementTypeOrSelf(c.getType()).isF32() ||
        stagedBytes(a, aType) + stagedBytes(b, bType) > kMaxStagingBytes)
      continue;
    if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
        matmul && matmul.hasUserDefinedMaps())
      continue;
    OpBuilder builder(op);
    Location loc = op.getLoc();
    Type f32 = builder.getF32Type();
    auto widen = [&](Value narrow, MemRefType type) -> Value {
      Value wide = memref::AllocaOp::create(
          builder, loc, MemRefType::get(type.getShape(), f32), ValueRange{},
          builder.getI64IntegerAttr(16));
      createElementwiseCopy(
          builder, loc, narrow, wide,
          [&](OpBuilder &nested, Location nestedLoc, Value x) -> Value {
            return arith::ExtFOp::create(nested, nestedLoc, f32, x);
          });
      return wide;
    };
    Value aWide = isNarrow(a) ? widen(a, aType) : a;
    Value bWide = isNarrow(b) ? widen(b, bType) : b;
    if (isa<linalg::MatmulOp>(op))
      linalg::MatmulOp::create(builder, loc, ValueRange{aWide, bWide},
                               ValueRange{c});
    else
      linalg::BatchMatmulOp::create(builder, loc, ValueRange{aWide, bWide},
                                    ValueRange{c});
    op->erase();
  }
}

// Contractions whose inputs differ in element type (an f32 times an f16 that
// was not staged) would become a vector.contract of mixed operands, which
// does not verify; they stay scalar.
static bool hasMixedContractionInputs(linalg::LinalgOp op) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2)
    return false;
  return getElementTypeOrSelf(op.getDpsInputs()[0].getType()) !=
         getElementTypeOrSelf(op.getDpsInputs()[1].getType());
}

static bool isCandidate(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() && op.getNumLoops() > 0 &&
         linalg::hasVectorizationImpl(op) && hasVectorizableElementTypes(op) &&
         !hasMixedContractionInputs(op) &&
         // Only 1-D convolutions have a vectorization; tiling the others to
         // register tiles would just add loops around scalar code.
         !linalg::isaConvolutionOpInterface(op);
}

struct HostVectorizePass
    : public kiln::impl::HostVectorizePassBase<HostVectorizePass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    // Peeling leaves affine.min sizes and single-iteration loops that fold
    // to constants only after canonicalization; vectorization needs them.
    RewritePatternSet patterns(ctx);
    for (Dialect *dialect : ctx->getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : ctx->getRegisteredOperations())
      op.getCanonicalizationPatterns(patterns, ctx);
    canonicalization =
        std::make_shared<FrozenRewritePatternSet>(std::move(patterns));
    return success();
  }
  void runOnOperation() override;

private:
  LogicalResult tileToRegisters(linalg::LinalgOp op,
                                ArrayRef<int64_t> vectorSizes);
  FailureOr<linalg::LinalgOp> blockReductionLoops(linalg::LinalgOp op);
  void peelRegisterTileLoops();

  std::shared_ptr<const FrozenRewritePatternSet> canonicalization;
};

// Tiles `op` with scf.for loops by `tileSizes` (0: not tiled), marks the
// loops for peeling and returns the tiled op; `op` itself when no size is
// set. `what` names the tiling in errors.
static FailureOr<linalg::LinalgOp> tileWithLoops(linalg::LinalgOp op,
                                                 ArrayRef<int64_t> tileSizes,
                                                 StringRef what) {
  if (llvm::all_of(tileSizes, [](int64_t size) { return size == 0; }))
    return op;
  MLIRContext *ctx = op.getContext();
  IRRewriter rewriter(ctx);
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
      .setTileSizes(getAsIndexOpFoldResult(ctx, tileSizes));
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled) || tiled->tiledOps.size() != 1)
    return op->emitError() << "failed to tile '" << op->getName() << "' "
                           << what;
  for (LoopLikeOpInterface loop : tiled->loops)
    loop->setAttr(kPeelMarker, UnitAttr::get(ctx));
  rewriter.eraseOp(op);
  return cast<linalg::LinalgOp>(tiled->tiledOps.front());
}

// Tiles `op` so that each tile covers at most `vectorSizes` per loop; loops
// whose (static) range fits in one tile are not tiled.
LogicalResult
HostVectorizePass::tileToRegisters(linalg::LinalgOp op,
                                   ArrayRef<int64_t> vectorSizes) {
  SmallVector<int64_t> tileSizes;
  for (auto [range, size] :
       llvm::zip_equal(op.getStaticLoopRanges(), vectorSizes))
    tileSizes.push_back(ShapedType::isDynamic(range) || range > size ? size
                                                                     : 0);
  return tileWithLoops(op, tileSizes, "to register tiles");
}

// Blocks the reduction loops of a contraction so that the operand panels a
// block multiplies stay in the core's L2 while every register tile of the
// workgroup passes over them: an scf.for over blocks of kReductionBlock
// reduction steps around the op (the accumulators round-trip through memory
// once per block). Returns the op inside the loop (`op` itself when its
// reduction is short).
FailureOr<linalg::LinalgOp>
HostVectorizePass::blockReductionLoops(linalg::LinalgOp op) {
  SmallVector<int64_t> tileSizes;
  for (auto [range, it] :
       llvm::zip_equal(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
    tileSizes.push_back(it == utils::IteratorType::reduction &&
                                !ShapedType::isDynamic(range) &&
                                range > kReductionBlock
                            ? kReductionBlock
                            : 0);
  return tileWithLoops(op, tileSizes, "into reduction blocks");
}

// Copies the B block of a blocked f32 matmul (`op`, inside the reduction
// block loop) into a contiguous buffer on the kernel's stack before the
// register tiles multiply it. Rows of a large B lie a power of two apart (4
// KiB for 1024 columns): the block's 256 rows of one register tile then fall
// into the same few sets of the L1 cache, whose 8 ways cannot hold them, and
// every reduction step misses. In the buffer the rows are 64 floats apart
// and spread over all sets. The copy (64 KiB a block) is read by every
// register tile of the workgroup's rows. Znver3 (AVX2, 2 cores): 1024^3
// f32 ~25 -> ~15 ms (docs/performance.md).
static linalg::GenericOp packMatmulBlock(func::FuncOp func,
                                         linalg::LinalgOp op) {
  auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
  if (!matmul || matmul.hasUserDefinedMaps() ||
      op->getParentOp() == func.getOperation())
    return {};
  Value b = op.getDpsInputs()[1];
  auto bType = dyn_cast<MemRefType>(b.getType());
  if (!bType || bType.getRank() != 2 || !bType.getElementType().isF32() ||
      !getElementTypeOrSelf(op.getDpsInputs()[0].getType()).isF32())
    return {};
  // The buffer holds the largest block: the subview's sizes are the tile
  // sizes, or an affine.min of them at the edges.
  auto subview = b.getDefiningOp<memref::SubViewOp>();
  if (!subview)
    return {};
  SmallVector<int64_t> bound;
  for (OpFoldResult size : subview.getMixedSizes()) {
    FailureOr<int64_t> ub = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB, size, /*stopCondition=*/nullptr,
        /*closedUB=*/true);
    if (failed(ub) || *ub <= 0)
      return {};
    bound.push_back(*ub);
  }
  SmallVector<int64_t> strides;
  int64_t offset;
  // Only rows a multiple of 4 KiB apart alias in the L1 cache (its sets
  // are indexed by address bits 6-11); at 512 columns (2 KiB) the copy cost
  // more than it saved (2.4 -> 3.8 ms at 512^3).
  if (failed(bType.getStridesAndOffset(strides, offset)) || strides[1] != 1 ||
      ShapedType::isDynamic(strides[0]) || (strides[0] * 4) % 4096 != 0 ||
      bound[0] * bound[1] * 4 > kMaxStagingBytes)
    return {};
  OpBuilder builder(func.getBody());
  Location loc = op.getLoc();
  Value buffer = memref::AllocaOp::create(
      builder, loc, MemRefType::get(bound, builder.getF32Type()), ValueRange{},
      builder.getI64IntegerAttr(64));
  builder.setInsertionPoint(op);
  SmallVector<OpFoldResult> zeros(2, builder.getIndexAttr(0));
  SmallVector<OpFoldResult> ones(2, builder.getIndexAttr(1));
  Value packed = memref::SubViewOp::create(builder, loc, buffer, zeros,
                                           subview.getMixedSizes(), ones);
  linalg::GenericOp copy = createElementwiseCopy(builder, loc, b, packed);
  op->setOperand(1, packed);
  return copy;
}

// Peels the last, partial iteration of every register tile loop, outermost
// first: the main loops then see full tiles (static shapes once the
// affine.min of their sizes fold), the partial iterations the remainder.
void HostVectorizePass::peelRegisterTileLoops() {
  SmallVector<scf::ForOp> worklist;
  getOperation().walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    if (loop->hasAttr(kPeelMarker))
      worklist.push_back(loop);
  });
  IRRewriter rewriter(&getContext());
  // The partial iteration of an outer loop holds clones of the inner loops,
  // which are peeled in turn.
  for (size_t i = 0; i < worklist.size(); ++i) {
    scf::ForOp loop = worklist[i];
    loop->removeAttr(kPeelMarker);
    scf::ForOp partial;
    rewriter.setInsertionPoint(loop);
    if (failed(scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial)))
      continue;
    partial.walk<WalkOrder::PreOrder>([&](scf::ForOp inner) {
      if (inner->hasAttr(kPeelMarker))
        worklist.push_back(inner);
    });
  }
}

void HostVectorizePass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  MLIRContext *ctx = &getContext();
  auto strategy = func->getAttrOfType<HostStrategyAttr>(kHostStrategyAttrName);
  if (!strategy || strategy.getVectorWidth() <= 0) {
    func.emitError() << "kernel '" << func.getSymName() << "' has no "
                     << kHostStrategyAttrName
                     << " with a positive 'vector_width'; run "
                        "kiln-host-select-strategy first";
    return signalPassFailure();
  }
  int64_t vectorBits = strategy.getVectorWidth();
  StringRef rootName = strategy.getRoot();
  ArrayRef<int64_t> rootSizes = strategy.getVectorSizes();

  stageNarrowOperands(func);

  // 1. Register tiles. The strategy's sizes apply to the root op (after
  //    bufferization it is the op with the root's name and loop count).
  SmallVector<linalg::LinalgOp> candidates;
  func.walk([&](linalg::LinalgOp op) {
    if (isCandidate(op))
      candidates.push_back(op);
  });
  for (linalg::LinalgOp op : candidates) {
    bool isRoot = !rootName.empty() && !rootSizes.empty() &&
                  op->getName().getStringRef() == rootName &&
                  static_cast<int64_t>(op.getNumLoops()) == rootSizes.size();
    SmallVector<int64_t> sizes = isRoot ? llvm::to_vector(rootSizes)
                                        : getHostRegisterTile(op, vectorBits);
    if (isRoot && linalg::isaContractionOpInterface(op)) {
      FailureOr<linalg::LinalgOp> blocked = blockReductionLoops(op);
      if (failed(blocked))
        return signalPassFailure();
      op = *blocked;
      // The copy of a packed block runs one row at a time (a loop, not
      // 256 unrolled row copies).
      if (linalg::GenericOp copy = packMatmulBlock(func, op))
        if (failed(tileWithLoops(copy, {1, 0}, "into rows")))
          return signalPassFailure();
    }
    if (failed(tileToRegisters(op, sizes)))
      return signalPassFailure();
  }

  // 2. Full tiles in the main loops, the remainder in the peeled ones; fold
  //    the now-constant tile sizes into static subview shapes.
  peelRegisterTileLoops();
  // Not converging within the iteration limit is no error: what is not
  // folded is only less optimized.
  (void)applyPatternsGreedily(func, *canonicalization);

  // 3. Vectorize the statically shaped tile ops. Contractions go straight to
  //    vector.contract (kiln-host-lower-vectors turns them into FMAs).
  SmallVector<linalg::LinalgOp> tileOps;
  func.walk([&](linalg::LinalgOp op) {
    if (isCandidate(op) && op.hasPureBufferSemantics() &&
        llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic) &&
        succeeded(linalg::vectorizeOpPrecondition(op)))
      tileOps.push_back(op);
  });
  IRRewriter rewriter(ctx);
  for (linalg::LinalgOp op : tileOps) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
        rewriter, op, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
        /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
        /*assumeDynamicDimsMatchVecSizes=*/false,
        /*createNamedContraction=*/true);
    // A failure leaves the op untouched: it becomes scalar loops.
    if (succeeded(result))
      rewriter.eraseOp(op);
  }
  (void)applyPatternsGreedily(func, *canonicalization);
}

} // namespace
