//===- ConvertToBindingsPass.cpp - Tensor signature to memref bindings ----===//
//
// Makes the kernel's signature its list of buffer bindings (arguments, then
// results) while keeping the body in tensor form for one-shot bufferization.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTCONVERTTOBINDINGSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Bindings are plain dense buffers: identity layout, static shape.
static FailureOr<MemRefType> getBindingType(Location loc, Type type,
                                            StringRef what, unsigned index) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || !tensorType.hasStaticShape()) {
    emitError(loc) << "host kernel " << what << " #" << index
                   << " must be a statically shaped tensor, found " << type;
    return failure();
  }
  return MemRefType::get(tensorType.getShape(), tensorType.getElementType());
}

struct HostConvertToBindingsPass
    : public kiln::impl::HostConvertToBindingsPassBase<
          HostConvertToBindingsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (!func.getBody().hasOneBlock()) {
      func.emitError() << "host kernel '" << func.getSymName()
                       << "' must have a single block (no control flow)";
      return signalPassFailure();
    }
    Block &entry = func.getBody().front();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    OpBuilder b(func.getContext());

    SmallVector<Type> bindingTypes;
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      FailureOr<MemRefType> t =
          getBindingType(func.getLoc(), type, "argument", i);
      if (failed(t))
        return signalPassFailure();
      bindingTypes.push_back(*t);
    }
    for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
      FailureOr<MemRefType> t =
          getBindingType(func.getLoc(), type, "result", i);
      if (failed(t))
        return signalPassFailure();
      bindingTypes.push_back(*t);
    }

    // Inputs: read through a tensor view of the binding. `restrict` tells
    // bufferization that nothing else in the kernel writes that buffer.
    b.setInsertionPointToStart(&entry);
    for (BlockArgument arg : entry.getArguments()) {
      auto tensorType = cast<RankedTensorType>(arg.getType());
      arg.setType(bindingTypes[arg.getArgNumber()]);
      auto view = bufferization::ToTensorOp::create(
          b, arg.getLoc(), tensorType, arg, /*restrict=*/true,
          /*writable=*/false);
      arg.replaceAllUsesExcept(view.getResult(), view);
    }

    // Results: appended bindings, written in place.
    b.setInsertionPoint(ret);
    unsigned numInputs = entry.getNumArguments();
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      BlockArgument out =
          entry.addArgument(bindingTypes[numInputs + i], ret.getLoc());
      bufferization::MaterializeInDestinationOp::create(
          b, ret.getLoc(), Type(), value, out, /*restrict=*/true,
          /*writable=*/true);
    }
    ret->setOperands({});
    func.setFunctionType(b.getFunctionType(bindingTypes, {}));
  }
};

} // namespace
