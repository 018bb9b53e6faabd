//===- FormDispatchRegions.cpp - Group ops into kiln.dispatch_region ------===//
//
// Decides which ops run together in one kernel. A group is emitted as a
// kiln.dispatch_region placed where its last op was; this is valid when every
// user of a group result outside the group comes after that op, which the
// grouping below guarantees.
//
// Row fusion: a group rooted at a reduction over its innermost loops also
// takes the consumers that broadcast the reduced values back along those
// loops and the further reductions over the same loops (softmax: max,
// exp(x - max), sum, divide; layernorm: mean, x - mean, variance, scale), so
// that one kernel reads a row block once and keeps the per-row values inside
// (docs/compiler.md). It is kept only when the whole chain ends in one result.
//
// Attention (with the fuse-attention option): the seven ops of an attention
// chain (kiln/DispatchCreation/Attention.h) form one group first.
//
//===----------------------------------------------------------------------===//
#include "kiln/DispatchCreation/Passes.h"

#include "DispatchUtils.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/DispatchCreation/Attention.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FORMDISPATCHREGIONSPASS
#include "kiln/DispatchCreation/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

using Group = llvm::SetVector<Operation *>;

class GroupBuilder {
public:
  GroupBuilder(Block &block, bool fuseAttention)
      : block(block), fuseAttention(fuseAttention) {
    unsigned index = 0;
    for (Operation &op : block)
      position[&op] = index++;
  }

  // Groups every root of the block; returns the groups in creation order.
  std::vector<Group> run() {
    if (fuseAttention)
      for (Operation &op : block)
        formAttentionGroup(&op);
    // Non-elementwise roots first so that elementwise ops join them rather
    // than forming kernels of their own.
    for (Operation &op : block)
      if (isLiveRoot(&op) && !isFusableElementwise(&op) &&
          !groupOf.count(&op))
        formGroup(&op);
    for (Operation &op : block)
      if (isLiveRoot(&op) && !groupOf.count(&op))
        formGroup(&op);
    return std::move(groups);
  }

private:
  // Dead side-effect free ops would become kernels whose results nobody
  // reads; canonicalization removes them instead.
  static bool isLiveRoot(Operation *op) {
    return isDispatchRoot(op) &&
           !(op->use_empty() && isMemoryEffectFree(op));
  }

