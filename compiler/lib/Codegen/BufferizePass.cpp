//===- BufferizePass.cpp - One-shot bufferization of host kernels ---------===//
//
// Bufferizes kernels whose signature already is their memref bindings. The
// result tensors were tied to the result bindings by
// kiln-host-convert-to-bindings, so empty-tensor elimination lets the ops
// producing them write straight into the binding.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "CodegenUtils.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTBUFFERIZEPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Kernels may import nothing but libm, so temporaries live on the stack.
// Workgroup tiling keeps tile-local temporaries small.
static FailureOr<Value> createStackAllocation(OpBuilder &b, Location loc,
                                              MemRefType type,
                                              ValueRange dynamicSizes,
                                              unsigned alignment) {
  return memref::AllocaOp::create(b, loc, type, dynamicSizes,
                                  b.getI64IntegerAttr(alignment))
      .getResult();
}

struct HostBufferizePass
    : public kiln::impl::HostBufferizePassBase<HostBufferizePass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    HostBufferizePassBase::getDependentDialects(registry);
    registerHostCodegenDialects(registry);
  }

  void runOnOperation() override {
    if (failed(bufferizeKernels(getOperation(), createStackAllocation)))
      return signalPassFailure();
  }
};

} // namespace
