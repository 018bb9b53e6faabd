//===- CrashContext.cpp - Name the running pass in crash reports ----------===//

#include "kiln/Codegen/CrashContext.h"

#include <memory>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/PrettyStackTrace.h"

using namespace mlir;

static llvm::cl::opt<std::string> debugCrashBeforePass(
    "kiln-debug-crash-before-pass", llvm::cl::Hidden,
    llvm::cl::desc("Crash just before the pass with this argument runs "
                   "(tests the internal-compiler-error report)"));

namespace {

class CrashContextInstrumentation : public PassInstrumentation {
public:
  void runBeforePass(Pass *pass, Operation *op) override {
    // Pass adaptors (the nesting of a pipeline on functions) are not news:
    // the passes they run say where they are.
    if (pass->getArgument().empty() &&
        pass->getName() == "mlir::detail::OpToOpPassAdaptor") {
      entries().push_back(nullptr);
      return;
    }
    std::string name = pass->getArgument().empty()
                           ? pass->getName().str()
                           : pass->getArgument().str();
    std::string where = op->getName().getStringRef().str();
    if (auto symbol = op->getAttrOfType<StringAttr>("sym_name"))
      where += " @" + symbol.getValue().str();
    entries().push_back(std::make_unique<llvm::PrettyStackTraceFormat>(
        "running pass '%s' on '%s'", name.c_str(), where.c_str()));
    if (!debugCrashBeforePass.empty() && name == debugCrashBeforePass)
      LLVM_BUILTIN_TRAP;
  }
  void runAfterPass(Pass *, Operation *) override { pop(); }
  void runAfterPassFailed(Pass *, Operation *) override { pop(); }

private:
  // Stack entries must be destroyed in the order they were made, on the
  // thread that made them; before/after callbacks of one pass run on one
  // thread and nest, so a per-thread stack keeps that order.
  static std::vector<std::unique_ptr<llvm::PrettyStackTraceFormat>> &
  entries() {
    static thread_local std::vector<
        std::unique_ptr<llvm::PrettyStackTraceFormat>>
        stack;
    return stack;
  }
  static void pop() {
    if (!entries().empty())
      entries().pop_back();
  }
};

} // namespace

void mlir::kiln::addCrashContext(PassManager &pm) {
  pm.addInstrumentation(std::make_unique<CrashContextInstrumentation>());
}
