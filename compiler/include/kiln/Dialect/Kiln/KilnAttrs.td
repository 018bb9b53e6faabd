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


// Mirror kiln.schema.CollectiveOp / ReductionOp of runtime/schemas/module.fbs.
def Kiln_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "collective communication operation", [
    I32EnumAttrCase<"AllReduce", 0, "all_reduce">,
    I32EnumAttrCase<"AllGather", 1, "all_gather">,
    I32EnumAttrCase<"ReduceScatter", 2, "reduce_scatter">,
    I32EnumAttrCase<"AllToAll", 3, "all_to_all">,
    I32EnumAttrCase<"Broadcast", 4, "broadcast">]> {
  let cppNamespace = "::mlir::kiln";
}

def Kiln_ReductionKind : I32EnumAttr<"ReductionKind",
    "elementwise reduction of a collective", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Sum", 1, "sum">,
    I32EnumAttrCase<"Prod", 2, "prod">,
    I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"Max", 4, "max">,
    I32EnumAttrCase<"Avg", 5, "avg">]> {
  let cppNamespace = "::mlir::kiln";
}

def Kiln_ChannelAttr : Kiln_Attr<"Channel", "channel"> {
  let summary = "The device group a collective runs over";
  let description = [{
    The ranks of a run form the grid `@grid` of shape `shape` in row-major
    order. A channel groups the ranks that differ only along the grid axes
    `axes`; inside a group, ranks are ordered by their row-major linear index
    over `axes` taken in the listed order. The group size is the product of
    the grid sizes of `axes`; the product of `shape` is the world size.

    ```mlir
    #kiln.channel<@grid, axes = [1], shape = [2, 4]>
    ```
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$grid,
                        ArrayRefParameter<"int64_t">:$axes,
                        ArrayRefParameter<"int64_t">:$shape);
  let assemblyFormat = [{
    `<` $grid `,` `axes` `=` `[` $axes `]` `,` `shape` `=` `[` $shape `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    // Number of ranks of one group: the product of the sizes of `axes`.
    int64_t getGroupSize() const;
  }];
}

#endif // KILN_DIALECT_KILN_ATTRS
