//===- KilnOps.td - Kiln dialect ops -----------------------*- tablegen -*-===//
#ifndef KILN_DIALECT_KILN_OPS
#define KILN_DIALECT_KILN_OPS

include "kiln/Dialect/Kiln/KilnBase.td"
include "kiln/Dialect/Kiln/KilnAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Executables and dispatches (produced by dispatch creation)
//===----------------------------------------------------------------------===//

def Kiln_ExecutableOp : Kiln_Op<"executable", [
    Symbol, SymbolTable, IsolatedFromAbove, SingleBlock, NoTerminator,
    NoRegionArguments]> {
  let summary = "A device executable: a set of kernel functions";
  let description = [{
    Holds the `func.func` kernels (exports) of one executable. Before codegen a
    kernel is a function on tensors: its arguments are the dispatch's inputs
    and its results the dispatch's outputs, e.g.

    ```mlir
    kiln.executable @main_dispatch_0 {
      func.func @main_dispatch_0(%a: tensor<4x8xf32>, %b: tensor<8xf32>)
          -> tensor<4x8xf32> { ... }
    }
    ```

    Codegen for each target reads the kernels from here and records per
    target results (binaries, workgroup counts) as attributes on this op.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBlock() { return getBody().front(); }
  }];
}

def Kiln_DispatchOp : Kiln_Op<"dispatch", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs an executable's kernel over tensors";
  let description = [{
    Invokes kernel `@executable::@function` on the operand tensors and
    produces its result tensors. The kernel's function type must be
    `(operand types) -> (result types)`. Results are fresh tensors (the
    kernel never writes its operands).

    ```mlir
    %r = kiln.dispatch @main_dispatch_0::@main_dispatch_0(%a, %b)
        : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins SymbolRefAttr:$entry_point,
                       Variadic<AnyRankedTensor>:$arguments);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $entry_point `(` $arguments `)` attr-dict `:` functional-type($arguments, $results)
  }];
}

//===----------------------------------------------------------------------===//
// Dispatch regions (formed by dispatch creation, outlined into executables)
//===----------------------------------------------------------------------===//

def Kiln_DispatchRegionOp : Kiln_Op<"dispatch_region", [SingleBlock]> {
  let summary = "Ops grouped to run as one kernel, before outlining";
  let description = [{
    Holds the ops of one future dispatch in the host function: a root op
    (matmul, reduction, pad, ...) with the elementwise producers and consumers
    fused into it. Values defined above are captured implicitly; outlining
    turns captured tensors into kernel arguments and clones cheap producers
    (splat constants, `tensor.empty`, scalars) into the kernel. The region
    yields the values that the host function still uses.

    ```mlir
    %r = kiln.dispatch_region -> (tensor<4x8xf32>) {
      %mm = linalg.matmul ins(%a, %b : ...) outs(%fill : ...) -> tensor<4x8xf32>
      %relu = linalg.generic ... ins(%mm : ...) -> tensor<4x8xf32>
      kiln.yield %relu : tensor<4x8xf32>
    }
    ```
  }];
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`->` `(` type($results)^ `)`)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBlock() { return getBody().front(); }
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"DispatchRegionOp">]> {
  let summary = "Yields the results of a kiln.dispatch_region";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
}

//===----------------------------------------------------------------------===//
// Collectives (produced by kiln-lower-collectives)
//===----------------------------------------------------------------------===//

def Kiln_CollectiveOp : Kiln_Op<"collective", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "A collective over the ranks of a channel, on rank-major data";
  let description = [{
    Runs one collective of the HAL over the group of ranks that `channel`
    names (N ranks). Unlike the `shard` ops it works on contiguous rank-major
    layouts, so that it maps one to one onto a `kiln.cmd.collective`:

    - `all_reduce`: `T -> T`, elementwise `reduction` over the group.
    - `all_gather`: `T -> NxT`, slice i of the result is rank i's input.
    - `reduce_scatter`: `NxT -> T`, rank r gets slice r of the reduction.
    - `all_to_all`: `NxT -> NxT`, slice j of the input goes to rank j, slice
      i of the result comes from rank i.
    - `broadcast`: `T -> T`, rank `root` (index within the group)'s input.

    `reduction` is `none` exactly for all_gather, all_to_all and broadcast.
    Dispatch creation keeps it out of kernels; host lowering turns it into a
    command reading the input's buffer and writing the result's.

    ```mlir
    %r = kiln.collective all_gather %x
        over <@grid, axes = [0], shape = [2]>
        : tensor<4x3xf32> -> tensor<2x4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_CollectiveKind:$kind,
                       DefaultValuedAttr<Kiln_ReductionKind,
                           "::mlir::kiln::ReductionKind::None">:$reduction,
                       DefaultValuedAttr<I64Attr, "0">:$root,
                       Kiln_ChannelAttr:$channel,
                       OptionalAttr<SymbolRefAttr>:$kernel,
                       AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $kind (`reduction` `=` $reduction^)? (`root` `=` $root^)? $input
    `over` $channel (`kernel` $kernel^)? attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Kiln_WindowCollectiveOp : Kiln_Op<"window_collective"> {
  let summary = "A compiled collective: one rank's kernel over a window";
  let description = [{
    The body of a compiled collective's kernel (`kiln-compile-collectives`),
    on buffers: every rank of a group of `ranks` runs this kernel over
    `workgroups` workgroups, with its `send` data, its `recv` result and its
    symmetric window: `data` (this rank's window data, twice the send size),
    `signals` (this rank's signal slots) and `peers` (the peer table: every
    rank's data address, then every rank's signal address, then the group's
    abort word's address).

    - `all_reduce`: `recv[i]` is the `reduction` of every rank's `send[i]`,
      in rank order 0..N-1 on every rank (so every rank gets the same bits);
      f16/bf16 accumulate in f32, avg divides once at the end.
    - `all_gather`: slice r of `recv` is rank r's `send`.
    - `reduce_scatter`: `send` holds N parts of `count / N` elements; `recv`
      is the reduction (as all_reduce's) of every rank's part r on rank r.

    Protocol (one-shot), per workgroup w: the call's epoch e is one more
    than the workgroup's counter (the slot after all flags); the rank copies
    the send elements it owns (chunk w of the send, or, for reduce_scatter,
    chunk w of every part) into half `e % 2` of its data, release-stores e
    into flag slot `w * ranks + rank` of every peer's signals, acquire-waits
    until every flag slot `w * ranks + p` of its own signals has reached e
    (wrap-safe: `(int64)(slot - e) >= 0`), then reads its chunk (of its own
    part) from half `e % 2` of every rank's data. The wait also ends when
    the group's abort word turns nonzero (a rank released its window or a
    submission failed) or after 120 s: the kernel fails. A rank's next call
    writes the other half, and the one after it waits for this rank's
    signal of the call between: so no data is overwritten while a peer
    still reads it, and no flag needs a reset. Calls on one rank are
    ordered (one queue), as with any collective. The rank's own index is
    the entry of `peers` that holds `signals`' address.

    `two_shot` (all_reduce only): the elements split into N parts of
    `getPartCount()` (the last ones shorter or empty); workgroup w owns
    chunk w of every part. Phase 1 is a one-shot reduce_scatter into the
    second half of the own data (at the part's own offset) from the first
    half, phase 2 (flag slots after phase 1's, same epoch) a gather of
    every rank's reduced part from the peers' second halves. A rank reads
    `2 * count` elements instead of one-shot's `N * count`. Both halves are
    single buffers: a rank writes the first half of its next call only
    after every peer's phase-2 signal, which a peer sends after its phase-1
    reads; and the second half only after every peer's phase-1 signal of
    that call, sent after the peer's previous call ended.

    ```mlir
    kiln.window_collective all_reduce reduction = sum ranks(4) workgroups(1)
        send(%send) recv(%recv) window(%data, %signals, %peers)
        : memref<16xf32>, memref<16xf32>, memref<32xf32>, memref<5xi64>,
          memref<9xi64>
    ```
  }];
  let arguments = (ins Kiln_CollectiveKind:$kind,
                       DefaultValuedAttr<Kiln_ReductionKind,
                           "::mlir::kiln::ReductionKind::None">:$reduction,
                       I64Attr:$ranks, I64Attr:$workgroups,
                       UnitAttr:$two_shot,
                       MemRefRankOf<[AnyType], [1]>:$send,
                       MemRefRankOf<[AnyType], [1]>:$recv,
                       MemRefRankOf<[AnyType], [1]>:$data,
                       MemRefRankOf<[I64], [1]>:$signals,
                       MemRefRankOf<[I64], [1]>:$peers);
  let assemblyFormat = [{
    $kind (`reduction` `=` $reduction^)? (`two_shot` $two_shot^)?
    `ranks` `(` $ranks `)`
    `workgroups` `(` $workgroups `)` `send` `(` $send `)` `recv` `(` $recv `)`
    `window` `(` $data `,` $signals `,` $peers `)` attr-dict `:`
    type($send) `,` type($recv) `,` type($data) `,` type($signals) `,`
    type($peers)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    // Elements of one rank's send.
    int64_t getCount() {
      return ::llvm::cast<::mlir::MemRefType>(getSend().getType())
          .getDimSize(0);
    }
    // The send's parts, one per rank (reduce_scatter, two-shot), or one.
    int64_t getParts() {
      return getTwoShot() ||
                     getKind() == ::mlir::kiln::CollectiveKind::ReduceScatter
                 ? getRanks()
                 : 1;
    }
    // Elements of each part (a two-shot part is rounded up to 16 bytes, so
    // the last parts may be shorter or empty).
    int64_t getPartCount() {
      return getPartCount(getKind(), getTwoShot(), getCount(), getRanks(),
                          ::llvm::cast<::mlir::MemRefType>(getSend().getType())
                              .getElementType());
    }
    // The same for a collective not built yet: `count` elements of
    // `element` sent by each of `ranks` ranks.
    static int64_t getPartCount(::mlir::kiln::CollectiveKind kind,
                                bool twoShot, int64_t count, int64_t ranks,
                                ::mlir::Type element);
    // Elements of each rank's recv.
    static int64_t getRecvCount(::mlir::kiln::CollectiveKind kind,
                                int64_t count, int64_t ranks);
    // Elements of each workgroup's chunk of a part (the last one may hold
    // fewer, a two-shot one none).
    int64_t getChunk() {
      int64_t chunk = ::llvm::divideCeil(getPartCount(), getWorkgroups());
      return getTwoShot() ? ::llvm::alignTo(chunk, getAlignment()) : chunk;
    }
    // Elements of 16 bytes (1 for i1 and wider elements).
    int64_t getAlignment() {
      return getAlignment(
          ::llvm::cast<::mlir::MemRefType>(getSend().getType())
              .getElementType());
    }
    static int64_t getAlignment(::mlir::Type element);
    // Phases with flags: 2 for two-shot, else 1.
    int64_t getPhases() { return getTwoShot() ? 2 : 1; }
    // Signal slots the protocol needs: a flag per (phase, workgroup, rank)
    // and an epoch counter per workgroup.
    static int64_t getSignalCount(int64_t ranks, int64_t workgroups,
                                  int64_t phases = 1) {
      return workgroups * (phases * ranks + 1);
    }
  }];
}

include "kiln/Dialect/Kiln/KilnCommandOps.td"

#endif // KILN_DIALECT_KILN_OPS
