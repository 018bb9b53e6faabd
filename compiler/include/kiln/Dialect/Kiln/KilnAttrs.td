//===- KilnAttrs.td - Kiln dialect attributes --------------*- tablegen -*-===//
// Attributes of the Kiln dialect: buffer references of the command program
// produced by host lowering.
#ifndef KILN_DIALECT_KILN_ATTRS
#define KILN_DIALECT_KILN_ATTRS

include "kiln/Dialect/Kiln/KilnBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Kiln_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Kiln_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// Mirrors kiln.schema.BufferSpace of runtime/schemas/module.fbs.
def Kiln_BufferSpace : I32EnumAttr<"BufferSpace", "where a buffer lives", [
    I32EnumAttrCase<"Input", 0, "input">,
    I32EnumAttrCase<"Output", 1, "output">,
    I32EnumAttrCase<"Transient", 2, "transient">,
    I32EnumAttrCase<"Rodata", 3, "rodata">]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}

def Kiln_BufferAttr : Kiln_Attr<"Buffer", "buffer"> {
  let summary = "A byte range of a function input, output, arena or rodata";
  let description = [{
    Names the bytes `[offset, offset + length)` of one buffer of a command
    program:

    - `input[i]` / `output[i]`: the function's i-th input / output tensor,
    - `transient[0]`: the function's transient arena (planned statically),
    - `rodata[i]`: the module's i-th `kiln.rodata` segment.

    ```mlir
    #kiln.buffer<transient[0], offset = 64, length = 128>
    ```
  }];
  let parameters = (ins EnumParameter<Kiln_BufferSpace>:$space,
                        "uint32_t":$index, "uint64_t":$offset,
                        "uint64_t":$length);
  let assemblyFormat = [{
    `<` $space `[` $index `]` `,` `offset` `=` $offset `,` `length` `=` $length `>`
  }];
  let extraClassDeclaration = [{
    // True when both name the same buffer and their byte ranges intersect.
    bool overlaps(BufferAttr other) const;
  }];
}

#endif // KILN_DIALECT_KILN_ATTRS
