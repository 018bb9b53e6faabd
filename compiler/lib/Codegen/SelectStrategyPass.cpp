//===- SelectStrategyPass.cpp - Host workgroup strategy selection ---------===//
//
// Picks, per kernel, how the op producing the kernel's result is split into
// workgroups, and records the choice as the `kiln.host_strategy` attribute.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"

#include "CodegenUtils.h"
#include "HostRegisterTiles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTSELECTSTRATEGYPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// The workgroup grid has three dimensions, so at most three loops are split.
constexpr unsigned kMaxDistributedLoops = 3;
// Splitting the innermost (contiguous) loop below this many elements per
// workgroup costs more in lost locality than it gains in parallelism.
constexpr int64_t kMinInnermostTile = 16;

struct Strategy {
  KernelKind kind = KernelKind::Single;
  std::string root;
  SmallVector<int64_t> tileSizes;
  // Number of tiles per tiled loop, in loop order (only loops with a non-zero
  // tile size).
  SmallVector<int64_t> tileCounts;
  // Register tile of the root op, one entry per root loop (empty: the root
  // is not a linalg op, or vectorization is off).
  SmallVector<int64_t> vectorSizes;
};

// The host tiles pooling like any convolution, and a root that is no
// linalg op like elementwise code.
static KernelKind getHostRootKind(Operation *root) {
  // Every kind classifyRootOp names is a KernelKind.
  KernelKind kind = *symbolizeKernelKind(classifyRootOp(root));
  if (kind == KernelKind::Pooling)
    return KernelKind::Conv;
  if (kind == KernelKind::Generic)
    return KernelKind::Elementwise;
  return kind;
}

// Iteration-space points of a loop nest of `sizes` (an empty loop counts
// as one point).
static int64_t countPoints(ArrayRef<int64_t> sizes) {
  int64_t points = 1;
  for (int64_t size : sizes)
    points *= std::max<int64_t>(size, 1);
  return points;
}

// Smallest tile size >= `minTile` that divides `size` (no partial tiles),
// unless that is more than twice `minTile` (then a partial last tile is
// cheaper than losing the parallelism).
static int64_t pickTileSize(int64_t size, int64_t minTile) {
  for (int64_t t = minTile; t <= std::min(size, 2 * minTile); ++t)
    if (size % t == 0)
      return t;
  return minTile;
}

static Strategy selectStrategy(func::FuncOp func, int64_t maxWorkgroups,
                               int64_t minWorkPerWorkgroup,
                               int64_t vectorWidth) {
  Strategy single;
  if (func.getNumResults() != 1)
    return single;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Operation *producer = ret.getOperand(0).getDefiningOp();
  auto tileable = dyn_cast_or_null<TilingInterface>(producer);
  if (!tileable || producer->getNumResults() != 1)
    return single;

  std::optional<SmallVector<int64_t>> producerSizes =
      getStaticIterationSizes(producer);
  if (!producerSizes)
    return single;
  SmallVector<int64_t> sizes = std::move(*producerSizes);
  Operation *root = findRootOp(func, producer);
  std::optional<SmallVector<int64_t>> rootSizes = getStaticIterationSizes(root);
  int64_t work =
      std::max(countPoints(sizes), rootSizes ? countPoints(*rootSizes) : 0);

  Strategy strategy;
  strategy.kind = getHostRootKind(root);
  strategy.root = root->getName().getStringRef().str();
  strategy.tileSizes.assign(sizes.size(), 0);
  // Convolutions have no register tiling (kiln-host-vectorize leaves them
  // scalar), so none is recorded.
  if (auto linalgRoot = dyn_cast<linalg::LinalgOp>(root);
      linalgRoot && vectorWidth > 0 && strategy.kind != KernelKind::Conv)
    strategy.vectorSizes = getHostRegisterTile(linalgRoot, vectorWidth);

  int64_t wanted = std::clamp<int64_t>(work / std::max<int64_t>(
                                                  minWorkPerWorkgroup, 1),
                                       1, maxWorkgroups);
  // Candidate loops: parallel loops with more than one iteration, outermost
  // first. Reduction loops are never split: a workgroup must own every
  // output element it writes.
  SmallVector<utils::IteratorType> iterators =
      tileable.getLoopIteratorTypes();
  // A kernel whose result runs over its root reduction's whole loop space
  // (row fusion: softmax, layernorm) owns whole rows: the loops the root
  // reduces are not split either, or every workgroup would reduce the
  // whole row again.
  if (auto linalgRoot = dyn_cast<linalg::LinalgOp>(root);
      linalgRoot && root != producer && rootSizes && *rootSizes == sizes) {
    SmallVector<utils::IteratorType> rootIterators =
        linalgRoot.getIteratorTypesArray();
    for (auto [i, it] : llvm::enumerate(rootIterators))
      if (it == utils::IteratorType::reduction)
        iterators[i] = utils::IteratorType::reduction;
  }
  SmallVector<unsigned> candidates;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel && sizes[i] > 1 &&
        candidates.size() < kMaxDistributedLoops)
      candidates.push_back(i);

  // Split the loop with the largest tile in two until there are enough
  // workgroups: tiles stay close to square (matmul/conv reuse), and the
  // contiguous innermost loop keeps at least kMinInnermostTile elements.
  SmallVector<int64_t> counts(candidates.size(), 1);
  auto tileOf = [&](unsigned c) {
    return llvm::divideCeil(sizes[candidates[c]], counts[c]);
  };
  auto minTileOf = [&](unsigned c) {
    return candidates[c] + 1 == sizes.size() ? kMinInnermostTile : 1;
  };
  int64_t total = 1;
  while (total < wanted) {
    std::optional<unsigned> best;
    for (unsigned c = 0; c < candidates.size(); ++c)
      if (tileOf(c) >= 2 * minTileOf(c) && (!best || tileOf(c) > tileOf(*best)))
        best = c;
    if (!best)
      break;
    total /= counts[*best];
    counts[*best] *= 2;
    total *= counts[*best];
  }
  for (unsigned c = 0; c < candidates.size(); ++c) {
    if (counts[c] == 1)
      continue;
    int64_t size = sizes[candidates[c]];
    int64_t tile = pickTileSize(size, tileOf(c));
    int64_t count = llvm::divideCeil(size, tile);
    if (count <= 1)
      continue;
    strategy.tileSizes[candidates[c]] = tile;
    strategy.tileCounts.push_back(count);
  }
  if (strategy.tileCounts.empty()) {
    strategy.tileSizes.clear();
    return strategy;
  }
  return strategy;
}

struct HostSelectStrategyPass
    : public kiln::impl::HostSelectStrategyPassBase<HostSelectStrategyPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Strategy strategy =
        selectStrategy(func, maxWorkgroups, minWorkPerWorkgroup, vectorWidth);
    // Workgroup grid: the innermost tiled loop runs along x.
    SmallVector<int64_t> grid(strategy.tileCounts.rbegin(),
                              strategy.tileCounts.rend());
    grid.resize(3, 1);

    auto attr = HostStrategyAttr::getChecked(
        [&] { return func.emitError() << "invalid host strategy: "; },
        func.getContext(), strategy.kind, StringRef(strategy.root),
        ArrayRef<int64_t>(strategy.tileSizes), ArrayRef<int64_t>(grid),
        int64_t(std::max<int64_t>(vectorWidth, 0)),
        ArrayRef<int64_t>(strategy.vectorSizes));
    if (!attr)
      return signalPassFailure();
    func->setAttr(kHostStrategyAttrName, attr);
  }
};

} // namespace
