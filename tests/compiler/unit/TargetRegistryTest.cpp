// The target registry (kiln/Target/TargetRegistry.h) and the compile
// driver's use of it: --target and each target's flags are parsed, checked
// and turned into backends through the registry alone, so a target the
// driver has never heard of works as the built-in ones do.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kiln/Driver/Compile.h"
#include "kiln/Target/TargetRegistry.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

// A target defined outside the compiler's folders. Its backend says what it
// was made from; it compiles nothing (these tests make no module).
class RecordingBackend : public TargetBackend {
public:
  explicit RecordingBackend(std::string description)
      : description(std::move(description)) {}
  std::string describe() const override { return description; }
  FailureOr<std::vector<ExecutableVariantBinary>>
  compile(ExecutableOp, StringRef) const override {
    return failure();
  }

private:
  std::string description;
};

TargetInfo makeToyTarget() {
  TargetInfo target;
  target.name = "toy";
  target.description = "a target of this test";
  TargetOption cores = {"toy-cores", TargetOption::Kind::StringList,
                        std::vector<std::string>{"c1"}, "cores", "c1,c2"};
  cores.needsTarget = true;
  cores.verify = [](const TargetOptionValue &value) -> llvm::Error {
    for (const std::string &core : std::get<std::vector<std::string>>(value))
      if (core.rfind("c", 0) != 0)
        return llvm::createStringError("unknown core '" + core + "'");
    return llvm::Error::success();
  };
  target.options = {
      std::move(cores),
      {"toy-fast", TargetOption::Kind::Bool, false, "fast mode", ""},
      {"toy-level", TargetOption::Kind::Level, 2u, "a level", ""},
      {"toy-name", TargetOption::Kind::String, std::string("n"), "a name",
       "NAME"},
  };
  target.create = [](const TargetOptionValues &values,
                     const SharedTargetOptions &shared) {
    std::string text = "toy:" + llvm::join(values.getList("toy-cores"), ",") +
                       " fast=" + std::to_string(values.getBool("toy-fast")) +
                       " level=" + std::to_string(values.getLevel("toy-level")) +
                       " name=" + values.getString("toy-name") +
                       " gpu-opt=" + std::to_string(shared.gpuOptLevel) +
                       " stage-rows=" + shared.gpuStageRows;
    return std::make_unique<RecordingBackend>(text);
  };
  return target;
}

TargetInfo makeOtherTarget() {
  TargetInfo target;
  target.name = "other";
  target.description = "the default target of this test";
  target.isDefault = true;
  target.create = [](const TargetOptionValues &, const SharedTargetOptions &) {
    return std::make_unique<RecordingBackend>("other");
  };
  return target;
}

class TargetRegistryTest : public ::testing::Test {
protected:
  void SetUp() override {
    registry.add(makeToyTarget());
    registry.add(makeOtherTarget());
  }

  // The descriptions of the backends that `flags` make, or "error: ...".
  std::vector<std::string> backendsFor(std::vector<std::string> flags) {
    CompileOptions options;
    std::string error;
    if (failed(parseCompileFlags(flags, options, error, registry)))
      return {"error: " + error};
    auto backends = createTargetBackends(options, error, registry);
    if (failed(backends))
      return {"error: " + error};
    std::vector<std::string> descriptions;
    for (const auto &backend : *backends)
      descriptions.push_back(backend->describe());
    return descriptions;
  }

  TargetRegistry registry;
};

TEST_F(TargetRegistryTest, ListsTargetsAndTheirDefault) {
  EXPECT_EQ(registry.getTargetNames(), "toy, other");
  EXPECT_EQ(registry.getDefaultTarget(), "other");
  const TargetOption *option = nullptr;
  EXPECT_EQ(registry.lookupOption("toy-level", &option), registry.lookup("toy"));
  ASSERT_NE(option, nullptr);
  EXPECT_EQ(option->kind, TargetOption::Kind::Level);
  EXPECT_EQ(registry.lookupOption("rocm-chip"), nullptr);
  EXPECT_EQ(registry.lookup("host"), nullptr);
}

TEST_F(TargetRegistryTest, DefaultsWhereNoFlagIsGiven) {
  EXPECT_EQ(backendsFor({}), std::vector<std::string>{"other"});
  EXPECT_EQ(backendsFor({"--target=toy"}),
            std::vector<std::string>{
                "toy:c1 fast=0 level=2 name=n gpu-opt=3 stage-rows=auto"});
}

