//===- GPUSelectStrategyPass.cpp - GPU strategy selection -----------------===//
//
// Picks, per kernel, how the op producing the result is split into
// workgroups and how a workgroup's work is spread over its threads, from the
// root op's kind, the iteration-space shape and the chip's subgroup size.
// The choice is data (`kiln.gpu_strategy`) that later passes consume.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include <limits>

#include "CodegenUtils.h"
#include "MatrixIntrinsics.h"
#include "kiln/DispatchCreation/Attention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUSELECTSTRATEGYPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Subgroups per workgroup: enough to hide latency, few enough that small
// kernels still spread over many compute units.
constexpr int64_t kSubgroupsPerWorkgroup = 4;
// Widest access a thread issues in one instruction.
constexpr int64_t kVectorBits = 128;

struct GPUStrategy {
  KernelKind kind = KernelKind::Single;
  SmallVector<int64_t> workgroupTile;
  int64_t workgroupCount = 1;
  int64_t workgroupSize = 1;
  int64_t threadTile = 1;
  GPUReduction reduction = GPUReduction::None;
  // "workgroup" reductions: elements of the reduced loop a thread reads per
  // step (one 128-bit load of each contiguous input); 1: scalar loads.
  int64_t reductionVector = 1;
  // Matrix-core instruction of "contraction" and "attention" kernels.
  std::optional<MatrixIntrinsic> intrinsic;
  // "contraction" kernels (kiln-gpu-lower-contraction): subgroups per
  // workgroup along M and N, and the K slice staged per step.
  SmallVector<int64_t> subgroupGrid;
  int64_t kTile = 0;
  // Shared-memory stages of the K loop (cp.async forms); 0: not pipelined
  // through shared stages.
  int64_t pipelineDepth = 0;
  // mma.sync "contraction" kernels whose fragments are read by the layout
  // table instead of ldmatrix.
  bool layoutFragments = false;
  // SIMT "contraction" kernels (f32): outputs per thread along M and N.
  SmallVector<int64_t> simtTile;
  // "attention" kernels: query rows per workgroup, and whether Q's
  // fragments are read from shared memory per key block.
  int64_t queryRows = 0;
  bool qInShared = false;
};

// One contraction tiling: workgroup tile, K slice, and the subgroup grid
// (matrix cores) or the outputs per thread (SIMT).
struct ContractionTiling {
  int64_t tileM, tileN, tileK, subgroupsM, subgroupsN;
  int64_t pipelineDepth = 0;
  // Lanes of a subgroup of the tiling's instruction when it is not the
  // chip's subgroup (warpgroups of 128 threads for wgmma); 0: the chip's.
  int64_t subgroupLanes = 0;
};

// Fewer workgroups than this many large tiles leave SMs idle: use the
// smaller tiles then.
constexpr int64_t kLargeTileWorkgroups = 96;

// Shared memory of a contraction tiling as kiln-gpu-lower-contraction lays
// it out: A and B slices per stage, unpadded (swizzled) with cp.async
// stages, else one stage with rows padded by 8 elements; the SIMT form
// keeps A transposed and both rows padded by 4 floats.
static int64_t contractionSharedBytes(const ContractionTiling &tiling,
                                      int64_t elementBytes, bool simt) {
  if (simt)
    return tiling.tileK * (tiling.tileM + tiling.tileN + 8) * elementBytes;
  // The warpgroup form's stages start on 1024-byte swizzle atoms: in the
  // dynamic buffer (16-byte aligned) up to 1008 bytes go to realigning it.
  int64_t realignment = tiling.subgroupLanes ? 1024 - 16 : 0;
  int64_t stages = std::max<int64_t>(1, tiling.pipelineDepth);
  int64_t padding = tiling.pipelineDepth ? 0 : 16 / elementBytes;
  return realignment + stages * elementBytes *
                           (tiling.tileM * (tiling.tileK + padding) +
                            tiling.tileK * (tiling.tileN + padding));
}

// NVIDIA chips with mma.sync m16n8k16 for f16 and bf16 (sm_80 and later).
static bool hasMmaSync(StringRef chip) {
  std::optional<unsigned> sm = getNvidiaSmVersion(chip);
  return sm && *sm >= 80;
}

