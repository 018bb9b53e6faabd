//===- Passes.td - Kiln dispatch creation passes -----------*- tablegen -*-===//
#ifndef KILN_DISPATCHCREATION_PASSES
#define KILN_DISPATCHCREATION_PASSES

include "mlir/Pass/PassBase.td"

def FuseElementwiseOpsPass
    : Pass<"kiln-fuse-elementwise-ops", "::mlir::func::FuncOp"> {
  let summary = "Fuses chains of elementwise linalg ops into single generics";
  let description = [{
    Generalizes elementwise named linalg ops (e.g. `linalg.add`,
    `linalg.transpose`, `linalg.broadcast`; not `linalg.fill`, which dispatch
    creation clones instead) to `linalg.generic` and applies upstream linalg
    elementwise producer/consumer fusion. A producer is fused only into its
    single user, so no work is duplicated. Splat constants used as inputs are
    folded into the generic's body.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvolutionsToMatmulsPass
    : Pass<"kiln-convolutions-to-matmuls", "::mlir::func::FuncOp"> {
  let summary = "Rewrites f16/bf16 2-D NHWC convolutions as im2col + matmul";
  let description = [{
    A `linalg.conv_2d_nhwc_hwcf` with static shapes and f16 or bf16 input
    and filter (any strides and dilations) becomes:

    - an im2col gather: a `linalg.generic` writing the N x OH x OW x KH x
      KW x C patches of the input (input map `(n, oh, ow, kh, kw, c) -> (n,
      oh * sh + kh * dh, ow * sw + kw * dw, c)`), viewed as the (N*OH*OW) x
      (KH*KW*C) matrix A by a `tensor.collapse_shape`;
    - the filter viewed as the (KH*KW*C) x F matrix B;
    - `linalg.matmul` A x B with an f32 accumulator: the convolution's own
      init (collapsed) when it is f32; for an f16/bf16 init, a fill of the
      same value widened to f32 (or the init extended), and the product
      truncated back after the matmul, so the sum accumulates in f32 and
      rounds once;
    - the result expanded back to N x OH x OW x F.

    The matmul is then a contraction that GPU targets run with the matrix-
    core recipe, and every target accumulates in f32 (a named convolution
    with an f16 result would accumulate in f16). The im2col buffer holds
    KH*KW times the input.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SplitReductionsPass
    : Pass<"kiln-split-reductions", "::mlir::func::FuncOp"> {
  let summary = "Splits reductions with few results into partial and final ops";
  let description = [{
    A reduction with few results and many elements per result keeps its
    kernel's grid small: a sum over all elements or over a few very long
    rows runs one workgroup per result, a column sum one thread per column.
    Such a reduction (static shapes, one result, a combiner with a neutral
    element such as addf, maxnumf, ori) is split along its first reduced
    loop into S slices: a partial op reduces each slice into a tensor with
    an extra outermost parallel dimension of S (filled with the neutral
    element), and a final op combines the S partials into the original
    result. Contractions count as reductions across rows. S is a
    power of two dividing the loop: reductions along rows (the innermost
    loop reduces) with fewer than 256 results over at least 2^15 elements
    get about 512 results of at least 4096 elements; reductions across rows
    (the innermost loop is parallel) with fewer than 2^16 results over at
    least 512 elements get about 2^18 results of at least 32 elements.
    Inputs are expanded with `tensor.expand_shape` (a host alias); loop
    indices read in the body are rewritten. The summation order changes: a
    slice is summed in order, then the slices in order.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FormDispatchRegionsPass
    : Pass<"kiln-form-dispatch-regions", "::mlir::func::FuncOp"> {
  let summary = "Groups root ops with their elementwise producers/consumers";
  let description = [{
    Wraps each group of ops that will run as one kernel into a
    `kiln.dispatch_region`. Roots are ops that compute tensor data: linalg
    ops (matmul, conv, reductions, generics, ...) and tensor ops such as pad,
    concat, extract_slice, insert_slice and gather. Non-elementwise roots are
    grouped first, in program order, each with:

    - elementwise producers whose results are used only inside the group,
    - elementwise consumers that read a group result through a permutation
      map (e.g. the bias add and relu after a matmul), as long as no other
      user of the group needs a result before the consumer.

    Remaining elementwise ops then form their own groups the same way. Cheap
    producers (`tensor.empty`, splat constants, fills of those) are not
    grouped: outlining clones them into every kernel that uses them. Shape
    changes of contiguous data (`tensor.collapse_shape`, `expand_shape`,
    `reshape`, `bitcast`, `cast`) stay on the host as aliases, and dense
    constants stay on the host to become read-only data.

    With `fuse-attention`, an attention chain (kiln/DispatchCreation/
    Attention.h: Q K^T, row max, exp, row sum, truncation, P V and the
    division) that the fused kernel handles forms one group before anything
    else, when its intermediate results are used only inside it. The
    compile driver sets it when every target of the compile has that
    kernel (the cuda target on sm_80 and later).
  }];
  let options = [
    Option<"fuseAttention", "fuse-attention", "bool", /*default=*/"false",
           "Form one dispatch of each attention chain">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def OutlineDispatchRegionsPass
    : Pass<"kiln-outline-dispatch-regions", "::mlir::ModuleOp"> {
  let summary = "Outlines each kiln.dispatch_region into a kiln.executable";
  let description = [{
    Moves the body of every `kiln.dispatch_region` of function `@f` into the
    kernel `@f_dispatch_<n>` of a new `kiln.executable @f_dispatch_<n>` (n
    counts the function's regions in order) and replaces the region with a
    `kiln.dispatch`. Tensors captured from the host become kernel arguments
    in order of first use, except cheap producers, which are cloned into the
    kernel: `tensor.empty`, `linalg.fill` of those, and splat constants
    (materialized as a fill, so kernels never hold constant globals). Scalars
    captured by the body are recomputed in the kernel from their side-effect
    free defining ops.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CompileCollectivesPass
    : Pass<"kiln-compile-collectives", "::mlir::ModuleOp"> {
  let summary = "Gives small all_reduce, all_gather and reduce_scatter "
                "collectives a kernel";
  let description = [{
    Every `kiln.collective` all_reduce, all_gather or reduce_scatter whose
    per-rank send is at most `max-bytes` bytes gets a kernel of its own: a new
    `kiln.executable @<function>_<kind>_<n>` whose kernel takes the send
    data, the result and a symmetric window (data, signal slots, peer
    table: memrefs) and holds one `kiln.window_collective` (its protocol is
    described there). The collective keeps its place in the host function
    and names the kernel (`kernel @exe::@kernel`); host lowering turns it
    into a dispatch of that kernel over a window of the program. Larger
    collectives, the other kinds, and everything when `max-bytes` is 0 stay
    library collectives, except all_reduces and reduce_scatters that no
    library runs (bitwise and/or/xor, i1) and, with `gpu-libraries`, those
    of the types NCCL/RCCL lack (16-bit integers), which get a kernel at any
    size when `max-bytes` > 0 or `library-gaps` is set (the GPU targets'
    default: only what the libraries lack is compiled there until the
    threshold is set from measurements on several GPUs).

    An all_reduce over more than 2 ranks of at least `two-shot-min-bytes`
    per rank (> 0) runs two-shot (a reduce_scatter, then an all_gather of
    the reduced parts: each rank reads 2x its send instead of N x).

    The kernel splits the elements (of each part) over workgroups of at
    least 4 KiB of send (at most 64 workgroups), each with its own flags and
    epoch counter.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"0",
           "largest per-rank send, in bytes, that gets a compiled kernel "
           "(0: none)">,
    Option<"twoShotMinBytes", "two-shot-min-bytes", "int64_t",
           /*default=*/"0",
           "smallest per-rank send, in bytes, of an all_reduce over more "
           "than 2 ranks that runs two-shot (0: never)">,
    Option<"gpuLibraries", "gpu-libraries", "bool", /*default=*/"false",
           "library collectives are NCCL/RCCL's: all_reduces of types they "
           "lack (16-bit integers) get a kernel at any size too">,
    Option<"libraryGaps", "library-gaps", "bool", /*default=*/"false",
           "give the reductions no library runs a kernel even when "
           "max-bytes is 0">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // KILN_DISPATCHCREATION_PASSES
