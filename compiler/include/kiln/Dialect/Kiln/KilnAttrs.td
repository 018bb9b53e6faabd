//===- KilnAttrs.td - Kiln dialect attributes --------------*- tablegen -*-===//
// Attributes of the Kiln dialect: buffer references of the command program
// produced by host lowering, collective channels, and the GPU code
// generation strategy (the lowering configuration of one kernel).
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
    I32EnumAttrCase<"Rodata", 3, "rodata">,
    I32EnumAttrCase<"WindowData", 4, "window_data">,
    I32EnumAttrCase<"WindowSignals", 5, "window_signals">,
    I32EnumAttrCase<"WindowPeers", 6, "window_peers">]> {
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
    - `rodata[i]`: the module's i-th `kiln.rodata` segment,
    - `window_data[i]` / `window_signals[i]` / `window_peers[i]`: this
      rank's data, signal slots and peer table of the program's i-th
      symmetric window (`#kiln.window`).

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
    I32EnumAttrCase<"Avg", 5, "avg">,
    // Bitwise reductions of integers: compiled collectives only (no
    // library has them; kiln-compile-collectives compiles them at any size).
    I32EnumAttrCase<"And", 6, "and">,
    I32EnumAttrCase<"Or", 7, "or">,
    I32EnumAttrCase<"Xor", 8, "xor">]> {
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

def Kiln_WindowAttr : Kiln_Attr<"Window", "window"> {
  let summary = "A symmetric window of a command program";
  let description = [{
    On every rank of the program's channel `channel`: `size` data bytes and
    `signals` 64-bit signal slots, plus the peer table of every rank's data
    and signal addresses (`kiln_hal_window_create`). The runtime creates it
    once when the module is loaded; the compiled collectives' kernels bind
    its buffers (`window_data[i]`, `window_signals[i]`, `window_peers[i]`).

    ```mlir
    #kiln.window<channel = 0, size = 112, signals = 8>
    ```
  }];
  let parameters = (ins "uint32_t":$channel, "uint64_t":$size,
                        "uint32_t":$signals);
  let assemblyFormat = [{
    `<` `channel` `=` $channel `,` `size` `=` $size `,` `signals` `=` $signals `>`
  }];
}

//===----------------------------------------------------------------------===//
// Code generation strategies
//===----------------------------------------------------------------------===//

// What a kernel's root op computes, as the strategy passes tell kernels
// apart; on GPUs "contraction" and "attention" are the kernels whose
// strategy is a whole recipe (kiln-gpu-lower-contraction,
// kiln-gpu-lower-attention), the others are tiled and spread over threads
// by the generic passes. The host tells single, elementwise, reduction,
// matmul and conv kernels apart.
def Kiln_KernelKind : I32EnumAttr<"KernelKind",
    "what a kernel's root op computes", [
    I32EnumAttrCase<"Single", 0, "single">,
    I32EnumAttrCase<"Elementwise", 1, "elementwise">,
    I32EnumAttrCase<"Reduction", 2, "reduction">,
    I32EnumAttrCase<"Matmul", 3, "matmul">,
    I32EnumAttrCase<"Conv", 4, "conv">,
    I32EnumAttrCase<"Pooling", 5, "pooling">,
    I32EnumAttrCase<"Generic", 6, "generic">,
    I32EnumAttrCase<"Contraction", 7, "contraction">,
    I32EnumAttrCase<"Attention", 8, "attention">]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}

// How the reduced loops of a kernel are spread: not at all, serially per
// thread, over a whole workgroup per row, or over one subgroup per row.
def Kiln_GPUReduction : I32EnumAttr<"GPUReduction",
    "how a GPU kernel's reduced loops are spread over threads", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Thread", 1, "thread">,
    I32EnumAttrCase<"Workgroup", 2, "workgroup">,
    I32EnumAttrCase<"Subgroup", 3, "subgroup">]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}

