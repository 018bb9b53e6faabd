//===- GPUUnwrapKernelsPass.cpp - Lowered kernels into the top module -----===//
//
// The GPU pipeline's output is a plain LLVM-dialect module (what the ROCM
// and CUDA targets translate to LLVM IR): the lowered gpu.module is
// dissolved into it, and each kernel gets its final ABI.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUUNWRAPKERNELSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// The workgroup (shared / LDS) address space of NVPTX and AMDGPU.
constexpr unsigned kSharedAddressSpace = 3;

// LLVM's global address space on both AMDGPU and NVPTX.
constexpr unsigned kGlobalAddressSpace = 1;

static bool isKernel(LLVM::LLVMFuncOp func) {
  return func->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()) ||
         func->hasAttr("rocdl.kernel") || func->hasAttr("nvvm.kernel");
}

// Bindings always point to device global memory; saying so lets the
// backends emit global_load/ld.global instead of flat/generic accesses
// (InferAddressSpaces propagates the cast through the kernel).
static void moveBindingsToGlobal(LLVM::LLVMFuncOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  auto globalPtr = LLVM::LLVMPointerType::get(ctx, kGlobalAddressSpace);
  auto flatPtr = LLVM::LLVMPointerType::get(ctx);
  Block &entry = kernel.getBody().front();
  OpBuilder b(ctx);
  b.setInsertionPointToStart(&entry);
  SmallVector<Type> params;
  for (BlockArgument arg : entry.getArguments()) {
    if (arg.getType() != flatPtr) {
      params.push_back(arg.getType());
      continue;
    }
    arg.setType(globalPtr);
    auto cast = LLVM::AddrSpaceCastOp::create(b, arg.getLoc(), flatPtr, arg);
    arg.replaceAllUsesExcept(cast.getResult(), cast);
    params.push_back(globalPtr);
  }
  LLVM::LLVMFunctionType type = kernel.getFunctionType();
  kernel.setFunctionType(
      LLVM::LLVMFunctionType::get(type.getReturnType(), params));
}

// The function a device-library symbol computes when it is one instruction
// on both backends: "__nv_floorf" / "__nv_floor" (libdevice) and
// "__ocml_floor_f32" (ocml) -> "floor"; "" for anything else.
static StringRef singleInstructionFunction(StringRef symbol) {
  static const char *const kFunctions[] = {
      "sqrt", "fabs", "floor", "ceil", "trunc", "fma",
      "copysign", "rint", "fmin", "fmax"};
  StringRef name;
  if (symbol.consume_front("__nv_")) {
    for (StringRef f : kFunctions)
      if (symbol == f || (symbol.size() == f.size() + 1 &&
                          symbol.starts_with(f) && symbol.back() == 'f'))
        return f;
    return "";
  }
  if (symbol.consume_front("__ocml_")) {
    for (StringRef f : kFunctions)
      if (symbol.starts_with(f) &&
          llvm::is_contained({"_f16", "_f32", "_f64"}, symbol.drop_front(f.size())))
        return f;
  }
  return "";
}

template <typename IntrinsicOp>
static Operation *createIntrinsic(OpBuilder &b, LLVM::CallOp call) {
  return IntrinsicOp::create(b, call.getLoc(), call.getResultTypes(),
                             call.getArgOperands());
}

// Calls to device-library functions that are a single instruction become
// LLVM intrinsics: kernels then need no libdevice at all, and less of ocml.
static void replaceSingleInstructionCalls(ModuleOp module) {
  using Builder = Operation *(*)(OpBuilder &, LLVM::CallOp);
  static const llvm::StringMap<Builder> kIntrinsics = {
      {"sqrt", createIntrinsic<LLVM::SqrtOp>},
      {"fabs", createIntrinsic<LLVM::FAbsOp>},
      {"floor", createIntrinsic<LLVM::FFloorOp>},
      {"ceil", createIntrinsic<LLVM::FCeilOp>},
      {"trunc", createIntrinsic<LLVM::FTruncOp>},
      {"fma", createIntrinsic<LLVM::FMAOp>},
      {"copysign", createIntrinsic<LLVM::CopySignOp>},
      {"rint", createIntrinsic<LLVM::RintOp>},
      {"fmin", createIntrinsic<LLVM::MinNumOp>},
      {"fmax", createIntrinsic<LLVM::MaxNumOp>},
  };
  SmallVector<LLVM::CallOp> calls;
  module.walk([&](LLVM::CallOp call) {
    if (call.getCallee() && call.getNumResults() == 1 &&
        !singleInstructionFunction(*call.getCallee()).empty())
      calls.push_back(call);
  });
  for (LLVM::CallOp call : calls) {
    OpBuilder b(call);
    Operation *op =
        kIntrinsics.lookup(singleInstructionFunction(*call.getCallee()))(b,
                                                                          call);
    call.replaceAllUsesWith(op->getResults());
    call.erase();
  }
  for (auto decl :
       llvm::make_early_inc_range(module.getOps<LLVM::LLVMFuncOp>()))
    if (decl.isExternal() &&
        !singleInstructionFunction(decl.getSymName()).empty() &&
        SymbolTable::symbolKnownUseEmpty(decl, module))
      decl.erase();
}

