// ModuleImage / VerifyModule: what the loader accepts and how it refuses
// corrupt, truncated, foreign and malformed modules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "module/module_image.h"
#include "module_constants.h"
#include "module_trailer.h"
#include "test_modules.h"

namespace kiln {
namespace {

using module::ModuleImage;
using namespace kiln::schema;  // NOLINT

struct LoadResult {
  kiln_status_code_t code;
  std::string message;
};

LoadResult Load(const std::vector<uint8_t>& bytes,
                std::shared_ptr<const ModuleImage>* image = nullptr) {
  std::shared_ptr<const ModuleImage> local;
  kiln_status_t status = ModuleImage::CreateFromMemory(
      bytes.data(), bytes.size(), "test.vmfb", image ? image : &local);
  LoadResult result{kiln_status_code(status), kiln_status_message(status)};
  kiln_status_free(status);
  return result;
}

LoadResult LoadModified(void (*modify)(ModuleT*)) {
  auto module = testing::BuildTestModule();
  modify(module.get());
  return Load(testing::Serialize(*module));
}

TEST(ModuleImageTest, TestKernelWasBuilt) {
  std::vector<uint8_t> kernel = testing::TestKernelBinary();
  ASSERT_GT(kernel.size(), 4u) << KILN_TEST_KERNEL_PATH;
  EXPECT_EQ(0, std::memcmp(kernel.data(), "\x7f" "ELF", 4));
}

TEST(ModuleImageTest, LoadsValidModuleAndComputesLayouts) {
  std::shared_ptr<const ModuleImage> image;
  LoadResult result = Load(testing::TestModuleBytes(), &image);
  ASSERT_EQ(result.code, KILN_STATUS_OK) << result.message;
  EXPECT_EQ(image->module().name()->str(), "kiln_test");
  ASSERT_EQ(image->functions().size(), 4u);
  const module::FunctionLayout& add = image->functions()[0];
  EXPECT_EQ(add.name, "add");
  ASSERT_EQ(add.inputs.size(), 2u);
  EXPECT_EQ(add.inputs[0].element_type, ElementType::F32);
  EXPECT_EQ(add.inputs[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(add.inputs[0].element_count, 6u);
  EXPECT_EQ(add.inputs[0].byte_size, 24u);
  EXPECT_EQ(image->FindFunction("fill"), 2);
  EXPECT_EQ(image->FindFunction("nope"), -1);
  EXPECT_EQ(image->FindFunction(nullptr), -1);
}

TEST(ModuleImageTest, LoadsFromFile) {
  std::string path = ::testing::TempDir() + "/module_image_test.vmfb";
  ASSERT_TRUE(testing::WriteFileBytes(path, testing::TestModuleBytes()));
  std::shared_ptr<const ModuleImage> image;
  kiln_status_t status = ModuleImage::CreateFromFile(path.c_str(), &image);
  ASSERT_TRUE(kiln_status_is_ok(status)) << kiln_status_message(status);
  EXPECT_EQ(image->source(), path);
}

TEST(ModuleImageTest, MissingFileIsNotFound) {
  std::shared_ptr<const ModuleImage> image;
  kiln_status_t status =
      ModuleImage::CreateFromFile("/nonexistent/dir/m.vmfb", &image);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  EXPECT_NE(std::string(kiln_status_message(status)).find("/nonexistent"),
            std::string::npos);
  kiln_status_free(status);
  EXPECT_EQ(image, nullptr);
}

TEST(ModuleImageTest, EmptyAndTinyBuffersAreTruncated) {
  EXPECT_EQ(Load({}).code, KILN_STATUS_DATA_LOSS);
  EXPECT_EQ(Load({1, 2, 3}).code, KILN_STATUS_DATA_LOSS);
}

TEST(ModuleImageTest, ForeignFileIsRejectedByIdentifier) {
  std::vector<uint8_t> elf = testing::TestKernelBinary();
  LoadResult result = Load(elf);
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("not a Kiln module"), std::string::npos)
      << result.message;
  std::string text = "this is a text file, not a module at all";
  result = Load(std::vector<uint8_t>(text.begin(), text.end()));
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
}

TEST(ModuleImageTest, EveryTruncationFailsCleanly) {
  std::vector<uint8_t> bytes = testing::TestModuleBytes();
  // Every length below the full size is DATA_LOSS: the trailer no longer
  // ends the file (or its recorded size is wrong). A FlatBuffer may end in
  // padding, so without the trailer some truncations would load.
  size_t step = bytes.size() > 4096 ? 7 : 1;
  for (size_t length = 0; length < bytes.size(); length += step) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + length);
    LoadResult result = Load(truncated);
    EXPECT_EQ(result.code, KILN_STATUS_DATA_LOSS) << "length " << length;
  }
  // Truncated contents sealed again reach the FlatBuffer verifier, which
  // must refuse or accept cleanly, never crash (ASan/UBSan builds check).
  const size_t content = bytes.size() - module_trailer::kSize;
  for (size_t length = 0; length < content; length += step) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + length);
    Load(testing::Seal(truncated));
  }
}

