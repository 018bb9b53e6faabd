//===- KilnOps.cpp - Kiln dialect ops -------------------------------------===//
#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// ExecutableOp
//===----------------------------------------------------------------------===//

void ExecutableOp::build(OpBuilder &builder, OperationState &state,
                         StringRef name) {
  state.addAttribute(mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  Region *body = state.addRegion();
  body->push_back(new Block());
}

//===----------------------------------------------------------------------===//
// DispatchOp
//===----------------------------------------------------------------------===//

LogicalResult
DispatchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  SymbolRefAttr ref = getEntryPoint();
  if (ref.getNestedReferences().size() != 1)
    return emitOpError("entry point must be @executable::@function, got ")
           << ref;
  auto executable = symbolTable.lookupNearestSymbolFrom<ExecutableOp>(
      *this, FlatSymbolRefAttr::get(ref.getRootReference()));
  if (!executable)
    return emitOpError("no kiln.executable named ") << ref.getRootReference();
  auto func = symbolTable.lookupSymbolIn<func::FuncOp>(
      executable, ref.getLeafReference());
  if (!func)
    return emitOpError("executable ")
           << ref.getRootReference() << " has no function "
           << ref.getLeafReference();
  FunctionType type = func.getFunctionType();
  if (!llvm::equal(type.getInputs(), getArguments().getTypes()) ||
      !llvm::equal(type.getResults(), getResults().getTypes()))
    return emitOpError("type mismatch with kernel ")
           << ref << ": kernel has " << type << ", dispatch has "
           << FunctionType::get(getContext(), getArguments().getTypes(),
                                getResults().getTypes());
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/KilnOps.cpp.inc"
