//===- Frontend.cpp - Reading a Kiln program ------------------------------===//

#include "kiln/Pipelines/Frontend.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"

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

namespace {

bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '%' ||
         c == '@' || c == '#' || c == '!' || c == '^';
}

// Whether `rest` starts with `= [` (integers separated by commas) `]`,
// allowing whitespace between tokens.
bool startsWithIndexList(llvm::StringRef rest) {
  rest = rest.ltrim();
  if (!rest.consume_front("="))
    return false;
  rest = rest.ltrim();
  if (!rest.consume_front("["))
    return false;
  rest = rest.ltrim();
  if (rest.consume_front("]"))
    return true;
  while (true) {
    rest.consume_front("-");
    size_t digits = 0;
    while (digits < rest.size() && llvm::isDigit(rest[digits]))
      ++digits;
    if (digits == 0)
      return false;
    rest = rest.drop_front(digits).ltrim();
    if (rest.consume_front("]"))
      return true;
    if (!rest.consume_front(","))
      return false;
    rest = rest.ltrim();
  }
}

} // namespace

size_t mlir::kiln::findMalformedIndexList(llvm::StringRef text) {
  size_t first = llvm::StringRef::npos;
  for (llvm::StringRef keyword : {"dimensions", "permutation"}) {
    for (size_t at = text.find(keyword); at != llvm::StringRef::npos;
         at = text.find(keyword, at + 1)) {
      size_t end = at + keyword.size();
      if ((at > 0 && isIdentifierChar(text[at - 1])) ||
          (end < text.size() && isIdentifierChar(text[end])))
        continue;
      size_t lineStart = text.rfind('\n', at);
      lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
      if (text.slice(lineStart, at).contains("//"))
        continue;
      if (!startsWithIndexList(text.substr(end, 4096)))
        first = std::min(first, at);
    }
  }
  return first;
}
