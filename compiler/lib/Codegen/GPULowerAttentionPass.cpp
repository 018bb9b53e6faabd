//===- GPULowerAttentionPass.cpp - Fused attention kernels ----------------===//
//
// The attention strategy's kernel (flash attention, forward): a workgroup
// computes kAttentionRows query rows of one batch with kAttentionWarps
// warps of 16 rows each. Q's rows sit in registers as mma.sync A fragments
// for the whole kernel; K and V stream through shared memory in blocks of
// kAttentionBlock rows, two stages each (cp.async), and per block a warp
//
//   S    = Q K^T                         16 x 64 f32, in registers
//   m'   = max(m, rowmax(S))             quad lane exchanges
//   P    = exp((S - m') * c)
//   l    = l * exp((m - m') * c) + rowsum(P)     (partial per lane)
//   O    = O * exp((m - m') * c) + trunc(P) V    16 x D f32
//
// where the C fragments of S, truncated, are the A fragments of P V (two
// adjacent 16x8 C tiles are one 16x16 A tile in the mma.sync layouts). At
// the end the lanes of a quad add up their row sums and each row of O is
// divided by its sum, truncated and stored.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"
#include "MatrixIntrinsics.h"
#include "kiln/DispatchCreation/Attention.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_GPULOWERATTENTIONPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

constexpr int64_t kWarpSize = 32;
constexpr int64_t kCopyBytes = 16;

class AttentionEmitter {
public:
  // `tilesM`: 16-row m-tiles per warp (each K and V fragment read from
  // shared memory feeds that many mma per 8 columns); `qInShared`: Q's
  // fragments are read from shared memory for every block instead of held
  // in registers; `blockRows`: keys per block.
  AttentionEmitter(OpBuilder &b, Location loc, const AttentionChain &chain,
                   MatrixIntrinsic intrinsic, int64_t tilesM, bool qInShared,
                   int64_t blockRows)
      : b(b), loc(loc), chain(chain), intrinsic(intrinsic),
        info(getMatrixIntrinsicInfo(intrinsic)), tilesM(tilesM),
        qInShared(qInShared), blockRows(blockRows) {}

  void emit();

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value apply(AffineExpr expr, ValueRange operands) {
    return affine::AffineApplyOp::create(
        b, loc, AffineMap::get(operands.size(), 0, expr), operands);
  }
  Value element(Value vector, int64_t i) {
    return vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{i});
  }

  // cp.async of `rows` rows of the [batch, *, d] operand `source` from row
  // `row0` of batch `batch` into `target` (at `stage` when given), 16 bytes
  // per copy spread over the workgroup's threads.
  SmallVector<Value> copyRows(Value source, Value batch, Value row0,
                              Value target, Value stage, int64_t rows);
  Value commit(ArrayRef<Value> tokens) {
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
  }
  // Waits until at most `pending` copy groups are in flight (`first`
  // orders the wait after the first group), then for every thread.
  void waitAndSync(Value first, int64_t pending) {
    nvgpu::DeviceAsyncWaitOp::create(b, loc, first,
                                     b.getI32IntegerAttr(pending));
    gpu::BarrierOp::create(b, loc);
  }
  // ldmatrix.x4 at (row, col) of `buffer` (indices prefixed by `stage`
  // when given), as a flat vector of 8 elements.
  Value ldmatrix(Value buffer, Value stage, Value row, Value col,
                 bool transpose) {
    SmallVector<Value> indices;
    if (stage)
      indices.push_back(stage);
    indices.append({row, col});
    Value x4 = nvgpu::LdMatrixOp::create(
        b, loc, VectorType::get({4, 2}, chain.elementType), buffer, indices,
        transpose, 4);
    return vector::ShapeCastOp::create(
        b, loc, VectorType::get({8}, chain.elementType), x4);
  }
  Value half(Value flat, int64_t which) {
    SmallVector<Value> elements;
    for (int64_t e = 0; e < 4; ++e)
      elements.push_back(element(flat, 4 * which + e));
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({info.bCount}, chain.elementType), elements);
  }
  // `value` combined with the values of the other lanes of its quad (the
  // four lanes that hold one row of a C fragment).
  Value quadReduce(Value value, bool max) {
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, value, offset, kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      value = max ? LLVM::MaxNumOp::create(b, loc, value, other).getResult()
                  : arith::AddFOp::create(b, loc, value, other).getResult();
    }
    return value;
  }

  OpBuilder &b;
  Location loc;
  const AttentionChain &chain;
  MatrixIntrinsic intrinsic;
  const MatrixIntrinsicInfo &info;
  int64_t tilesM;
  bool qInShared;
  int64_t blockRows;
  Value threadId;
};

