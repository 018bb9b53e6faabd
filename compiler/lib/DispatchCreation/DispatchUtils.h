//===- DispatchUtils.h - Op classification for dispatch creation -*- C++ -*-===//
//
// Shared by dispatch region formation and outlining, which must agree on which
// ops are kernel roots, which are cloned into kernels and which stay on the
// host.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_DISPATCHCREATION_DISPATCHUTILS_H_
#define KILN_LIB_DISPATCHCREATION_DISPATCHUTILS_H_

#include "mlir/IR/Operation.h"

namespace mlir::kiln {

// Ops whose results cost nothing to recompute in every kernel that uses
// them: tensor.empty, splat constants, tensor.splat and linalg.fill of a
// cheap tensor.
bool isCheapProducer(Operation *op);

// Shape-only views of contiguous data that stay on the host as aliases of
// their source buffer (collapse/expand_shape, reshape, bitcast, cast).
bool isHostAlias(Operation *op);

// Ops that compute tensor data and therefore must run in a kernel.
bool isDispatchRoot(Operation *op);

// Elementwise linalg ops (all loops parallel, permutation-like maps, scalar
// body) that can join the kernel of a producer or consumer.
bool isFusableElementwise(Operation *op);

} // namespace mlir::kiln

#endif // KILN_LIB_DISPATCHCREATION_DISPATCHUTILS_H_
