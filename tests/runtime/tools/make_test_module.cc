// Writes a test module (tests/runtime/module/test_modules.h) to the path
// given as the first argument; the CLI tests run the tools on it. Without
// options it is the standard module; --spmd=GRID (e.g. 2 or 2x3) writes the
// SPMD module for that grid; --parameters writes the module whose rodata is
// a load-time parameter (BuildParameterTestModule). --fuzz-seed replaces the
// host kernel library by a 4-byte placeholder: the seeds of
// tests/fuzz/corpus/module (the module harness swaps the real library back in),
// small enough to mutate well, and written without the integrity trailer (the
// harness seals each input).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "test_modules.h"

int main(int argc, char** argv) {
  std::string spmd;
  bool fuzz_seed = false;
  bool parameters = false;
  bool usage = argc < 2 || argv[1][0] == '-';
  for (int i = 2; i < argc && !usage; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--spmd=", 0) == 0) {
      spmd = arg;
    } else if (arg == "--fuzz-seed") {
      fuzz_seed = true;
    } else if (arg == "--parameters") {
      parameters = true;
    } else {
      usage = true;
    }
  }
  if (usage) {
    std::fprintf(stderr,
                 "usage: %s OUT.vmfb [--spmd=GRID | --parameters] "
                 "[--fuzz-seed]\n",
                 argv[0]);
    return 2;
  }
  std::vector<uint8_t> kernel = kiln::testing::TestKernelBinary();
  if (kernel.empty()) {
    std::fprintf(stderr, "error: test kernel %s not found\n",
                 KILN_TEST_KERNEL_PATH);
    return 1;
  }
  std::unique_ptr<kiln::schema::ModuleT> module;
  if (parameters) {
    module = kiln::testing::BuildParameterTestModule();
  } else if (spmd.empty()) {
    module = kiln::testing::BuildTestModule();
  } else {
    std::vector<int64_t> grid;
    const char* at = spmd.c_str() + 7;
    while (*at) {
      char* end = nullptr;
      long extent = std::strtol(at, &end, 10);
      if (end == at || extent <= 0 || (*end && *end != 'x')) {
        std::fprintf(stderr, "error: invalid grid '%s'\n", spmd.c_str() + 7);
        return 2;
      }
      grid.push_back(extent);
      at = *end ? end + 1 : end;
    }
    module = kiln::testing::BuildSpmdModule(grid);
  }
  if (fuzz_seed) {
    for (auto& executable : module->executables) {
      for (auto& variant : executable->variants) {
        if (variant->format == "elf-so-v1") {
          variant->binary.assign({0x7f, 'E', 'L', 'F'});
        }
      }
    }
  }
  // Fuzz seeds are the bare FlatBuffer: the harness seals what it mutates.
  std::vector<uint8_t> bytes = fuzz_seed
                                   ? kiln::testing::SerializeContents(*module)
                                   : kiln::testing::Serialize(*module);
  if (!kiln::testing::WriteFileBytes(argv[1], bytes)) {
    std::fprintf(stderr, "error: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
