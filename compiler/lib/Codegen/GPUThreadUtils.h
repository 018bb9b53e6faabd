//===- GPUThreadUtils.h - Helpers of the passes that spread work over threads
//-===//
//
// Shared by kiln-gpu-lower-rows, kiln-gpu-lower-workgroup-reductions and
// kiln-gpu-distribute-to-threads: reading the strategy's thread parameters,
// loads and combiners of linalg ops lowered by hand, and the barriers
// between consecutive ops of a workgroup.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_GPUTHREADUTILS_H_
#define KILN_CODEGEN_GPUTHREADUTILS_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::kiln {

// The linalg ops of `func` in order, all on buffers; an error (emitted) on
// the first that is not.
FailureOr<SmallVector<linalg::LinalgOp>> getBufferizedOps(func::FuncOp func);

// Threads read what other threads wrote in the previous op (shared
// temporaries, in-place outputs): a gpu.barrier after each op of `done`
// that is followed by memory accesses in its block before a barrier.
void insertBarriersAfter(RewriterBase &rewriter, ArrayRef<Operation *> done);

// The indices of the point at linear position `index` of a row-major space
// of `sizes` (one dimension: `index` itself).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value index,
                               ArrayRef<Value> sizes);

// Lane 0 of a subgroup stores the subgroup's `total` into slot `slot` of
// the shared buffer `shared`; then a barrier, after which every thread may
// read the slots.
void publishSubgroupTotal(OpBuilder &b, Location loc, Value total, Value lane,
                          Value shared, Value slot);

// Combines two partial results with a clone of the reduction's combiner.
Value combine(OpBuilder &b, Operation *combiner, Value lhs, Value rhs);

// The gpu.subgroup_reduce operation of a reduction combiner over 32-bit
// scalars (what the shuffle and DPP lowerings take in one step), if any.
std::optional<gpu::AllReduceOperation>
getSubgroupReduceKind(Operation *combiner, Type type);

// How `operand` of a reduction over one innermost loop `reducedDim` is read
// when a thread takes `width` consecutive elements of that loop per step.
enum class ChunkRead { Vector, Scalar, Elementwise };
ChunkRead classifyChunkRead(linalg::LinalgOp op, OpOperand &operand,
                            unsigned reducedDim);

} // namespace mlir::kiln

#endif // KILN_CODEGEN_GPUTHREADUTILS_H_
