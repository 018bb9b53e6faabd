//===- CodegenUtils.h - Helpers shared by host and GPU codegen --*- C++ -*-===//
//
// Internal to compiler/lib/Codegen: the pieces of the host and GPU recipes
// that are the same (workgroup tiling with producer fusion, bufferization
// of kernels whose signature is their bindings).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_CODEGENUTILS_H_
#define KILN_LIB_CODEGEN_CODEGENUTILS_H_

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::kiln {

// MLIR's f32 log/log2 polynomial approximations clamp their input to the
// smallest normal float, so log(denormal) would be log(2^-126). Rewrites
// every f32 math.log and math.log2 under `root` (scalar or vector) to scale
// denormal inputs by 2^23 into the normal range and subtract 23 * ln 2 (or
// 23) from the result. Zero, negatives, infinities and NaN keep their class
// under the scaling, so the approximation's special cases still apply. Run
// it just before the approximation patterns.
void scaleDenormalLogInputs(Operation *root);

// The op producing the single result of `func`, or null when the kernel has
// several results or its result is not produced by a TilingInterface op.
Operation *getTileableResultProducer(func::FuncOp func);

// The op carrying the main work of kernel `func`: the last linalg op with
// reduction loops, else `resultProducer`, else (when that is null) the last
// linalg op. Null when there is none of these.
Operation *findRootOp(func::FuncOp func, Operation *resultProducer);

// The kind of work `root` does, as strategies name it: "matmul"
// (contraction), "conv", "pooling" (a convolution that multiplies nothing),
// "reduction", "elementwise" (all other linalg ops), or "generic" when
// `root` is no linalg op.
StringRef classifyRootOp(Operation *root);

// The strategy kiln-gpu-select-strategy gave the GPU kernel `func`; an
// error (emitted) when it has none.
FailureOr<GPUStrategyAttr> readGPUStrategy(func::FuncOp func);

// The compute capability of an NVIDIA chip name ("sm_90a" -> 90), if it
// is one.
std::optional<unsigned> getNvidiaSmVersion(StringRef chip);

// The fused attention kernel (strategy "attention", kiln-gpu-lower-attention):
// a workgroup of kAttentionWarps warps computes kAttentionRows query rows
// of one batch (16 per warp) or twice as many (32 per warp), streaming K and
// V in blocks of kAttentionBlock rows (or half as many with Q in shared
// memory). Its shared memory: two stages each of K's and V's blocks (Q's
// rows pass through the second stages, or stay in a buffer of their own),
// rows of head dim `d` padded by kAttentionPadding 16-bit elements.
constexpr int64_t kAttentionRows = 64;
constexpr int64_t kAttentionWarps = 4;
constexpr int64_t kAttentionBlock = 64;
constexpr int64_t kAttentionPadding = 8;
// The kernel's shared memory for `blockRows` keys per block, plus
// `queryRows` rows of Q when Q stays in shared memory (q_in_shared).
inline int64_t attentionSharedBytes(int64_t d, int64_t blockRows,
                                    int64_t queryRows = 0) {
  return (4 * blockRows + queryRows) * (d + kAttentionPadding) * 2;
}

// A contraction the GPU contraction recipe computes (loop positions of
// `op`): C[b..., m, n] += A[b..., m, k] * B[b..., k, n], or B[b..., n, k]
// when `transposedB`, with the batch loops leading in every operand in the
// same order (linalg.matmul, batch_matmul, matmul_transpose_b and the
// equivalent generics).
struct RecipeContraction {
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  bool transposedB;
};
std::optional<RecipeContraction> matchRecipeContraction(Operation *op);

// The iteration-domain sizes of `op`, a TilingInterface op, in loop order;
// nullopt when `op` is null or no such op, or when a loop's size is dynamic
// or its offset not zero.
std::optional<SmallVector<int64_t>> getStaticIterationSizes(Operation *op);

// Tiles the op producing the kernel result into an scf.forall with
// `tileSizes` (one per loop, 0: not tiled) and `mapping` (one per tiled
// loop), fusing its producers greedily into the loop body.
LogicalResult tileResultIntoForall(func::FuncOp func,
                                   ArrayRef<int64_t> tileSizes,
                                   ArrayRef<Attribute> mapping);

// Empty-tensor elimination, one-shot bufferization (function boundaries
// excluded: the signature already is the bindings) with `allocationFn` for
// temporaries and linalg.copy for copies, then removal of the self-copies
// that in-place forall tiles leave behind. `memorySpaceFn`, when set, picks
// the memory space of new buffers.
LogicalResult bufferizeKernels(
    ModuleOp module,
    bufferization::BufferizationOptions::AllocationFn allocationFn,
    bufferization::BufferizationOptions::DefaultMemorySpaceFn memorySpaceFn =
        nullptr);

// For a linalg op whose reduction loops are its innermost loops and which
// folds each element into its single accumulator with one combining op that
// has a neutral element (sum, product, max, ...): that combining op. Such a
// reduction can be split into partial reductions combined in any order.
Operation *getInnermostReductionCombiner(linalg::LinalgOp op);

// The indices that `map` gives for the loop induction variables `ivs`, one
// affine.apply per result.
SmallVector<Value> applyIndexingMap(OpBuilder &b, Location loc, AffineMap map,
                                    ValueRange ivs);

} // namespace mlir::kiln

#endif // KILN_LIB_CODEGEN_CODEGENUTILS_H_
