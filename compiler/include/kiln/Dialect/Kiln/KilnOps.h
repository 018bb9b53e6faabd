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

namespace mlir::kiln {
// Parameters of #kiln.gpu_strategy (KilnAttrs.td): `[a, b, ...]` lists of
// sizes, `true`/`false` flags and matrix intrinsics by their spelling.
FailureOr<SmallVector<int64_t>> parseSizeList(AsmParser &parser);
void printSizeList(AsmPrinter &printer, ArrayRef<int64_t> sizes);
FailureOr<bool> parseFlag(AsmParser &parser);
FailureOr<std::optional<MatrixIntrinsic>>
parseMatrixIntrinsic(AsmParser &parser);
// Bytes one element of integer or float type `type` takes in Kiln buffers
// (i1 takes a byte).
inline uint64_t getStoredByteSize(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}
// The argument attribute naming the parameter a function argument stands for
// ({kiln.parameter = "name"}): bound at compile time by kiln-bind-parameters,
// or left for load time and made a kiln.rodata parameter segment by
// kiln-move-constants-to-rodata.
inline constexpr llvm::StringLiteral kParameterAttrName = "kiln.parameter";
} // namespace mlir::kiln

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Kiln/KilnAttrs.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Kiln/KilnOps.h.inc"

#endif // KILN_DIALECT_KILN_KILNOPS_H_
