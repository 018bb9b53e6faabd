//===- Frontend.cpp - Reading a Kiln program ------------------------------===//

#include "kiln/Pipelines/Frontend.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

using namespace mlir;

void mlir::kiln::registerKilnCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<kiln::KilnDialect>();
}

// A shard.grid axis of extent 0 has no device to run on (and crashes
// upstream verifiers that divide by it): a located error.
static LogicalResult checkGridExtents(ModuleOp module) {
  LogicalResult result = success();
  module.walk([&](shard::GridOp grid) {
    for (auto [axis, extent] : llvm::enumerate(grid.getShape()))
      if (extent == 0) {
        grid.emitError() << "shard.grid '" << grid.getSymName() << "' axis "
                         << axis << " has extent 0: every axis needs at "
                                    "least one device";
        result = failure();
      }
  });
  return result;
}

OwningOpRef<ModuleOp>
mlir::kiln::parseKilnProgram(llvm::SourceMgr &sourceMgr,
                             MLIRContext &context) {
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module || failed(checkGridExtents(*module)) || failed(verify(*module)))
    return nullptr;
  return module;
}