// The contraction recipe for a root that matchRecipeContraction accepts
// (matmul, batch_matmul, B transposed) with an f32 accumulator: f16 or bf16
// inputs on a chip with mma.sync get 128x128 tiles of 4 warps when there
// are enough of them to fill the GPU, else 64x64 tiles; on an AMD chip
// with matrix cores (MFMA, WMMA; getAMDMatrixIntrinsic) the same, or 32x32
// tiles of one subgroup when 64 does not divide M or N; f32 inputs (any
// GPU, B not transposed) the SIMT form with the same tile sizes. Each batch
// is its own workgroups. M, N and K must be multiples of the tiles, except
// for the cp.async form, which masks partial tiles when K and N are
// multiples of 8 (other shapes keep the generic strategy). The op producing
// the result is the contraction or an elementwise consumer over its batch x
// M x N space.
static bool selectContraction(Operation *root, Operation *producer,
                              StringRef chip, int64_t subgroupSize,
                              bool matrixCores, bool layoutFragments,
                              int64_t maxSharedBytes, GPUStrategy &strategy) {
  std::optional<RecipeContraction> contraction = matchRecipeContraction(root);
  if (!contraction)
    return false;
  auto linalgOp = cast<linalg::LinalgOp>(root);
  std::optional<SmallVector<int64_t>> sizes = getStaticIterationSizes(root);
  std::optional<SmallVector<int64_t>> producerSizes =
      getStaticIterationSizes(producer);
  if (!sizes || !producerSizes)
    return false;
  int64_t m = (*sizes)[contraction->m], n = (*sizes)[contraction->n],
          k = (*sizes)[contraction->k];
  SmallVector<int64_t> resultSizes;
  int64_t batches = 1;
  for (unsigned dim : contraction->batch) {
    resultSizes.push_back((*sizes)[dim]);
    batches *= (*sizes)[dim];
  }
  resultSizes.append({m, n});
  if (producer != root) {
    auto generic = dyn_cast<linalg::GenericOp>(producer);
    if (!generic || generic.getNumLoops() != resultSizes.size() ||
        generic.getNumParallelLoops() != resultSizes.size() ||
        *producerSizes != resultSizes)
      return false;
  }
  auto elementType = [](Value v) { return getElementTypeOrSelf(v.getType()); };
  Type a = elementType(linalgOp.getDpsInputs()[0]);
  Type b = elementType(linalgOp.getDpsInputs()[1]);
  // f32 accumulators of f16, bf16 and f32; i32 of signed 8-bit integers.
  Type acc = elementType(linalgOp.getDpsInits()[0]);
  bool i8 = a.isInteger(8);
  bool signedCasts =
      llvm::none_of(linalgOp.getBlock()->getOperations(),
                    [](Operation &op) { return isa<arith::ExtUIOp>(op); });
  if (a != b || (a.isF32() && contraction->transposedB) ||
      (i8 ? !acc.isInteger(32) || !signedCasts : !acc.isF32()))
    return false;

  // The form for these operands on this chip, and its tilings (largest
  // first).
  ArrayRef<ContractionTiling> tilings;
  std::optional<MatrixIntrinsic> intrinsic;
  bool layout = false; // mma.sync fragments read by the layout table
  int64_t lanes = 0;  // per subgroup; 0: the SIMT form (threads = 256)
  if (a.isF32()) {
    // SIMT (any GPU): 16x16 threads, each an 8x8 (128x128 tiles) or 4x4
    // (64x64 tiles) block of FMAs, K slices of 16.
    static const ContractionTiling kSimt[] = {{128, 128, 16, 8, 8},
                                              {64, 64, 16, 4, 4}};
    tilings = kSimt;
  } else if (std::optional<MatrixIntrinsic> amd =
                 matrixCores ? getAMDMatrixIntrinsic(chip, subgroupSize, a)
                             : std::nullopt) {
    // AMD matrix cores (MFMA on CDNA, WMMA on RDNA 3/4): 2x2 subgroups of
    // 64x64 or 32x32, or one subgroup of 32x32 for small shapes; one LDS
    // stage with padded rows.
    static const ContractionTiling kAmd[] = {
        {128, 128, 32, 2, 2}, {64, 64, 32, 2, 2}, {32, 32, 32, 1, 1}};
    // K slices of 64 bytes for 8-bit integers (the gfx950 form takes 64).
    static const ContractionTiling kAmdI8[] = {
        {128, 128, 64, 2, 2}, {64, 64, 64, 2, 2}, {32, 32, 64, 1, 1}};
    // RDNA 3's WMMA holds whole rows of A and columns of B in each lane
    // (both half-waves alike): a 64x64 subgroup tile's fragments and
    // accumulators take 243-256 of the 256 VGPRs (and spill for some
    // shapes), so its 128x128 tiles use 4x2 subgroups of 32x64 instead.
    static const ContractionTiling kAmdReplicated[] = {
        {128, 128, 32, 4, 2}, {64, 64, 32, 2, 2}, {32, 32, 32, 1, 1}};
    tilings = i8 ? ArrayRef<ContractionTiling>(kAmdI8)
              : getMatrixIntrinsicInfo(*amd).replication > 1
                  ? ArrayRef<ContractionTiling>(kAmdReplicated)
                  : ArrayRef<ContractionTiling>(kAmd);
    intrinsic = amd;
    lanes = subgroupSize;
  } else if (i8 && hasMmaSync(chip) && subgroupSize == 32) {
    // NVIDIA 8-bit integers: mma.sync m16n8k32 with fragments read by the
    // layout table from one padded stage (no ldmatrix form for 8 bits).
    static const ContractionTiling kLayoutI8[] = {{128, 128, 64, 2, 2},
                                                  {64, 64, 64, 2, 2}};
    tilings = kLayoutI8;
    intrinsic = MatrixIntrinsic::MMA_SYNC_I32_16x8x32_S8;
    lanes = 32;
  } else if ((a.isF16() || a.isBF16()) &&
             hasWarpgroupMatrixInstructions(chip) && !layoutFragments &&
             subgroupSize == 32) {
    // NVIDIA sm_90a: wgmma, one or two warpgroups along M, each 64 rows by
    // the tile's N; K slices of 64 (one 128-byte swizzle row) in 4
    // cp.async stages (192, 128 or 96 KiB). Measured on an H100
    // (docs/performance.md), f16 4096^3 / 8192^3 in TFLOP/s: 128x256 with 4
    // stages 619 / 578, with 3 stages 492 / 514, 128x128 with 4 stages
    // 493 / 471 (mma.sync's best: 420 / 405). mma.sync 64x64 where shared
    // memory is too small for the warpgroup stages. 128x64 (m64n64k16) for
    // N of 64 (below: tilings that mask most of their work give way).
    static const ContractionTiling kWarpgroup[] = {{128, 256, 64, 2, 1, 4, 128},
                                                   {128, 128, 64, 2, 1, 4, 128},
                                                   {64, 128, 64, 1, 1, 4, 128},
                                                   {128, 64, 64, 2, 1, 4, 128},
                                                   {64, 64, 32, 2, 2, 3}};
    tilings = kWarpgroup;
    intrinsic = a.isF16() ? MatrixIntrinsic::MMA_SYNC_F32_16x8x16_F16
                          : MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16;
    lanes = 32;
  } else if ((a.isF16() || a.isBF16()) && hasMmaSync(chip) &&
             subgroupSize == 32) {
    // NVIDIA: mma.sync, 2x2 warps (each 64x64 of a 128x128 tile, or 32x32
    // of a 64x64 tile), cp.async stages of 16 KiB (128x128: 4 stages, 64
    // KiB of dynamic shared memory; 3 where only 48 KiB fit) or 8 KiB
    // (64x64: 3 stages). Measured on an H100, f16 4096^3 and 8192^3 (TFLOP/s,
    // docs/performance.md): 4 stages 416 / 427, 3 stages 400 / 406; warps of
    // 64x32 (2x4) 329-336, 2 stages 320-331; 128x256 and 256x128 tiles of 8
    // warps 324-396 / 340-399; K slices of 64 387-395 / 395-420; grouping
    // workgroups for L2 reuse made no difference.
    static const ContractionTiling kMmaSync[] = {{128, 128, 32, 2, 2, 4},
                                                 {128, 128, 32, 2, 2, 3},
                                                 {64, 64, 32, 2, 2, 3}};
    // With layout fragments: the AMD forms' data path (one padded stage,
    // fragments read by the layout table), to test it on NVIDIA GPUs.
    static const ContractionTiling kLayout[] = {{128, 128, 32, 2, 2},
                                                {64, 64, 32, 2, 2}};
    tilings = layoutFragments ? ArrayRef<ContractionTiling>(kLayout)
                              : ArrayRef<ContractionTiling>(kMmaSync);
    layout = layoutFragments;
    intrinsic = a.isF16() ? MatrixIntrinsic::MMA_SYNC_F32_16x8x16_F16
                          : MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16;
    lanes = 32;
  } else {
    return false;
  }
  // The cp.async form (NVIDIA) masks partial tiles: rows and columns past
  // M and N, and K past its end, are copied as zeros and never stored. Its
  // 16-byte copies need rows of whole 16-byte chunks, and its paired stores
  // whole pairs: K and N multiples of 8 elements.
  int64_t chunk = 128 / a.getIntOrFloatBitWidth();
  bool edges = intrinsic && usesLdMatrix(*intrinsic) && !layout &&
               k % chunk == 0 && n % chunk == 0;
  auto workgroups = [&](const ContractionTiling &tiling) {
    return batches * llvm::divideCeil(m, tiling.tileM) *
           llvm::divideCeil(n, tiling.tileN);
  };
  auto usable = [&](const ContractionTiling &tiling) {
    bool divides =
        m % tiling.tileM == 0 && n % tiling.tileN == 0 && k % tiling.tileK == 0;
    if ((!divides && !edges) ||
        contractionSharedBytes(tiling, a.getIntOrFloatBitWidth() / 8,
                               lanes == 0) > maxSharedBytes)
      return false;
    return !(tiling.tileM == 128 && workgroups(tiling) < kLargeTileWorkgroups &&
             ((m % 64 == 0 && n % 64 == 0) || edges));
  };
  // The work of a tiling over the product's (masked rows and columns of
  // partial tiles included), relative to M x N. A tiling that pads more than
  // a quarter gives way to a later usable one that pads less: N = 64 takes
  // 128x64 warpgroup tiles instead of 128x256 with three quarters of every
  // instruction masked (a 3x3x64 -> 64 convolution as a matmul of N 64).
  auto padding = [&](const ContractionTiling &tiling) {
    return double(llvm::divideCeil(m, tiling.tileM) * tiling.tileM) *
           double(llvm::divideCeil(n, tiling.tileN) * tiling.tileN) /
           (double(m) * double(n));
  };
  double leastPadding = std::numeric_limits<double>::infinity();
  for (const ContractionTiling &tiling : tilings)
    if (usable(tiling))
      leastPadding = std::min(leastPadding, padding(tiling));
  for (const ContractionTiling &tiling : tilings) {
    if (!usable(tiling) || padding(tiling) > std::max(1.25, leastPadding))
      continue;
    // A warpgroup tiling's instruction: m64 x (its N per warpgroup) x 16.
    std::optional<MatrixIntrinsic> tilingIntrinsic = intrinsic;
    if (tiling.subgroupLanes)
      tilingIntrinsic =
          getWarpgroupIntrinsic(a, tiling.tileN / tiling.subgroupsN);
    strategy.kind = KernelKind::Contraction;
    strategy.intrinsic = tilingIntrinsic;
    strategy.layoutFragments = layout;
    strategy.reduction = GPUReduction::None;
    if (lanes == 0) {
      strategy.workgroupSize = 256;
      strategy.simtTile = {tiling.subgroupsM, tiling.subgroupsN};
    } else {
      strategy.workgroupSize =
          tiling.subgroupsM * tiling.subgroupsN *
          (tiling.subgroupLanes ? tiling.subgroupLanes : lanes);
      strategy.subgroupGrid = {tiling.subgroupsM, tiling.subgroupsN};
    }
    strategy.kTile = tiling.tileK;
    strategy.pipelineDepth = tiling.pipelineDepth;
    // Loops of the producer: the contraction's own, or the consumer's
    // batch..., M, N.
    strategy.workgroupTile.assign(producerSizes->size(), 0);
    if (producer == root) {
      for (unsigned dim : contraction->batch)
        strategy.workgroupTile[dim] = 1;
      strategy.workgroupTile[contraction->m] = tiling.tileM;
      strategy.workgroupTile[contraction->n] = tiling.tileN;
    } else {
      size_t batchLoops = contraction->batch.size();
      std::fill_n(strategy.workgroupTile.begin(), batchLoops, 1);
      strategy.workgroupTile[batchLoops] = tiling.tileM;
      strategy.workgroupTile[batchLoops + 1] = tiling.tileN;
    }
    strategy.workgroupCount = workgroups(tiling);
    return true;
  }
  return false;
}