TEST(ModuleImageTest, ExtendedFileIsDataLoss) {
  std::vector<uint8_t> bytes = testing::TestModuleBytes();
  bytes.insert(bytes.end(), 16, 0);
  LoadResult result = Load(bytes);
  EXPECT_EQ(result.code, KILN_STATUS_DATA_LOSS);
  EXPECT_NE(result.message.find("integrity trailer"), std::string::npos)
      << result.message;
  // A trailer whose recorded size is not the file's (a file spliced from
  // two).
  std::vector<uint8_t> spliced = testing::TestModuleBytes();
  spliced[spliced.size() - module_trailer::kSize] ^= 8;
  result = Load(spliced);
  EXPECT_EQ(result.code, KILN_STATUS_DATA_LOSS);
  EXPECT_NE(result.message.find("trailer records"), std::string::npos)
      << result.message;
}

TEST(ModuleImageTest, ChecksumIsCrc32c) {
  // The standard check value of CRC-32C, on both implementations.
  EXPECT_EQ(module_trailer::Crc32c("123456789", 9), 0xE3069283u);
  const uint8_t* digits = reinterpret_cast<const uint8_t*>("123456789");
  EXPECT_EQ(~module_trailer::detail::Crc32cSoftware(0xFFFFFFFFu, digits, 9),
            0xE3069283u);
  // Lengths and alignments around the 8-byte steps agree too.
  std::vector<uint8_t> data(1000);
  std::mt19937 random(7);
  for (uint8_t& byte : data) byte = static_cast<uint8_t>(random());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t length : {0, 1, 7, 8, 9, 15, 16, 17, 100, 991}) {
      EXPECT_EQ(module_trailer::Crc32c(data.data() + start, length),
                ~module_trailer::detail::Crc32cSoftware(
                    0xFFFFFFFFu, data.data() + start, length))
          << start << "+" << length;
    }
  }
}

TEST(ModuleImageTest, ByteFlipsAreDataLoss) {
  std::vector<uint8_t> bytes = testing::TestModuleBytes();
  std::mt19937 random(99);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> corrupt = bytes;
    int flips = 1 + trial % 3;  // CRC-32C detects every error of <= 3 bits
    for (int f = 0; f < flips; ++f) {
      corrupt[random() % corrupt.size()] ^=
          static_cast<uint8_t>(1u << (random() % 8));
    }
    if (corrupt == bytes) continue;  // two flips of one bit cancelled
    LoadResult result = Load(corrupt);
    // A flip in the identifier makes it a foreign file; any other is named
    // as damage.
    if (result.code == KILN_STATUS_INVALID_ARGUMENT) {
      EXPECT_NE(result.message.find("not a Kiln module"), std::string::npos)
          << result.message;
    } else {
      EXPECT_EQ(result.code, KILN_STATUS_DATA_LOSS) << "trial " << trial;
    }
  }
  // One flipped byte inside the embedded kernel object (once a SIGSEGV on
  // `local`) is caught before anything is mapped.
  std::vector<uint8_t> kernel = testing::TestKernelBinary();
  auto at = std::search(bytes.begin(), bytes.end(), kernel.begin(),
                        kernel.begin() + 64);
  ASSERT_NE(at, bytes.end());
  at[kernel.size() / 2] ^= 0x10;
  LoadResult result = Load(bytes);
  EXPECT_EQ(result.code, KILN_STATUS_DATA_LOSS);
  EXPECT_NE(result.message.find("CRC-32C"), std::string::npos)
      << result.message;
}

