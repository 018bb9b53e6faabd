//===- HostRegisterTiles.cpp - Host SIMD register tile sizes --------------===//

#include "HostRegisterTiles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

// Elements of the widest operand per register: an i8 x i8 -> i32 matmul is
// limited by its i32 accumulators.
static int64_t getLanes(linalg::LinalgOp op, int64_t vectorBits) {
  unsigned widest = 8;
  for (OpOperand &operand : op->getOpOperands()) {
    Type element = getElementTypeOrSelf(operand.get().getType());
    if (element.isIntOrFloat())
      widest = std::max(widest, element.getIntOrFloatBitWidth());
  }
  return std::max<int64_t>(1, vectorBits / widest);
}

SmallVector<int64_t> kiln::getHostRegisterTile(linalg::LinalgOp op,
                                               int64_t vectorBits) {
  unsigned numLoops = op.getNumLoops();
  SmallVector<int64_t> sizes(numLoops, 1);
  if (numLoops == 0)
    return sizes;
  int64_t lanes = getLanes(op, vectorBits);

  FailureOr<linalg::ContractionDimensions> dims =
      linalg::isaContractionOpInterface(op)
          ? linalg::inferContractionDims(op)
          : FailureOr<linalg::ContractionDimensions>(failure());
  if (succeeded(dims) && !dims->m.empty() && !dims->n.empty()) {
    // Accumulators: rows x (2 registers). x86-64 has 16 SIMD registers
    // (32 with AVX-512); per K step the tile needs rows x 2 accumulators,
    // 2 registers of B and one broadcast of A, so 6 rows fit below
    // AVX-512 (15 registers; 12 independent FMA chains cover the FMA
    // latency of two pipes, where 4 rows' 8 did not: 1024^3 f32 on a
    // znver3 core 20-21 -> 16-17 ms, docs/performance.md) and 8 rows with
    // it.
    sizes[dims->m.back()] = vectorBits >= 512 ? 8 : 6;
    sizes[dims->n.back()] = 2 * lanes;
    return sizes;
  }
  sizes.back() = lanes;
  return sizes;
}
