//===- Passes.h - Kiln host lowering passes ---------------------*- C++ -*-===//
//
// Passes that turn host functions (dispatches over tensors) into command
// programs over planned buffers, ready for module serialization.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_HOSTLOWERING_PASSES_H_
#define KILN_HOSTLOWERING_PASSES_H_

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

#define GEN_PASS_DECL
#include "kiln/HostLowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/HostLowering/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_HOSTLOWERING_PASSES_H_