static int64_t elementBits(Operation *op) {
  Type type = getElementTypeOrSelf(op->getResult(0).getType());
  return type.isIntOrFloat() ? type.getIntOrFloatBitWidth() : 0;
}

// A reduction whose innermost loop is parallel and whose operands read that
// loop only as their last, contiguous index (or not at all), with one
// result and an elementwise body: each thread can reduce a vector of
// adjacent results.
static bool isColumnReduction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumReductionLoops() == 0 ||
      linalgOp.getNumDpsInits() != 1 || !linalgOp.hasPureTensorSemantics())
    return false;
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::parallel)
    return false;
  unsigned innermost = iterators.size() - 1;
  AffineExpr last = getAffineDimExpr(innermost, op->getContext());
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    if (!map.isFunctionOfDim(innermost))
      continue;
    if (map.getNumResults() == 0 || map.getResults().back() != last ||
        llvm::any_of(map.getResults().drop_back(), [&](AffineExpr e) {
          return e.isFunctionOfDim(innermost);
        }))
      return false;
  }
  return llvm::all_of(linalgOp.getBlock()->without_terminator(),
                      [](Operation &inner) {
                        return OpTrait::hasElementwiseMappableTraits(&inner);
                      });
}

// An attention chain (kiln/DispatchCreation/Attention.h) that dispatch
// creation fused: kiln-gpu-lower-attention's kernel, a workgroup of 4 warps
// per 64 query rows of one batch (16 rows per warp), or 128 (32 per warp,
// each K and V fragment then feeding twice the mma) when the head dim is
// 64 (at 128, 32 rows of accumulators per warp would not fit the
// registers), K and V streamed in blocks of 64 rows through two
// shared-memory stages each.
static bool selectAttention(Operation *producer, StringRef chip,
                            int64_t subgroupSize, int64_t maxSharedBytes,
                            GPUStrategy &strategy) {
  std::optional<AttentionChain> chain =
      producer ? matchAttentionOnTensors(producer) : std::nullopt;
  if (!chain || !isFusableAttention(*chain) || !hasMmaSync(chip) ||
      subgroupSize != 32)
    return false;
  if (attentionSharedBytes(chain->d, kAttentionBlock) > maxSharedBytes)
    return false;
  strategy.kind = KernelKind::Attention;
  strategy.workgroupTile.clear();
  strategy.queryRows = chain->m % (2 * kAttentionRows) == 0 ? 2 * kAttentionRows
                                                            : kAttentionRows;
  // At head dim 128, 32 rows per warp keep 128 accumulators per thread:
  // Q's fragments are then read from shared memory per block and the
  // blocks have 32 keys, so that the scores fit the registers too.
  strategy.qInShared = chain->d == 128 && strategy.queryRows > kAttentionRows;
  strategy.kTile = strategy.qInShared ? kAttentionBlock / 2 : kAttentionBlock;
  if (strategy.qInShared &&
      attentionSharedBytes(chain->d, strategy.kTile, strategy.queryRows) >
          maxSharedBytes) {
    strategy.queryRows = kAttentionRows;
    strategy.qInShared = false;
    strategy.kTile = kAttentionBlock;
  }
  strategy.workgroupCount = chain->batch * (chain->m / strategy.queryRows);
  strategy.workgroupSize = kAttentionWarps * subgroupSize;
  strategy.intrinsic = chain->elementType.isF16()
                           ? MatrixIntrinsic::MMA_SYNC_F32_16x8x16_F16
                           : MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16;
  strategy.pipelineDepth = 2;
  return true;
}

