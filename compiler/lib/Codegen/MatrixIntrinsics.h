//===- MatrixIntrinsics.h - Matrix-core instructions as data ----*- C++ -*-===//
//
// The matrix instructions Kiln's contraction kernels use, with the fragment
// layouts that say which element of A, B and C each lane of a subgroup holds.
// One table for both vendors; the contraction recipe
// (GPULowerContractionPass) reads fragments from shared memory through these
// layouts, and only the instruction itself is emitted per vendor.
//
// A layout maps (lane, element) to a position in the instruction's tile:
//  - A (M x K): (lane, e) -> (m, k)
//  - B (K x N): (lane, e) -> (n, k)
//  - C (M x N): (lane, e) -> (m, n)
// as affine maps of two dims, so that lit tests and unit tests can print
// and check them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_MATRIXINTRINSICS_H_
#define KILN_CODEGEN_MATRIXINTRINSICS_H_

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::kiln {

enum class MatrixIntrinsic {
  // NVIDIA sm_80+: mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.
  MMA_SYNC_F32_16x8x16_F16,
  MMA_SYNC_F32_16x8x16_BF16,
  // AMD CDNA 2/3/4 (wave64): v_mfma_f32_16x16x16_f16.
  MFMA_F32_16x16x16_F16,
};

struct MatrixIntrinsicInfo {
  MatrixIntrinsic kind;
  StringRef name;            // the strategy's `intrinsic` spelling
  int64_t m, n, k;           // the tile one instruction computes
  int64_t subgroupSize;      // lanes that execute it together
  int64_t aCount, bCount, cCount;  // elements per lane
};

// The instruction named `name` (MatrixIntrinsicInfo::name), if known.
std::optional<MatrixIntrinsic> symbolizeMatrixIntrinsic(StringRef name);
const MatrixIntrinsicInfo &getMatrixIntrinsicInfo(MatrixIntrinsic kind);

// The fragment layouts: (lane, element) -> (row, column) as described
// above.
AffineMap getFragmentLayoutA(MatrixIntrinsic kind, MLIRContext *context);
AffineMap getFragmentLayoutB(MatrixIntrinsic kind, MLIRContext *context);
AffineMap getFragmentLayoutC(MatrixIntrinsic kind, MLIRContext *context);

// Whether fragments of the instruction are read from shared memory with
// ldmatrix (NVIDIA mma.sync: ldmatrix.x4 gives exactly the A fragment of a
// 16x16 tile, ldmatrix.x4.trans the B fragments of two 16x8 tiles from a
// K-major B), which realizes the same layouts as getFragmentLayoutA/B.
bool usesLdMatrix(MatrixIntrinsic kind);

// Elements of A that are consecutive along K in a lane's fragment and can
// be read with one vector load (1 when none are).
int64_t getContiguousAElements(MatrixIntrinsic kind);

// The element type of the A and B operands.
Type getMatrixInputType(MatrixIntrinsic kind, MLIRContext *context);

// Emits one instruction: `a` and `b` hold the lane's aCount / bCount
// elements (vector<aCount x in>, vector<bCount x in>), `c` its cCount
// accumulators (vector<cCount x f32>); returns the new accumulators.
Value createMatrixInstruction(OpBuilder &b, Location loc,
                              MatrixIntrinsic kind, Value a, Value bValue,
                              Value c);

} // namespace mlir::kiln

#endif // KILN_CODEGEN_MATRIXINTRINSICS_H_