TEST(ModuleImageTest, ModulesWithoutATrailerAreRefused) {
  std::vector<uint8_t> bytes =
      testing::SerializeContents(*testing::BuildTestModule());
  LoadResult result = Load(bytes);
  EXPECT_EQ(result.code, KILN_STATUS_DATA_LOSS);
  EXPECT_NE(result.message.find("recompiled"), std::string::npos)
      << result.message;
}

// Flips behind the checksum (sealed again) reach the verifier, which must
// refuse them cleanly or accept them, never crash.
TEST(ModuleImageTest, ByteFlipsNeverCrash) {
  std::vector<uint8_t> bytes =
      testing::SerializeContents(*testing::BuildTestModule());
  std::mt19937 random(1234);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> corrupt = bytes;
    int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f) {
      // Bias towards the FlatBuffer tables (the first KiB holds the root,
      // vtables and most offsets; the kernel binary is mostly opaque data).
      size_t limit = trial % 2 ? corrupt.size() : std::min<size_t>(1024, corrupt.size());
      corrupt[random() % limit] ^= static_cast<uint8_t>(1u << (random() % 8));
    }
    LoadResult result = Load(testing::Seal(corrupt));
    if (result.code != KILN_STATUS_OK) {
      ++rejected;
      EXPECT_FALSE(result.message.empty());
    }
  }
  // Many flips land in data (binaries, names) and are harmless; some must
  // hit the structure.
  EXPECT_GT(rejected, 0);
}

TEST(ModuleImageTest, VersionMismatchIsIncompatible) {
  LoadResult result = LoadModified([](ModuleT* m) { m->version = 99; });
  EXPECT_EQ(result.code, KILN_STATUS_INCOMPATIBLE);
  EXPECT_NE(result.message.find("version 99"), std::string::npos)
      << result.message;
}

