// libFuzzer harness of the parameter archive reader that the compiler and
// the runtime share (runtime/src/archive/parameter_archive.h): arbitrary
// bytes as a safetensors file or an .npz archive (zip, stored or deflated
// .npy members, zip64). A refusal with a message is the expected answer to
// bad input; a crash, a sanitizer report (an out-of-bounds read of a
// tensor's data included: every byte read is touched), a hang or a huge
// allocation is a finding.
//
// Built with libFuzzer under KILN_BUILD_FUZZERS (clang), and in every build
// as a replay tool over the seeds and regressions (replay_main.cc; ctest
// runtime.fuzz.parameters).
#include <cstddef>
#include <cstdint>
#include <string>

#include "archive/parameter_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::archive::ParameterArchive archive;
  std::string error =
      kiln::archive::ReadParameterArchive(data, size, "fuzz", &archive);
  if (!error.empty()) return 0;
  volatile uint8_t sink = 0;
  for (const auto& entry : archive.tensors)
    for (uint64_t i = 0; i < entry.second.size; ++i)
      sink = sink ^ entry.second.data[i];
  (void)sink;
  return 0;
}
