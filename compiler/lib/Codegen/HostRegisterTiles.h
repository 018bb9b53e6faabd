//===- HostRegisterTiles.h - Host SIMD register tile sizes ------*- C++ -*-===//
//
// The register tile (vector sizes per loop) that the host strategy records for
// the root op and that kiln-host-vectorize uses for every other op.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CODEGEN_HOSTREGISTERTILES_H_
#define KILN_LIB_CODEGEN_HOSTREGISTERTILES_H_

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

namespace mlir::kiln {

// Vector size of each loop of `op` for SIMD registers of `vectorBits` bits:
// contractions get an M x N block of accumulators (K step 1, the K loop stays
// a loop); other ops one register along the innermost loop, 1 elsewhere.
// Sizes are not clipped to the loop ranges.
SmallVector<int64_t> getHostRegisterTile(linalg::LinalgOp op,
                                         int64_t vectorBits);

} // namespace mlir::kiln

#endif // KILN_LIB_CODEGEN_HOSTREGISTERTILES_H_
