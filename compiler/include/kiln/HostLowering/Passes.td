//===- Passes.td - Kiln host lowering passes ---------------*- tablegen -*-===//
#ifndef KILN_HOSTLOWERING_PASSES
#define KILN_HOSTLOWERING_PASSES

include "mlir/Pass/PassBase.td"

def MoveConstantsToRodataPass
    : Pass<"kiln-move-constants-to-rodata", "::mlir::ModuleOp"> {
  let summary = "Moves dense constants of host functions into kiln.rodata";
  let description = [{
    Every non-splat tensor `arith.constant` left in a host function (after
    dispatch creation these are the constants that kernels read, e.g.
    weights) becomes a module-level `kiln.rodata` segment, referenced with
    `kiln.rodata_ref`. Identical constants share one segment. Splat constants
    stay: host lowering turns them into fill commands.

    Load-time parameters, the arguments still marked
    `{kiln.parameter = "name"}` (kiln-bind-parameters with `load-time`),
    leave the function's signature and become segments
    `kiln.rodata @f_parameter_0 parameter "name" : tensor<...>` that hold no
    bytes: the runtime finds them by name among the parameters given at
    load. Functions naming the same parameter share its segment. Errors,
    located at the argument: a type the module cannot hold (not a
    static-shape tensor of i1..i64 or f16/bf16/f32/f64), an empty name, and
    one name given two types.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every rodata segment">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def BuildCommandProgramsPass
    : Pass<"kiln-build-command-programs", "::mlir::ModuleOp"> {
  let summary = "Plans memory and lowers host functions to kiln.program";
  let description = [{
    Replaces each host `func.func` (made of `kiln.dispatch`, `kiln.rodata_ref`,
    splat constants and fills, `tensor.empty` and shape-only aliases) with a
    `kiln.program` holding its command program:

    - buffers: inputs are `input[i]`, rodata is `rodata[i]`, a value returned
      as result i is computed directly into `output[i]`, every other tensor
      gets a range of the function's single transient arena; aliases
      (collapse/expand_shape, reshape, bitcast, cast) share their source's
      range;
    - transient planning: each value lives from its defining command to its
      last use; ranges are placed first-fit (aligned to `arena-alignment`)
      among values live at the same time, so dead ranges are reused;
    - commands: one `kiln.cmd.dispatch` per dispatch (bindings: operands then
      results), a `kiln.cmd.fill` per splat value that is used, and a
      `kiln.cmd.copy` for each result that is an input, rodata or a value
      already returned in another position;
    - barriers: a `kiln.cmd.barrier` precedes a command only if it reads a
      range written, or writes a range read or written, by a command since
      the last barrier.

    Anything else left on the host is an error naming the op.
  }];
  let options = [
    Option<"arenaAlignment", "arena-alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every range of the transient arena">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_HOSTLOWERING_PASSES
