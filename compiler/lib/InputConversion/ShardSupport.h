//===- ShardSupport.h - Which shard ops Kiln compiles -----------*- C++ -*-===//
//
// Shared by the legality check, which reports unsupported shard ops at the
// user's location, and kiln-lower-collectives, which must accept exactly
// what the check lets through.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_INPUTCONVERSION_SHARDSUPPORT_H_
#define KILN_LIB_INPUTCONVERSION_SHARDSUPPORT_H_

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir::kiln {

// Reports (at `grid`) a grid Kiln cannot run: dynamic or empty sizes.
LogicalResult verifyStaticGrid(shard::GridOp grid);

// Reports why the shard-dialect op `op` cannot be compiled, or succeeds for
// a static shard.grid and a supported collective: all_reduce, all_gather,
// reduce_scatter, all_to_all or broadcast on static ranked tensors of i8,
// i16, i32, i64, f16, bf16, f32, f64 (i1 for the non-reducing ones), the
// same element type in and out, a reduction among sum, product, min, max
// and average (floats), a static broadcast root, on a static grid.
// With `gpuCollectives`, also rejects reductions NCCL/RCCL cannot run (on
// 16-bit integers), which the GPU targets' hip driver would refuse, except
// all_reduces and reduce_scatters with `compiledReductions` (they become
// compiled kernels, as bitwise and i1 reductions must).
LogicalResult verifySupportedShardOp(Operation *op,
                                     SymbolTableCollection &symbolTables,
                                     bool gpuCollectives = false,
                                     bool compiledReductions = false);

// The Kiln reduction of a supported shard reduction.
ReductionKind convertReduction(shard::ReductionKind kind);

} // namespace mlir::kiln

#endif // KILN_LIB_INPUTCONVERSION_SHARDSUPPORT_H_