TEST(ModuleImageTest, OutOfRangeInputIndexIsRejected) {
  LoadResult result = LoadModified([](ModuleT* m) {
    auto& dispatch = *m->functions[0]->commands[0]->command.AsDispatchCommand();
    dispatch.bindings[1] = BufferRef(BufferSpace::Input, 5, 0, 24);
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("function 'add' command 0 (dispatch): "
                                "binding 1 refers to input 5"),
            std::string::npos)
      << result.message;
}

TEST(ModuleImageTest, BufferRefBeyondItsSpaceIsRejected) {
  LoadResult result = LoadModified([](ModuleT* m) {
    auto& dispatch = *m->functions[0]->commands[0]->command.AsDispatchCommand();
    dispatch.bindings[2] = BufferRef(BufferSpace::Output, 0, 8, 24);
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("outside"), std::string::npos) << result.message;

  result = LoadModified([](ModuleT* m) {
    auto& copy = *m->functions[1]->commands[0]->command.AsCopyCommand();
    copy.target = std::make_unique<BufferRef>(BufferSpace::Transient, 0, 48, 24);
    copy.source = std::make_unique<BufferRef>(BufferSpace::Input, 0, 0, 24);
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT) << result.message;

  result = LoadModified([](ModuleT* m) {
    auto& dispatch = *m->functions[1]->commands[2]->command.AsDispatchCommand();
    dispatch.bindings[1] = BufferRef(BufferSpace::Rodata, 0, 0, 25);
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT) << result.message;

  // Offset + length overflowing 64 bits.
  result = LoadModified([](ModuleT* m) {
    auto& dispatch = *m->functions[0]->commands[0]->command.AsDispatchCommand();
    dispatch.bindings[0] = BufferRef(BufferSpace::Input, 0, ~uint64_t{0}, 2);
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT) << result.message;
}

TEST(ModuleImageTest, BadIndicesAreRejected) {
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              m->functions[0]->commands[0]->command.AsDispatchCommand()
                  ->executable = 3;
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              m->functions[0]->commands[0]->command.AsDispatchCommand()
                  ->export_ = 2;
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              auto& d = *m->functions[1]->commands[2]->command.AsDispatchCommand();
              d.bindings[1] = BufferRef(BufferSpace::Rodata, 1, 0, 4);
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
  // Binding count disagreeing with the export.
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              m->functions[0]->commands[0]->command.AsDispatchCommand()
                  ->bindings.pop_back();
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
  // Collective on a channel that does not exist.
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              CollectiveCommandT collective;
              collective.element_type = ElementType::F32;
              collective.send = std::make_unique<BufferRef>(BufferSpace::Input, 0, 0, 24);
              collective.recv = std::make_unique<BufferRef>(BufferSpace::Output, 0, 0, 24);
              collective.channel = 0;
              auto entry = std::make_unique<CommandEntryT>();
              entry->command.Set(std::move(collective));
              m->functions[0]->commands.push_back(std::move(entry));
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
}

TEST(ModuleImageTest, BadTypesAndShapesAreRejected) {
  LoadResult result = LoadModified([](ModuleT* m) {
    m->functions[0]->inputs[0]->element_type = ElementType::Invalid;
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("invalid element type"), std::string::npos);
  result = LoadModified([](ModuleT* m) {
    m->functions[0]->inputs[0]->element_type = static_cast<ElementType>(200);
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  result = LoadModified(
      [](ModuleT* m) { m->functions[0]->inputs[0]->shape = {2, -3}; });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("negative"), std::string::npos);
  // Product overflowing 64 bits.
  result = LoadModified([](ModuleT* m) {
    m->functions[0]->inputs[0]->shape = {int64_t{1} << 40, int64_t{1} << 40};
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
}

LoadResult LoadParameterModified(void (*modify)(ModuleT*)) {
  auto module = testing::BuildParameterTestModule();
  modify(module.get());
  return Load(testing::Serialize(*module));
}

TEST(ModuleImageTest, ParameterRodataIsChecked) {
  // A parameter's size is its type's: add_bias's 24-byte reads fit.
  LoadResult result = LoadParameterModified([](ModuleT*) {});
  EXPECT_EQ(result.code, KILN_STATUS_OK) << result.message;
  result = LoadParameterModified([](ModuleT* m) {
    m->rodata[0]->parameter->type->shape = {2, 2};
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("outside its Rodata 0 of 16 bytes"),
            std::string::npos)
      << result.message;
  result = LoadParameterModified(
      [](ModuleT* m) { m->rodata[0]->parameter->name.clear(); });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("rodata 0 is a parameter with an empty name"),
            std::string::npos)
      << result.message;
  result = LoadParameterModified([](ModuleT* m) {
    m->rodata[0]->parameter->name = std::string("a\0b", 3);
  });
  EXPECT_NE(result.message.find("NUL"), std::string::npos) << result.message;
  result = LoadParameterModified(
      [](ModuleT* m) { m->rodata[0]->data.assign(24, 0); });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("is parameter 'bias' but also holds 24 bytes"),
            std::string::npos)
      << result.message;
  result = LoadParameterModified([](ModuleT* m) {
    m->rodata[0]->parameter->type->element_type = ElementType::Invalid;
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("(parameter 'bias') has invalid element type"),
            std::string::npos)
      << result.message;
  result = LoadParameterModified([](ModuleT* m) {
    m->rodata[0]->parameter->type->shape = {int64_t{1} << 40, -1};
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("negative dimension"), std::string::npos)
      << result.message;
  result = LoadParameterModified(
      [](ModuleT* m) { m->rodata[0]->parameter->type->shape.assign(17, 1); });
  EXPECT_NE(result.message.find("rank 17"), std::string::npos)
      << result.message;
}

TEST(ModuleImageTest, WorkgroupCountNeedsThreeEntries) {
  LoadResult result = LoadModified([](ModuleT* m) {
    m->executables[0]->variants[1]->exports[0]->workgroup_count = {4, 1};
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("workgroup count"), std::string::npos)
      << result.message;
}

// A workgroup count of 0 would leave the outputs uninitialized; one that
// the bindings cannot account for (2 -> 4 over 24-byte tensors passes the
// bound; 6.5e8 does not) would run past them; three large counts once
// overflowed the verifier's 64-bit product.
TEST(ModuleImageTest, WorkgroupCountsAreBoundedByTheBindings) {
  LoadResult result = LoadModified([](ModuleT* m) {
    m->executables[0]->variants[1]->exports[0]->workgroup_count = {2, 1, 0};
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("workgroup count of 0 in dimension 2"),
            std::string::npos)
      << result.message;
  result = LoadModified([](ModuleT* m) {
    m->executables[0]->variants[0]->exports[0]->workgroup_count = {0, 1, 1};
  });
  EXPECT_NE(result.message.find("workgroup count of 0 in dimension 0"),
            std::string::npos)
      << result.message;
  // Only the host variant's grid is too large: still refused.
  result = LoadModified([](ModuleT* m) {
    m->executables[0]->variants[1]->exports[0]->workgroup_count = {
        650000000, 1, 1};
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("at most one workgroup per byte"),
            std::string::npos)
      << result.message;
  // Just at the bound (24-byte bindings) loads; one past does not.
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              for (auto& variant : m->executables[0]->variants) {
                variant->exports[0]->workgroup_count = {2, 3, 4};
              }
            }).code,
            KILN_STATUS_OK);
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              for (auto& variant : m->executables[0]->variants) {
                variant->exports[0]->workgroup_count = {5, 5, 1};
              }
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
  // (2^32 - 1)^3 wraps a 64-bit product to a small number.
  result = LoadModified([](ModuleT* m) {
    m->executables[0]->variants[1]->exports[0]->workgroup_count = {
        0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("4294967295 x 4294967295 x 4294967295"),
            std::string::npos)
      << result.message;
}

TEST(ModuleImageTest, StructuralProblemsAreRejected) {
  // No variants.
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              m->executables[0]->variants.clear();
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
  // Duplicate function names.
  EXPECT_EQ(LoadModified([](ModuleT* m) { m->functions[1]->name = "add"; })
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  // Fill pattern of 3 bytes.
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              m->functions[2]->commands[0]->command.AsFillCommand()->pattern =
                  {1, 2, 3};
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
  // Writing into an input.
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              auto& copy = *m->functions[1]->commands[0]->command.AsCopyCommand();
              copy.target = std::make_unique<BufferRef>(BufferSpace::Input, 0, 0, 24);
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
  // Transient alignment not a power of two.
  EXPECT_EQ(LoadModified([](ModuleT* m) {
              m->functions[1]->transient_alignment = 48;
            }).code,
            KILN_STATUS_INVALID_ARGUMENT);
}

// Every input that once made the module fuzzer fail (kept in
// tests/fuzz/regressions/module, named for the defect) is refused cleanly.
TEST(ModuleImageTest, FuzzerFindingsAreRejected) {
  const std::string dir = KILN_FUZZ_MODULE_REGRESSIONS;
  const std::pair<const char*, const char*> findings[] = {
      {"function-name-with-nul", "contains a NUL byte"},
      {"misaligned-dispatch-bindings", "misaligned bindings"},
  };
  for (const auto& [file, fragment] : findings) {
    // Fuzz inputs are contents; the harness seals them (module_fuzzer.cc).
    std::vector<uint8_t> bytes = testing::ReadFileBytes(dir + "/" + file);
    ASSERT_FALSE(bytes.empty()) << file;
    LoadResult result = Load(testing::Seal(bytes));
    EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT) << file;
    EXPECT_NE(result.message.find(fragment), std::string::npos)
        << file << ": " << result.message;
  }
}

// Found by the module fuzzer (tests/fuzz/regressions/module): names are C
// strings to every user, so a NUL inside one is refused. "add\0x" could not
// be looked up and printed as a second "add".
TEST(ModuleImageTest, NamesWithANulByteAreRejected) {
  LoadResult result = LoadModified([](ModuleT* m) {
    m->functions[1]->name = std::string("add\0x", 5);
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("function 1's name 'add' contains a NUL byte"),
            std::string::npos)
      << result.message;
  result = LoadModified([](ModuleT* m) {
    for (auto& variant : m->executables[0]->variants) {
      variant->exports[0]->name = std::string("add_f32\0evil", 12);
    }
  });
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("export 0's name 'add_f32' contains a NUL"),
            std::string::npos)
      << result.message;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Loads the SPMD test module for a 2x2 grid after |modify|.
LoadResult LoadSpmdModified(void (*modify)(ModuleT*)) {
  auto module = testing::BuildSpmdModule({2, 2});
  modify(module.get());
  return Load(testing::Serialize(*module));
}

// Function |name| of an SPMD test module.
FunctionT* Find(ModuleT* m, const char* name) {
  for (auto& function : m->functions) {
    if (function->name == name) return function.get();
  }
  return nullptr;
}

CollectiveCommandT* FirstCollective(FunctionT* function) {
  for (auto& entry : function->commands) {
    if (auto* collective = entry->command.AsCollectiveCommand()) return collective;
  }
  return nullptr;
}

void ExpectRejected(const LoadResult& result, const char* fragment) {
  EXPECT_EQ(result.code, KILN_STATUS_INVALID_ARGUMENT) << result.message;
  EXPECT_NE(result.message.find(fragment), std::string::npos)
      << "expected '" << fragment << "' in: " << result.message;
}

TEST(ModuleVerifierSpmdTest, SpmdModuleLoads) {
  std::shared_ptr<const ModuleImage> image;
  LoadResult result = Load(
      testing::Serialize(*testing::BuildSpmdModule({2, 2})), &image);
  ASSERT_EQ(result.code, KILN_STATUS_OK) << result.message;
  int index = image->FindFunction("column_gather");
  ASSERT_GE(index, 0);
  EXPECT_EQ(image->functions()[index].function->channels()->size(), 1u);
}

TEST(ModuleVerifierSpmdTest, ChannelGridsAreChecked) {
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   Find(m, "all_reduce")->channels[0]->grid_shape.clear();
                 }),
                 "function 'all_reduce' channel 0 has a grid of rank 0");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   Find(m, "all_reduce")->channels[0]->grid_shape = {2, 0};
                 }),
                 "grid axis 1 has extent 0");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   Find(m, "all_reduce")->channels[0]->grid_shape = {-2, -2};
                 }),
                 "grid axis 0 has extent -2");
  // A product beyond 65536 ranks (and one that would overflow int64).
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   Find(m, "all_reduce")->channels[0]->grid_shape = {512, 512};
                 }),
                 "at most 65536 ranks");
  ExpectRejected(
      LoadSpmdModified([](ModuleT* m) {
        Find(m, "all_reduce")->channels[0]->grid_shape = {
            int64_t{1} << 40, int64_t{1} << 40};
      }),
      "at most 65536 ranks");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   Find(m, "row_sum")->channels[0]->axes = {2};
                 }),
                 "function 'row_sum' channel 0 has axis 2 (the grid has axes "
                 "0..1)");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   Find(m, "row_sum")->channels[0]->axes = {-1};
                 }),
                 "has axis -1");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   Find(m, "all_reduce")->channels[0]->axes = {1, 1};
                 }),
                 "lists axis 1 twice");
  // The channels of one function share its grid.
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   auto channel = std::make_unique<ChannelT>();
                   channel->grid_shape = {8};
                   channel->axes = {0};
                   Find(m, "all_reduce")->channels.push_back(std::move(channel));
                 }),
                 "channel 1 has a grid of 8 ranks but channel 0 has 4");
}