TEST_F(TargetRegistryTest, ParsesEveryKindOfTargetFlag) {
  EXPECT_EQ(backendsFor({"--target=other,toy", "--toy-cores=c2,c3",
                         "--toy-fast", "--toy-level=0", "--toy-name=x y",
                         "--gpu-opt-level=1", "--gpu-stage-rows=always"}),
            (std::vector<std::string>{
                "other",
                "toy:c2,c3 fast=1 level=0 name=x y gpu-opt=1 stage-rows=always"}));
  EXPECT_EQ(backendsFor({"--target=toy", "--toy-fast=false"}),
            std::vector<std::string>{"toy:c1 fast=0 level=2 name=n gpu-opt=3 stage-rows=auto"});
}

TEST_F(TargetRegistryTest, ReportsBadFlagsByName) {
  EXPECT_EQ(backendsFor({"--target=toy,vulkan"}),
            std::vector<std::string>{"error: unsupported target 'vulkan'; "
                                     "supported targets: toy, other"});
  EXPECT_EQ(backendsFor({"--gpu-stage-rows=maybe"}),
            std::vector<std::string>{"error: --gpu-stage-rows must be auto, "
                                     "always or never, not 'maybe'"});
  EXPECT_EQ(backendsFor({"--toy-cores=c2"}),
            std::vector<std::string>{"error: --toy-cores needs --target=toy"});
  EXPECT_EQ(backendsFor({"--target=toy", "--toy-cores=c2,x9"}),
            std::vector<std::string>{"error: --toy-cores: unknown core 'x9'"});
  EXPECT_EQ(backendsFor({"--target=toy", "--toy-level=4"})[0].rfind(
                "error: --toy-level", 0),
            0u);
  EXPECT_EQ(backendsFor({"--target=toy", "--toy-cores"}),
            std::vector<std::string>{
                "error: --toy-cores needs a value (--toy-cores=...)"});
  std::string unknown = backendsFor({"--rocm-chip=gfx942"})[0];
  EXPECT_NE(unknown.find("unknown flag '--rocm-chip'"), std::string::npos)
      << unknown;
  // The known flags listed are this registry's.
  EXPECT_NE(unknown.find("--toy-cores, --toy-fast"), std::string::npos)
      << unknown;
}

// A flag that only means something with its target is accepted and unused
// without it when the target does not insist.
TEST_F(TargetRegistryTest, FlagsOfUnselectedTargetsAreUnused) {
  EXPECT_EQ(backendsFor({"--toy-level=1"}), std::vector<std::string>{"other"});
}

// The targets built into Kiln come from the folders of compiler/lib/Target.
TEST(GlobalTargetRegistry, HoldsTheBuiltInTargets) {
  const TargetRegistry &registry = TargetRegistry::getGlobal();
  EXPECT_EQ(registry.getTargetNames(), "cuda, host, rocm");
  EXPECT_EQ(registry.getDefaultTarget(), "host");
  ASSERT_NE(registry.lookup("rocm"), nullptr);
  EXPECT_TRUE(registry.lookup("rocm")->gpu);
  EXPECT_FALSE(registry.lookup("host")->gpu);

  CompileOptions options;
  std::string error;
  ASSERT_TRUE(succeeded(parseCompileFlags(
      {"--target=host,rocm,cuda", "--rocm-chip=gfx942,gfx1100",
       "--cuda-chip=sm_80"},
      options, error)))
      << error;
  auto backends = createTargetBackends(options, error);
  ASSERT_TRUE(succeeded(backends)) << error;
  std::vector<std::string> descriptions;
  for (const auto &backend : *backends)
    descriptions.push_back(backend->describe());
  EXPECT_EQ(descriptions, (std::vector<std::string>{
                              "host", "rocm:gfx942,gfx1100", "cuda:sm_80"}));
  CompileOptions badChip;
  EXPECT_TRUE(failed(parseCompileFlags({"--target=rocm", "--rocm-chip=gfx9999"},
                                       badChip, error)));
  EXPECT_EQ(error.rfind("--rocm-chip: ", 0), 0u) << error;
}

} // namespace
