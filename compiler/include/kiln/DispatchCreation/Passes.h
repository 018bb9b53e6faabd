//===- Passes.h - Kiln dispatch creation passes -----------------*- C++ -*-===//
//
// Passes that split host functions into kernels: elementwise fusion, grouping
// into kiln.dispatch_region ops and outlining into kiln.executable ops.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DISPATCHCREATION_PASSES_H_
#define KILN_DISPATCHCREATION_PASSES_H_

#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

#define GEN_PASS_DECL
#include "kiln/DispatchCreation/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/DispatchCreation/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_DISPATCHCREATION_PASSES_H_
