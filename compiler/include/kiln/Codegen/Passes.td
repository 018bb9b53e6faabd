//===- Passes.td - Kiln kernel codegen passes --------------*- tablegen -*-===//
//
// Per-kernel code generation for the `host` (x86-64) target. The passes run
// on the tensor-form func.func kernels of one kiln.executable, cloned into a
// builtin.module, and are assembled into a pipeline by
// buildHostCodegenPipeline (Pipeline.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_PASSES
#define KILN_CODEGEN_PASSES

include "mlir/Pass/PassBase.td"

def HostSelectStrategyPass
    : Pass<"kiln-host-select-strategy", "func::FuncOp"> {
  let summary = "Choose the host workgroup tiling strategy of a kernel";
  let description = [{
    Finds the kernel's root op (the op with reduction loops such as a matmul,
    convolution or reduction, else the op producing the result) and the op to
    tile (the op producing the kernel's single result) and computes, from the
    op kind and the iteration-space shape, how that op's parallel loops are
    split into workgroups. The choice is attached as data so that later passes
    and lit tests see it:

    ```mlir
    func.func @k(...) attributes {kiln.host_strategy = {
        kind = "matmul", tile_sizes = array<i64: 16, 16>,
        workgroup_count = array<i64: 1, 4, 1>}}
    ```

    `tile_sizes` has one entry per loop of the tiled op (0: not tiled; loops
    that carry a reduction are never tiled, so no workgroup shares an output
    element with another). `workgroup_count` is the (x, y, z) grid. Kernels
    with several results, no tileable producer, or tiny iteration spaces get
    kind "single" and a 1x1x1 grid.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let options = [
    Option<"maxWorkgroups", "max-workgroups", "int64_t", /*default=*/"256",
           "Upper bound on the number of workgroups of one kernel">,
    Option<"minWorkPerWorkgroup", "min-work-per-workgroup", "int64_t",
           /*default=*/"4096",
           "Iteration-space points (incl. reduction loops) below which a "
           "kernel is not split further">,
  ];
}

def HostTileAndDistributePass
    : Pass<"kiln-host-tile-and-distribute", "func::FuncOp"> {
  let summary = "Tile the result op into a workgroup scf.forall and fuse "
                "its producers";
  let description = [{
    Reads `kiln.host_strategy` and tiles the op producing the kernel result
    with `scf.forall` using the strategy's tile sizes, then greedily fuses the
    producers (linalg ops, tensor.pad, fills, ...) into the loop body so each
    iteration computes one independent tile of the result. The forall is
    mapped to `#gpu.block<x|y|z>` (the innermost tiled loop on x). Kernels of
    kind "single" are left unchanged (they run as one workgroup).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def HostConvertToBindingsPass
    : Pass<"kiln-host-convert-to-bindings", "func::FuncOp"> {
  let summary = "Turn a tensor kernel signature into memref bindings";
  let description = [{
    Rewrites `func.func @k(%a: tensor<A>) -> tensor<R>` into
    `func.func @k(%a: memref<A>, %r: memref<R>)`: the kernel's bindings (its
    arguments, then its results). Inputs are read through
    `bufferization.to_tensor ... restrict`; each result is written with
    `bufferization.materialize_in_destination ... restrict writable`, which
    empty-tensor elimination and one-shot bufferization turn into writes
    straight into the result binding (destination-passing style, no copy).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def HostBufferizePass : Pass<"kiln-host-bufferize", "ModuleOp"> {
  let summary = "One-shot bufferize host kernels with stack allocations";
  let description = [{
    Runs empty-tensor elimination and one-shot bufferization on kernels whose
    signature is already made of memref bindings. Temporary buffers are
    `memref.alloca` (a kernel may import nothing but libm, so no malloc) and
    copies are `linalg.copy` (no memref runtime library call).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def HostMapForallToWorkgroupsPass
    : Pass<"kiln-host-map-forall-to-workgroups", "func::FuncOp"> {
  let summary = "Replace the workgroup scf.forall by workgroup ids";
  let description = [{
    Appends three `index` arguments (workgroup x, y, z ids) to the kernel and
    replaces the bufferized `scf.forall` mapped to `#gpu.block<...>` by its
    body, with each induction variable computed from the matching workgroup
    id. The grid is recorded as `kiln.workgroup_count` on the kernel; a
    kernel without forall gets a 1x1x1 grid.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def HostExpandSmallFloatsPass
    : Pass<"kiln-host-expand-small-floats", "func::FuncOp"> {
  let summary = "Compute f16/bf16 in f32 and expand conversions to integer "
                "ops";
  let description = [{
    x86-64 without F16C/AVX512-BF16 lowers half and bfloat arithmetic and
    conversions to compiler-rt/libgcc helpers (`__extendhfsf2`,
    `__truncsfhf2`, `__truncsfbf2`, ...), which a host kernel may not import.
    This pass makes arith/math ops on f16/bf16 compute in f32, then rewrites
    every `arith.extf`/`arith.truncf` between f16/bf16 and f32 into integer
    bit manipulation (round to nearest even, denormals, inf and NaN handled),
    so only loads, stores and bitcasts of 16-bit floats remain.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def HostAddABIWrapperPass : Pass<"kiln-host-add-abi-wrapper", "ModuleOp"> {
  let summary = "Wrap each LLVM kernel in the host_abi.h entry point";
  let description = [{
    For each `llvm.func` carrying `kiln.workgroup_count` (a kernel taking its
    bindings as bare pointers followed by three i64 workgroup ids), renames
    the kernel to an internal `<name>.impl` and adds the exported
    `i32 @<name>(ptr %state, i32 %x, i32 %y, i32 %z)` of
    runtime/include/kiln/host_abi.h: it loads binding pointers from
    `state->bindings` (offset 0), calls the kernel and returns 0.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // KILN_CODEGEN_PASSES
