// Writes a test module (tests/runtime/module/test_modules.h) to the path
// given as the first argument; the CLI tests run the tools on it. Without
// options it is the standard module; --spmd=GRID (e.g. 2 or 2x3) writes the
// SPMD module for that grid.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_modules.h"

int main(int argc, char** argv) {
  std::string spmd = argc == 3 ? argv[2] : "";
  if ((argc != 2 && argc != 3) || argv[1][0] == '-' ||
      (argc == 3 && spmd.rfind("--spmd=", 0) != 0)) {
    std::fprintf(stderr, "usage: %s OUT.vmfb [--spmd=GRID]\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> kernel = kiln::testing::TestKernelBinary();
  if (kernel.empty()) {
    std::fprintf(stderr, "error: test kernel %s not found\n",
                 KILN_TEST_KERNEL_PATH);
    return 1;
  }
  std::vector<uint8_t> bytes;
  if (spmd.empty()) {
    bytes = kiln::testing::TestModuleBytes();
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
    bytes = kiln::testing::Serialize(*kiln::testing::BuildSpmdModule(grid));
  }
  if (!kiln::testing::WriteFileBytes(argv[1], bytes)) {
    std::fprintf(stderr, "error: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
