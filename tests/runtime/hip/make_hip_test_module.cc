// Writes the standard runtime test module (tests/runtime/module/
// test_modules.h) with a GPU variant added in front of its executable's
// variants: "cuda:sm_80", format "ptx", from hip_test_kernels.ll (path of
// the PTX as the second argument). kiln-run then runs the same functions on
// `local` (host variant) and on `hip` (PTX variant, chosen by the device's
// target), which build_tools/gpu_check.sh compares.
#include <cstdio>
#include <memory>
#include <string>

#include "schemas/module_constants.h"
#include "test_modules.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT.vmfb KERNELS.ptx\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> ptx = kiln::testing::ReadFileBytes(argv[2]);
  if (ptx.empty()) {
    std::fprintf(stderr, "error: cannot read %s\n", argv[2]);
    return 1;
  }
  std::unique_ptr<kiln::schema::ModuleT> module =
      kiln::testing::BuildTestModule();
  module->compile_flags = "--target=cuda,host";
  auto& variants = module->executables.at(0)->variants;
  auto gpu = std::make_unique<kiln::schema::ExecutableVariantT>();
  gpu->target = "cuda:sm_80";
  gpu->format = "ptx";
  gpu->binary = ptx;
  // Same exports as the host variant; one 64-thread workgroup covers 2x3.
  for (const auto& hostExport : variants.back()->exports) {
    auto exp = std::make_unique<kiln::schema::ExecutableExportT>(*hostExport);
    exp->workgroup_count = {1, 1, 1};
    exp->workgroup_size = {64, 1, 1};
    gpu->exports.push_back(std::move(exp));
  }
  variants.insert(variants.begin(), std::move(gpu));
  if (!kiln::testing::WriteFileBytes(argv[1], kiln::testing::Serialize(*module))) {
    std::fprintf(stderr, "error: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