static GPUStrategy selectStrategy(func::FuncOp func, int64_t subgroupSize,
                                  int64_t maxWorkgroupSize, StringRef chip,
                                  bool matrixCores, bool layoutFragments,
                                  int64_t maxSharedBytes) {
  GPUStrategy strategy;
  strategy.workgroupSize =
      std::max<int64_t>(1, std::min(kSubgroupsPerWorkgroup * subgroupSize,
                                    maxWorkgroupSize));
  int64_t threads = strategy.workgroupSize;

  Operation *producer = getTileableResultProducer(func);
  Operation *root = findRootOp(func, producer);
  std::optional<SmallVector<int64_t>> sizes = getStaticIterationSizes(producer);
  if (!producer || !sizes)
    return strategy; // kind "single"

  // Every kind classifyRootOp names is a KernelKind.
  strategy.kind = *symbolizeKernelKind(classifyRootOp(root));
  auto tileable = cast<TilingInterface>(producer);
  SmallVector<utils::IteratorType> iterators =
      tileable.getLoopIteratorTypes();
  strategy.workgroupTile.assign(sizes->size(), 0);

  if (selectAttention(producer, chip, subgroupSize, maxSharedBytes, strategy))
    return strategy;
  if (selectContraction(root, producer, chip, subgroupSize, matrixCores,
                        layoutFragments, maxSharedBytes, strategy))
    return strategy;

  // Reductions over the innermost loops with enough elements per output to
  // keep a workgroup busy: one workgroup per output row, all its threads
  // reduce that row together.
  auto rootLinalg = dyn_cast<linalg::LinalgOp>(root);
  if (rootLinalg && rootLinalg.getNumReductionLoops() > 0) {
    strategy.reduction = GPUReduction::Thread;
    std::optional<SmallVector<int64_t>> rootSizes =
        getStaticIterationSizes(root);
    if (strategy.kind == KernelKind::Reduction && rootSizes &&
        getInnermostReductionCombiner(rootLinalg)) {
      unsigned numParallel = rootLinalg.getNumParallelLoops();
      int64_t reduced = 1;
      for (int64_t s : ArrayRef(*rootSizes).drop_front(numParallel))
        reduced *= s;
      // The result loops that correspond to the root's parallel loops are
      // its leading ones: the result is the reduction itself, an
      // elementwise consumer of it (same rank as the reduction's output),
      // or spans the reduced loops too (softmax normalization).
      unsigned rank = sizes->size();
      bool leadingParallel =
          rank >= numParallel &&
          llvm::all_of(ArrayRef(iterators).take_front(numParallel),
                       [](utils::IteratorType it) {
                         return it == utils::IteratorType::parallel;
                       });
      int64_t rows = 1;
      for (int64_t s : ArrayRef(*rootSizes).take_front(numParallel))
        rows *= s;
      // Many short rows: one row per subgroup (lanes only, no shared
      // memory or barrier in the reduction), when that still fills the GPU
      // (about 2^19 threads in flight on 132 SMs x 2048, or 304 CUs x
      // 2048) and the combiner has a 32-bit subgroup reduction.
      int64_t subgroups = threads / subgroupSize;
      Operation *combiner = getInnermostReductionCombiner(rootLinalg);
      Type accType = getElementTypeOrSelf(
          rootLinalg.getDpsInitOperand(0)->get().getType());
      bool subgroupCombiner = combiner && accType.isIntOrFloat() &&
                              accType.getIntOrFloatBitWidth() == 32 &&
                              isa<arith::AddFOp, arith::AddIOp,
                                  arith::MaxNumFOp, arith::MinNumFOp,
                                  arith::MaximumFOp, arith::MinimumFOp,
                                  arith::MaxSIOp, arith::MinSIOp>(combiner);
      // Rows of up to 2 KiB: measured on an H100 (docs/performance.md),
      // 32768 rows of 1024 f16 ran faster one per subgroup, of 1024 f32
      // slower.
      // (The bytes of the inputs read along the row, not of row values.)
      int64_t inputBits = 0;
      for (OpOperand *input : rootLinalg.getDpsInputOperands()) {
        Type type = getElementTypeOrSelf(input->get().getType());
        AffineMap map = rootLinalg.getMatchingIndexingMap(input);
        bool alongRow = llvm::any_of(map.getResults(), [&](AffineExpr e) {
          for (unsigned d = numParallel; d < map.getNumDims(); ++d)
            if (e.isFunctionOfDim(d))
              return true;
          return false;
        });
        if (alongRow && type.isIntOrFloat())
          inputBits =
              std::max<int64_t>(inputBits, type.getIntOrFloatBitWidth());
      }
      bool subgroupRows =
          subgroups > 1 && subgroupCombiner && numParallel >= 1 &&
          rows * subgroupSize >= (int64_t{1} << 19) &&
          reduced * inputBits <= 2048 * 8 && reduced >= subgroupSize &&
          (*rootSizes)[numParallel - 1] % subgroups == 0;
      if ((reduced >= threads || subgroupRows) && leadingParallel &&
          (rank == numParallel || rank == rootSizes->size())) {
        strategy.reduction = GPUReduction::Workgroup;
        // Few long rows: wider workgroups, so that the grid still fills a
        // large GPU (as above) and each thread keeps several chunks per
        // pass. Under a result that spans the rows (softmax, layernorm),
        // whose rows kiln-gpu-lower-rows holds from op to op, half as many
        // threads count as filling: the held rows, not the threads, bound
        // the workgroups per SM/CU there, and narrower workgroups leave each
        // thread more registers (softmax over 1024 rows of 32768 f16, rows
        // staged, three workgroups per SM: 256 threads 41.2 us, 512 threads
        // 42.7 us on an H200).
        bool spansRows = producer != root && rank == rootSizes->size();
        const int64_t fillThreads = int64_t{1} << (spansRows ? 18 : 19);
        while (threads * 2 <= maxWorkgroupSize &&
               rows * threads < fillThreads &&
               reduced >= threads * 2 * kVectorBits / 8) {
          threads *= 2;
          strategy.workgroupSize = threads;
        }
        // Many long rows under a result that spans them: kiln-gpu-lower-rows
        // holds a thread's share of a row from one op to the next only
        // within kGPURowRegisterBudget registers, and otherwise reads the
        // row from memory once per op. The grid is full already; widen the
        // workgroup to the width at which the share of the widest input row
        // fits, where one does (softmax over 4096 rows of 32768 f16: 128 ->
        // 256 threads, held and staged in shared memory instead of three
        // passes over memory).
        if (spansRows && !subgroupRows) {
          int64_t rowBits = 0;
          for (BlockArgument argument : func.getArguments()) {
            Type type = getElementTypeOrSelf(argument.getType());
            if (type.isIntOrFloat())
              rowBits =
                  std::max<int64_t>(rowBits, type.getIntOrFloatBitWidth());
          }
          rowBits *= reduced;
          const int64_t bitsPerThread = kGPURowRegisterBudget * 32;
          int64_t fits = threads;
          while (fits < maxWorkgroupSize && rowBits > bitsPerThread * fits)
            fits *= 2;
          if (rowBits <= bitsPerThread * fits) {
            threads = fits;
            strategy.workgroupSize = threads;
          }
        }
        for (unsigned i = 0; i < numParallel; ++i)
          strategy.workgroupTile[i] = (*sizes)[i] > 1 ? 1 : 0;
        if (subgroupRows) {
          strategy.reduction = GPUReduction::Subgroup;
          strategy.workgroupTile[numParallel - 1] = subgroups;
        }
        // Every reduction of the row reads whole 128-bit chunks per thread
        // when the reduced extent splits evenly into them (the widest input
        // element of the root decides the width), and a result spanning the
        // row (softmax, layernorm) is written in such chunks too.
        int64_t bits = 0;
        for (Value input : rootLinalg.getDpsInputs()) {
          Type type = getElementTypeOrSelf(input.getType());
          if (type.isIntOrFloat())
            bits = std::max<int64_t>(bits, type.getIntOrFloatBitWidth());
        }
        int64_t span = strategy.reduction == GPUReduction::Subgroup
                           ? subgroupSize
                           : threads;
        if (bits >= 8 && bits <= 32 &&
            reduced % (span * (kVectorBits / bits)) == 0)
          strategy.reductionVector = kVectorBits / bits;
        int64_t outBits = elementBits(producer);
        if (spansRows && outBits >= 8 && outBits <= 32 &&
            sizes->back() % (threads * (kVectorBits / outBits)) == 0)
          strategy.threadTile = kVectorBits / outBits;
      }
    }
  }

  if (strategy.reduction != GPUReduction::Workgroup &&
      strategy.reduction != GPUReduction::Subgroup) {
    // Elementwise kernels let each thread handle a 128-bit chunk of the
    // innermost loop when the shape allows it.
    // So do reductions across rows (the innermost loop parallel, every
    // operand contiguous along it or independent of it): a thread reduces
    // a 128-bit chunk of columns (kiln-gpu-vectorize).
    // Not with linalg.index above two loops: kiln-gpu-vectorize's unit-dim
    // patterns then never reach a fixpoint (a known bug; such kernels, e.g.
    // a causal mask over batch x rows x columns, stay scalar per thread).
    int64_t bits = elementBits(producer);
    auto producerLinalg = dyn_cast<linalg::LinalgOp>(producer);
    bool indexAboveTwoLoops =
        producerLinalg && producerLinalg.getNumLoops() > 2 &&
        !producerLinalg.getBlock()->getOps<linalg::IndexOp>().empty();
    if ((strategy.kind == KernelKind::Elementwise ||
         isColumnReduction(producer)) &&
        bits >= 8 && bits <= 32 && !sizes->empty() && !indexAboveTwoLoops) {
      int64_t vector = kVectorBits / bits;
      if (sizes->back() % vector == 0)
        strategy.threadTile = vector;
    }
    // Enough output elements for every thread to compute `threadTile` of
    // them. Loops are filled innermost first (contiguous accesses); for
    // matmuls the innermost loop gets only about the square root, so that
    // tiles stay square and reuse their operands.
    int64_t budget = threads * strategy.threadTile;
    std::optional<int64_t> innermostCap;
    if (strategy.kind == KernelKind::Matmul) {
      int64_t side = 1;
      while (side * side < budget)
        side *= 2;
      innermostCap = side;
    }
    bool first = true;
    for (int64_t i = static_cast<int64_t>(sizes->size()) - 1; i >= 0; --i) {
      if (iterators[i] != utils::IteratorType::parallel)
        continue;
      int64_t size = (*sizes)[i];
      int64_t cap = budget;
      if (first && innermostCap)
        cap = std::min(cap, *innermostCap);
      first = false;
      int64_t tile = std::max<int64_t>(1, std::min(size, cap));
      budget = std::max<int64_t>(1, budget / tile);
      strategy.workgroupTile[i] = tile;
    }
  }

  // A tile spanning the whole loop is not a split; count the workgroups.
  bool tiled = false;
  for (auto [tile, size] : llvm::zip(strategy.workgroupTile, *sizes)) {
    if (tile >= size)
      tile = 0;
    if (tile == 0)
      continue;
    tiled = true;
    strategy.workgroupCount *= llvm::divideCeil(size, tile);
  }
  if (!tiled)
    strategy.workgroupTile.clear();
  return strategy;
}

