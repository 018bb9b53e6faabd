//===- GPUMapToIdsPass.cpp - Foralls to workgroup and thread ids ----------===//
//
// Gives the workgroup and thread scf.foralls their meaning on a GPU: the
// block forall is run once per workgroup (gpu.block_id x), each thread
// forall is strided over the workgroup's threads (gpu.thread_id x).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUMAPTOIDSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Position of a linear mapping id (linear_dim_0 -> 0), or -1.
static int64_t linearDim(Attribute attr) {
  auto mapping = dyn_cast<DeviceMappingAttrInterface>(attr);
  if (!mapping || !mapping.isLinearMapping())
    return -1;
  return mapping.getRelativeIndex();
}

// Loop dims of `forall` ordered from the slowest varying (highest linear
// dim) to the fastest (linear_dim_0), or failure if the mapping is not a
// permutation of linear dims.
static FailureOr<SmallVector<unsigned>> linearOrder(scf::ForallOp forall) {
  ArrayAttr mapping = *forall.getMapping();
  unsigned n = mapping.size();
  SmallVector<unsigned> order(n, n);
  for (auto [i, attr] : llvm::enumerate(mapping)) {
    int64_t dim = linearDim(attr);
    if (dim < 0 || dim >= n || order[n - 1 - dim] != n)
      return forall.emitError()
             << "expected a mapping to distinct linear dims, found "
             << mapping;
    order[n - 1 - dim] = i;
  }
  return order;
}

// Trip count of each loop of `forall`, as constants where possible.
static SmallVector<OpFoldResult> tripCounts(OpBuilder &b,
                                            scf::ForallOp forall) {
  Location loc = forall.getLoc();
  SmallVector<OpFoldResult> trips;
  for (auto [lb, ub, step] :
       llvm::zip(forall.getMixedLowerBound(), forall.getMixedUpperBound(),
                 forall.getMixedStep())) {
    AffineExpr d0, d1, d2;
    bindDims(b.getContext(), d0, d1, d2);
    trips.push_back(affine::makeComposedFoldedAffineApply(
        b, loc, (d1 - d0).ceilDiv(d2), {lb, ub, step}));
  }
  return trips;
}

// Contraction tiles in groups of kGroupRows tile rows: consecutive
// workgroups walk down a group's rows before moving along N, so that the
// workgroups in flight share A's rows and B's columns in L2 (H100, wgmma,
// f16/bf16 8192^3: 589/602 TFLOP/s against 546-578/546-597 in row-major
// order; docs/performance.md). Returns the row-major linear index (over
// `rows` x `cols` tiles per batch) of the tile workgroup `linear` computes;
// grids of fewer than two groups keep row-major order.
constexpr int64_t kGroupRows = 8;
static Value groupTileRows(RewriterBase &rewriter, Location loc, Value linear,
                           int64_t rows, int64_t cols) {
  if (rows < 2 * kGroupRows || cols < 2)
    return linear;
  MLIRContext *context = rewriter.getContext();
  AffineExpr l = getAffineDimExpr(0, context);
  auto apply = [&](AffineExpr e, ValueRange operands) -> Value {
    return affine::AffineApplyOp::create(
        rewriter, loc, AffineMap::get(operands.size(), 0, e), operands);
  };
  int64_t tiles = rows * cols, groupTiles = kGroupRows * cols;
  int64_t fullGroups = rows / kGroupRows, lastRows = rows % kGroupRows;
  Value batch = apply(l.floorDiv(tiles), {linear});
  Value within = apply(l % tiles, {linear});
  Value group = apply(l.floorDiv(groupTiles), {within});
  Value inGroup = apply(l % groupTiles, {within});
  // The row-major index of tile i of group g when the group has
  // `groupRows` rows (a constant: no division by a value).
  AffineExpr g, i;
  bindDims(context, g, i);
  auto tileIn = [&](int64_t groupRows) {
    return apply(g * kGroupRows * cols + (i % groupRows) * cols +
                     i.floorDiv(groupRows),
                 {group, inGroup});
  };
  Value tile = tileIn(kGroupRows);
  if (lastRows) {
    // The last group has the remaining rows.
    Value last = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::uge, group,
        arith::ConstantIndexOp::create(rewriter, loc, fullGroups));
    tile = arith::SelectOp::create(rewriter, loc, last, tileIn(lastRows), tile);
  }
  AffineExpr b, t;
  bindDims(context, b, t);
  return apply(b * tiles + t, {batch, tile});
}

