//===- MoveConstantsToRodata.cpp - Dense constants to kiln.rodata ---------===//
//
// Constants that kernels read (weights) are uploaded once per device when the
// module loads instead of being rebuilt per call; this pass makes them module
// symbols so that memory planning can refer to them as rodata buffers.
//
//===----------------------------------------------------------------------===//
#include "kiln/HostLowering/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_MOVECONSTANTSTORODATAPASS
#include "kiln/HostLowering/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct MoveConstantsToRodataPass
    : kiln::impl::MoveConstantsToRodataPassBase<MoveConstantsToRodataPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
      module.emitError("rodata alignment must be a power of two, got ")
          << alignment;
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    // Attributes are uniqued, so equal constants map to one segment.
    llvm::DenseMap<Attribute, RodataOp> segments;
    OpBuilder builder(&getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      unsigned count = 0;
      func.walk([&](arith::ConstantOp constant) {
        auto value = dyn_cast<ElementsAttr>(constant.getValue());
        if (!value || isa<SplatElementsAttr>(value))
          return;
        // The shape operand of tensor.reshape is static metadata, not data.
        if (llvm::all_of(constant->getUses(), [](OpOperand &use) {
              return isa<tensor::ReshapeOp>(use.getOwner()) &&
                     use.getOperandNumber() == 1;
            }))
          return;
        RodataOp &segment = segments[value];
        if (!segment) {
          builder.setInsertionPoint(func);
          std::string name;
          do {
            name = (func.getSymName() + "_rodata_" + Twine(count++)).str();
          } while (symbols.lookup(name));
          segment = RodataOp::create(builder, constant.getLoc(),
                                     builder.getStringAttr(name), value,
                                     builder.getI64IntegerAttr(alignment));
          symbols.insert(segment);
        }
        builder.setInsertionPoint(constant);
        auto ref = RodataRefOp::create(builder, constant.getLoc(),
                                       constant.getType(),
                                       segment.getSymName());
        constant.replaceAllUsesWith(ref.getResult());
        constant.erase();
      });
    }
  }
};

} // namespace
