//===- KilnOps.cpp - Kiln dialect ops -------------------------------------===//
#include "kiln/Dialect/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

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

//===----------------------------------------------------------------------===//
// DispatchRegionOp
//===----------------------------------------------------------------------===//

LogicalResult DispatchRegionOp::verify() {
  if (getBody().empty())
    return emitOpError("expects a body block");
  auto yield = dyn_cast<YieldOp>(getBlock().getTerminator());
  if (!yield)
    return emitOpError("body must end with kiln.yield");
  if (!llvm::equal(yield.getValues().getTypes(), getResultTypes()))
    return emitOpError("yields ")
           << yield.getValues().getTypes().size()
           << " values whose types differ from the region's result types";
  return success();
}

//===----------------------------------------------------------------------===//
// BufferAttr
//===----------------------------------------------------------------------===//

bool BufferAttr::overlaps(BufferAttr other) const {
  if (getSpace() != other.getSpace() || getIndex() != other.getIndex())
    return false;
  if (getLength() == 0 || other.getLength() == 0)
    return false;
  return getOffset() < other.getOffset() + other.getLength() &&
         other.getOffset() < getOffset() + getLength();
}

//===----------------------------------------------------------------------===//
// RodataRefOp
//===----------------------------------------------------------------------===//

LogicalResult
RodataRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto rodata =
      symbolTable.lookupNearestSymbolFrom<RodataOp>(*this, getRodataAttr());
  if (!rodata)
    return emitOpError("no kiln.rodata named ") << getRodataAttr();
  if (rodata.getValue().getType() != getType())
    return emitOpError("type ")
           << getType() << " differs from the rodata's type "
           << rodata.getValue().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramOp and commands
//===----------------------------------------------------------------------===//

void ProgramOp::build(OpBuilder &builder, OperationState &state,
                      StringRef name, FunctionType type,
                      uint64_t transientSize) {
  state.addAttribute(mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name),
                     TypeAttr::get(type));
  state.addAttribute(getTransientSizeAttrName(state.name),
                     builder.getI64IntegerAttr(transientSize));
  Region *body = state.addRegion();
  body->push_back(new Block());
}

LogicalResult
DispatchCommandOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
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
  size_t expected = func.getNumArguments() + func.getNumResults();
  if (getBindings().size() != expected)
    return emitOpError("kernel ")
           << ref << " takes " << expected << " bindings, got "
           << getBindings().size();
  return success();
}

LogicalResult CopyCommandOp::verify() {
  if (getSource().getLength() != getTarget().getLength())
    return emitOpError("source and target lengths differ: ")
           << getSource().getLength() << " vs " << getTarget().getLength();
  if (getSource().overlaps(getTarget()))
    return emitOpError("source and target overlap");
  return success();
}

LogicalResult FillCommandOp::verify() {
  unsigned width = cast<IntegerAttr>(getPattern()).getType().getIntOrFloatBitWidth();
  if (width != 8 && width != 16 && width != 32 && width != 64)
    return emitOpError("pattern must be 8, 16, 32 or 64 bits, got ") << width;
  if (getTarget().getLength() % (width / 8) != 0)
    return emitOpError("target length ")
           << getTarget().getLength() << " is not a multiple of the "
           << width / 8 << "-byte pattern";
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/KilnOps.cpp.inc"