  void formGroup(Operation *root) {
    Group group;
    group.insert(root);
    addProducers(root, group);
    // The root and its producers: where row fusion starts too.
    Group base = group;
    addConsumers(group, /*rows=*/std::nullopt);
    if (std::optional<RowDomain> rows = getRowDomain(root)) {
      Group fused = std::move(base);
      addConsumers(fused, rows);
      // Elementwise producers read by several row ops (a widening of the
      // input read by the max and by exp(x - max)) have all their users in
      // the group only now.
      for (size_t before = 0; before != fused.size();) {
        before = fused.size();
        SmallVector<Operation *> members(fused.begin(), fused.end());
        for (Operation *member : members)
          addProducers(member, fused);
      }
      if (fused.size() > group.size() && countYielded(fused) == 1)
        group = std::move(fused);
    }
    unsigned id = groups.size();
    for (Operation *op : group)
      groupOf[op] = id;
    // Keep program order inside the group.
    SmallVector<Operation *> sorted(group.begin(), group.end());
    llvm::sort(sorted, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
    groups.emplace_back(sorted.begin(), sorted.end());
  }

  // The attention chain ending at `op`, as one group, when the fused kernel
  // takes it and nothing outside reads its intermediate results.
  void formAttentionGroup(Operation *op) {
    std::optional<AttentionChain> chain = matchAttentionOnTensors(op);
    if (!chain || !isFusableAttention(*chain))
      return;
    SmallVector<Operation *> ops = chain->ops();
    Group group(ops.begin(), ops.end());
    for (Operation *member : ops)
      if (!isAvailable(member) ||
          (member != op && llvm::any_of(member->getUsers(), [&](auto *u) {
             return !group.contains(u);
           })))
        return;
    if (!outsideUsersFollow(group, op))
      return;
    unsigned id = groups.size();
    for (Operation *member : ops)
      groupOf[member] = id;
    llvm::sort(ops, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
    groups.emplace_back(ops.begin(), ops.end());
  }

  bool isAvailable(Operation *op) {
    return op && op->getBlock() == &block && !groupOf.count(op);
  }

  // Pulls in elementwise producers whose every user is already in the group:
  // they are computed once, inside this kernel. Contractions take none: a
  // kernel tiles them into blocks that each read a whole K panel of their
  // operands, which a fused producer would have to materialize per block
  // (GPU contraction kernels stream the operands from memory instead). Pads
  // take none either: a pad's tile reads a part of its source whose size
  // depends on the tile's position, so a fused producer's tile would have a
  // dynamic shape (GPU kernels cannot size its temporary; relu -> pad, as
  // before a padded convolution, failed to compile for GPUs).
  void addProducers(Operation *op, Group &group) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if ((linalgOp && linalg::isaContractionOpInterface(linalgOp)) ||
        isa<tensor::PadOp>(op))
      return;
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!isAvailable(producer) || group.contains(producer) ||
          !isFusableElementwise(producer))
        continue;
      bool allUsersInGroup = llvm::all_of(producer->getUsers(), [&](auto *u) {
        return group.contains(u);
      });
      if (!allUsersInGroup)
        continue;
      group.insert(producer);
      addProducers(producer, group);
    }
  }

  // The loops of a row-fusion root: static sizes, `parallel` leading
  // parallel loops, the rest reductions.
  struct RowDomain {
    SmallVector<int64_t> sizes;
    unsigned parallel;
  };

  // (d0, ..., dn-1) -> (d0, ..., d(parallel-1)): a row value read at every
  // point of the row.
  static AffineMap rowMap(unsigned loops, unsigned parallel,
                          MLIRContext *ctx) {
    return AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(
        parallel);
  }

  static std::optional<RowDomain> getRowDomain(Operation *op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
        linalgOp.getNumDpsInits() != 1 || !isa<linalg::GenericOp>(op))
      return std::nullopt;
    unsigned parallel = linalgOp.getNumParallelLoops();
    unsigned loops = linalgOp.getNumLoops();
    if (parallel == 0 || parallel == loops)
      return std::nullopt;
    SmallVector<utils::IteratorType> iterators =
        linalgOp.getIteratorTypesArray();
    for (unsigned i = 0; i < loops; ++i)
      if ((i < parallel) != (iterators[i] == utils::IteratorType::parallel))
        return std::nullopt;
    // The result is the row: indexed by the parallel loops in order.
    AffineMap init =
        linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0));
    if (init != rowMap(loops, parallel, op->getContext()))
      return std::nullopt;
    SmallVector<int64_t> sizes = linalgOp.getStaticLoopRanges();
    if (llvm::any_of(sizes, ShapedType::isDynamic))
      return std::nullopt;
    return RowDomain{std::move(sizes), parallel};
  }

  // Whether `op` runs over the rows' whole loop space: the same static sizes,
  // all parallel (elementwise) or the same parallel/reduction split.
  static bool spansRows(linalg::LinalgOp op, const RowDomain &rows) {
    if (op.getStaticLoopRanges() != ArrayRef<int64_t>(rows.sizes))
      return false;
    if (op.getNumReductionLoops() == 0)
      return true;
    std::optional<RowDomain> own = getRowDomain(op);
    return own && own->parallel == rows.parallel;
  }

  // Whether `consumer` reads every group result it uses without recomputing
  // group values: through a permutation (the identity for a contraction's
  // result) or, with `rows`, as a row value broadcast along the reduced
  // loops (indexed by the leading loops).
  bool readsGroupWithoutRecomputing(Operation *consumer, const Group &group,
                                    const std::optional<RowDomain> &rows) {
    auto linalgOp = cast<linalg::LinalgOp>(consumer);
    if (rows && !spansRows(linalgOp, *rows)) {
      // Consumers of the rows themselves (1 / sum, mean = sum / n) join by
      // permutation like any elementwise op.
      if (linalgOp.getNumReductionLoops() > 0)
        return false;
    }
    for (OpOperand &operand : consumer->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (!def || !group.contains(def))
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      // A contraction's kernel hands its consumer each result element in
      // registers, where it was computed (the GPU recipes' epilogue): the
      // consumer must read it at the same point, not transposed, and must
      // not ask for its loop indices (a causal mask), which the epilogue
      // does not provide.
      auto defLinalg = dyn_cast<linalg::LinalgOp>(def);
      if (defLinalg && linalg::isaContractionOpInterface(defLinalg) &&
          (!map.isIdentity() ||
           !linalgOp.getBlock()->getOps<linalg::IndexOp>().empty()))
        return false;
      if (!rows || !spansRows(linalgOp, *rows)) {
        if (!map.isPermutation())
          return false;
        continue;
      }
      // Over the rows' loop space, a row's kernel computes its own row
      // only: group values are read at the same point or broadcast from
      // the row.
      if (!map.isIdentity() &&
          map != rowMap(map.getNumDims(), rows->parallel,
                        consumer->getContext()))
        return false;
    }
    return true;
  }

  // How many group results are used outside the group (the region's
  // results).
  static unsigned countYielded(const Group &group) {
    unsigned count = 0;
    for (Operation *op : group)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !group.contains(user);
            }))
          ++count;
    return count;
  }

  // The region replaces the group at its last op, so every outside user of
  // a group result must come after `last`.
  bool outsideUsersFollow(const Group &group, Operation *last) {
    for (Operation *op : group)
      for (Operation *user : op->getUsers()) {
        if (group.contains(user))
          continue;
        Operation *ancestor = block.findAncestorOpInBlock(*user);
        if (!ancestor || position[ancestor] <= position[last])
          return false;
      }
    return true;
  }

  // With `rows`, also the row-fusion consumers (see the file comment).
  void addConsumers(Group &group, const std::optional<RowDomain> &rows) {
    bool changed = true;
    while (changed) {
      changed = false;
      // Candidates in program order, so the earliest consumer joins first.
      SmallVector<Operation *> candidates;
      for (Operation *op : group)
        for (Operation *user : op->getUsers())
          if (isAvailable(user) && !group.contains(user) &&
              (isFusableElementwise(user) ||
               (rows && isRowReduction(user, *rows))))
            candidates.push_back(user);
      llvm::sort(candidates, [&](Operation *a, Operation *b) {
        return position[a] < position[b];
      });
      for (Operation *candidate : candidates) {
        if (group.contains(candidate) ||
            !readsGroupWithoutRecomputing(candidate, group, rows))
          continue;
        Group extended = group;
        extended.insert(candidate);
        // A joining reduction brings its own initial value (a fill).
        if (!isFusableElementwise(candidate))
          addProducers(candidate, extended);
        if (!outsideUsersFollow(extended, lastOf(extended)))
          continue;
        group = std::move(extended);
        changed = true;
        break;
      }
    }
  }

  // A reduction over the same rows whose initial value is produced inside
  // the dispatch-to-be (a fill) or outside it.
  static bool isRowReduction(Operation *op, const RowDomain &rows) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    return linalgOp && linalgOp.getNumReductionLoops() > 0 &&
           spansRows(linalgOp, rows);
  }

  Operation *lastOf(const Group &group) {
    Operation *last = group.front();
    for (Operation *op : group)
      if (position[op] > position[last])
        last = op;
    return last;
  }

  Block &block;
  bool fuseAttention;
  llvm::DenseMap<Operation *, unsigned> position;
  llvm::DenseMap<Operation *, unsigned> groupOf;
  std::vector<Group> groups;
};