struct GPUSelectStrategyPass
    : public kiln::impl::GPUSelectStrategyPassBase<GPUSelectStrategyPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (subgroupSize <= 0 || maxWorkgroupSize < subgroupSize) {
      func.emitError() << "invalid GPU limits: subgroup size " << subgroupSize
                       << ", max workgroup size " << maxWorkgroupSize;
      return signalPassFailure();
    }
    GPUStrategy strategy =
        selectStrategy(func, subgroupSize, maxWorkgroupSize, chip, matrixCores,
                       layoutFragments, maxSharedMemoryBytes);

    auto attr = GPUStrategyAttr::getChecked(
        [&] { return func.emitError() << "invalid GPU strategy: "; },
        func.getContext(), strategy.kind, strategy.workgroupSize,
        int64_t(subgroupSize), ArrayRef<int64_t>(strategy.workgroupTile),
        strategy.workgroupCount, strategy.threadTile, strategy.reduction,
        strategy.reductionVector, strategy.intrinsic,
        ArrayRef<int64_t>(strategy.subgroupGrid),
        ArrayRef<int64_t>(strategy.simtTile), strategy.kTile,
        strategy.pipelineDepth, strategy.layoutFragments, strategy.queryRows,
        strategy.qInShared);
    if (!attr)
      return signalPassFailure();
    func->setAttr(kGPUStrategyAttrName, attr);
  }
};

} // namespace
