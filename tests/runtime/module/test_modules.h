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
// The standard test module whose rodata "bias" is load-time parameter
// "bias" (2x3xf32; module version 4) instead of data: add_bias adds the
// tensor given when the module is loaded.
std::unique_ptr<schema::ModuleT> BuildParameterTestModule();
// An SPMD test module for a grid of N = product(grid) ranks (module
// "kiln_spmd"); every collective runs over channel 0, the whole grid:
//   all_reduce(4xf32) -> 4xf32                  sum
//   all_gather(2xf32) -> (2N)xf32
//   reduce_scatter((2N)xf32) -> 2xf32           sum
//   all_to_all((2N)xf32) -> (2N)xf32
//   broadcast(4xf32) -> 4xf32                   from rank N-1
//   add_all_reduce(2x3xf32, 2x3xf32) -> 2x3xf32 dispatch add_f32 into the
//                                               transient arena, barrier,
//                                               all_reduce sum into output 0
//   add(2x3xf32, 2x3xf32) -> 2x3xf32            no collectives
// For a 2-D grid also, over sub-grid channels (split from the world):
//   row_sum(4xf32) -> 4xf32                     all_reduce sum along axis 1
//   column_gather(1xf32) -> (grid[0])xf32       all_gather along axis 0
std::unique_ptr<schema::ModuleT> BuildSpmdModule(
    const std::vector<int64_t>& grid);

// Serializes with the "KILN" identifier and the integrity trailer, as
// kiln-compile writes a module file.
std::vector<uint8_t> Serialize(const schema::ModuleT& module);
// The bare FlatBuffer, without the trailer (the module fuzzer's inputs).
std::vector<uint8_t> SerializeContents(const schema::ModuleT& module);
// Appends the integrity trailer to a bare FlatBuffer.
std::vector<uint8_t> Seal(std::vector<uint8_t> flatbuffer);
// Replaces a module file's trailer by one computed for its (edited) contents:
// tests that damage a module on purpose use it to reach the checks behind
// the checksum.
std::vector<uint8_t> Reseal(std::vector<uint8_t> file);
// Serialize(*BuildTestModule()).
std::vector<uint8_t> TestModuleBytes();

}  // namespace testing
}  // namespace kiln

#endif  // KILN_TESTS_RUNTIME_MODULE_TEST_MODULES_H_
