//===- GPUWrapKernelsPass.cpp - func.func kernels to gpu.func -------------===//
//
// Upstream convert-gpu-to-rocdl / convert-gpu-to-nvvm lower gpu.func
// kernels inside a gpu.module; this pass puts the distributed kernels
// there, with their shared-memory buffers as workgroup attributions (or,
// above the static limit, as views of one dynamic shared-memory buffer).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUWRAPKERNELSPASS
#include "kiln/Codegen/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

constexpr llvm::StringLiteral kKernelModuleName = "kiln_kernels";
// Shared buffers are placed at this alignment, or at their allocation's
// when it asks for more (wgmma's swizzled tiles: 1024 bytes).
constexpr int64_t kSharedAlignment = 16;

static int64_t sharedAlignment(memref::AllocOp alloc) {
  return std::max<int64_t>(kSharedAlignment, alloc.getAlignment().value_or(0));
}

static bool isWorkgroupMemory(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

static int64_t sharedBytes(MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  int64_t bytes = type.getNumElements() * std::max<int64_t>(1, bits / 8);
  return llvm::alignTo(bytes, kSharedAlignment);
}

static LogicalResult wrapKernel(func::FuncOp func, gpu::GPUModuleOp gpuModule,
                                int64_t maxSharedMemoryBytes,
                                int64_t maxStaticSharedMemoryBytes) {
  MLIRContext *ctx = func.getContext();
  if (func.getNumResults() != 0)
    return func.emitError() << "GPU kernel '" << func.getSymName()
                            << "' must return nothing (results are bindings); "
                               "run kiln-host-convert-to-bindings first";
  auto size = func->getAttrOfType<DenseI64ArrayAttr>(kWorkgroupSizeAttrName);
  if (!size || size.size() != 3)
    return func.emitError() << "GPU kernel '" << func.getSymName()
                            << "' has no " << kWorkgroupSizeAttrName
                            << "; run kiln-gpu-map-to-ids first";

  SmallVector<memref::AllocOp> sharedAllocs;
  WalkResult walk = func.walk([&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    if (!isWorkgroupMemory(type)) {
      alloc.emitError() << "GPU kernels cannot allocate " << type
                        << " at run time; only statically shaped "
                           "workgroup-memory temporaries are supported";
      return WalkResult::interrupt();
    }
    if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
      alloc.emitError() << "shared-memory temporary " << type
                        << " must have a static shape and identity layout";
      return WalkResult::interrupt();
    }
    sharedAllocs.push_back(alloc);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Buffers in order at their alignments; above 16 bytes, the dynamic
  // buffer (16-byte aligned) is realigned at run time, which may skip up to
  // alignment - 16 bytes.
  int64_t totalShared = 0;
  int64_t maxAlignment = kSharedAlignment;
  for (memref::AllocOp alloc : sharedAllocs) {
    int64_t alignment = sharedAlignment(alloc);
    maxAlignment = std::max(maxAlignment, alignment);
    totalShared =
        llvm::alignTo(totalShared, alignment) + sharedBytes(alloc.getType());
  }
  if (totalShared > maxStaticSharedMemoryBytes)
    totalShared += maxAlignment - kSharedAlignment;
  if (totalShared > maxSharedMemoryBytes)
    return func.emitError()
           << "GPU kernel '" << func.getSymName() << "' needs " << totalShared
           << " bytes of shared memory for its temporaries, more than the "
           << maxSharedMemoryBytes << " available to a workgroup";

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto gpuFunc = gpu::GPUFuncOp::create(b, func.getLoc(), func.getSymName(),
                                        func.getFunctionType());
  gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  gpuFunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(size[0]), static_cast<int32_t>(size[1]),
       static_cast<int32_t>(size[2])}));
  for (NamedAttribute attr : func->getDiscardableAttrs())
    if (attr.getName().getValue().starts_with("kiln."))
      gpuFunc->setAttr(attr.getName(), attr.getValue());
  gpuFunc->setAttr(kSharedMemoryBytesAttrName, b.getI64IntegerAttr(totalShared));

  // Each temporary becomes a workgroup attribution at its alignment, or,
  // above the static limit, a view at an aligned offset of one dynamic
  // buffer.
  IRRewriter rewriter(ctx);
  Block *entry = &gpuFunc.getBody().front();
  Value dynamic;
  if (totalShared > maxStaticSharedMemoryBytes) {
    rewriter.setInsertionPointToStart(entry);
    auto bytesType = MemRefType::get(
        {ShapedType::kDynamic}, rewriter.getI8Type(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    dynamic =
        gpu::DynamicSharedMemoryOp::create(rewriter, func.getLoc(), bytesType);
  }
  // The dynamic buffer's first byte at maxAlignment: (-address) mod
  // maxAlignment bytes in.
  Value shift;
  if (dynamic && maxAlignment > kSharedAlignment) {
    Location loc = func.getLoc();
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, dynamic);
    Value mask =
        arith::ConstantIndexOp::create(rewriter, loc, maxAlignment - 1);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    shift = arith::AndIOp::create(
        rewriter, loc, arith::SubIOp::create(rewriter, loc, zero, address),
        mask);
  }
  int64_t offset = 0;
  for (memref::AllocOp alloc : sharedAllocs) {
    Value buffer;
    int64_t alignment = sharedAlignment(alloc);
    if (dynamic) {
      offset = llvm::alignTo(offset, alignment);
      Value at = arith::ConstantIndexOp::create(rewriter, alloc.getLoc(),
                                                offset);
      if (shift)
        at = arith::AddIOp::create(rewriter, alloc.getLoc(), shift, at);
      buffer = memref::ViewOp::create(rewriter, alloc.getLoc(),
                                      alloc.getType(), dynamic, at,
                                      ValueRange{});
      offset += sharedBytes(alloc.getType());
    } else {
      buffer = gpuFunc.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
      // 128-bit vector accesses need the buffer 16-byte aligned.
      gpuFunc.setWorkgroupAttributionAttr(
          gpuFunc.getNumWorkgroupAttributions() - 1,
          b.getStringAttr(LLVM::LLVMDialect::getAlignAttrName()),
          b.getI64IntegerAttr(alignment));
    }
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.replaceOp(alloc, buffer);
  }
  Block *body = &func.getBody().front();
  auto ret = cast<func::ReturnOp>(body->getTerminator());
  rewriter.setInsertionPoint(ret);
  gpu::ReturnOp::create(rewriter, ret.getLoc());
  rewriter.eraseOp(ret);
  rewriter.inlineBlockBefore(
      body, entry, entry->end(),
      entry->getArguments().take_front(func.getNumArguments()));
  rewriter.eraseOp(func);
  return success();
}

struct GPUWrapKernelsPass
    : public kiln::impl::GPUWrapKernelsPassBase<GPUWrapKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        kernels.push_back(func);
    if (kernels.empty())
      return;
    if (module.lookupSymbol(kKernelModuleName)) {
      module.emitError() << "symbol '" << kKernelModuleName
                         << "' already exists";
      return signalPassFailure();
    }
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    for (func::FuncOp func : kernels)
      if (failed(wrapKernel(func, gpuModule, maxSharedMemoryBytes,
                            maxStaticSharedMemoryBytes)))
        return signalPassFailure();
    // Constant buffers the kernels read go along with them.
    for (auto global :
         llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
      global->moveBefore(gpuModule.getBody(), gpuModule.getBody()->begin());
  }
};

} // namespace
