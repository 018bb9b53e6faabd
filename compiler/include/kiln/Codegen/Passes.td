//===- Passes.td - Kiln kernel codegen passes --------------*- tablegen -*-===//
//
// Per-kernel code generation. The passes run on the tensor-form func.func
// kernels of one kiln.executable, cloned into a builtin.module, and are
// assembled into pipelines by buildHostCodegenPipeline (HostPipeline.cpp, the
// `host` x86-64 target) and buildGPUCodegenPipeline (GPUPipeline.cpp, shared
// by the `rocm` and `cuda` targets).
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
    split into workgroups. The choice is attached as a typed, verified
    attribute (#kiln.host_strategy, KilnAttrs.td) so that later passes and
    lit tests see it:

    ```mlir
    func.func @k(...) attributes {kiln.host_strategy = #kiln.host_strategy<
        kind = matmul, root = "linalg.matmul", tile_sizes = [16, 16, 0],
        workgroup_count = [1, 4, 1], vector_width = 512,
        vector_sizes = [4, 16, 1]>}
    ```

    It also records the register tiling that kiln-host-vectorize applies
    inside each workgroup: `vector_width` (SIMD register bits) and
    `vector_sizes`, one entry per loop of the root op (matmul: an M x N
    register tile of accumulators with a K step of 1; elementwise and
    reduction ops: one register along the innermost loop).

    `tile_sizes` has one entry per loop of the tiled op (0: not tiled; loops
    that carry a reduction are never tiled, so no workgroup shares an output
    element with another). `workgroup_count` is the (x, y, z) grid. Kernels
    with several results, no tileable producer, or tiny iteration spaces get
    kind "single" and a 1x1x1 grid.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::kiln::KilnDialect"];
  let options = [
    Option<"maxWorkgroups", "max-workgroups", "int64_t", /*default=*/"256",
           "Upper bound on the number of workgroups of one kernel">,
    Option<"minWorkPerWorkgroup", "min-work-per-workgroup", "int64_t",
           /*default=*/"4096",
           "Iteration-space points (incl. reduction loops) below which a "
           "kernel is not split further">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"128",
           "Bits of the target's SIMD registers (128: SSE2, 256: AVX2, "
           "512: AVX-512); sets the register tiles of kiln-host-vectorize">,
  ];
}

