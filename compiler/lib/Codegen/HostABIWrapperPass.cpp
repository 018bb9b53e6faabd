//===- HostABIWrapperPass.cpp - host_abi.h entry points -------------------===//
//
// Gives each lowered kernel the exported signature the `local` driver calls
// (runtime/include/kiln/host_abi.h):
//
//   int32_t name(const kiln_host_dispatch_state_t *state,
//                uint32_t workgroup_x, uint32_t workgroup_y,
//                uint32_t workgroup_z);
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "kiln/host_abi.h"

#include <cstddef>

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTADDABIWRAPPERPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// The wrapper reads the state struct through raw offsets; pin them to the C
// definition so that a change to host_abi.h cannot silently break kernels.
static_assert(offsetof(kiln_host_dispatch_state_t, bindings) == 0,
              "host ABI: bindings at offset 0");
static_assert(offsetof(kiln_host_dispatch_state_t, binding_count) == 24,
              "host ABI: binding_count at offset 24");
constexpr int64_t kBindingCountOffset =
    offsetof(kiln_host_dispatch_state_t, binding_count);

// Workgroup ids are the last three (i64) arguments of a lowered kernel.
constexpr unsigned kNumWorkgroupIds = 3;

static LogicalResult wrapKernel(ModuleOp module, LLVM::LLVMFuncOp kernel) {
  MLIRContext *ctx = module.getContext();
  LLVM::LLVMFunctionType kernelType = kernel.getFunctionType();
  unsigned numParams = kernelType.getNumParams();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  auto i64 = IntegerType::get(ctx, 64);
  Type returnType = kernelType.getReturnType();
  bool returnsStatus = returnType == i32;
  if (numParams < kNumWorkgroupIds ||
      !(isa<LLVM::LLVMVoidType>(returnType) || returnsStatus)) {
    return kernel.emitError()
           << "host kernel must take binding pointers and three workgroup "
              "ids and return nothing or an i32 status, found "
           << kernelType;
  }
  unsigned numBindings = numParams - kNumWorkgroupIds;
  for (unsigned i = 0; i < numParams; ++i) {
    Type expected = i < numBindings ? Type(ptrType) : Type(i64);
    if (kernelType.getParamType(i) != expected)
      return kernel.emitError()
             << "host kernel parameter #" << i << " must be " << expected
             << " (bare-pointer bindings, then i64 workgroup ids), found "
             << kernelType.getParamType(i);
  }

  std::string name = kernel.getSymName().str();
  std::string implName = name + ".impl";
  SymbolTable symbols(module);
  if (symbols.lookup(implName))
    return kernel.emitError() << "symbol '" << implName << "' already exists";
  kernel.setSymName(implName);
  kernel.setLinkage(LLVM::Linkage::Internal);
  Attribute workgroupCount = kernel->getAttr(kWorkgroupCountAttrName);
  kernel->removeAttr(kWorkgroupCountAttrName);

  OpBuilder b(ctx);
  b.setInsertionPointAfter(kernel);
  Location loc = kernel.getLoc();
  auto wrapperType =
      LLVM::LLVMFunctionType::get(i32, {ptrType, i32, i32, i32});
  auto wrapper = LLVM::LLVMFuncOp::create(b, loc, name, wrapperType);
  wrapper->setAttr(kWorkgroupCountAttrName, workgroupCount);
  Block *entry = wrapper.addEntryBlock(b);
  Block *run = b.createBlock(&wrapper.getBody());
  Block *fail = b.createBlock(&wrapper.getBody());
  Value state = entry->getArgument(0);

  // A dispatch with fewer bindings than the kernel uses is a driver bug;
  // report it as a kernel failure instead of reading out of bounds.
  b.setInsertionPointToEnd(entry);
  Value countPtr = LLVM::GEPOp::create(
      b, loc, ptrType, b.getI8Type(), state,
      ArrayRef<LLVM::GEPArg>{kBindingCountOffset});
  Value count = LLVM::LoadOp::create(b, loc, i32, countPtr, /*alignment=*/4);
  Value expected = LLVM::ConstantOp::create(b, loc, i32, numBindings);
  Value enough = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge,
                                      count, expected);
  LLVM::CondBrOp::create(b, loc, enough, run, fail);

  b.setInsertionPointToEnd(fail);
  LLVM::ReturnOp::create(b, loc,
                         LLVM::ConstantOp::create(b, loc, i32, 1).getResult());

  b.setInsertionPointToEnd(run);
  Value bindings = LLVM::LoadOp::create(b, loc, ptrType, state,
                                        /*alignment=*/8);
  SmallVector<Value> args;
  for (unsigned i = 0; i < numBindings; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, bindings,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, ptrType, slot,
                                        /*alignment=*/8));
  }
  for (unsigned i = 0; i < kNumWorkgroupIds; ++i)
    args.push_back(LLVM::ZExtOp::create(b, loc, i64, entry->getArgument(1 + i)));
  auto call = LLVM::CallOp::create(b, loc, kernel, args);
  // The kernel's own status (compiled collectives), or success.
  LLVM::ReturnOp::create(
      b, loc,
      returnsStatus ? call.getResult()
                    : LLVM::ConstantOp::create(b, loc, i32, 0).getResult());
  return success();
}

struct HostAddABIWrapperPass
    : public kiln::impl::HostAddABIWrapperPassBase<HostAddABIWrapperPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(kWorkgroupCountAttrName) && !func.isExternal())
        kernels.push_back(func);
    for (LLVM::LLVMFuncOp kernel : kernels)
      if (failed(wrapKernel(module, kernel)))
        return signalPassFailure();
  }
};

} // namespace
