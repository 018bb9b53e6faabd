//===- KilnBase.td - Kiln dialect definition ---------------*- tablegen -*-===//
#ifndef KILN_DIALECT_KILN_BASE
#define KILN_DIALECT_KILN_BASE

include "mlir/IR/OpBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::mlir::kiln";
  let summary = "Host-side program structure of Kiln modules";
  let description = [{
    Ops that describe how a tensor program is split into device executables
    (`kiln.executable`), how the host invokes them (`kiln.dispatch`), and the
    per-function command program that is serialized into the `.vmfb` module.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_KILN_BASE
