// The fragment-layout table of the matrix instructions
// (compiler/lib/Codegen/MatrixIntrinsics.h) against layouts written here
// independently from the vendors' documents, and a simulation of each
// instruction: A and B scattered into lanes by the table, the instruction's
// definition applied to the fragments as the document states it, C gathered
// by the table and compared with a reference matmul. The NVIDIA entries also
// run on H100s (tests/e2e/matmul/contraction_*.mlir); the AMD entries have no
// hardware here, so this test is what checks it.
#include "MatrixIntrinsics.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

namespace mlir::kiln {
namespace {

using Position = std::pair<int64_t, int64_t>;

// Where element `e` of `lane` sits in the instruction's tile, per document.
struct DocumentedLayout {
  Position (*a)(int64_t lane, int64_t e);  // (m, k)
  Position (*b)(int64_t lane, int64_t e);  // (n, k)
  Position (*c)(int64_t lane, int64_t e);  // (m, n)
};

// PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type":
// groupID = laneid >> 2, threadID_in_group = laneid % 4;
// a0,a1: row groupID, a2,a3: row groupID + 8, a4,a5: row groupID,
// a6,a7: row groupID + 8; col = threadID_in_group * 2 + (i & 1), + 8 for
// a4..a7. b0,b1: row (k) threadID_in_group * 2 + (i & 1), b2,b3: + 8;
// col (n) groupID. c0,c1: row groupID, c2,c3: row groupID + 8;
// col threadID_in_group * 2 + (i & 1).
Position mmaA(int64_t lane, int64_t i) {
  int64_t group = lane >> 2, t = lane % 4;
  int64_t row = (i == 2 || i == 3 || i == 6 || i == 7) ? group + 8 : group;
  int64_t col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  return {row, col};
}
Position mmaB(int64_t lane, int64_t i) {
  int64_t group = lane >> 2, t = lane % 4;
  return {group, t * 2 + (i & 1) + (i >= 2 ? 8 : 0)};
}
Position mmaC(int64_t lane, int64_t i) {
  int64_t group = lane >> 2, t = lane % 4;
  return {i < 2 ? group : group + 8, t * 2 + (i & 1)};
}

// AMD matrix instruction calculator, v_mfma_f32_16x16x16f16 (wave64):
// A[i][k]: lane = i + 16 * (k / 4), register element k % 4; B[k][j]:
// lane = j + 16 * (k / 4), element k % 4; D[i][j]: lane = j + 16 * (i / 4),
// element i % 4.
Position mfmaA(int64_t lane, int64_t e) { return {lane % 16, 4 * (lane / 16) + e}; }
Position mfmaB(int64_t lane, int64_t e) { return {lane % 16, 4 * (lane / 16) + e}; }
Position mfmaC(int64_t lane, int64_t e) { return {4 * (lane / 16) + e, lane % 16}; }

// AMD matrix instruction calculator, v_mfma_f32_16x16x32_f16 / _bf16
// (gfx950, wave64): A[i][k]: lane = i + 16 * (k / 8), register element
// k % 8; B[k][j]: lane = j + 16 * (k / 8), element k % 8; D as for
// 16x16x16.
Position mfma32A(int64_t lane, int64_t e) {
  return {lane % 16, 8 * (lane / 16) + e};
}
Position mfma32B(int64_t lane, int64_t e) {
  return {lane % 16, 8 * (lane / 16) + e};
}

// AMD's RDNA 3 WMMA guide (v_wmma_f32_16x16x16_f16, wave32): the A
// fragment of lane l is row l % 16 of A, element k = A[l % 16][k]; B's is
// column l % 16, element k = B[k][l % 16]; both halves of the wave carry
// the same fragments. The f32 result: element i of lane l is
// D[2 * i + l / 16][l % 16].
Position wmma11A(int64_t lane, int64_t e) { return {lane % 16, e}; }
Position wmma11B(int64_t lane, int64_t e) { return {lane % 16, e}; }
Position wmma11C(int64_t lane, int64_t e) {
  return {2 * e + lane / 16, lane % 16};
}

// RDNA 4 ISA, WMMA 16x16x16 f16/bf16 (wave32): lanes 0-15 hold K 0-7 and
// lanes 16-31 K 8-15 of A's row (B's column) l % 16, 8 elements; the f32
// result: element i of lane l is D[i + 8 * (l / 16)][l % 16].
Position wmma12A(int64_t lane, int64_t e) {
  return {lane % 16, 8 * (lane / 16) + e};
}
Position wmma12B(int64_t lane, int64_t e) {
  return {lane % 16, 8 * (lane / 16) + e};
}
Position wmma12C(int64_t lane, int64_t e) {
  return {e + 8 * (lane / 16), lane % 16};
}

// PTX ISA, "Matrix Fragments for mma.m16n8k32" (.s8): a0..a15, four per
// 32-bit register; row groupID for a0-a3 and a8-a11, groupID + 8 for a4-a7
// and a12-a15; col threadID_in_group * 4 + (i & 3), + 16 for a8-a15.
// b0..b7: row (k) threadID_in_group * 4 + (i & 3), + 16 for b4-b7; col (n)
// groupID. The s32 accumulators as for f32 (mmaC).
Position mmaS8A(int64_t lane, int64_t i) {
  int64_t group = lane >> 2, t = lane % 4;
  bool lower = i < 4 || (i >= 8 && i < 12);
  return {lower ? group : group + 8, t * 4 + (i & 3) + (i >= 8 ? 16 : 0)};
}
Position mmaS8B(int64_t lane, int64_t i) {
  int64_t group = lane >> 2, t = lane % 4;
  return {group, t * 4 + (i & 3) + (i >= 4 ? 16 : 0)};
}

// AMD matrix instruction calculator, v_mfma_i32_16x16x64_i8 (gfx950): A[i][k]
// in lane i + 16 * (k / 16), register byte k % 16; B likewise; D as for the
// f32 16x16 forms. (v_mfma_i32_16x16x16i8 and 16x16x32_i8 have the layouts
// of the f16 forms with the same K.)
Position mfma64A(int64_t lane, int64_t e) {
  return {lane % 16, 16 * (lane / 16) + e};
}
Position mfma64B(int64_t lane, int64_t e) {
  return {lane % 16, 16 * (lane / 16) + e};
}

// PTX ISA, "Register Fragments and Shared Memory Matrix Layouts" of
// wgmma .m64nNk16, accumulator D (.f32): a warpgroup of 128 threads; warp
// w = t / 32 owns rows 16w .. 16w + 15; within it, groupID = (t % 32) / 4 and
// threadID_in_group = t % 4; d[i] is at row 16w + groupID + 8 * ((i / 2) %
// 2), column 8 * (i / 4) + 2 * threadID_in_group + (i & 1). A and B are read
// from shared memory, not from registers.
Position wgmmaC(int64_t lane, int64_t i) {
  int64_t warp = lane / 32, group = (lane % 32) / 4, t = lane % 4;
  return {16 * warp + group + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * t + (i & 1)};
}
Position noFragment(int64_t, int64_t) { return {-1, -1}; }

DocumentedLayout documented(MatrixIntrinsic kind) {
  switch (kind) {
  case MatrixIntrinsic::MFMA_F32_16x16x16_F16:
  case MatrixIntrinsic::MFMA_F32_16x16x16_BF16:
  case MatrixIntrinsic::MFMA_I32_16x16x16_I8:
    return {mfmaA, mfmaB, mfmaC};
  case MatrixIntrinsic::MFMA_F32_16x16x32_F16:
  case MatrixIntrinsic::MFMA_F32_16x16x32_BF16:
  case MatrixIntrinsic::MFMA_I32_16x16x32_I8:
    return {mfma32A, mfma32B, mfmaC};
  case MatrixIntrinsic::MFMA_I32_16x16x64_I8:
    return {mfma64A, mfma64B, mfmaC};
  case MatrixIntrinsic::WMMA_GFX11_F32_16x16x16_F16:
  case MatrixIntrinsic::WMMA_GFX11_F32_16x16x16_BF16:
  case MatrixIntrinsic::WMMA_GFX11_I32_16x16x16_I8:
    return {wmma11A, wmma11B, wmma11C};
  case MatrixIntrinsic::WMMA_GFX12_F32_16x16x16_F16:
  case MatrixIntrinsic::WMMA_GFX12_F32_16x16x16_BF16:
  case MatrixIntrinsic::WMMA_GFX12_I32_16x16x16_I8:
    return {wmma12A, wmma12B, wmma12C};
  case MatrixIntrinsic::MMA_SYNC_I32_16x8x32_S8:
    return {mmaS8A, mmaS8B, mmaC};
  case MatrixIntrinsic::MMA_SYNC_F32_16x8x16_F16:
  case MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16:
    return {mmaA, mmaB, mmaC};
  case MatrixIntrinsic::WGMMA_F32_64x128x16_F16:
  case MatrixIntrinsic::WGMMA_F32_64x128x16_BF16:
  case MatrixIntrinsic::WGMMA_F32_64x256x16_F16:
  case MatrixIntrinsic::WGMMA_F32_64x256x16_BF16:
    return {noFragment, noFragment, wgmmaC};
  }
  return {mmaA, mmaB, mmaC};
}

Position evaluate(AffineMap map, int64_t lane, int64_t e) {
  MLIRContext *context = map.getContext();
  Builder b(context);
  SmallVector<Attribute> results;
  EXPECT_TRUE(succeeded(map.constantFold(
      {b.getIndexAttr(lane), b.getIndexAttr(e)}, results)));
  return {cast<IntegerAttr>(results[0]).getInt(),
          cast<IntegerAttr>(results[1]).getInt()};
}

const MatrixIntrinsic kAll[] = {MatrixIntrinsic::MMA_SYNC_F32_16x8x16_F16,
                                MatrixIntrinsic::MMA_SYNC_F32_16x8x16_BF16,
                                MatrixIntrinsic::MFMA_F32_16x16x16_F16,
                                MatrixIntrinsic::MFMA_F32_16x16x16_BF16,
                                MatrixIntrinsic::MFMA_F32_16x16x32_F16,
                                MatrixIntrinsic::MFMA_F32_16x16x32_BF16,
                                MatrixIntrinsic::WMMA_GFX11_F32_16x16x16_F16,
                                MatrixIntrinsic::WMMA_GFX11_F32_16x16x16_BF16,
                                MatrixIntrinsic::WMMA_GFX12_F32_16x16x16_F16,
                                MatrixIntrinsic::WMMA_GFX12_F32_16x16x16_BF16,
                                MatrixIntrinsic::MMA_SYNC_I32_16x8x32_S8,
                                MatrixIntrinsic::MFMA_I32_16x16x16_I8,
                                MatrixIntrinsic::MFMA_I32_16x16x32_I8,
                                MatrixIntrinsic::MFMA_I32_16x16x64_I8,
                                MatrixIntrinsic::WMMA_GFX11_I32_16x16x16_I8,
                                MatrixIntrinsic::WMMA_GFX12_I32_16x16x16_I8,
                                MatrixIntrinsic::WGMMA_F32_64x128x16_F16,
                                MatrixIntrinsic::WGMMA_F32_64x128x16_BF16,
                                MatrixIntrinsic::WGMMA_F32_64x256x16_F16,
                                MatrixIntrinsic::WGMMA_F32_64x256x16_BF16};

class MatrixIntrinsicsTest : public ::testing::TestWithParam<MatrixIntrinsic> {
 protected:
  MLIRContext context;
};

TEST_P(MatrixIntrinsicsTest, TableMatchesTheDocumentedLayouts) {
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(GetParam());
  DocumentedLayout doc = documented(GetParam());
  AffineMap a = getFragmentLayoutA(GetParam(), &context);
  AffineMap b = getFragmentLayoutB(GetParam(), &context);
  AffineMap c = getFragmentLayoutC(GetParam(), &context);
  // Warpgroup instructions hold no A or B fragments.
  EXPECT_EQ(isWarpgroupIntrinsic(GetParam()),
            !a && !b && info.aCount == 0 && info.bCount == 0);
  for (int64_t lane = 0; lane < info.subgroupSize; ++lane) {
    for (int64_t e = 0; e < info.aCount; ++e)
      EXPECT_EQ(evaluate(a, lane, e), doc.a(lane, e))
          << stringifyMatrixIntrinsic(info.kind).str() << " A lane " << lane
          << " element " << e;
    for (int64_t e = 0; e < info.bCount; ++e)
      EXPECT_EQ(evaluate(b, lane, e), doc.b(lane, e))
          << stringifyMatrixIntrinsic(info.kind).str() << " B lane " << lane
          << " element " << e;
    for (int64_t e = 0; e < info.cCount; ++e)
      EXPECT_EQ(evaluate(c, lane, e), doc.c(lane, e))
          << stringifyMatrixIntrinsic(info.kind).str() << " C lane " << lane
          << " element " << e;
  }
}

// Every element of A and B sits in `replication` lane elements (the gfx11
// WMMA half-waves repeat them), every element of C in exactly one.
TEST_P(MatrixIntrinsicsTest, EveryTileElementHasItsLaneElements) {
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(GetParam());
  struct Operand {
    AffineMap map;
    int64_t count, rows, cols, copies;
  };
  for (const Operand &operand :
       {Operand{getFragmentLayoutA(GetParam(), &context), info.aCount, info.m,
                info.k, info.replication},
        Operand{getFragmentLayoutB(GetParam(), &context), info.bCount, info.n,
                info.k, info.replication},
        Operand{getFragmentLayoutC(GetParam(), &context), info.cCount, info.m,
                info.n, 1}}) {
    if (!operand.map)
      continue; // A or B of a warpgroup instruction: in shared memory
    std::map<Position, int> seen;
    for (int64_t lane = 0; lane < info.subgroupSize; ++lane)
      for (int64_t e = 0; e < operand.count; ++e) {
        Position p = evaluate(operand.map, lane, e);
        EXPECT_GE(p.first, 0);
        EXPECT_LT(p.first, operand.rows);
        EXPECT_GE(p.second, 0);
        EXPECT_LT(p.second, operand.cols);
        ++seen[p];
      }
    EXPECT_EQ(int64_t(seen.size()), operand.rows * operand.cols)
        << stringifyMatrixIntrinsic(info.kind).str();
    for (const auto &[position, count] : seen)
      EXPECT_EQ(count, operand.copies)
          << stringifyMatrixIntrinsic(info.kind).str();
  }
}

TEST_P(MatrixIntrinsicsTest, SimulatedInstructionComputesAMatmul) {
  const MatrixIntrinsicInfo &info = getMatrixIntrinsicInfo(GetParam());
  if (isWarpgroupIntrinsic(GetParam()))
    GTEST_SKIP() << "wgmma reads A and B from shared memory through "
                    "descriptors; the e2e contraction tests on H100s "
                    "(--cuda-chip=sm_90a) check its data path";
  DocumentedLayout doc = documented(GetParam());
  AffineMap aMap = getFragmentLayoutA(GetParam(), &context);
  AffineMap bMap = getFragmentLayoutB(GetParam(), &context);
  AffineMap cMap = getFragmentLayoutC(GetParam(), &context);
  std::mt19937 random(7);
  std::uniform_int_distribution<int> value(-8, 8);
  std::vector<std::vector<double>> a(info.m, std::vector<double>(info.k));
  std::vector<std::vector<double>> b(info.k, std::vector<double>(info.n));
  for (auto &row : a)
    for (double &x : row) x = value(random);
  for (auto &row : b)
    for (double &x : row) x = value(random);

  // Scatter by Kiln's table into registers[lane][element].
  std::vector<std::vector<double>> aRegs(info.subgroupSize,
                                         std::vector<double>(info.aCount));
  std::vector<std::vector<double>> bRegs(info.subgroupSize,
                                         std::vector<double>(info.bCount));
  for (int64_t lane = 0; lane < info.subgroupSize; ++lane) {
    for (int64_t e = 0; e < info.aCount; ++e) {
      auto [m, k] = evaluate(aMap, lane, e);
      aRegs[lane][e] = a[m][k];
    }
    for (int64_t e = 0; e < info.bCount; ++e) {
      auto [n, k] = evaluate(bMap, lane, e);
      bRegs[lane][e] = b[k][n];
    }
  }
  // The instruction as its document defines it: D[m][n] = sum_k A[m][k] *
  // B[k][n], with A and B read from the registers where the document puts
  // them, and D written to the registers the document names.
  std::map<Position, double> aDoc, bDoc;
  for (int64_t lane = 0; lane < info.subgroupSize; ++lane) {
    for (int64_t e = 0; e < info.aCount; ++e)
      aDoc[doc.a(lane, e)] = aRegs[lane][e];
    for (int64_t e = 0; e < info.bCount; ++e) {
      auto [n, k] = doc.b(lane, e);
      bDoc[{k, n}] = bRegs[lane][e];
    }
  }
  std::vector<std::vector<double>> dRegs(info.subgroupSize,
                                         std::vector<double>(info.cCount));
  for (int64_t lane = 0; lane < info.subgroupSize; ++lane)
    for (int64_t e = 0; e < info.cCount; ++e) {
      auto [m, n] = doc.c(lane, e);
      double sum = 0;
      for (int64_t k = 0; k < info.k; ++k) sum += aDoc[{m, k}] * bDoc[{k, n}];
      dRegs[lane][e] = sum;
    }
  // Gather by Kiln's table and compare with the matmul.
  for (int64_t lane = 0; lane < info.subgroupSize; ++lane)
    for (int64_t e = 0; e < info.cCount; ++e) {
      auto [m, n] = evaluate(cMap, lane, e);
      double expected = 0;
      for (int64_t k = 0; k < info.k; ++k) expected += a[m][k] * b[k][n];
      EXPECT_EQ(dRegs[lane][e], expected)
          << stringifyMatrixIntrinsic(info.kind).str() << " C[" << m << "]["
          << n << "] from lane " << lane;
    }
}

INSTANTIATE_TEST_SUITE_P(
    All, MatrixIntrinsicsTest, ::testing::ValuesIn(kAll),
    [](const ::testing::TestParamInfo<MatrixIntrinsic> &info) {
      std::string name = stringifyMatrixIntrinsic(info.param).str();
      return name;
    });

}  // namespace
}  // namespace mlir::kiln