static LogicalResult finishKernel(LLVM::LLVMFuncOp kernel) {
  auto size = kernel->getAttrOfType<DenseI64ArrayAttr>(kWorkgroupSizeAttrName);
  if (!size || size.size() != 3 ||
      !kernel->hasAttr(kWorkgroupCountAttrName) ||
      !kernel->hasAttr(kSharedMemoryBytesAttrName))
    return kernel.emitError()
           << "GPU kernel '" << kernel.getSymName() << "' lost its "
           << kWorkgroupCountAttrName << "/" << kWorkgroupSizeAttrName << "/"
           << kSharedMemoryBytesAttrName << " attributes";
  moveBindingsToGlobal(kernel);
  Builder b(kernel.getContext());
  SmallVector<int32_t> dims = {static_cast<int32_t>(size[0]),
                               static_cast<int32_t>(size[1]),
                               static_cast<int32_t>(size[2])};
  int32_t threads = dims[0] * dims[1] * dims[2];
  // Workgroups to keep resident per SM: a register budget for ptxas
  // (.minnctapersm), which cannot see a kernel's dynamic shared memory. The
  // AMDGPU backend budgets registers for the occupancy its static LDS
  // allows by itself.
  int64_t resident = 0;
  if (auto attr = kernel->getAttrOfType<IntegerAttr>(
          kMinWorkgroupsPerProcessorAttrName))
    resident = attr.getInt();
  kernel->removeAttr(kMinWorkgroupsPerProcessorAttrName);
  if (kernel->hasAttr("rocdl.kernel")) {
    kernel->setAttr("rocdl.reqd_work_group_size",
                    b.getDenseI32ArrayAttr(dims));
    kernel->setAttr("rocdl.flat_work_group_size",
                    b.getStringAttr(std::to_string(threads) + "," +
                                    std::to_string(threads)));
  } else if (kernel->hasAttr("nvvm.kernel")) {
    // PTX rejects .maxntid next to .reqntid (convert-gpu-to-nvvm sets
    // the former from known_block_size); the exact size is what we know.
    kernel->setAttr("nvvm.reqntid", b.getDenseI32ArrayAttr(dims));
    kernel->removeAttr("nvvm.maxntid");
    if (resident > 1)
      kernel->setAttr("nvvm.minctasm", b.getI32IntegerAttr(resident));
  }
  // The gpu dialect's own markers have served their purpose; the backend
  // annotations above are what translation uses.
  kernel->removeAttr(gpu::GPUDialect::getKernelFuncAttrName());
  kernel->removeAttr("gpu.known_block_size");
  return success();
}

struct GPUUnwrapKernelsPass
    : public kiln::impl::GPUUnwrapKernelsPassBase<GPUUnwrapKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(
        module.getOps<gpu::GPUModuleOp>());
    SymbolTable symbols(module);
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      if (auto layout = gpuModule->getAttr("llvm.data_layout"))
        if (!module->hasAttr("llvm.data_layout"))
          module->setAttr("llvm.data_layout", layout);
      for (Operation &op :
           llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
        if (auto symbol = dyn_cast<SymbolOpInterface>(op)) {
          if (Operation *existing = symbols.lookup(symbol.getName())) {
            // Device-library declarations repeat across gpu.modules.
            auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
            auto other = dyn_cast<LLVM::LLVMFuncOp>(existing);
            if (func && other && func.isExternal() &&
                func.getFunctionType() == other.getFunctionType()) {
              op.erase();
              continue;
            }
            op.emitError() << "symbol '" << symbol.getName()
                           << "' is defined twice";
            return signalPassFailure();
          }
        }
        // Dynamic shared memory (gpu.dynamic_shared_memory) lowers to an
        // internal zero-sized shared array; external linkage makes it the
        // `.extern .shared` array (PTX) / dynamic LDS (AMDGPU) that the
        // launch's dynamic size backs.
        if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
          auto array = dyn_cast<LLVM::LLVMArrayType>(global.getType());
          if (global.getAddrSpace() == kSharedAddressSpace && array &&
              array.getNumElements() == 0) {
            global.setLinkage(LLVM::Linkage::External);
            global.removeValueAttr();
          }
        }
        op.moveBefore(gpuModule);
        if (auto symbol = dyn_cast<SymbolOpInterface>(op))
          symbols.insert(&op);
      }
      gpuModule.erase();
    }
    replaceSingleInstructionCalls(module);
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (isKernel(func) && !func.isExternal())
        if (failed(finishKernel(func)))
          return signalPassFailure();
  }
};

} // namespace
