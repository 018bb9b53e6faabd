// libFuzzer harness: kiln-run's value parser (runtime/src/tooling/values.h)
// on untrusted text, as kiln-run uses it: checked against a signature's type
// before anything is allocated, and printed back when accepted. "@file"
// values are not fuzzed here (the npy harness covers the file format).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tooling/values.h"

namespace {

// Values this small are parsed without an expected type too; larger ones
// would allocate what the text asks for (up to the parser's 1 TiB bound).
constexpr uint64_t kMaxUncheckedBytes = uint64_t{1} << 20;

void Parse(const std::string& text,
           const kiln::tooling::ExpectedType* expected) {
  kiln::tooling::HostTensor tensor;
  kiln_status_t status = kiln::tooling::ParseTensorValue(text, &tensor,
                                                         expected);
  if (!kiln_status_is_ok(status)) {
    kiln_status_free(status);
    return;
  }
  if (tensor.data.size() != tensor.element_count() *
                                kiln_element_type_size(tensor.element_type)) {
    abort();
  }
  kiln::tooling::FormatTensor(tensor, 64);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!text.empty() && text[0] == '@') return 0;

  // Against a signature, as kiln-run does: 2x3xf32, then the text's own
  // type when it is small.
  const int64_t shape[] = {2, 3};
  kiln::tooling::ExpectedType expected;
  expected.type = {KILN_ELEMENT_TYPE_F32, 2, shape};
  expected.what = "input 0 of function 'fuzz'";
  Parse(text, &expected);

  kiln::tooling::HostTensor type;
  kiln_status_t status =
      kiln::tooling::ParseTensorType(text.substr(0, text.find('=')), &type);
  if (!kiln_status_is_ok(status)) {
    kiln_status_free(status);
    return 0;
  }
  if (type.element_count() * kiln_element_type_size(type.element_type) <=
      kMaxUncheckedBytes) {
    Parse(text, nullptr);
  }
  return 0;
}
