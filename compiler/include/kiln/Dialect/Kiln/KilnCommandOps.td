//===- KilnCommandOps.td - Kiln command program ops --------*- tablegen -*-===//
// Ops of the per-function command program produced by host lowering
// (memory planning) and serialized into the module. Included by KilnOps.td.
#ifndef KILN_DIALECT_KILN_COMMAND_OPS
#define KILN_DIALECT_KILN_COMMAND_OPS

//===----------------------------------------------------------------------===//
// Read-only data
//===----------------------------------------------------------------------===//

def Kiln_RodataOp : Kiln_Op<"rodata", [Symbol]> {
  let summary = "A constant blob stored in the module's read-only data";
  let description = [{
    A dense constant (e.g. weights) that the runtime uploads once per device
    when the module is loaded. Segments are numbered in op order: the i-th
    `kiln.rodata` of the module is `rodata[i]` in buffer references.

    A load-time parameter holds no bytes: it names tensor `parameter` of the
    parameters given when the module is loaded (`kiln_parameters_t`), of
    type `parameter_type`, and is uploaded like any other segment.

    ```mlir
    kiln.rodata @main_rodata_0 {alignment = 64 : i64} dense<[1.0, 2.0]> : tensor<2xf32>
    kiln.rodata @main_parameter_0 parameter "w" : tensor<2x3xf32> {alignment = 64 : i64}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       OptionalAttr<ElementsAttr>:$value,
                       OptionalAttr<StrAttr>:$parameter,
                       OptionalAttr<TypeAttrOf<AnyStaticShapeTensor>>:$parameter_type,
                       ConfinedAttr<I64Attr, [IntPositive]>:$alignment);
  let assemblyFormat = [{
    $sym_name (`parameter` $parameter^ `:` $parameter_type)? attr-dict
    ($value^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    // The tensor the segment holds: the constant's type, or the parameter's.
    ::mlir::RankedTensorType getTensorType();
  }];
}

def Kiln_RodataRefOp : Kiln_Op<"rodata_ref", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The tensor value of a kiln.rodata segment";
  let description = [{
    Used in host functions in place of a large dense constant once it has been
    moved to the module's read-only data.

    ```mlir
    %w = kiln.rodata_ref @main_rodata_0 : tensor<2xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$rodata);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$rodata attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Command programs
//===----------------------------------------------------------------------===//

def Kiln_ProgramOp : Kiln_Op<"program", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator,
    NoRegionArguments]> {
  let summary = "The command program of one host function";
  let description = [{
    What a host function became after memory planning: its signature
    (`function_type`, the tensors of the function's inputs and outputs), the
    size of its transient arena (one per function, offsets planned
    statically), the channels its collectives run over (`channels`, indexed
    by `kiln.cmd.collective`; absent when there are none), the symmetric
    windows its compiled collectives use (`windows`, bound by index from
    dispatches; absent when there are none) and the commands
    the runtime records once and replays on every call.

    ```mlir
    kiln.program @main : (tensor<4xf32>) -> tensor<4xf32> transient_size(0) {
      kiln.cmd.dispatch @main_dispatch_0::@main_dispatch_0 bindings [...]
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       I64Attr:$transient_size,
                       OptionalAttr<TypedArrayAttrBase<Kiln_ChannelAttr,
                           "array of channels">>:$channels,
                       OptionalAttr<TypedArrayAttrBase<Kiln_WindowAttr,
                           "array of windows">>:$windows);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `:` $function_type `transient_size` `(` $transient_size `)`
    (`channels` $channels^)? (`windows` $windows^)? attr-dict-with-keyword
    $body
  }];
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::FunctionType":$type,
                                 "uint64_t":$transientSize)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBlock() { return getBody().front(); }
  }];
}

class Kiln_CommandOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<"cmd." # mnemonic, !listconcat(traits, [HasParent<"ProgramOp">])>;

def Kiln_BufferArrayAttr : TypedArrayAttrBase<Kiln_BufferAttr,
                                              "array of buffer references">;

def Kiln_DispatchCommandOp : Kiln_CommandOp<"dispatch", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs a kernel over its workgroup grid";
  let description = [{
    Binding i of the kernel `@executable::@function` is `bindings[i]`: the
    kernel's arguments in order, then its results in order.
  }];
  let arguments = (ins SymbolRefAttr:$entry_point,
                       Kiln_BufferArrayAttr:$bindings);
  let assemblyFormat = "$entry_point `bindings` $bindings attr-dict";
}

def Kiln_CopyCommandOp : Kiln_CommandOp<"copy"> {
  let summary = "Copies one byte range to another of the same length";
  let arguments = (ins Kiln_BufferAttr:$source, Kiln_BufferAttr:$target);
  let assemblyFormat = "$source `to` $target attr-dict";
  let hasVerifier = 1;
}

def Kiln_FillCommandOp : Kiln_CommandOp<"fill"> {
  let summary = "Fills a byte range with a repeating 1, 2, 4 or 8 byte pattern";
  let description = [{
    The pattern is an integer of 8, 16, 32 or 64 bits whose little-endian
    bytes repeat over the target range (e.g. `1065353216 : i32` is 1.0f).
  }];
  let arguments = (ins Kiln_BufferAttr:$target, AnyAttrOf<[AnyI8Attr, AnyI16Attr, AnyI32Attr, AnyI64Attr]>:$pattern);
  let assemblyFormat = "$target `pattern` `(` $pattern `)` attr-dict";
  let hasVerifier = 1;
}

def Kiln_BarrierCommandOp : Kiln_CommandOp<"barrier"> {
  let summary = "Earlier commands complete before later ones start";
  let assemblyFormat = "attr-dict";
}

def Kiln_CollectiveCommandOp : Kiln_CommandOp<"collective"> {
  let summary = "Runs a collective over the ranks of one channel";
  let description = [{
    Every rank of the group `channels[channel]` of the enclosing program
    runs it with `count` elements of `element_type` read from `send` (the
    per-rank send count) and writes `recv`, with the HAL semantics of
    `kind` (N = group size): all_reduce and broadcast write `count`
    elements, all_gather `count * N`, reduce_scatter `count / N`,
    all_to_all `count`. `root` is the broadcast root's index in the group.

    ```mlir
    kiln.cmd.collective all_gather(none) 12 x f32 channel(0) root(0)
        send #kiln.buffer<input[0], offset = 0, length = 48>
        recv #kiln.buffer<output[0], offset = 0, length = 96>
    ```
  }];
  let arguments = (ins Kiln_CollectiveKind:$kind,
                       Kiln_ReductionKind:$reduction,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$count,
                       TypeAttr:$element_type,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$channel,
                       I64Attr:$root,
                       Kiln_BufferAttr:$send, Kiln_BufferAttr:$recv);
  let assemblyFormat = [{
    $kind `(` $reduction `)` $count `x` $element_type `channel` `(` $channel `)`
    `root` `(` $root `)` `send` $send `recv` $recv attr-dict
  }];
  let hasVerifier = 1;
}

#endif // KILN_DIALECT_KILN_COMMAND_OPS