TEST(ModuleVerifierSpmdTest, CollectiveRangesMatchTheirOp) {
  // all_gather of 2 over 4 ranks receives 8 elements (32 bytes).
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   *FirstCollective(Find(m, "all_gather"))->recv =
                       BufferRef(BufferSpace::Output, 0, 0, 16);
                 }),
                 "AllGather of 2 F32 over 4 ranks sends 8 and receives 32 "
                 "bytes, but the send range has 8 and the recv range 16");
  // The element count must match the send range.
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   FirstCollective(Find(m, "all_reduce"))->element_count = 3;
                 }),
                 "sends 12 and receives 12 bytes");
  // Over the row channel (2 ranks) row_sum's reduce_scatter variant.
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   auto* c = FirstCollective(Find(m, "reduce_scatter"));
                   c->element_count = 6;
                   *c->send = BufferRef(BufferSpace::Input, 0, 0, 24);
                 }),
                 "ReduceScatter of 6 elements does not split evenly over the "
                 "4 ranks of channel 0");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   FirstCollective(Find(m, "broadcast"))->root = 4;
                 }),
                 "broadcast root 4 is not a rank of channel 0 (4 ranks)");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   FirstCollective(Find(m, "all_reduce"))->reduction =
                       ReductionOp::None;
                 }),
                 "AllReduce with reduction None (it needs one)");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   FirstCollective(Find(m, "all_gather"))->reduction =
                       ReductionOp::Max;
                 }),
                 "only reductions take one");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   FirstCollective(Find(m, "all_reduce"))->op =
                       static_cast<CollectiveOp>(9);
                 }),
                 "unknown collective op 9");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   FirstCollective(Find(m, "all_reduce"))->element_type =
                       ElementType::Invalid;
                 }),
                 "invalid element type 0");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   auto* c = FirstCollective(Find(m, "all_reduce"));
                   *c->recv = BufferRef(BufferSpace::Input, 0, 0, 16);
                 }),
                 "recv buffer is read-only (Input)");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   FirstCollective(Find(m, "all_reduce"))->channel = 1;
                 }),
                 "channel 1 out of range (the function has 1 channels)");
  // Overflowing byte counts.
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   FirstCollective(Find(m, "all_gather"))->element_count =
                       ~uint64_t{0} / 2;
                 }),
                 "overflows");
}