// The matrix-core instructions of contraction and attention kernels. Each
// names a row of the table in compiler/lib/Codegen/MatrixIntrinsics.cpp,
// which holds the instruction's tile, lanes and fragment-to-lane layouts of
// A, B and C as data.
def Kiln_MatrixIntrinsic : I32EnumAttr<"MatrixIntrinsic",
    "a matrix-core instruction", [
    // NVIDIA sm_80+: mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.
    I32EnumAttrCase<"MMA_SYNC_F32_16x8x16_F16", 0, "mma_sync_f32_16x8x16_f16">,
    I32EnumAttrCase<"MMA_SYNC_F32_16x8x16_BF16", 1, "mma_sync_f32_16x8x16_bf16">,
    // AMD CDNA 2/3/4 (gfx90a, gfx942, gfx950; wave64):
    // v_mfma_f32_16x16x16_{f16,bf16} (bf16_1k on gfx90a).
    I32EnumAttrCase<"MFMA_F32_16x16x16_F16", 2, "mfma_f32_16x16x16_f16">,
    I32EnumAttrCase<"MFMA_F32_16x16x16_BF16", 3, "mfma_f32_16x16x16_bf16">,
    // AMD CDNA 4 (gfx950): v_mfma_f32_16x16x32_{f16,bf16}.
    I32EnumAttrCase<"MFMA_F32_16x16x32_F16", 4, "mfma_f32_16x16x32_f16">,
    I32EnumAttrCase<"MFMA_F32_16x16x32_BF16", 5, "mfma_f32_16x16x32_bf16">,
    // AMD RDNA 3 (gfx11, wave32): v_wmma_f32_16x16x16_{f16,bf16}; both
    // halves of the wave hold the same A and B (each lane a whole row of A).
    I32EnumAttrCase<"WMMA_GFX11_F32_16x16x16_F16", 6,
                    "wmma_gfx11_f32_16x16x16_f16">,
    I32EnumAttrCase<"WMMA_GFX11_F32_16x16x16_BF16", 7,
                    "wmma_gfx11_f32_16x16x16_bf16">,
    // AMD RDNA 4 (gfx12, wave32): the same instructions with K split
    // between the two halves of the wave.
    I32EnumAttrCase<"WMMA_GFX12_F32_16x16x16_F16", 8,
                    "wmma_gfx12_f32_16x16x16_f16">,
    I32EnumAttrCase<"WMMA_GFX12_F32_16x16x16_BF16", 9,
                    "wmma_gfx12_f32_16x16x16_bf16">,
    // 8-bit integers (signed), i32 accumulators. NVIDIA sm_80+:
    // mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32.
    I32EnumAttrCase<"MMA_SYNC_I32_16x8x32_S8", 10, "mma_sync_i32_16x8x32_s8">,
    // AMD: v_mfma_i32_16x16x16i8 (gfx90a), v_mfma_i32_16x16x32_i8 (gfx942),
    // v_mfma_i32_16x16x64_i8 (gfx950), v_wmma_i32_16x16x16_iu8 (gfx11,
    // gfx12).
    I32EnumAttrCase<"MFMA_I32_16x16x16_I8", 11, "mfma_i32_16x16x16_i8">,
    I32EnumAttrCase<"MFMA_I32_16x16x32_I8", 12, "mfma_i32_16x16x32_i8">,
    I32EnumAttrCase<"MFMA_I32_16x16x64_I8", 13, "mfma_i32_16x16x64_i8">,
    I32EnumAttrCase<"WMMA_GFX11_I32_16x16x16_I8", 14,
                    "wmma_gfx11_i32_16x16x16_i8">,
    I32EnumAttrCase<"WMMA_GFX12_I32_16x16x16_I8", 15,
                    "wmma_gfx12_i32_16x16x16_i8">,
    // NVIDIA sm_90a (a warpgroup of 4 warps):
    // wgmma.mma_async.sync.aligned.m64n{64,128,256}k16.f32.{f16,bf16}, A and B
    // read by the instruction from 128-byte-swizzled shared memory through
    // matrix descriptors; only the accumulators live in registers.
    I32EnumAttrCase<"WGMMA_F32_64x128x16_F16", 16, "wgmma_f32_64x128x16_f16">,
    I32EnumAttrCase<"WGMMA_F32_64x128x16_BF16", 17,
                    "wgmma_f32_64x128x16_bf16">,
    I32EnumAttrCase<"WGMMA_F32_64x256x16_F16", 18, "wgmma_f32_64x256x16_f16">,
    I32EnumAttrCase<"WGMMA_F32_64x256x16_BF16", 19,
                    "wgmma_f32_64x256x16_bf16">,
    I32EnumAttrCase<"WGMMA_F32_64x64x16_F16", 20, "wgmma_f32_64x64x16_f16">,
    I32EnumAttrCase<"WGMMA_F32_64x64x16_BF16", 21,
                    "wgmma_f32_64x64x16_bf16">]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}

