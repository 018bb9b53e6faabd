//===- GPUAlignVectorAccessesPass.cpp - Provable vector access alignment --===//
//
// vector.load / vector.store lower to LLVM loads and stores aligned to
// their element type unless told otherwise; NVPTX then splits a
// vector<4xf32> access into four scalar ones. This pass proves, from the
// index computations, how far the accessed address is aligned and records
// it in the ops' `alignment` attribute.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUALIGNVECTORACCESSESPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Alignment of kernel binding pointers (host_abi.h, the GPU drivers):
// bindings are whole allocations or arena slices aligned to 64 bytes.
constexpr int64_t kBindingAlignment = 16;
// Powers of two beyond this are not tracked (plenty for 16-byte accesses).
constexpr int64_t kMaxPow2 = int64_t(1) << 20;
// Bound on the depth of the use-def walk.
constexpr unsigned kMaxDepth = 16;

// Largest power of two dividing constant `c` (capped; 0 is divisible by all).
static int64_t pow2Divisor(int64_t c) {
  if (c == 0)
    return kMaxPow2;
  return std::min<int64_t>(
      kMaxPow2, int64_t(1) << llvm::countr_zero(static_cast<uint64_t>(c)));
}

static int64_t mulDivisors(int64_t a, int64_t b) {
  return std::min<int64_t>(kMaxPow2, a * b);
}

static int64_t pow2Divisor(Value value, unsigned depth);

static int64_t pow2Divisor(OpFoldResult ofr, unsigned depth) {
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return pow2Divisor(*c);
  return pow2Divisor(cast<Value>(ofr), depth);
}

// The power of two known to divide affine `expr` whose dims and symbols
// have the divisors `operands` (dims first).
static int64_t pow2Divisor(AffineExpr expr, ArrayRef<int64_t> operands,
                           unsigned numDims) {
  if (auto c = dyn_cast<AffineConstantExpr>(expr))
    return pow2Divisor(c.getValue());
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return operands[dim.getPosition()];
  if (auto sym = dyn_cast<AffineSymbolExpr>(expr))
    return operands[numDims + sym.getPosition()];
  auto binary = cast<AffineBinaryOpExpr>(expr);
  int64_t lhs = pow2Divisor(binary.getLHS(), operands, numDims);
  int64_t rhs = pow2Divisor(binary.getRHS(), operands, numDims);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return std::min(lhs, rhs);
  case AffineExprKind::Mul:
    return mulDivisors(lhs, rhs);
  default:
    return 1; // mod, floordiv, ceildiv: not tracked
  }
}

// The largest power of two (up to kMaxPow2) that provably divides `value`.
static int64_t pow2Divisor(Value value, unsigned depth) {
  if (depth > kMaxDepth)
    return 1;
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return pow2Divisor(*c);
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *parent = arg.getOwner()->getParentOp();
    if (auto forOp = dyn_cast<scf::ForOp>(parent);
        forOp && arg == forOp.getInductionVar())
      return std::min(pow2Divisor(forOp.getLowerBound(), depth + 1),
                      pow2Divisor(forOp.getStep(), depth + 1));
    if (auto forall = dyn_cast<scf::ForallOp>(parent)) {
      unsigned i = arg.getArgNumber();
      if (i < forall.getRank())
        return std::min(pow2Divisor(forall.getMixedLowerBound()[i], depth + 1),
                        pow2Divisor(forall.getMixedStep()[i], depth + 1));
    }
    return 1;
  }
  Operation *op = value.getDefiningOp();
  if (isa<arith::AddIOp, arith::SubIOp>(op))
    return std::min(pow2Divisor(op->getOperand(0), depth + 1),
                    pow2Divisor(op->getOperand(1), depth + 1));
  if (isa<arith::MulIOp, arith::ShLIOp>(op)) {
    int64_t lhs = pow2Divisor(op->getOperand(0), depth + 1);
    if (isa<arith::MulIOp>(op))
      return mulDivisors(lhs, pow2Divisor(op->getOperand(1), depth + 1));
    std::optional<int64_t> shift = getConstantIntValue(op->getOperand(1));
    return shift && *shift >= 0 && *shift < 20
               ? mulDivisors(lhs, int64_t(1) << *shift)
               : lhs;
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return pow2Divisor(op->getOperand(0), depth + 1);
  if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
    SmallVector<int64_t> operands;
    for (Value operand : apply.getMapOperands())
      operands.push_back(pow2Divisor(operand, depth + 1));
    return pow2Divisor(apply.getAffineMap().getResult(0), operands,
                       apply.getAffineMap().getNumDims());
  }
  return 1;
}

// The alignment in bytes that an access of `vectorType` at `indices` of
// binding `memref` provably has; 0 when nothing beyond the element
// alignment is known.
static int64_t provenAlignment(Value memref, ValueRange indices,
                               VectorType vectorType) {
  auto type = cast<MemRefType>(memref.getType());
  // Only kernel bindings have a known base alignment.
  auto arg = dyn_cast<BlockArgument>(memref);
  if (!arg || !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    return 0;
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return 0;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return 0;
  int64_t divisor = pow2Divisor(offset);
  for (auto [index, stride] : llvm::zip(indices, strides))
    divisor = std::min(divisor,
                       mulDivisors(pow2Divisor(index, 0), pow2Divisor(stride)));
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  int64_t vectorBytes = vectorType.getNumElements() * elementBytes;
  if (!llvm::isPowerOf2_64(vectorBytes))
    return 0;
  int64_t alignment = std::min(
      {kBindingAlignment, vectorBytes, mulDivisors(divisor, elementBytes)});
  return alignment > elementBytes ? alignment : 0;
}

struct GPUAlignVectorAccessesPass
    : public kiln::impl::GPUAlignVectorAccessesPassBase<
          GPUAlignVectorAccessesPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](Operation *op) {
      int64_t alignment = 0;
      if (auto load = dyn_cast<vector::LoadOp>(op))
        alignment = provenAlignment(load.getBase(), load.getIndices(),
                                    load.getVectorType());
      else if (auto store = dyn_cast<vector::StoreOp>(op))
        alignment = provenAlignment(store.getBase(), store.getIndices(),
                                    store.getVectorType());
      if (alignment)
        op->setAttr("alignment", b.getI64IntegerAttr(alignment));
    });
  }
};

} // namespace
