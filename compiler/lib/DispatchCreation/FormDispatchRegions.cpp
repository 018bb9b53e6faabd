//===- FormDispatchRegions.cpp - Group ops into kiln.dispatch_region ------===//
//
// Decides which ops run together in one kernel. A group is emitted as a
// kiln.dispatch_region placed where its last op was; this is valid when every
// user of a group result outside the group comes after that op, which the
// grouping below guarantees.
//
//===----------------------------------------------------------------------===//
#include "kiln/DispatchCreation/Passes.h"

#include "DispatchUtils.h"
#include "kiln/Dialect/Kiln/KilnOps.h"
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
  explicit GroupBuilder(Block &block) : block(block) {
    unsigned index = 0;
    for (Operation &op : block)
      position[&op] = index++;
  }

  // Groups every root of the block; returns the groups in creation order.
  std::vector<Group> run() {
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
    addConsumers(group);
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

  bool isAvailable(Operation *op) {
    return op && op->getBlock() == &block && !groupOf.count(op);
  }

  // Pulls in elementwise producers whose every user is already in the group:
  // they are computed once, inside this kernel.
  void addProducers(Operation *op, Group &group) {
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

  // Whether `consumer` reads every group result it uses through a
  // permutation, i.e. without recomputing or broadcasting group values.
  bool readsGroupByPermutation(Operation *consumer, const Group &group) {
    auto linalgOp = cast<linalg::LinalgOp>(consumer);
    for (OpOperand &operand : consumer->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (!def || !group.contains(def))
        continue;
      if (!linalgOp.getMatchingIndexingMap(&operand).isPermutation())
        return false;
    }
    return true;
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

  void addConsumers(Group &group) {
    bool changed = true;
    while (changed) {
      changed = false;
      // Candidates in program order, so the earliest consumer joins first.
      SmallVector<Operation *> candidates;
      for (Operation *op : group)
        for (Operation *user : op->getUsers())
          if (isAvailable(user) && !group.contains(user) &&
              isFusableElementwise(user))
            candidates.push_back(user);
      llvm::sort(candidates, [&](Operation *a, Operation *b) {
        return position[a] < position[b];
      });
      for (Operation *candidate : candidates) {
        if (group.contains(candidate) ||
            !readsGroupByPermutation(candidate, group))
          continue;
        Group extended = group;
        extended.insert(candidate);
        if (!outsideUsersFollow(extended, lastOf(extended)))
          continue;
        group = std::move(extended);
        changed = true;
        break;
      }
    }
  }

  Operation *lastOf(const Group &group) {
    Operation *last = group.front();
    for (Operation *op : group)
      if (position[op] > position[last])
        last = op;
    return last;
  }

  Block &block;
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
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    OpBuilder builder(&getContext());
    for (Block &block : func.getBody()) {
      std::vector<Group> groups = GroupBuilder(block).run();
      for (const Group &group : groups)
        wrapInDispatchRegion(builder, group);
    }
  }
};

} // namespace
