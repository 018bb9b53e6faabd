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

#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::kiln {

// MatrixIntrinsic, the instructions themselves, is an enum of the Kiln
// dialect (KilnAttrs.td) so that strategies name them; this is their table.

struct MatrixIntrinsicInfo {
  MatrixIntrinsic kind;
  int64_t m, n, k;           // the tile one instruction computes
  int64_t subgroupSize;      // lanes that execute it together
  int64_t aCount, bCount, cCount;  // elements per lane
  // How many lanes hold each element of A and of B (2 for gfx11 WMMA, whose
  // half-waves repeat the operands; 1 otherwise).
  int64_t replication;
};

const MatrixIntrinsicInfo &getMatrixIntrinsicInfo(MatrixIntrinsic kind);

// The fragment layouts: (lane, element) -> (row, column) as described
// above. The warpgroup instructions (wgmma) hold only C in registers: their
// A and B layouts are null maps (isWarpgroupIntrinsic).
AffineMap getFragmentLayoutA(MatrixIntrinsic kind, MLIRContext *context);
AffineMap getFragmentLayoutB(MatrixIntrinsic kind, MLIRContext *context);
AffineMap getFragmentLayoutC(MatrixIntrinsic kind, MLIRContext *context);

// Whether fragments of the instruction are read from shared memory with
// ldmatrix (NVIDIA mma.sync: ldmatrix.x4 gives exactly the A fragment of a
// 16x16 tile, ldmatrix.x4.trans the B fragments of two 16x8 tiles from a
// K-major B), which realizes the same layouts as getFragmentLayoutA/B.
bool usesLdMatrix(MatrixIntrinsic kind);

// Whether the instruction is a warpgroup one (NVIDIA wgmma, sm_90a): its
// "subgroup" is a warpgroup of 128 threads, and it reads A and B from shared
// memory itself, through matrix descriptors, so they have no register
// fragments.
bool isWarpgroupIntrinsic(MatrixIntrinsic kind);

// Elements of A that are consecutive along K in a lane's fragment and can
// be read with one vector load (1 when none are).
int64_t getContiguousAElements(MatrixIntrinsic kind);

// The element type of the A and B operands, and of the accumulators (f32,
// or i32 for the 8-bit integer forms).
Type getMatrixInputType(MatrixIntrinsic kind, MLIRContext *context);
Type getMatrixAccumulatorType(MatrixIntrinsic kind, MLIRContext *context);

// The NVIDIA instruction for `inputType` (f16, bf16 or i8) on sm_80+.
std::optional<MatrixIntrinsic> getNvidiaMatrixIntrinsic(Type inputType);

// Whether `chip` has the warpgroup instructions (sm_90a: the arch-specific
// form of sm_90, which runs on sm_90 devices only).
bool hasWarpgroupMatrixInstructions(StringRef chip);

// The warpgroup instruction m64 x `n` x 16 for `inputType` (f16 or bf16;
// n 128 or 256), if there is one.
std::optional<MatrixIntrinsic> getWarpgroupIntrinsic(Type inputType, int64_t n);

// The AMD matrix instruction for `inputType` (f16, bf16 or i8) x
// `inputType` -> f32 (i32) on `chip` with subgroups of `subgroupSize`
// lanes, if the chip has one:
// MFMA on gfx90a, gfx942 and gfx950 (wave64; the K=32 forms on gfx950), WMMA
// on gfx11 and gfx12 (wave32).
std::optional<MatrixIntrinsic>
getAMDMatrixIntrinsic(StringRef chip, int64_t subgroupSize, Type inputType);

// Emits one instruction: `a` and `b` hold the lane's aCount / bCount
// elements (vector<aCount x in>, vector<bCount x in>), `c` its cCount
// accumulators (vector<cCount x f32>); returns the new accumulators.
Value createMatrixInstruction(OpBuilder &b, Location loc,
                              MatrixIntrinsic kind, Value a, Value bValue,
                              Value c);

// Emits warpgroup instructions (isWarpgroupIntrinsic) that accumulate into
// `c` (vector<cCount x f32>, the thread's accumulators in the C layout), one
// per (descriptor of A, descriptor of B) pair in order, and returns the
// accumulators they produce. A is K-major in shared memory; B is N-major
// (stored K x N) or, when `transposedB`, K-major (stored N x K). The
// instructions run asynchronously: the caller fences before them
// (nvvm.wgmma.fence), and commits and waits before reading the result.
Value createWarpgroupMatrixInstructions(
    OpBuilder &b, Location loc, MatrixIntrinsic kind,
    ArrayRef<std::pair<Value, Value>> descriptors, bool transposedB, Value c);

// Waits until every warpgroup instruction of the thread has completed and
// returns `c`, their accumulators (vector<cCount x f32>), as values that
// depend on the wait, so that nothing reads a register the instructions
// may still write.
Value waitForWarpgroupMatrixInstructions(OpBuilder &b, Location loc, Value c);

} // namespace mlir::kiln

#endif // KILN_CODEGEN_MATRIXINTRINSICS_H_
