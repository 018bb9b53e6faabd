//===- KilnAttrs.td - Kiln dialect attributes --------------*- tablegen -*-===//
// Attributes of the Kiln dialect (e.g. buffer references of the command
// program). Owned by host lowering.
#ifndef KILN_DIALECT_KILN_ATTRS
#define KILN_DIALECT_KILN_ATTRS

include "kiln/Dialect/Kiln/KilnBase.td"
include "mlir/IR/AttrTypeBase.td"

class Kiln_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Kiln_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // KILN_DIALECT_KILN_ATTRS