SmallVector<Value> AttentionEmitter::copyRows(Value source, Value batch,
                                              Value row0, Value target,
                                              Value stage, int64_t rows) {
  MLIRContext *context = b.getContext();
  int64_t vector = kCopyBytes * 8 / chain.elementType.getIntOrFloatBitWidth();
  int64_t perRow = chain.d / vector;
  int64_t threads = kAttentionWarps * kWarpSize;
  AffineExpr tid, r0;
  bindDims(context, tid, r0);
  SmallVector<Value> tokens;
  for (int64_t first = 0; first < rows * perRow; first += threads) {
    AffineExpr chunk = tid + first;
    Value row = apply(chunk.floorDiv(perRow), {threadId, row0});
    Value sourceRow = apply(chunk.floorDiv(perRow) + r0, {threadId, row0});
    Value col = apply((chunk % perRow) * vector, {threadId, row0});
    SmallVector<Value> targetIndices;
    if (stage)
      targetIndices.push_back(stage);
    targetIndices.append({row, col});
    // 16-byte copies that skip L1: each block is read once per workgroup.
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, target, targetIndices, source,
        ValueRange{batch, sourceRow, col}, b.getIndexAttr(vector),
        /*srcElements=*/Value(), b.getUnitAttr()));
  }
  return tokens;
}