def SplitInputAccumulatorsPass
    : Pass<"kiln-split-input-accumulators", "func::FuncOp"> {
  let summary = "Split contractions that accumulate into a kernel input";
  let description = [{
    A contraction (linalg.matmul, batch_matmul, matvec, ... with an add
    combiner) whose init is an argument of the kernel accumulates into a
    read-only binding: bufferization would copy the whole input into a
    temporary in every workgroup and copy it out whole, so that workgroups
    overwrite each other's tiles. The op becomes a contraction from zero
    (`linalg.fill`) followed by an elementwise `linalg.generic` adding the
    input, which tile and fuse per workgroup like any epilogue:

    ```mlir
    %r = linalg.matmul ins(%a, %b) outs(%c)        // %c: a kernel argument
    // becomes
    %z = linalg.fill ins(%zero) outs(tensor.empty())
    %m = linalg.matmul ins(%a, %b) outs(%z)
    %r = linalg.generic ins(%m, %c) outs(tensor.empty()) { addf }
    ```

    Floating-point sums then add the initial value last instead of first.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DefineIntegerDivisionPass
    : Pass<"kiln-define-integer-division", "func::FuncOp"> {
  let summary = "Give integer division by zero and overflow defined results";
  let description = [{
    `arith.divsi/divui/remsi/remui` (and the ceil/floor divisions, expanded
    first) by zero, and signed INT_MIN / -1, are undefined in LLVM IR and trap
    on x86-64 (SIGFPE kills the process running the kernel). Kiln defines
    them on every target, as RISC-V does: x / 0 = -1 (all bits set), x % 0 =
    x, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. The divisor becomes 1 where
    the instruction could trap and the result is selected afterwards, on
    scalars and vectors alike; divisions by constants that are neither 0 nor
    (signed) -1 are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
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

def HostLowerWindowCollectivesPass
    : Pass<"kiln-host-lower-window-collectives", "ModuleOp"> {
  let summary = "Expand a compiled collective's kernel for the host";
  let description = [{
    A kernel holding a `kiln.window_collective` (it arrives on buffers:
    `kiln-compile-collectives` makes it) becomes the distributed form of
    every host kernel: three `index` workgroup ids appended to its
    bindings, `kiln.workgroup_count = [workgroups, 1, 1]`, and the protocol
    of the op written out for workgroup x: the rank found in the peer table,
    the epoch counter bumped, the chunk copied into half `e % 2` of the
    window data, `e` release-stored (LLVM atomic, system scope) into every
    peer's flag slot, acquire-loads of the own flags until every peer's
    epoch arrived, then the reduction or the gather read straight from
    every rank's window data. The kernel returns an i32 status that the
    host ABI wrapper passes on: 0, 2 when its window's peer table does not
    hold its signals (a driver bug), 3 when a peer has not signalled within
    120 seconds (a peer failed, or the ranks called different programs), 4
    when the group's abort word (the peer table's last entry) turned nonzero
    because a rank released its window. Waiting, the workgroup yields its
    thread (`sched_yield`) every 64 polls and reads the clock (`time`) and
    the abort word every 4096, so ranks that share cores make
    progress; the local driver's queue thread claims workgroups in order,
    so every rank's lowest unfinished workgroup always runs.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GPULowerWindowCollectivesPass
    : Pass<"kiln-gpu-lower-window-collectives", "ModuleOp"> {
  let summary = "Expand a compiled collective's kernel for a GPU";
  let description = [{
    The GPU form of `kiln-host-lower-window-collectives` (one source:
    LowerWindowCollectivesPass.cpp): the kernel becomes a distributed GPU
    kernel of `workgroups` x 256 threads (`kiln.workgroup_count`,
    `kiln.workgroup_size`) whose threads share each phase: every thread
    reads the epoch counter before thread 0 bumps it (a workgroup barrier
    between); the threads copy the chunk; every thread fences (release,
    system scope), a barrier, then thread p release-stores the epoch into
    rank p's flag slot; thread p acquire-polls the own slot of rank p; a
    barrier, every thread fences (acquire, system scope) and the threads
    reduce or gather the chunk from every rank's window data. Threads copy,
    reduce and gather 16 bytes per access (vector loads and stores) when
    the element has whole bytes and the count and the workgroups' chunk
    split into such vectors, else one element per access. The clock is
    `llvm.readsteadycounter` (NVIDIA: `globaltimer`, nanoseconds; AMD: the
    100 MHz realtime counter), read every 1024 polls with the group's abort
    word; a peer that has not signalled within 120 s, an aborted group, or a
    window whose peer table lacks the kernel's own signals ends the kernel
    with `llvm.trap` (a device error of the call).
  }];
  let options = [
    Option<"backend", "backend", "std::string", /*default=*/"\"rocdl\"",
           "GPU backend: rocdl or nvvm">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def HostMapForallToWorkgroupsPass
    : Pass<"kiln-host-map-forall-to-workgroups", "func::FuncOp"> {
  let summary = "Replace the workgroup scf.forall by workgroup ids";
  let description = [{
    Appends three `index` arguments (workgroup x, y, z ids) to the kernel and
    replaces the bufferized `scf.forall` mapped to `#gpu.block<...>` by its
    body, with each induction variable computed from the matching workgroup
    id. The grid is recorded as `kiln.workgroup_count` on the kernel; a
    kernel without forall gets a 1x1x1 grid. Kernels that already have a
    grid (compiled collectives) are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def HostVectorizePass : Pass<"kiln-host-vectorize", "func::FuncOp"> {
  let summary = "Tile each workgroup's linalg ops to register tiles and "
                "vectorize them";
  let description = [{
    Runs on distributed kernels (memref bindings, one workgroup per call).
    Every linalg op is tiled with `scf.for` loops to the register tile of
    `kiln.host_strategy`: the root op uses the strategy's `vector_sizes`
    (for a matmul, M x N x 1 with the K loop kept as an `scf.for`); every
    other op gets `vector_width` bits along its innermost loop and 1
    elsewhere. Loops whose trip count is not a multiple of the tile are
    peeled, so the main loop works on static full tiles and the remainder on
    a static (or, after a partial workgroup tile, dynamic) smaller tile. Each
    tile op with static shapes is then vectorized (`linalg::vectorize`;
    contractions become `vector.contract`).

    A linalg.matmul or batch_matmul with f16/bf16 operands and an f32
    result first gets its operands widened once per workgroup into f32
    stack buffers (up to 512 KiB of them), so that the register tiles
    multiply f32 and no conversion runs in the K loop.

    What the vectorizer does not handle stays a (tiled) linalg op and is
    lowered to scalar loops later: ops with dynamic shapes, 1-bit memory
    operands, bodies with memory accesses (gathers), and convolutions other
    than 1-D ones.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def HostLowerVectorsPass : Pass<"kiln-host-lower-vectors", "func::FuncOp"> {
  let summary = "Lower vector ops to 1-D vectors, FMAs, loads and stores";
  let description = [{
    Progressive upstream lowering of what kiln-host-vectorize produced into
    the 1-D vector ops that convert-vector-to-llvm handles well:
    `vector.contract` -> `vector.outerproduct` -> `vector.fma` per row,
    `vector.multi_reduction` -> `vector.reduction` (inner reduction) or
    elementwise ops (outer reduction), transposes and broadcasts to
    extracts/inserts, n-D transfers unrolled (vector-to-scf, full unroll) to
    1-D transfers. Then the accumulators of reduction loops (the matmul K
    loop) are kept in registers: a read/write pair of the same
    loop-invariant slice (one row of the register tile) moves out of the
    loop and its value is carried by the loop. Last, 1-D transfers become
    `vector.load`/`vector.store` where the innermost memory dimension is
    contiguous (element-wise accesses otherwise).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
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

def HostLowerMathPass : Pass<"kiln-host-lower-math", "func::FuncOp"> {
  let summary = "Compute f32 math functions inline so that they stay "
                "vectorized";
  let description = [{
    x86 has no instruction for exp, log, tanh or erf, so LLVM lowers these
    math functions to one libm call per vector lane. This pass keeps them
    in registers: compound functions are expanded into simpler ones (sinh,
    powf, exp2, ...; `math-expand-ops`), powers with constant exponents
    become multiplications and square roots, and f32 exp, expm1, log, log2,
    log1p, tanh and erf (scalars and vectors; f16/bf16 after
    `math-extend-to-supported-types`) become MLIR's polynomial
    approximations. f32 log and log2 of denormal inputs are first scaled
    into the normal range (the approximation clamps them to the smallest
    normal). f64 functions, and f32 functions whose approximation is not
    accurate over the whole range (sin, cos, atan, ...), are left to libm.
    f32 floor becomes conversions to and from i32 (x86 before SSE4.1 has
    no vector floor; LLVM would call floorf per lane). Last, every `math.fma` becomes `arith.mulf` +
    `arith.addf` with the
    `contract` flag: fused where the CPU has FMA, never a per-lane `fmaf`
    call where it has not.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
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

//===----------------------------------------------------------------------===//
// GPU (ROCDL and NVVM)
//===----------------------------------------------------------------------===//

def GPUFuseElementwisePass
    : Pass<"kiln-gpu-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse elementwise linalg producers into their consumers";
  let description = [{
    Generalizes the named linalg ops that are not contractions, convolutions
    or pooling ops (elementwise, broadcast, transpose, reduce, ...) and fuses
    elementwise producers into the bodies of their consumers. On a GPU every
    intermediate tensor left between two ops of a workgroup becomes a
    shared-memory buffer and a barrier, so chains such as `exp(x - max)`
    feeding a sum are computed inside the consumer instead. Matmul,
    convolution and pooling ops stay named so that strategy selection and lit
    tests see what they are.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GPUSelectStrategyPass
    : Pass<"kiln-gpu-select-strategy", "func::FuncOp"> {
  let summary = "Choose the GPU workgroup/thread strategy of a kernel";
  let description = [{
    Classifies the kernel by its root op (the last op with reduction loops,
    else the op producing the result): "elementwise", "reduction", "matmul"
    (contractions, including batch_matmul), "conv", "pooling", or "generic"
    (any other tileable op, e.g. tensor.pad); contractions that fit the
    contraction recipe become "contraction" kernels and fused attention
    chains "attention" kernels. From the kind, the iteration space of the op
    producing the result and the chip (subgroup size, shared memory, matrix
    instructions) it computes how that op is split into workgroups and how
    each workgroup's ops are spread over its threads, and attaches the
    choice as a typed, verified attribute (#kiln.gpu_strategy, KilnAttrs.td,
    which documents every parameter):

    ```mlir
    func.func @k(...) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<
        kind = reduction, workgroup_size = 256, subgroup_size = 64,
        workgroup_tile = [1, 0], workgroup_count = 512,
        reduction = workgroup, reduction_vector = 4>}
    ```

    * `workgroup_tile`: one entry per loop of the op producing the result (0:
      not tiled, always the case for reduction loops); `workgroup_count`
      workgroups, tiles linearized onto x.
    * `workgroup_size`: threads per workgroup, a multiple of the subgroup size
      (4 subgroups: 256 threads on wave64 CDNA, 128 on wave32 RDNA/NVIDIA).
    * `thread_tile`: contiguous innermost elements each thread handles per
      step (128 bits: 4 for 32-bit, 8 for 16-bit elementwise kernels whose
      innermost size allows it, else 1); kiln-gpu-vectorize turns such a
      chunk into one 128-bit load/store per operand.
    * `reduction`: "workgroup" when the root reduces over its innermost loops
      with a large enough extent (all threads of a workgroup cooperate on
      one row), "subgroup" (one subgroup per row) for shorter rows, "thread"
      when each thread reduces its elements serially, "none" otherwise.
    * contraction kernels: `intrinsic` and `subgroup_grid` (matrix cores:
      mma.sync on NVIDIA, MFMA/WMMA on AMD) or `simt_tile` (f32), `k_tile`,
      `pipeline_depth`; attention kernels: `intrinsic`, `query_rows`,
      `k_tile`, `q_in_shared`.

    Kernels with several results, or whose result is not produced by a
    tileable op, get kind "single": one workgroup computes everything (its
    threads still share the work of each op).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::kiln::KilnDialect"];
  let options = [
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"64",
           "Threads per wave (AMD) or warp (NVIDIA)">,
    Option<"maxWorkgroupSize", "max-workgroup-size", "int64_t",
           /*default=*/"1024", "Upper bound on threads per workgroup">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Target chip (gfx942, sm_90, ...)">,
    Option<"matrixCores", "matrix-cores", "bool", /*default=*/"true",
           "Use MFMA/WMMA for f16 and bf16 contractions where an AMD chip "
           "has them (false: the SIMT strategies). NVIDIA chips use "
           "mma.sync either way">,
    Option<"layoutFragments", "layout-fragments", "bool",
           /*default=*/"false",
           "NVIDIA: read mma.sync fragments from one padded shared stage by "
           "the layout table, as the AMD forms do, instead of cp.async "
           "stages and ldmatrix (tests the AMD data path on NVIDIA GPUs)">,
    Option<"maxSharedMemoryBytes", "max-shared-memory-bytes", "int64_t",
           /*default=*/"49152",
           "Shared memory one workgroup may use (strategies never exceed "
           "it)">,
  ];
}

def GPUTileToWorkgroupsPass
    : Pass<"kiln-gpu-tile-to-workgroups", "func::FuncOp"> {
  let summary = "Tile the result op into a workgroup scf.forall and fuse "
                "its producers";
  let description = [{
    Reads `kiln.gpu_strategy` and tiles the op producing the kernel result
    with `scf.forall` using `workgroup_tile`, greedily fusing its producers,
    so that each iteration computes one independent tile of the result. The
    forall is mapped to `#gpu.block<linear_dim_i>`: the tiles are linearized
    onto the x dimension of the grid. Kernels of kind "single" are left
    unchanged.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def GPUBufferizePass : Pass<"kiln-gpu-bufferize", "ModuleOp"> {
  let summary = "One-shot bufferize GPU kernels with shared-memory "
                "temporaries";
  let description = [{
    Runs empty-tensor elimination and one-shot bufferization on kernels whose
    signature is already made of memref bindings (see
    kiln-host-convert-to-bindings). Results are written in place into their
    bindings. Every other buffer lives at workgroup level (the threads of a
    workgroup cooperate on it), so temporaries are `memref.alloc` in
    `#gpu.address_space<workgroup>` (shared memory / LDS), bounded to a
    static size when the tile size varies (partial edge tiles); copies are
    `linalg.copy`, which later passes distribute over threads. Tensor
    constants first become `memref.global`s in `#gpu.address_space<global>`
    (shared memory cannot be initialized) and `tensor.concat` becomes
    `tensor.insert_slice`s (its bufferization supports no memory space).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def GPULowerRowsPass
    : Pass<"kiln-gpu-lower-rows", "func::FuncOp"> {
  let summary = "Lower a row-fused workgroup with its rows in registers";
  let description = [{
    Under `reduction = workgroup` or `subgroup` (no matrix
    `intrinsic`), when every linalg op of the workgroup works on the
    workgroup's rows (one row per workgroup, or per subgroup) and a row fits
    the threads' registers, the ops are lowered together: each thread loads
    its 128-bit chunks of the row once, every op reads them from registers,
    the rows' scalars (max, sum, mean) are SSA values every thread of the
    row holds, and cross-thread traffic is left to the reductions
    (`gpu.subgroup_reduce` across lanes, a few shared slots and one barrier
    across subgroups). Otherwise the workgroup is left as it is, for
    kiln-gpu-lower-workgroup-reductions and kiln-gpu-distribute-to-threads.

    Rows staged in shared memory: when the rows held from one op to a
    later one would leave room for only one workgroup per processor (SM or
    CU) in registers, and shared memory holds them for at least two, the
    first op that loads such a row also stores each thread's chunks into a
    workgroup buffer, and later ops read the thread's own chunks back from
    it (no barrier: each thread reads only what it wrote). The kernel then
    carries `kiln.min_workgroups_per_processor`, which the NVVM and ROCDL
    annotations turn into a register budget (`.minnctapersm`,
    `amdgpu-waves-per-eu`). `stage-rows=always` stages every held row that
    fits the workgroup's shared memory (tests); `never` keeps them in
    registers. The processor's resources come from the chip (0: unknown,
    never staged under `auto`).
  }];
  let options = [
    Option<"stageRows", "stage-rows", "std::string", "\"auto\"",
           "Held rows in shared memory: auto, always or never">,
    Option<"processorRegisters", "processor-registers", "int64_t", "0",
           "32-bit registers of one SM / CU (all its threads together)">,
    Option<"processorThreads", "processor-threads", "int64_t", "0",
           "Threads resident on one SM / CU at most">,
    Option<"processorSharedMemoryBytes", "processor-shared-memory-bytes",
           "int64_t", "0", "Shared memory (LDS) of one SM / CU">,
    Option<"maxSharedMemoryBytes", "max-shared-memory-bytes", "int64_t",
           "0", "Shared memory one workgroup may use">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPULowerWorkgroupReductionsPass
    : Pass<"kiln-gpu-lower-workgroup-reductions", "func::FuncOp"> {
  let summary = "Reduce innermost reductions with all the workgroup's threads";
  let description = [{
    Under `reduction = workgroup` (or `subgroup`: one row per subgroup),
    a linalg op that reduces over its innermost loops with at least as many
    elements per output as threads (lanes) is rewritten into a cooperative
    reduction: for each output element every thread accumulates a strided
    slice (128-bit chunks of `reduction_vector` elements where the operands
    allow) into a partial; with a combiner `gpu.subgroup_reduce` has, lanes
    combine by subgroup reduction and one shared slot per subgroup meets
    after one barrier; otherwise the partials go to a shared buffer and
    combine pairwise with a barrier per step. Thread 0 folds the total into
    the output. A barrier follows each rewritten op that is followed by
    memory accesses. Other ops are left for kiln-gpu-distribute-to-threads.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPUDistributeToThreadsPass
    : Pass<"kiln-gpu-distribute-to-threads", "func::FuncOp"> {
  let summary = "Spread each workgroup-level linalg op over the threads";
  let description = [{
    After bufferization (and kiln-gpu-lower-rows and
    kiln-gpu-lower-workgroup-reductions), each workgroup runs a sequence of
    linalg ops on buffers. Every such op is tiled into an `scf.forall` over
    its parallel loops mapped to `#gpu.thread<linear_dim_i>` (tile 1, or
    `thread_tile` on the innermost loop), so each thread computes whole
    output elements and runs reduction loops serially; an op without
    parallel loops runs on thread 0. A `gpu.barrier` separates consecutive
    ops, since an op may read what another thread wrote in the previous
    one.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPULowerAttentionPass
    : Pass<"kiln-gpu-lower-attention", "func::FuncOp"> {
  let summary = "Lower an attention chain to one fused matrix-core kernel";
  let description = [{
    For kernels whose strategy has `kind = attention` (an attention chain
    that dispatch creation fused, kiln/DispatchCreation/Attention.h, on
    buffers and untiled), replaces the chain, its fills and its temporaries
    with a flash-attention kernel: an `scf.forall` over (batch, blocks of
    `query_rows` query rows, 64 or 128) mapped to workgroups of 4 warps, each
    warp owning 16 or 32 rows (one or two 16-row m-tiles, every K and V
    fragment feeding each). Q's rows pass through shared memory once and are
    held as `mma.sync` A fragments (`nvgpu.ldmatrix`), or, with
    `q_in_shared` (head dim 128 at 32 rows per warp, where registers hold
    the accumulators), stay in shared memory and are read per block; K and V
    stream in blocks of `k_tile` rows (64, or 32 with `q_in_shared`)
    through two shared-memory stages each (`nvgpu.device_async_copy`, rows
    padded by 8 elements), block j+1 copying while block j is used. Per
    block, a warp computes its 16 x 64 scores S = Q K^T in registers, a
    running row max m (lane exchanges within each quad of lanes) and the
    probabilities exp((S - m) * c) (one FMA and `ex2.approx.f32` each),
    rescales its running row sums and its
    16 x D accumulators O by exp((m_old - m) * c), and adds P V with the
    probabilities truncated to the input type as A fragments straight from
    the score registers. At the end each row is divided by its sum and
    stored. Results equal the unfused chain's up to the order of the f32
    sums and the rounding of the probabilities, which are relative to the
    running rather than the final row max. A chain the kernel does not fit
    is an error. NVIDIA only (`intrinsic` mma_sync_f32_16x8x16_f16|bf16).
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPULowerContractionPass
    : Pass<"kiln-gpu-lower-contraction", "func::FuncOp"> {
  let summary = "Lower a workgroup's matmul to a tiled matrix-core kernel";
  let description = [{
    For kernels whose strategy has `kind = contraction`, rewrites the
    workgroup's `linalg.matmul` (BM x K * K x BN -> BM x BN f32, on buffers)
    with its fill and its elementwise consumer into the contraction recipe:
    the workgroup's subgroups form a `subgroup_grid` (WM x WN), each owning a
    (BM/WM) x (BN/WN) block of accumulators in registers; the K loop copies
    BM x `k_tile` of A and `k_tile` x BN of B into padded shared memory with
    128-bit vector loads, synchronizes, and every subgroup reads its
    fragments from shared memory in the layout of the matrix `intrinsic`
    (MatrixIntrinsics.h: `mma_sync_f32_16x8x16_f16|bf16` -> `nvvm.mma.sync`
    with fragments read by `nvgpu.ldmatrix`, `mfma_f32_16x16x16_f16` ->
    `amdgpu.mfma` with fragments read element by element). The K loop is
    software-pipelined: slice k+1 is loaded into registers while slice k is
    multiplied, and stored to shared memory between two barriers. The accumulators start from
    the fill's value (or C's contents); the consumer's body (bias,
    activation, truncation) is applied to them in registers and its result
    stored once. A matmul that does not fit the strategy's tiles, or a
    shared temporary C with uses other than one elementwise consumer, is an
    error.

    ```mlir
    func.func @k(...) attributes {kiln.gpu_strategy = #kiln.gpu_strategy<
        kind = contraction, workgroup_size = 128, subgroup_size = 32,
        workgroup_tile = [128, 128], workgroup_count = 1024,
        intrinsic = mma_sync_f32_16x8x16_f16, subgroup_grid = [2, 2],
        k_tile = 32, pipeline_depth = 4>}
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GPUVectorizePass : Pass<"kiln-gpu-vectorize", "func::FuncOp"> {
  let summary = "Vectorize per-thread chunks into 128-bit loads and stores";
  let description = [{
    Under a `kiln.gpu_strategy` with `thread_tile` = N > 1 (each thread
    owns N contiguous elements of the innermost loop, 128 bits), every
    per-thread linalg op inside the thread forall whose iteration space is
    exactly 1 x ... x 1 x N, all parallel, with operands that are contiguous
    along the innermost loop (last index = that loop, stride 1) or do not
    depend on it (broadcasts), and 8/16/32-bit element types, is vectorized:
    one `vector.load` per contiguous operand, a broadcast for the others,
    the body on `vector<N x T>` and one `vector.store`. Partial tiles,
    strided or transposed operands and other types stay scalar (correct,
    just narrower accesses). kiln-gpu-align-vector-accesses later marks the
    accesses whose alignment it can prove.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GPUAlignVectorAccessesPass
    : Pass<"kiln-gpu-align-vector-accesses", "func::FuncOp"> {
  let summary = "Give vector loads/stores the alignment their indices prove";
  let description = [{
    For each `vector.load` / `vector.store` on a kernel binding (after
    fold-memref-alias-ops, so the memref is the binding itself), proves that
    the linearized element offset is a multiple of some k from the index
    computations (constants, thread / block ids times constants, loop
    induction variables with aligned bounds and steps, affine.apply) and
    sets `alignment` = min(vector bytes, k * element bytes). Binding
    pointers are at least 16-byte aligned (Kiln binds whole allocations and
    arena slices aligned to 64 bytes). NVPTX emits ld.global.v4 only for
    16-byte-aligned accesses; the AMDGPU backend needs 4 bytes.
  }];
}

def GPUMapToIdsPass : Pass<"kiln-gpu-map-to-ids", "func::FuncOp"> {
  let summary = "Replace the workgroup and thread scf.foralls by gpu ids";
  let description = [{
    The workgroup `scf.forall` (`#gpu.block<linear_dim_i>`) becomes its body,
    its induction variables delinearized from `gpu.block_id x`. Each thread
    `scf.forall` (`#gpu.thread<linear_dim_i>`) becomes a loop over its
    linearized iterations starting at `gpu.thread_id x` with the workgroup
    size as step (an `scf.if` when there are no more iterations than
    threads), so any trip count, static or not, is covered. Records
    `kiln.workgroup_count` and `kiln.workgroup_size` on the kernel in place
    of its `kiln.gpu_strategy`, which this pass is the last to read.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def GPULowerSubgroupReducePass
    : Pass<"kiln-gpu-lower-subgroup-reduce", "func::FuncOp"> {
  let summary = "Lower gpu.subgroup_reduce to lane exchanges";
  let description = [{
    The upstream GPU-to-NVVM/ROCDL conversions do not lower
    `gpu.subgroup_reduce`. This pass applies upstream's patterns: on NVVM a
    butterfly of `gpu.shuffle xor` over 32-bit values; on ROCDL the DPP
    sequence for the chip (`amdgpu.dpp` row shifts and broadcasts,
    `rocdl.permlanex16` on gfx10+ wave32, `rocdl.readlane` across the
    halves of a wave64), with the shuffle butterfly (ds_swizzle /
    ds_bpermute) for what DPP does not cover.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::ROCDL::ROCDLDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"backend", "backend", "std::string", /*default=*/"\"rocdl\"",
           "GPU backend: rocdl or nvvm">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "AMD chip (gfx942, gfx1100, ...) for the DPP sequence">,
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"32",
           "Lanes per subgroup">,
  ];
}

def GPULowerMathPass : Pass<"kiln-gpu-lower-math", "func::FuncOp"> {
  let summary = "Lower math ops to what the GPU backend computes natively";
  let description = [{
    Expands math ops into simpler ones (tanh, powf, ...), replaces f32 (and,
    through f32, f16/bf16) transcendental functions by MLIR's polynomial
    approximations, and, for ROCDL, turns ops with a native instruction
    that convert-gpu-to-rocdl accepts into LLVM intrinsics (f32 exp and log
    become v_exp_f32/v_log_f32; sqrt, fabs, fma, copysign). Other
    one-instruction functions become device-library calls in the upstream
    conversions and kiln-gpu-unwrap-kernels turns them back into
    intrinsics. What remains (f64 transcendental functions) is left to
    convert-gpu-to-rocdl (ocml calls, linked from the device libraries); on
    NVVM, kiln-gpu-expand-f64-math expands f64 exp and log next (there is
    no libdevice). f32 exp on NVVM is built around ex2.approx: two of them
    (at most 2.04 ulp), or one in kernels whose every buffer holds f16 or
    bf16 (3.29 ulp of f32, below what their results are rounded to). Also
    drops fast-math flags from arith.extf/truncf, which LLVM's
    fpext/fptrunc cannot carry.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"backend", "backend", "std::string", /*default=*/"\"rocdl\"",
           "GPU backend: rocdl or nvvm">,
  ];
}

def GPUExpandF64MathPass
    : Pass<"kiln-gpu-expand-f64-math", "func::FuncOp"> {
  let summary = "Expand f64 exp and log into arithmetic (no libdevice)";
  let description = [{
    Replaces `math.exp` and `math.log` on f64 (scalars and vectors) by
    arithmetic: exp by Cody-Waite range reduction (n = round(x / ln2),
    r = x - n * ln2_hi - n * ln2_lo), a degree-13 polynomial and scaling by
    2^n built in the exponent bits; log by splitting exponent and mantissa
    (mantissa in [sqrt(1/2), sqrt(2)), subnormals rescaled), the odd series
    of 2 atanh(s) in s = (m - 1) / (m + 1) and k * ln2 in two parts. Zero,
    negative, subnormal, infinite and NaN inputs, overflow and underflow
    give the IEEE results; the error is at most 1 ulp. The NVVM recipe runs
    it after kiln-gpu-lower-math (whose expansions turn tanh, pow, sinh,
    ... into exp and log) because Kiln's PTX links no libdevice; on the
    host it computes the same functions, which is how its accuracy is
    tested against libm.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def GPUWrapKernelsPass : Pass<"kiln-gpu-wrap-kernels", "ModuleOp"> {
  let summary = "Move the kernels into a gpu.module as gpu.func kernels";
  let description = [{
    Turns each `func.func` kernel (memref bindings, distributed with gpu ids)
    into a `gpu.func ... kernel` with `known_block_size` taken from
    `kiln.workgroup_size`, inside one `gpu.module @kiln_kernels`, so that
    upstream convert-gpu-to-rocdl / convert-gpu-to-nvvm can lower it.
    Statically shaped `memref.alloc`s in `#gpu.address_space<workgroup>`
    become workgroup attributions, or, when together they exceed
    `max-static-shared-memory-bytes`, `memref.view`s at 16-byte aligned
    offsets of one `gpu.dynamic_shared_memory` buffer (the driver passes its
    size at launch). Their total size is recorded as
    `kiln.shared_memory_bytes`, and a kernel needing more than
    `max-shared-memory-bytes` is an error. The `memref.global` constants the
    kernels read move into the gpu.module with them.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"maxSharedMemoryBytes", "max-shared-memory-bytes", "int64_t",
           /*default=*/"65536", "Shared memory available to one workgroup">,
    Option<"maxStaticSharedMemoryBytes", "max-static-shared-memory-bytes",
           "int64_t", /*default=*/"65536",
           "Shared memory a kernel may declare statically; kernels needing "
           "more keep all their buffers in dynamic shared memory">,
  ];
}

def GPUUnwrapKernelsPass : Pass<"kiln-gpu-unwrap-kernels", "ModuleOp"> {
  let summary = "Hoist the lowered kernels out of the gpu.module";
  let description = [{
    After convert-gpu-to-rocdl / convert-gpu-to-nvvm, moves the contents of
    `gpu.module @kiln_kernels` (kernels, shared-memory globals, external
    device-library declarations) into the enclosing module, which then is a
    plain LLVM-dialect module for translateModuleToLLVMIR. Each kernel's
    binding pointers move to the global address space (1), which lets the
    backends use global instead of flat/generic memory instructions, and the
    kernel gets its launch bounds: `rocdl.reqd_work_group_size` and
    `rocdl.flat_work_group_size`, or `nvvm.reqntid` (PTX allows no
    `.maxntid` next to it).
    Calls to device-library functions that are one instruction
    (`__nv_sqrtf`, `__nv_floorf`, `__ocml_ceil_f32`, `__ocml_fma_f64`, ...)
    become LLVM intrinsics, so that kernels without f64 transcendental
    functions need no libdevice and only what is unavoidable of ocml.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // KILN_CODEGEN_PASSES
