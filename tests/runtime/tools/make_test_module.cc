// Writes the standard test module (tests/runtime/module/test_modules.h) to
// the path given as the only argument; the CLI tests run the tools on it.
#include <cstdio>

#include "test_modules.h"

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s OUT.vmfb\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> kernel = kiln::testing::TestKernelBinary();
  if (kernel.empty()) {
    std::fprintf(stderr, "error: test kernel %s not found\n",
                 KILN_TEST_KERNEL_PATH);
    return 1;
  }
  if (!kiln::testing::WriteFileBytes(argv[1], kiln::testing::TestModuleBytes())) {
    std::fprintf(stderr, "error: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
