//===- kiln-opt.cpp - Kiln's mlir-opt -------------------------------------===//
//
// Runs any Kiln or upstream pass/pipeline on MLIR text; the driver of the
// compiler's lit tests.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Kiln/KilnDialect.h"
#include "kiln/Pipelines/Pipelines.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#ifdef KILN_HAVE_CODEGEN
#include "kiln/Codegen/Passes.h"
#endif

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::kiln::registerKilnPassesAndPipelines();
#ifdef KILN_HAVE_CODEGEN
  mlir::kiln::registerKilnCodegenPasses();
#endif
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::kiln::KilnDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
