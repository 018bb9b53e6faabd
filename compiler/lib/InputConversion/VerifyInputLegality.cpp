//===- VerifyInputLegality.cpp - Reject unsupported input programs --------===//
//
// Runs first in the input pipeline so that every unsupported construct is
// reported at the user's own location, in the user's terms, rather than as a
// failure of some later lowering.
//
//===----------------------------------------------------------------------===//
#include "kiln/InputConversion/Passes.h"

#include "ShardSupport.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_VERIFYINPUTLEGALITYPASS
#include "kiln/InputConversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

static constexpr const char *kSupportedElementTypes =
    "i1, i8, i16, i32, i64, f16, bf16, f32, f64";
static constexpr const char *kSupportedDialects =
    "func (without func.call), arith, math, linalg, tensor and tosa";

static bool isSupportedElementType(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type)) {
    if (!intType.isSignless())
      return false;
    unsigned width = intType.getWidth();
    return width == 1 || width == 8 || width == 16 || width == 32 ||
           width == 64;
  }
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(type);
}

// Why `type` cannot be a tensor at the program's boundary, or "" if it can.
static std::string checkBoundaryTensorType(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return "only static-shape ranked tensors are supported (use a rank-0 "
           "tensor for a scalar)";
  if (!tensorType.hasStaticShape())
    return "dynamic shapes are not supported; every dimension must be static";
  if (!isSupportedElementType(tensorType.getElementType()))
    return std::string("element type is not supported; supported: ") +
           kSupportedElementTypes;
  return "";
}

// Why a value of `type` cannot appear inside a function, or "" if it can.
static std::string checkValueType(Type type) {
  if (isa<IndexType>(type) || isSupportedElementType(type))
    return "";
  if (auto tensorType = dyn_cast<RankedTensorType>(type)) {
    if (!tensorType.hasStaticShape())
      return "dynamic shapes are not supported; every dimension must be "
             "static";
    if (!isSupportedElementType(tensorType.getElementType()))
      return std::string("element type is not supported; supported: ") +
             kSupportedElementTypes;
    return "";
  }
  if (isa<UnrankedTensorType>(type))
    return "unranked tensors are not supported; use static-shape ranked "
           "tensors";
  // tosa's own types (e.g. !tosa.shape) are consumed by tosa-to-linalg.
  if (type.getDialect().getNamespace() == "tosa")
    return "";
  return std::string("type is not supported; supported are static-shape "
                     "ranked tensors and scalars of ") +
         kSupportedElementTypes;
}

namespace {
struct VerifyInputLegalityPass
    : mlir::kiln::impl::VerifyInputLegalityPassBase<VerifyInputLegalityPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

// Returns failure after reporting the first problem found on `op`, so that
// one bad op gives one error. Operands are not checked: each is a result or
// argument that is reported where it is defined.
static LogicalResult verifyOp(Operation *op,
                              SymbolTableCollection &symbolTables,
                              bool gpuCollectives, bool compiledReductions) {
  StringRef dialect = op->getName().getDialectNamespace();
  StringRef name = op->getName().getStringRef();

  // Grids and collectives of SPMD programs (see kiln-lower-collectives).
  if (dialect == "shard" && op->isRegistered())
    return kiln::verifySupportedShardOp(op, symbolTables, gpuCollectives,
                                        compiledReductions);

  static const llvm::StringSet<> controlFlowDialects = {"scf", "cf", "affine",
                                                         "async"};
  if (controlFlowDialects.contains(dialect) || name == "tosa.cond_if" ||
      name == "tosa.while_loop")
    return op->emitError("control flow is not supported: '")
           << name << "' (Kiln compiles straight-line tensor programs of "
           << kSupportedDialects << " ops)";
  if (isa<func::CallOp, func::CallIndirectOp>(op))
    return op->emitError("function calls are not supported: '")
           << name << "'; inline the callee into the calling function";

  static const llvm::StringSet<> allowedDialects = {
      "func", "arith", "math", "linalg", "tensor", "tosa"};
  bool isTopLevel = isa<ModuleOp>(op) && !op->getParentOp();
  if (!isTopLevel && !allowedDialects.contains(dialect))
    return op->emitError("operation '")
           << name << "' is not supported; Kiln accepts ops of "
           << kSupportedDialects;
  if (!op->isRegistered())
    return op->emitError("unknown operation '") << name << "'";

  for (auto [i, type] : llvm::enumerate(op->getResultTypes())) {
    std::string why = checkValueType(type);
    if (!why.empty())
      return op->emitError("result #")
             << i << " of '" << name << "' has type " << type << ": " << why;
  }
  if (!isa<func::FuncOp>(op)) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments()) {
          std::string why = checkValueType(arg.getType());
          if (!why.empty())
            return op->emitError("region argument #")
                   << arg.getArgNumber() << " of '" << name << "' has type "
                   << arg.getType() << ": " << why;
        }
  }
  return success();
}

static LogicalResult verifyFunction(func::FuncOp func) {
  if (func.isExternal())
    return func.emitError("function '")
           << func.getSymName()
           << "' has no body; external functions are not supported";
  if (!func.getBody().hasOneBlock())
    return func.emitError("function '")
           << func.getSymName()
           << "' has several blocks; control flow is not supported";
  // Private functions are unreachable without func.call and get removed.
  if (!func.isPublic())
    return success();
  FunctionType type = func.getFunctionType();
  for (auto [i, input] : llvm::enumerate(type.getInputs())) {
    std::string why = checkBoundaryTensorType(input);
    if (!why.empty())
      return emitError(func.getArgument(i).getLoc(), "argument #")
             << i << " of function '" << func.getSymName() << "' has type "
             << input << ": " << why;
  }
  for (auto [i, result] : llvm::enumerate(type.getResults())) {
    std::string why = checkBoundaryTensorType(result);
    if (!why.empty())
      return func.emitError("result #")
             << i << " of function '" << func.getSymName() << "' has type "
             << result << ": " << why;
  }
  return success();
}

void VerifyInputLegalityPass::runOnOperation() {
  ModuleOp module = getOperation();
  bool failed = false;
  SymbolTableCollection symbolTables;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation())
      return WalkResult::advance();
    if (auto func = dyn_cast<func::FuncOp>(op))
      if (mlir::failed(verifyFunction(func)))
        failed = true;
    if (mlir::failed(
            verifyOp(op, symbolTables, gpuCollectives, compiledReductions))) {
      failed = true;
      // What a rejected op holds (e.g. a loop body) adds no information.
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  if (failed)
    signalPassFailure();
}
