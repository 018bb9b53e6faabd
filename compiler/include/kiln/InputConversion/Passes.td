//===- Passes.td - Kiln input conversion passes ------------*- tablegen -*-===//
#ifndef KILN_INPUTCONVERSION_PASSES
#define KILN_INPUTCONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def VerifyInputLegalityPass
    : Pass<"kiln-verify-input-legality", "::mlir::ModuleOp"> {
  let summary = "Rejects programs that Kiln cannot compile, with located errors";
  let description = [{
    Checks the input program before any conversion so that users get a
    diagnostic at their own source location instead of a failure deep in the
    pipeline. It requires:

    - every public `func.func` to have a body and only static-shape ranked
      tensor arguments and results (rank 0 allowed),
    - tensor and scalar element types among i1, i8, i16, i32, i64, f16, bf16,
      f32 and f64 (plus `index` for scalars inside op bodies),
    - only ops of the func (no `func.call`), arith, math, linalg and tensor
      dialects, and tosa ops other than its control flow,
    - of the shard dialect only static `shard.grid`s and the collectives
      Kiln lowers (`shard.all_reduce`, `all_gather`, `reduce_scatter`,
      `all_to_all`, `broadcast`) on static tensors of i8..f64 (i1 for the
      non-reducing ones) with a reduction among sum, product, min, max and
      average (average on floats only). Sharding annotations must have been
      partitioned (kiln-partition-shards); the other shard ops that
      partitioning may leave (all_slice, shift, send/recv, process indices,
      ...) are rejected.

    Control flow (scf, cf, tosa.cond_if/while_loop), dynamic shapes, unknown
    ops and unsupported types are each reported once per op, naming what was
    found and what is supported; the pass then fails.

    With `gpu-collectives` (kiln-compile sets it for --target=rocm/cuda),
    collectives must also be runnable by NCCL/RCCL: no reductions on 16-bit
    integers, which those libraries cannot reduce; with
    `compiled-reductions` too, all_reduces and reduce_scatters of them are
    accepted (they become compiled collective kernels at any size), as are
    bitwise and i1 reductions.
  }];
  let options = [
    Option<"gpuCollectives", "gpu-collectives", "bool", /*default=*/"false",
           "Collectives also run on GPUs through NCCL/RCCL: reject the "
           "reductions those libraries lack (16-bit integers)">,
    Option<"compiledReductions", "compiled-reductions", "bool",
           /*default=*/"false",
           "all_reduces and reduce_scatters that no library runs become "
           "compiled collective kernels (kiln-compile-collectives): accept "
           "them">,
  ];
}

