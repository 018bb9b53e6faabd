//===- KilnDialect.cpp - Kiln dialect registration ------------------------===//
#include "kiln/Dialect/Kiln/KilnDialect.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kiln;

#include "kiln/Dialect/Kiln/KilnOpsDialect.cpp.inc"

#include "kiln/Dialect/Kiln/KilnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Kiln/KilnAttrs.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Kiln/KilnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kiln/Dialect/Kiln/KilnAttrs.cpp.inc"
      >();
}
