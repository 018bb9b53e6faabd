//===- KilnDialect.h - Kiln dialect -----------------------------*- C++ -*-===//
#ifndef KILN_DIALECT_KILN_KILNDIALECT_H_
#define KILN_DIALECT_KILN_KILNDIALECT_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "kiln/Dialect/Kiln/KilnOpsDialect.h.inc"

#endif // KILN_DIALECT_KILN_KILNDIALECT_H_
