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
      dialects, and tosa ops other than its control flow.

    Control flow (scf, cf, tosa.cond_if/while_loop), dynamic shapes, unknown
    ops and unsupported types are each reported once per op, naming what was
    found and what is supported; the pass then fails.
  }];
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
