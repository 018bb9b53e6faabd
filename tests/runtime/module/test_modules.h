// Builders of real .vmfb modules for the runtime tests, written with the
// FlatBuffers object API. Their host variant is the shared object compiled
// from test_kernels.c (path in KILN_TEST_KERNEL_PATH), so calling them runs
// real kernels through the local driver.
//
// The standard test module ("kiln_test") has these functions:
//   add(2x3xf32, 2x3xf32) -> 2x3xf32          dispatch add_f32
//   add_bias(2x3xf32) -> 2x3xf32               copy to the transient arena,
//                                               barrier, add rodata "bias"
//                                               (10, 20, ..., 60)
//   fill() -> 4xi32                             fill with 7
//   fail(2x3xf32, 2x3xf32) -> 2x3xf32           kernel returns an error
// Its executable has a first variant "rocm:gfx942" (format hsaco, not
// loadable on the local device) and then "host:x86_64".
#ifndef KILN_TESTS_RUNTIME_MODULE_TEST_MODULES_H_
#define KILN_TESTS_RUNTIME_MODULE_TEST_MODULES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/schemas/module_generated.h"

namespace kiln {
namespace testing {

std::vector<uint8_t> ReadFileBytes(const std::string& path);
bool WriteFileBytes(const std::string& path, const std::vector<uint8_t>& bytes);

// The test kernel shared object's bytes.
std::vector<uint8_t> TestKernelBinary();

// The standard test module (see above), as an object tree to tweak.
std::unique_ptr<schema::ModuleT> BuildTestModule();
// Serializes with the "KILN" identifier.
std::vector<uint8_t> Serialize(const schema::ModuleT& module);
// Serialize(*BuildTestModule()).
std::vector<uint8_t> TestModuleBytes();

}  // namespace testing
}  // namespace kiln

#endif  // KILN_TESTS_RUNTIME_MODULE_TEST_MODULES_H_