void AttentionEmitter::emit() {
  MLIRContext *context = b.getContext();
  Type e = chain.elementType;
  Type f32Type = b.getF32Type();
  int64_t d = chain.d;
  int64_t blocks = chain.n / blockRows;
  int64_t rowBlocks = chain.m / (kAttentionWarps * info.m * tilesM);
  auto accType = VectorType::get({info.cCount}, f32Type);

  // One workgroup per (batch, block of query rows).
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(chain.batch),
                             b.getIndexAttr(rowBlocks)},
      ValueRange{},
      b.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(context, gpu::MappingId::LinearDim1),
           gpu::GPUBlockMappingAttr::get(context,
                                         gpu::MappingId::LinearDim0)}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value batch = forall.getInductionVar(0);
  AffineExpr d0, d1;
  bindDims(context, d0, d1);
  // The workgroup's rows: 16 * tilesM per warp, m-tile tm of warp w being
  // rows tm * 64 + 16 * w .. + 15 of the block.
  int64_t rowsPerTile = kAttentionWarps * info.m;
  Value row0 = apply(d0 * (rowsPerTile * tilesM), {forall.getInductionVar(1)});

  threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = apply(d0 % kWarpSize, {threadId});
  Value warpRow = apply(d0.floorDiv(kWarpSize) * info.m, {threadId});

  // Shared memory: rows padded so that the 8 rows one ldmatrix matrix reads
  // fall in distinct banks; 16-byte aligned rows for the copies.
  auto shared =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  int64_t width = d + kAttentionPadding;
  IntegerAttr alignment = b.getI64IntegerAttr(kCopyBytes);
  auto stagesType = MemRefType::get({2, blockRows, width}, e, nullptr, shared);
  Value sharedK = memref::AllocOp::create(b, loc, stagesType, alignment);
  Value sharedV = memref::AllocOp::create(b, loc, stagesType, alignment);

  // Q's rows: in a buffer of their own, read by every block (qInShared),
  // or m-tile rows 0 and 1 through the second stages of K and V (free until
  // block 1 arrives; Q goes to registers first). Then block 0 of K and V
  // goes into stage 0.
  assert((qInShared || blockRows == rowsPerTile) &&
         "an m-tile of Q's rows fills a K or V stage");
  Value qStage = index(1);
  Value qBuffers[2] = {sharedK, sharedV};
  SmallVector<Value> qTokens;
  Value sharedQ;
  if (qInShared) {
    sharedQ = memref::AllocOp::create(
        b, loc,
        MemRefType::get({tilesM * rowsPerTile, width}, e, nullptr, shared),
        alignment);
    qTokens =
        copyRows(chain.q, batch, row0, sharedQ, Value(), tilesM * rowsPerTile);
  } else {
    for (int64_t tm = 0; tm < tilesM; ++tm)
      llvm::append_range(qTokens, copyRows(chain.q, batch,
                                           apply(d0 + tm * rowsPerTile, {row0}),
                                           qBuffers[tm], qStage, rowsPerTile));
  }
  Value first = commit(qTokens);
  auto copyBlock = [&](Value block) {
    Value kv0 = apply(d0 * blockRows, {block});
    Value stage = apply(d0 % 2, {block});
    SmallVector<Value> tokens =
        copyRows(chain.k, batch, kv0, sharedK, stage, blockRows);
    llvm::append_range(
        tokens, copyRows(chain.v, batch, kv0, sharedV, stage, blockRows));
    commit(tokens);
  };
  copyBlock(index(0));
  waitAndSync(first, 1);

  // Q's A fragments (16 x 16 tiles along d) of this warp's rows: lane l
  // addresses row l % 16 at column 8 * (l / 16) of each tile.
  auto qFragment = [&](int64_t tm, int64_t kd) -> Value {
    Value row = apply(d0 % 16 + d1 + (qInShared ? tm * rowsPerTile : 0),
                      {lane, warpRow});
    Value col = apply(d0.floorDiv(16) * 8 + kd, {lane});
    return vector::ShapeCastOp::create(
        b, loc, VectorType::get({info.aCount}, e),
        qInShared ? ldmatrix(sharedQ, Value(), row, col, /*transpose=*/false)
                  : ldmatrix(qBuffers[tm], qStage, row, col,
                             /*transpose=*/false));
  };
  SmallVector<SmallVector<Value>> qFragments(tilesM);
  if (!qInShared) {
    for (int64_t tm = 0; tm < tilesM; ++tm)
      for (int64_t kd = 0; kd < d; kd += info.k)
        qFragments[tm].push_back(qFragment(tm, kd));
    // Every warp has its Q fragments before block 1 overwrites the stages.
    gpu::BarrierOp::create(b, loc);
  }

  // Loop state: per row of the lane (g and g + 8 of each m-tile; row r is
  // m-tile r / 2, elements 2 * (r % 2) and + 1 of its C tiles) the running
  // max, then the lane's partial sums, then the O accumulators (d / 8 tiles
  // per m-tile).
  int64_t rows = 2 * tilesM;
  int64_t oTiles = d / info.n;
  int64_t sTiles = blockRows / info.n;
  SmallVector<Value> init(rows, f32(-INFINITY));
  init.append(rows, f32(0));
  Value zeros = vector::BroadcastOp::create(b, loc, accType, f32(0));
  init.append(tilesM * oTiles, zeros);
  // exp(x * c) = exp2(x * c * log2(e)): one ex2.approx.f32 (2 ulp; the
  // special function unit) per element, with an FMA folding the max in,
  // instead of the polynomial math.exp becomes. The NVVM intrinsic, as the
  // conversion to NVVM takes llvm.exp2 for a libdevice call.
  Value scale = f32(chain.scale * M_LOG2E);
  StringAttr ex2 = b.getStringAttr("llvm.nvvm.ex2.approx.f32");
  auto exp2 = [&](Value x) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, f32Type, ex2, ValueRange{x})
        .getResult(0);
  };

  // With a causal mask, key blocks past the workgroup's last query row
  // are skipped, and keys after a row's query are -inf in the blocks used.
  bool causal = bool(chain.causalMask);
  Value blockCount = index(blocks);
  if (causal)
    blockCount = affine::AffineMinOp::create(
        b, loc,
        AffineMap::get(1, 0,
                       {getAffineConstantExpr(blocks, context),
                        (d0 + rowsPerTile * tilesM).ceilDiv(blockRows)},
                       context),
        ValueRange{row0});
  Value lastBlock = apply(d0 - 1, {blockCount});
  auto loop = scf::ForOp::create(
      b, loc, index(0), blockCount, index(1), init,
      [&](OpBuilder &, Location, Value block, ValueRange state) {
        Value stage = apply(d0 % 2, {block});
        // Block j + 1 streams in while block j is used; the last block
        // waits for everything.
        Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           block, lastBlock);
        auto ifLast = scf::IfOp::create(b, loc, last, /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(ifLast.thenBlock());
          waitAndSync(first, 0);
          b.setInsertionPointToStart(ifLast.elseBlock());
          copyBlock(apply(d0 + 1, {block}));
          waitAndSync(first, 1);
        }

        // S = Q K^T: K's rows are N x d, so ldmatrix without .trans gives
        // B fragments: lane l addresses row l % 8 + 8 * (l / 16) at column
        // 8 * ((l / 8) % 2) of a 16 x 16 (n x d) block, the registers
        // being b0b1, b2b3 of two adjacent 8-column tiles; each serves
        // every m-tile.
        SmallVector<SmallVector<Value>> s(tilesM,
                                          SmallVector<Value>(sTiles, zeros));
        for (int64_t kd = 0; kd < d; kd += info.k) {
          SmallVector<Value> a;
          for (int64_t tm = 0; tm < tilesM; ++tm)
            a.push_back(qInShared ? qFragment(tm, kd)
                                  : qFragments[tm][kd / info.k]);
          for (int64_t tn = 0; tn < sTiles; tn += 2) {
            Value row =
                apply(d0 % 8 + d0.floorDiv(16) * 8 + tn * info.n, {lane});
            Value col = apply((d0.floorDiv(8) % 2) * 8 + kd, {lane});
            Value flat = ldmatrix(sharedK, stage, row, col, false);
            for (int64_t h = 0; h < 2; ++h) {
              Value bFragment = half(flat, h);
              for (int64_t tm = 0; tm < tilesM; ++tm)
                s[tm][tn + h] = createMatrixInstruction(
                    b, loc, intrinsic, a[tm], bFragment, s[tm][tn + h]);
            }
          }
        }

        if (causal) {
          // Element i of C tile (tm, tn): query row g + 8 (i / 2) of the
          // warp's m-tile tm, key 2 t + i % 2 of 8-column tile tn.
          Value minusInf = f32(-INFINITY);
          for (int64_t tm = 0; tm < tilesM; ++tm)
            for (int64_t tn = 0; tn < sTiles; ++tn) {
              SmallVector<Value> masked;
              for (int64_t i = 0; i < info.cCount; ++i) {
                Value query =
                    apply(d0.floorDiv(4) + (i / 2) * 8 + d1 + tm * rowsPerTile,
                          {lane, apply(d0 + d1, {row0, warpRow})});
                Value key =
                    apply((d0 % 4) * 2 + i % 2 + tn * info.n + d1 * blockRows,
                          {lane, block});
                Value after = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::ugt, key, query);
                masked.push_back(arith::SelectOp::create(
                    b, loc, after, minusInf, element(s[tm][tn], i)));
              }
              s[tm][tn] =
                  vector::FromElementsOp::create(b, loc, accType, masked);
            }
        }

        // The maxima ignore NaN scores (one max.f32 each, where the chain's
        // maximumf takes three instructions); a NaN still makes its
        // probability, and so its row's sum and results, NaN.
        auto at = [&](int64_t tm, int64_t tn, int64_t i) {
          return element(s[tm][tn], i);
        };
        SmallVector<Value> newMax(rows), alpha(rows), negMaxScaled(rows);
        for (int64_t r = 0; r < rows; ++r) {
          Value blockMax;
          for (int64_t tn = 0; tn < sTiles; ++tn)
            for (int64_t i = 0; i < 2; ++i) {
              Value v = at(r / 2, tn, 2 * (r % 2) + i);
              blockMax =
                  blockMax
                      ? LLVM::MaxNumOp::create(b, loc, blockMax, v).getResult()
                      : v;
            }
          newMax[r] = LLVM::MaxNumOp::create(
              b, loc, state[r], quadReduce(blockMax, /*max=*/true));
          alpha[r] = exp2(arith::MulFOp::create(
              b, loc, arith::SubFOp::create(b, loc, state[r], newMax[r]),
              scale));
          // exp((s - m) c) = exp2(s c' - m c'), c' = c log2(e).
          negMaxScaled[r] = arith::NegFOp::create(
              b, loc, arith::MulFOp::create(b, loc, newMax[r], scale));
        }
        SmallVector<Value> blockSum(rows, f32(0));
        SmallVector<SmallVector<Value>> p16(tilesM, SmallVector<Value>(sTiles));
        for (int64_t tm = 0; tm < tilesM; ++tm)
          for (int64_t tn = 0; tn < sTiles; ++tn) {
            SmallVector<Value> truncated;
            for (int64_t i = 0; i < info.cCount; ++i) {
              int64_t r = 2 * tm + i / 2;
              Value p = exp2(LLVM::FMAOp::create(b, loc, at(tm, tn, i), scale,
                                                 negMaxScaled[r]));
              blockSum[r] = arith::AddFOp::create(b, loc, blockSum[r], p);
              truncated.push_back(arith::TruncFOp::create(b, loc, e, p));
            }
            p16[tm][tn] = vector::FromElementsOp::create(
                b, loc, VectorType::get({info.cCount}, e), truncated);
          }
        SmallVector<Value> next(newMax.begin(), newMax.end());
        for (int64_t r = 0; r < rows; ++r)
          next.push_back(arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, state[rows + r], alpha[r]),
              blockSum[r]));
        SmallVector<Value> o(state.begin() + 2 * rows, state.end());
        for (int64_t tm = 0; tm < tilesM; ++tm) {
          Value alphaVector = vector::FromElementsOp::create(
              b, loc, accType,
              ValueRange{alpha[2 * tm], alpha[2 * tm], alpha[2 * tm + 1],
                         alpha[2 * tm + 1]});
          for (int64_t tn = 0; tn < oTiles; ++tn) {
            Value &tile = o[tm * oTiles + tn];
            tile = arith::MulFOp::create(b, loc, tile, alphaVector);
          }
        }

        // O += P V: the A fragment of each 16-wide slice of the block is its
        // two 16 x 8 P tiles; V's rows are N x d (K x N for the product),
        // so ldmatrix.trans gives B fragments: lane l addresses row l % 16 at
        // column 8 * (l / 16) of a 16 x 16 block; each serves every m-tile.
        for (int64_t kn = 0; kn < sTiles; kn += 2) {
          SmallVector<Value> a;
          for (int64_t tm = 0; tm < tilesM; ++tm) {
            SmallVector<Value> aElements;
            for (int64_t h = 0; h < 2; ++h)
              for (int64_t i = 0; i < info.cCount; ++i)
                aElements.push_back(element(p16[tm][kn + h], i));
            a.push_back(vector::FromElementsOp::create(
                b, loc, VectorType::get({info.aCount}, e), aElements));
          }
          for (int64_t tn = 0; tn < oTiles; tn += 2) {
            Value row = apply(d0 % 16 + kn * info.n, {lane});
            Value col = apply(d0.floorDiv(16) * 8 + tn * info.n, {lane});
            Value flat = ldmatrix(sharedV, stage, row, col, true);
            for (int64_t h = 0; h < 2; ++h) {
              Value bFragment = half(flat, h);
              for (int64_t tm = 0; tm < tilesM; ++tm) {
                Value &tile = o[tm * oTiles + tn + h];
                tile = createMatrixInstruction(b, loc, intrinsic, a[tm],
                                               bFragment, tile);
              }
            }
          }
        }
        // Every warp is done with this stage before block j + 2 refills it.
        gpu::BarrierOp::create(b, loc);
        next.append(o.begin(), o.end());
        scf::YieldOp::create(b, loc, next);
      });

  // out[row][col .. col + 1] = trunc(O / l) for each of the lane's rows.
  // One division per row, then multiplies (within 1.5 ulp of dividing
  // each element, before the truncation to 16 bits).
  ValueRange results = loop.getResults();
  for (int64_t r = 0; r < rows; ++r) {
    int64_t tm = r / 2;
    Value inverse = arith::DivFOp::create(
        b, loc, f32(1.0), quadReduce(results[rows + r], /*max=*/false));
    Value row =
        apply(d0.floorDiv(4) + (r % 2) * 8 + d1,
              {lane, apply(d0 + d1 + tm * rowsPerTile, {row0, warpRow})});
    for (int64_t tn = 0; tn < oTiles; ++tn) {
      Value tile = results[2 * rows + tm * oTiles + tn];
      SmallVector<Value> pair;
      for (int64_t i = 0; i < 2; ++i)
        pair.push_back(arith::TruncFOp::create(
            b, loc, e,
            arith::MulFOp::create(b, loc, element(tile, 2 * (r % 2) + i),
                                  inverse)));
      Value col = apply((d0 % 4) * 2 + tn * info.n, {lane});
      vector::StoreOp::create(
          b, loc,
          vector::FromElementsOp::create(b, loc, VectorType::get({2}, e), pair),
          chain.out, ValueRange{batch, row, col});
    }
  }
}