// Replaces `forall` by its body, executed for the linearized iteration
// `linear` (< product of trip counts).
static void inlineForallBody(RewriterBase &rewriter, scf::ForallOp forall,
                             ArrayRef<unsigned> order,
                             ArrayRef<OpFoldResult> trips, Value linear,
                             Operation *insertBefore) {
  Location loc = forall.getLoc();
  rewriter.setInsertionPoint(insertBefore);
  SmallVector<OpFoldResult> basis;
  for (unsigned dim : order)
    basis.push_back(trips[dim]);
  SmallVector<Value> indices(order.size());
  if (order.size() == 1) {
    indices[order[0]] = linear;
  } else {
    auto delin =
        affine::AffineDelinearizeIndexOp::create(rewriter, loc, linear, basis);
    for (auto [pos, dim] : llvm::enumerate(order))
      indices[dim] = delin.getResult(pos);
  }
  SmallVector<Value> ivs;
  for (auto [index, lb, step] :
       llvm::zip(indices, forall.getMixedLowerBound(), forall.getMixedStep())) {
    AffineExpr d0, d1, d2;
    bindDims(rewriter.getContext(), d0, d1, d2);
    ivs.push_back(getValueOrCreateConstantIndexOp(
        rewriter, loc,
        affine::makeComposedFoldedAffineApply(rewriter, loc, d0 + d1 * d2,
                                              {lb, index, step})));
  }
  Block *body = forall.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, insertBefore, ivs);
  rewriter.eraseOp(forall);
}

// Whether `op` only reads memory or has no memory effects.
static bool isReadOnly(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.onlyHasEffect<MemoryEffects::Read>();
}

// In the body of a thread loop that runs `copies` iterations of a forall
// per step: moves every load (and the index arithmetic it needs) ahead of
// the first store, so that the copies' loads are in flight together. The
// forall's iterations are independent, so any interleaving of them is one
// of its valid executions. Bodies with other effects are left alone.
static void hoistLoads(scf::ForOp loop) {
  Block *body = loop.getBody();
  for (Operation &op : body->without_terminator())
    if (op.getNumRegions() != 0 ||
        (!isReadOnly(&op) && !isa<memref::StoreOp, vector::StoreOp,
                                  vector::TransferWriteOp>(op)))
      return;
  // Loads and the index arithmetic they need move; what computes on loaded
  // values stays where it is (after all the loads now).
  llvm::SmallPtrSet<Operation *, 32> early, loaded;
  Operation *last = nullptr; // the last op moved to the front
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator())) {
    bool usesLoaded = llvm::any_of(op.getOperands(), [&](Value v) {
      return loaded.contains(v.getDefiningOp());
    });
    bool isLoad = !isMemoryEffectFree(&op) && isReadOnly(&op);
    if (usesLoaded || isLoad)
      loaded.insert(&op);
    if (!isReadOnly(&op) || usesLoaded)
      continue;
    bool ready = llvm::all_of(op.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def ? def->getBlock() != body || early.contains(def)
                 : v.getParentBlock() != body || v == loop.getInductionVar();
    });
    if (!ready)
      continue;
    if (last)
      op.moveAfter(last);
    else
      op.moveBefore(body, body->begin());
    early.insert(&op);
    last = &op;
  }
}

