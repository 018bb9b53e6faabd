//===- KilnOps.h - Kiln dialect ops -----------------------------*- C++ -*-===//
#ifndef KILN_DIALECT_KILN_KILNOPS_H_
#define KILN_DIALECT_KILN_KILNOPS_H_

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Kiln/KilnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Kiln/KilnAttrs.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/KilnOps.h.inc"

#endif // KILN_DIALECT_KILN_KILNOPS_H_
