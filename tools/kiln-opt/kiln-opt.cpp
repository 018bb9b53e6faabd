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

#include "kiln/Codegen/Passes.h"
#include "kiln/version.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  // --version: Kiln's line before LLVM's own.
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << KILN_VERSION_TEXT << "\n"; });
  mlir::registerAllPasses();
  mlir::kiln::registerKilnPassesAndPipelines();
  mlir::kiln::registerKilnCodegenPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::kiln::KilnDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