def BindParametersPass : Pass<"kiln-bind-parameters", "::mlir::ModuleOp"> {
  let summary = "Replaces function arguments marked as parameters by the "
                "tensors of a parameter archive";
  let description = [{
    Weights outside the program text: a public function's argument carrying
    `{kiln.parameter = "name"}` stands for tensor `name` of the parameter
    archive (`parameters-file`): a safetensors file (an 8-byte little-endian
    header length, a JSON header naming each tensor's dtype, shape and byte
    range, then the data) or a numpy .npz archive (a zip of NAME.npy
    members, stored as np.savez writes them or deflated as
    np.savez_compressed does, zip64 included; C-order little-endian
    integer, float and bool arrays; told apart from safetensors by the zip
    signature). The argument is removed from the function and its uses read
    a constant holding the archive's data, which the module then carries as
    read-only data. Signless integer arguments take signed and unsigned data
    of their width.

    With `load-time`, parameters are bound when the module is loaded
    instead: the arguments stay (kiln-move-constants-to-rodata makes them
    rodata segments that name the parameter and hold no bytes), and an
    archive, when one is given, is only checked against them (names,
    dtypes, shapes; i1 arguments take BOOL data). Without an archive the
    pass then does nothing.

    Errors, located at the argument: a parameter without an archive, a name
    the archive lacks, a dtype or shape other than the argument's, a dtype
    the archive format has that Kiln does not (BOOL, F8 kinds, complex), and
    an archive that cannot be read or is malformed (its header, offsets
    outside the data, sizes that do not match the shape; for .npz: no zip
    end record, a CRC-32 that does not match, data that do not inflate to
    their recorded size, Fortran order, big-endian data, encrypted or
    otherwise compressed members).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let options = [
    Option<"parametersFile", "parameters-file", "std::string", /*default=*/"",
           "The safetensors or .npz archive that kiln.parameter arguments "
           "name">,
    Option<"loadTime", "load-time", "bool", /*default=*/"false",
           "Leave parameters to be given when the module is loaded; only "
           "check them against the archive, if any">,
  ];
}

def PartitionShardsPass : Pass<"kiln-partition-shards", "::mlir::ModuleOp"> {
  let summary = "Partitions functions with shard annotations into per-rank "
                "SPMD functions";
  let description = [{
    When the module holds `shard.shard` annotations, runs upstream
    `sharding-propagation` and `shard-partition` on every function (then CSE
    and canonicalization, which fold the rank-dependent selects partitioning
    leaves for replicated accumulators), so that each function computes one
    rank's shard with explicit collectives (`shard.all_reduce`, ...). The
    function signature becomes per-rank: arguments and results take their
    local shard shapes. Modules without annotations are left unchanged.

    Grids must have static shapes; a dynamic `shard.grid` is reported at its
    location before anything is partitioned.
  }];
  // What the partitioned functions may contain (the dynamic pipeline
  // cannot load dialects while it runs).
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LowerCollectivesPass : Pass<"kiln-lower-collectives", "::mlir::ModuleOp"> {
  let summary = "Lowers shard collectives to kiln.collective on rank-major "
                "layouts";
  let description = [{
    Rewrites every `shard.all_reduce|all_gather|reduce_scatter|all_to_all|
    broadcast` into a `kiln.collective` over a `#kiln.channel` (grid name,
    grid axes, grid shape) and the layout changes that make its data
    contiguous per rank:

    - all_gather along axis a: the collective yields `N x input`
      (rank-major); a `linalg.transpose` moves the rank dimension in front
      of dimension a (none when a = 0) and a `tensor.collapse_shape` merges
      the two.
    - reduce_scatter along a: `tensor.expand_shape` splits dimension a into
      `N x (size / N)` and a transpose moves N outermost, so chunk r is
      contiguous.
    - all_to_all: split like reduce_scatter along split_axis, exchange, then
      merge like all_gather along concat_axis.
    - broadcast: the root's multi-index over grid_axes becomes its linear
      index in the group.

    Collectives over a group of one rank are their input. Unsupported
    collectives (dynamic shapes or roots, element types, reductions) are
    reported at their location. `shard.grid` ops are removed afterwards.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def WidenReductionAccumulatorsPass
    : Pass<"kiln-widen-reduction-accumulators", "::mlir::func::FuncOp"> {
  let summary = "Accumulate f16 and bf16 sums in f32, rounding once";
  let description = [{
    A long f16 sum accumulated in f16 stops growing once the running sum's
    spacing exceeds the addend (4096 copies of 0.001 add up to 4.0). Every
    `linalg.reduce` and reduction `linalg.generic` whose single result is
    f16 or bf16 and whose combiner adds (sums, means, dot products) is
    rewritten to accumulate in f32: the initial value is widened, the body
    computes in f32 (f16/bf16 inputs widened where they enter it, f16/bf16
    arithmetic on them done in f32), and one `arith.truncf` rounds the
    result. Reductions by max/min are exact in any precision and are left
    alone, as are bodies with ops the rewrite does not know.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DecomposeAggregatedOpsPass
    : Pass<"kiln-decompose-aggregated-ops", "::mlir::func::FuncOp"> {
  let summary = "Decomposes aggregated linalg ops (e.g. linalg.softmax) into "
                "linalg.generic and named ops";
  let description = [{
    Ops such as `linalg.softmax` stand for several loop nests (a max
    reduction, an exponential, a sum reduction and a division). They are
    decomposed through `linalg::AggregatedOpInterface` into the ops they stand
    for, so that dispatch creation fuses and distributes the pieces like any
    other linalg op and codegen never meets the aggregate.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // KILN_INPUTCONVERSION_PASSES