// Adds window {channel 0, 64 bytes, 3 signal slots} to the all_reduce
// function and a copy of 8 bytes from its input into |target|.
void AddWindowAndCopy(ModuleT* m, BufferSpace space, uint32_t index) {
  FunctionT* function = Find(m, "all_reduce");
  auto window = std::make_unique<WindowT>();
  window->channel = 0;
  window->size = 64;
  window->signal_count = 3;
  function->windows.push_back(std::move(window));
  CopyCommandT copy;
  copy.source = std::make_unique<BufferRef>(BufferSpace::Input, 0, 0, 8);
  copy.target = std::make_unique<BufferRef>(space, index, 0, 8);
  auto entry = std::make_unique<CommandEntryT>();
  entry->command.Set(std::move(copy));
  function->commands.push_back(std::move(entry));
}

TEST(ModuleVerifierSpmdTest, WindowsAreChecked) {
  // A window's data and signals may be written; the peer table is the
  // driver's.
  EXPECT_EQ(LoadSpmdModified([](ModuleT* m) {
              AddWindowAndCopy(m, BufferSpace::WindowData, 0);
            }).code,
            KILN_STATUS_OK);
  EXPECT_EQ(LoadSpmdModified([](ModuleT* m) {
              AddWindowAndCopy(m, BufferSpace::WindowSignals, 0);
            }).code,
            KILN_STATUS_OK);
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   AddWindowAndCopy(m, BufferSpace::WindowPeers, 0);
                 }),
                 "target is read-only (WindowPeers)");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   AddWindowAndCopy(m, BufferSpace::WindowData, 1);
                 }),
                 "refers to window 1 but the function has 1 windows");
  // Ranges: 64 data bytes, 3 x 8 signal bytes, 2 x 4 x 8 + 8 peer-table bytes.
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   AddWindowAndCopy(m, BufferSpace::WindowSignals, 0);
                   Find(m, "all_reduce")
                       ->commands.back()
                       ->command.AsCopyCommand()
                       ->target = std::make_unique<BufferRef>(
                       BufferSpace::WindowSignals, 0, 20, 8);
                 }),
                 "is outside its WindowSignals 0 of 24 bytes");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   AddWindowAndCopy(m, BufferSpace::WindowData, 0);
                   Find(m, "all_reduce")->windows[0]->channel = 1;
                 }),
                 "window 0 is over channel 1, but the function has 1 "
                 "channels");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   AddWindowAndCopy(m, BufferSpace::WindowData, 0);
                   Find(m, "all_reduce")->windows[0]->size = 0;
                 }),
                 "window 0 has 0 data bytes");
  ExpectRejected(LoadSpmdModified([](ModuleT* m) {
                   AddWindowAndCopy(m, BufferSpace::WindowData, 0);
                   Find(m, "all_reduce")->windows[0]->signal_count =
                       (1u << 20) + 1;
                 }),
                 "1048577 signal slots");
}

TEST(ModuleVerifierSpmdTest, ByteFlipsOfSpmdModulesNeverCrash) {
  std::vector<uint8_t> bytes =
      testing::SerializeContents(*testing::BuildSpmdModule({2, 2}));
  std::mt19937 random(4321);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> corrupt = bytes;
    for (int f = 0; f < 1 + trial % 4; ++f) {
      // The function tables (channels, collectives) come first.
      size_t limit = std::min<size_t>(2048, corrupt.size());
      corrupt[random() % limit] ^= static_cast<uint8_t>(1u << (random() % 8));
    }
    LoadResult result = Load(testing::Seal(corrupt));
    if (result.code != KILN_STATUS_OK) {
      ++rejected;
      EXPECT_FALSE(result.message.empty());
    }
  }
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace kiln
