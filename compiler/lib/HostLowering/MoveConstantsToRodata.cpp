//===- MoveConstantsToRodata.cpp - Dense constants to kiln.rodata ---------===//
//
// Constants that kernels read (weights) are uploaded once per device when the
// module loads instead of being rebuilt per call; this pass makes them module
// symbols so that memory planning can refer to them as rodata buffers. Load-
// time parameters (arguments still marked kiln.parameter, which
// kiln-bind-parameters left unbound) become segments that name the parameter
// instead of holding its bytes.
//
//===----------------------------------------------------------------------===//
#include "kiln/HostLowering/Passes.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_MOVECONSTANTSTORODATAPASS
#include "kiln/HostLowering/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

// True for the element types a module can hold (kiln.schema.ElementType).
bool isModuleElementType(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return llvm::is_contained({1u, 8u, 16u, 32u, 64u}, integer.getWidth());
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64();
}

// A fresh symbol name `<func>_<kind>_<n>`.
std::string freshName(SymbolTable &symbols, func::FuncOp func, StringRef kind,
                      unsigned &count) {
  std::string name;
  do {
    name = (func.getSymName() + "_" + kind + "_" + Twine(count++)).str();
  } while (symbols.lookup(name));
  return name;
}

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
    if (failed(moveParameters(module, symbols, builder)))
      return signalPassFailure();
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
          std::string name = freshName(symbols, func, "rodata", count);
          segment = RodataOp::create(
              builder, constant.getLoc(), builder.getStringAttr(name), value,
              /*parameter=*/nullptr, /*parameter_type=*/nullptr,
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

  // Every function argument marked {kiln.parameter = "name"} becomes a
  // kiln.rodata_ref of a segment naming parameter "name"; functions that
  // name the same parameter share its segment (and must agree on its type).
  LogicalResult moveParameters(ModuleOp module, SymbolTable &symbols,
                               OpBuilder &builder) {
    llvm::StringMap<std::pair<RodataOp, BlockArgument>> segments;
    bool failedAny = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      unsigned count = 0;
      llvm::BitVector erase(func.getNumArguments());
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto name = func.getArgAttrOfType<StringAttr>(i, kParameterAttrName);
        if (!name)
          continue;
        BlockArgument argument = func.getArgument(i);
        auto report = [&]() {
          failedAny = true;
          return emitError(argument.getLoc())
                 << "argument " << i << " of @" << func.getSymName()
                 << " (load-time parameter '" << name.getValue() << "'): ";
        };
        auto type = dyn_cast<RankedTensorType>(argument.getType());
        if (!type || !type.hasStaticShape() ||
            !isModuleElementType(type.getElementType())) {
          report() << "a parameter must be a static-shape tensor of "
                      "i1..i64 or f16/bf16/f32/f64, not "
                   << argument.getType();
          continue;
        }
        if (name.getValue().empty()) {
          report() << "the parameter name is empty";
          continue;
        }
        auto &[segment, first] = segments[name.getValue()];
        if (!segment) {
          builder.setInsertionPoint(func);
          segment =
              RodataOp::create(builder, argument.getLoc(),
                               builder.getStringAttr(freshName(
                                   symbols, func, "parameter", count)),
                               /*value=*/nullptr, name, TypeAttr::get(type),
                               builder.getI64IntegerAttr(alignment));
          symbols.insert(segment);
          first = argument;
        } else if (segment.getTensorType() != type) {
          auto owner = cast<func::FuncOp>(first.getOwner()->getParentOp());
          report() << "its type " << type << " differs from "
                   << segment.getTensorType() << " of argument "
                   << first.getArgNumber() << " of @" << owner.getSymName();
          continue;
        }
        builder.setInsertionPointToStart(&func.front());
        auto ref = RodataRefOp::create(builder, argument.getLoc(), type,
                                       segment.getSymName());
        argument.replaceAllUsesWith(ref.getResult());
        erase.set(i);
      }
      if (failed(func.eraseArguments(erase)))
        failedAny = true;
    }
    return failure(failedAny);
  }
};

} // namespace
