//===- Passes.h - Kiln input conversion passes ------------------*- C++ -*-===//
//
// Passes that bring a user program into the form dispatch creation expects:
// static-shape tensor programs of linalg/tensor/arith/math ops.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_INPUTCONVERSION_PASSES_H_
#define KILN_INPUTCONVERSION_PASSES_H_

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

#define GEN_PASS_DECL
#include "kiln/InputConversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/InputConversion/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_INPUTCONVERSION_PASSES_H_