// On buffers, an operand's producer is the last linalg op before its reader
// (in the same block) that wrote the buffer.
Operation *lastWriter(OpOperand &operand) {
  Value buffer = operand.get();
  for (Operation *op = operand.getOwner()->getPrevNode(); op;
       op = op->getPrevNode())
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (llvm::is_contained(linalgOp.getDpsInits(), buffer))
        return op;
  return nullptr;
}

struct GPULowerAttentionPass
    : public kiln::impl::GPULowerAttentionPassBase<GPULowerAttentionPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto strategy = func->getAttrOfType<GPUStrategyAttr>(kGPUStrategyAttrName);
    if (!strategy || strategy.getKind() != KernelKind::Attention)
      return;
    // The attribute's verifier saw that an intrinsic, query_rows and a
    // k_tile are there.
    MatrixIntrinsic intrinsic = *strategy.getIntrinsic();
    if (!usesLdMatrix(intrinsic)) {
      func.emitError() << "attention strategy: needs an mma.sync intrinsic, "
                          "found "
                       << stringifyMatrixIntrinsic(intrinsic);
      return signalPassFailure();
    }
    SmallVector<AttentionChain, 1> chains;
    func.walk([&](linalg::LinalgOp op) {
      if (std::optional<AttentionChain> chain = matchAttention(op, lastWriter))
        chains.push_back(*chain);
    });
    if (chains.size() != 1) {
      func.emitError() << "attention strategy: expected one attention chain "
                          "in the kernel, found "
                       << chains.size();
      return signalPassFailure();
    }
    AttentionChain &chain = chains.front();
    int64_t queryRows = strategy.getQueryRows();
    if (queryRows != kAttentionRows && queryRows != 2 * kAttentionRows) {
      func.emitError() << "attention strategy: needs query_rows of "
                       << kAttentionRows << " or " << 2 * kAttentionRows
                       << ", found " << queryRows;
      return signalPassFailure();
    }
    int64_t blockRows = strategy.getKTile();
    if (blockRows != 32 && blockRows != 64) {
      func.emitError() << "attention strategy: needs a k_tile of 32 or 64 "
                          "keys, found "
                       << blockRows;
      return signalPassFailure();
    }
    if (!isFusableAttention(chain) || chain.m % queryRows != 0 ||
        chain.n % blockRows != 0 ||
        getMatrixInputType(intrinsic, &getContext()) != chain.elementType) {
      chain.normalize.emitError()
          << "attention strategy: the kernel does not fit this chain (d = "
          << chain.d << ", " << chain.m << " query and " << chain.n
          << " key rows, " << chain.elementType << ")";
      return signalPassFailure();
    }
    // The chain's temporaries: every buffer a chain op or an accumulator's
    // initialization writes, except the result.
    SetVector<Operation *> erase;
    for (Operation *op : chain.ops())
      erase.insert(op);
    for (Operation *op : chain.accumulatorCopies)
      erase.insert(op);
    for (linalg::FillOp fill : {chain.scoresFill, chain.rowMaxFill,
                                chain.rowSumFill, chain.valuesFill})
      erase.insert(fill);
    SetVector<Value> temporaries;
    for (Operation *op : erase)
      for (Value init : cast<linalg::LinalgOp>(op).getDpsInits())
        if (init != chain.out)
          temporaries.insert(init);
    for (Value temporary : temporaries)
      if (!temporary.getDefiningOp<memref::AllocOp>()) {
        chain.normalize.emitError()
            << "attention strategy: a temporary of the chain is not a "
               "buffer of its own: "
            << temporary;
        return signalPassFailure();
      }

    OpBuilder b(chain.normalize);
    AttentionEmitter(b, chain.normalize.getLoc(), chain, intrinsic,
                     queryRows / kAttentionRows, strategy.getQInShared(),
                     blockRows)
        .emit();
    for (Operation *op : llvm::reverse(erase))
      op->erase();
    for (Value temporary : temporaries) {
      Operation *alloc = temporary.getDefiningOp();
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
        if (!isa<memref::DeallocOp>(user)) {
          user->emitError() << "attention strategy: unexpected use of a "
                               "temporary of the chain";
          return signalPassFailure();
        }
        user->erase();
      }
      alloc->erase();
    }
  }
};

} // namespace
