//===- Attention.h - The attention chain as one unit ------------*- C++ -*-===//
//
// Attention written in linalg, softmax(scale * Q K^T) V with the softmax
// spelled out, is seven ops (eight with a causal mask):
//
// clang-format off
//   S   = Q K^T              f32 accumulation of f16/bf16 Q [B,M,D], K [B,N,D]
//  [S   = n > m ? -inf : S   optional causal mask: linalg.index 2 > index 1]
//   mx  = max_n S            filled with -inf
//   P   = exp((S - mx) * c)  the multiply optional; c a constant
//   l   = sum_n P            filled with 0
//   P16 = truncf(P)          to the element type of Q
//   O   = P16 V              f32 accumulation, V [B,N,D], filled with 0
//   out = truncf(O / l)      [B,M,D], the element type of Q
// clang-format on
//
// Dispatch creation puts the chain in one kernel when every target of the
// compile has a fused attention kernel (the GPU strategy "attention",
// kiln-gpu-lower-attention), which streams K and V through shared memory
// and keeps the scores of a block of query rows in registers with a
// running max and sum, instead of writing B x M x N f32 scores to memory.
//
// The matcher walks the chain backwards from `out`'s op; `producerOf` says
// which op produced the value an operand reads, so the same matcher works
// on tensors (the defining op) and on buffers (the last op that wrote the
// buffer before the reader).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DISPATCHCREATION_ATTENTION_H_
#define KILN_DISPATCHCREATION_ATTENTION_H_

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::kiln {

struct AttentionChain {
  linalg::LinalgOp scores, rowMax, exp, rowSum, truncate, values, normalize;
  // The causal mask between the scores and their readers; may be null.
  linalg::LinalgOp causalMask;
  // The fills of the accumulators of scores, rowMax, rowSum and values
  // (one fill may serve several), and on buffers the copies of a filled
  // buffer that initialize one (bufferization copies a fill shared by two
  // accumulators).
  linalg::FillOp scoresFill, rowMaxFill, rowSumFill, valuesFill;
  SmallVector<Operation *> accumulatorCopies;
  Value q, k, v, out;
  double scale = 1.0;
  int64_t batch = 0, m = 0, n = 0, d = 0;
  Type elementType; // f16 or bf16

  // The seven ops (eight with a mask) in program order.
  SmallVector<Operation *> ops() const {
    SmallVector<Operation *> all = {scores};
    if (causalMask)
      all.push_back(causalMask);
    all.append({rowMax, exp, rowSum, truncate, values, normalize});
    return all;
  }
};

// Which op produced the value `operand` reads; null for none (a function
// argument, or an op outside the chain's block).
using AttentionProducerFn = llvm::function_ref<Operation *(OpOperand &)>;

// The chain ending at `normalize` (static shapes, one batch dimension,
// f16 or bf16), if it is one.
std::optional<AttentionChain> matchAttention(Operation *normalize,
                                             AttentionProducerFn producerOf);

// Tensor form: producers are the defining ops.
std::optional<AttentionChain> matchAttentionOnTensors(Operation *normalize);

// Whether the fused kernel handles the chain's sizes: D of 64 or 128, M and
// N multiples of 64.
bool isFusableAttention(const AttentionChain &chain);

} // namespace mlir::kiln

#endif // KILN_DISPATCHCREATION_ATTENTION_H_