// Strategy parameters, printed and parsed inside `struct(params)`: a list
// is `[a, b, ...]`, a flag `true` or `false`, an intrinsic its spelling.
def Kiln_ReductionParameter : EnumParameter<Kiln_GPUReduction> {
  let defaultValue = "::mlir::kiln::GPUReduction::None";
}
def Kiln_SizeListParameter : OptionalArrayRefParameter<"int64_t"> {
  let parser = [{ ::mlir::kiln::parseSizeList($_parser) }];
  let printer = [{ ::mlir::kiln::printSizeList($_printer, $_self) }];
}
def Kiln_FlagParameter : DefaultValuedParameter<"bool", "false"> {
  let parser = [{ ::mlir::kiln::parseFlag($_parser) }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}
def Kiln_IntrinsicParameter
    : OptionalParameter<"std::optional<::mlir::kiln::MatrixIntrinsic>"> {
  let parser = [{ ::mlir::kiln::parseMatrixIntrinsic($_parser) }];
  let printer = [{ $_printer << ::mlir::kiln::stringifyMatrixIntrinsic(*$_self) }];
}

def Kiln_GPUStrategyAttr : Kiln_Attr<"GPUStrategy", "gpu_strategy"> {
  let summary = "How one GPU kernel is tiled, spread over threads and lowered";
  let description = [{
    The lowering configuration kiln-gpu-select-strategy chooses for a kernel
    (a `func.func` of a GPU executable, as `kiln.gpu_strategy`) and the later
    passes of the GPU pipeline read. Tile sizes per level:

    - `workgroup_tile`: per loop of the op that produces the kernel's
      result, the tile one workgroup computes (0: the loop is not split;
      empty: one workgroup does everything); `workgroup_count` workgroups.
    - `k_tile`: contraction and attention kernels, the slice of the reduced
      (K) loop staged in shared memory per step; `pipeline_depth` shared
      stages of it (0: one stage, not pipelined).
    - `subgroup_grid`: matrix-core contractions, subgroups per workgroup
      along M and N; `intrinsic` the instruction each subgroup issues
      (whose tile and fragment layouts are table data, MatrixIntrinsics).
      `layout_fragments`: mma.sync fragments read by that layout rather
      than with ldmatrix.
    - `simt_tile`: SIMT contractions (no matrix cores), outputs per thread
      along M and N.
    - `thread_tile`: elements per thread of the innermost loop (one 128-bit
      access), `reduction_vector` elements per thread and step of a
      workgroup reduction.
    - `query_rows`, `q_in_shared`: attention kernels, query rows per
      workgroup and whether Q's fragments are read from shared memory.

    `workgroup_size` threads per workgroup (one-dimensional), in subgroups
    of `subgroup_size` lanes. Parameters at their defaults are not printed.

    ```mlir
    #kiln.gpu_strategy<kind = contraction, workgroup_size = 128,
        subgroup_size = 32, workgroup_tile = [128, 128, 0],
        workgroup_count = 1024, intrinsic = mma_sync_f32_16x8x16_f16,
        subgroup_grid = [2, 2], k_tile = 32, pipeline_depth = 3>
    ```
  }];
  let parameters = (ins
      EnumParameter<Kiln_KernelKind>:$kind,
      "int64_t":$workgroup_size,
      "int64_t":$subgroup_size,
      Kiln_SizeListParameter:$workgroup_tile,
      DefaultValuedParameter<"int64_t", "1">:$workgroup_count,
      DefaultValuedParameter<"int64_t", "1">:$thread_tile,
      Kiln_ReductionParameter:$reduction,
      DefaultValuedParameter<"int64_t", "1">:$reduction_vector,
      Kiln_IntrinsicParameter:$intrinsic,
      Kiln_SizeListParameter:$subgroup_grid,
      Kiln_SizeListParameter:$simt_tile,
      DefaultValuedParameter<"int64_t", "0">:$k_tile,
      DefaultValuedParameter<"int64_t", "0">:$pipeline_depth,
      Kiln_FlagParameter:$layout_fragments,
      DefaultValuedParameter<"int64_t", "0">:$query_rows,
      Kiln_FlagParameter:$q_in_shared);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    // Rows reduced by several threads together: a workgroup, or one
    // subgroup, per row.
    bool reducesRowsTogether() const {
      return getReduction() == GPUReduction::Workgroup ||
             getReduction() == GPUReduction::Subgroup;
    }
  }];
}

def Kiln_HostStrategyAttr : Kiln_Attr<"HostStrategy", "host_strategy"> {
  let summary = "How one host kernel is split into workgroups and vectorized";
  let description = [{
    The lowering configuration kiln-host-select-strategy chooses for a
    kernel of a host executable (as `kiln.host_strategy`), which
    kiln-host-tile-and-distribute and kiln-host-vectorize read:

    - `tile_sizes`: per loop of the op that produces the kernel's result,
      the tile one workgroup computes (0: the loop is not split; empty: one
      workgroup does everything); at most three loops are split.
    - `workgroup_count`: the grid (x, y, z), the innermost tiled loop along
      x.
    - `vector_width`: the SIMD register bits of the target CPU (0:
      vectorization off).
    - `root`, `vector_sizes`: the register tile of the root op (the op of
      that name and loop count after bufferization), one size per loop.

    ```mlir
    #kiln.host_strategy<kind = matmul, root = "linalg.matmul",
        tile_sizes = [32, 64, 0], workgroup_count = [4, 8, 1],
        vector_width = 512, vector_sizes = [4, 16, 1]>
    ```
  }];
  let parameters = (ins
      EnumParameter<Kiln_KernelKind>:$kind,
      StringRefParameter<"the root op's name", "\"\"">:$root,
      Kiln_SizeListParameter:$tile_sizes,
      Kiln_SizeListParameter:$workgroup_count,
      DefaultValuedParameter<"int64_t", "0">:$vector_width,
      Kiln_SizeListParameter:$vector_sizes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // KILN_DIALECT_KILN_ATTRS