struct GPUMapToIdsPass
    : public kiln::impl::GPUMapToIdsPassBase<GPUMapToIdsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *ctx = &getContext();
    FailureOr<GPUStrategyAttr> strategy = readGPUStrategy(func);
    if (failed(strategy))
      return signalPassFailure();
    int64_t workgroupSize = strategy->getWorkgroupSize();

    SmallVector<scf::ForallOp> blockForalls, threadForalls;
    WalkResult walk = func.walk([&](scf::ForallOp op) {
      if (!op.getMapping() || op.getMapping()->empty()) {
        op.emitError() << "unmapped scf.forall in a GPU kernel";
        return WalkResult::interrupt();
      }
      if (op.getNumResults() != 0) {
        op.emitError() << "scf.forall still has tensor results; bufferize "
                          "first";
        return WalkResult::interrupt();
      }
      Attribute first = op.getMapping()->getValue().front();
      if (isa<gpu::GPUBlockMappingAttr>(first))
        blockForalls.push_back(op);
      else if (isa<gpu::GPUThreadMappingAttr>(first))
        threadForalls.push_back(op);
      else {
        op.emitError() << "unsupported scf.forall mapping " << first;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (blockForalls.size() > 1) {
      blockForalls[1].emitError()
          << "a GPU kernel distributes at most one scf.forall over workgroups";
      return signalPassFailure();
    }

    IRRewriter rewriter(ctx);
    // Threads: iteration `lin` runs on thread lin % W, in round lin / W.
    for (scf::ForallOp forall : threadForalls) {
      FailureOr<SmallVector<unsigned>> order = linearOrder(forall);
      if (failed(order))
        return signalPassFailure();
      Location loc = forall.getLoc();
      rewriter.setInsertionPoint(forall);
      SmallVector<OpFoldResult> trips = tripCounts(rewriter, forall);
      OpFoldResult total = rewriter.getIndexAttr(1);
      for (OpFoldResult trip : trips) {
        AffineExpr d0, d1;
        bindDims(ctx, d0, d1);
        total = affine::makeComposedFoldedAffineApply(rewriter, loc, d0 * d1,
                                                      {total, trip});
      }
      Value tid = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
      std::optional<int64_t> staticTotal = getConstantIntValue(total);
      Operation *insertBefore;
      if (staticTotal && *staticTotal <= workgroupSize) {
        if (*staticTotal == workgroupSize) {
          insertBefore = forall;
        } else {
          Value bound = arith::ConstantIndexOp::create(rewriter, loc,
                                                       *staticTotal);
          Value active = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::ult, tid, bound);
          auto ifOp = scf::IfOp::create(rewriter, loc, active, /*withElseRegion=*/false);
          insertBefore = ifOp.thenBlock()->getTerminator();
        }
        inlineForallBody(rewriter, forall, *order, trips, tid, insertBefore);
        continue;
      }
      // A static number of rounds that splits evenly: `copies` rounds per
      // step, their loads issued together.
      int64_t copies = 1;
      if (staticTotal)
        for (int64_t c : {4, 2})
          if (*staticTotal % (workgroupSize * c) == 0) {
            copies = c;
            break;
          }
      Value ub = getValueOrCreateConstantIndexOp(rewriter, loc, total);
      Value step = arith::ConstantIndexOp::create(rewriter, loc,
                                                  workgroupSize * copies);
      auto loop = scf::ForOp::create(rewriter, loc, tid, ub, step);
      // Copies 1 .. copies - 1 are clones, made before the forall's own body
      // (copy 0) is moved into the loop.
      SmallVector<scf::ForallOp> clones;
      rewriter.setInsertionPoint(forall);
      for (int64_t c = 1; c < copies; ++c)
        clones.push_back(cast<scf::ForallOp>(rewriter.clone(*forall)));
      Operation *end = loop.getBody()->getTerminator();
      inlineForallBody(rewriter, forall, *order, trips,
                       loop.getInductionVar(), end);
      for (auto [c, copy] : llvm::enumerate(clones)) {
        rewriter.setInsertionPoint(end);
        Value linear = arith::AddIOp::create(
            rewriter, loc, loop.getInductionVar(),
            arith::ConstantIndexOp::create(rewriter, loc,
                                           (c + 1) * workgroupSize));
        inlineForallBody(rewriter, copy, *order, trips, linear, end);
      }
      if (copies > 1)
        hoistLoads(loop);
    }

    // Workgroups: the grid is linear along x.
    int64_t grid = 1;
    if (!blockForalls.empty()) {
      scf::ForallOp forall = blockForalls.front();
      FailureOr<SmallVector<unsigned>> order = linearOrder(forall);
      if (failed(order))
        return signalPassFailure();
      rewriter.setInsertionPoint(forall);
      SmallVector<OpFoldResult> trips = tripCounts(rewriter, forall);
      for (OpFoldResult trip : trips) {
        std::optional<int64_t> count = getConstantIntValue(trip);
        if (!count) {
          forall.emitError() << "workgroup scf.forall must have static bounds";
          return signalPassFailure();
        }
        grid *= *count;
      }
      Value bid = gpu::BlockIdOp::create(rewriter, forall.getLoc(),
                                         gpu::Dimension::x);
      // Contraction tiles (batch..., M, N, N fastest) in groups of rows.
      if (strategy->getKind() == KernelKind::Contraction && order->size() >= 2)
        bid = groupTileRows(
            rewriter, forall.getLoc(), bid,
            *getConstantIntValue(trips[(*order)[order->size() - 2]]),
            *getConstantIntValue(trips[order->back()]));
      inlineForallBody(rewriter, forall, *order, trips, bid, forall);
    }
    func->setAttr(kWorkgroupCountAttrName,
                  DenseI64ArrayAttr::get(ctx, {grid, 1, 1}));
    func->setAttr(kWorkgroupSizeAttrName,
                  DenseI64ArrayAttr::get(ctx, {workgroupSize, 1, 1}));
    // Its last reader: what the runtime needs of the strategy is recorded.
    func->removeAttr(kGPUStrategyAttrName);
  }
};

} // namespace