// Moves the (program-ordered) ops of `group` into a new dispatch region that
// yields every group result used outside the group.
static void wrapInDispatchRegion(OpBuilder &builder, const Group &group) {
  Operation *last = group.back();
  llvm::SmallVector<Value> yielded;
  for (Operation *op : group)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !group.contains(user); }))
        yielded.push_back(result);

  // The root (first non-elementwise op, else the first op) names the kernel
  // location, which is where kernel errors point.
  Operation *root = group.front();
  for (Operation *op : group)
    if (!isFusableElementwise(op)) {
      root = op;
      break;
    }

  builder.setInsertionPoint(last);
  auto region = DispatchRegionOp::create(builder, root->getLoc(),
                                         ValueRange(yielded).getTypes());
  Block *body = new Block();
  region.getBody().push_back(body);
  for (Operation *op : group)
    op->moveBefore(body, body->end());
  builder.setInsertionPointToEnd(body);
  YieldOp::create(builder, root->getLoc(), yielded);
  for (auto [value, result] : llvm::zip(yielded, region.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !region->isProperAncestor(use.getOwner());
    });
}

struct FormDispatchRegionsPass
    : kiln::impl::FormDispatchRegionsPassBase<FormDispatchRegionsPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    OpBuilder builder(&getContext());
    for (Block &block : func.getBody()) {
      std::vector<Group> groups = GroupBuilder(block, fuseAttention).run();
      for (const Group &group : groups)
        wrapInDispatchRegion(builder, group);
    }
  }
};

} // namespace
