// libFuzzer harness of the compiler's parameter archive reader
// (compiler/lib/InputConversion/ParameterArchive.h): arbitrary bytes as a
// safetensors file or an .npz archive (zip, stored or deflated .npy
// members, zip64). A refusal with a message is the expected answer to bad
// input; a crash, a sanitizer report (an out-of-bounds read of a tensor's
// data included: every byte read is touched), a hang or a huge allocation
// is a finding.
//
// Built with libFuzzer under KILN_BUILD_FUZZERS (clang), and in every build
// with the compiler as a replay tool over the seeds and regressions
// (replay_main.cc; ctest compiler.fuzz.parameters).
#include <cstddef>
#include <cstdint>

#include "ParameterArchive.h"
#include "llvm/Support/MemoryBuffer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<mlir::kiln::ParameterArchive> archive =
      mlir::kiln::readParameterArchive(
          llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz"), "fuzz");
  if (!archive) {
    llvm::consumeError(archive.takeError());
    return 0;
  }
  volatile uint8_t sink = 0;
  for (const auto &entry : archive->tensors)
    for (char c : entry.second.data)
      sink = sink ^ uint8_t(c);
  (void)sink;
  return 0;
}
