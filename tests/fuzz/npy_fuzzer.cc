// libFuzzer harness: the .npy reader (runtime/src/tooling/npy.h) on untrusted
// bytes, with and without an expected type, and the property that what it
// accepts serializes back to an equal tensor.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tooling/npy.h"
#include "tooling/values.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kiln::tooling::HostTensor;
  HostTensor tensor;
  kiln_status_t status = kiln::tooling::ParseNpy(data, size, "<fuzz>", &tensor);
  if (!kiln_status_is_ok(status)) {
    kiln_status_free(status);
  } else {
    kiln::tooling::FormatTensor(tensor, 64);
    std::vector<uint8_t> bytes = kiln::tooling::SerializeNpy(tensor);
    HostTensor back;
    status = kiln::tooling::ParseNpy(bytes.data(), bytes.size(), "<again>",
                                     &back);
    if (!kiln_status_is_ok(status) || back.element_type != tensor.element_type ||
        back.shape != tensor.shape || back.data != tensor.data) {
      abort();  // what was read must write back unchanged
    }
  }

  // As kiln-run reads an input for a 2x3xf32 signature.
  const int64_t shape[] = {2, 3};
  kiln::tooling::ExpectedType expected;
  expected.type = {KILN_ELEMENT_TYPE_F32, 2, shape};
  expected.what = "input 0 of function 'fuzz'";
  HostTensor typed;
  status = kiln::tooling::ParseNpy(data, size, "<fuzz>", &typed, &expected);
  if (kiln_status_is_ok(status) && typed.data.size() != 24) abort();
  kiln_status_free(status);
  return 0;
}
