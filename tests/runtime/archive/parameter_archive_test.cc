// The parameter archive reader (runtime/src/archive/parameter_archive.h) on
// archives written here byte by byte: .npz (stored and deflated members) and
// safetensors files, every truncation and single-byte corruption of them.
// Each is read or refused with a message, never a crash or an out-of-bounds
// read (CI runs the runtime tests under ASan too).
#include "archive/parameter_archive.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "archive/test_archives.h"

namespace {

using kiln::archive::ArchiveTensor;
using kiln::archive::ParameterArchive;
using kiln::archive::ReadParameterArchive;
using kiln::testing::Npy;
using kiln::testing::Safetensors;
using kiln::testing::Zip;

std::string Floats(std::initializer_list<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

std::string Bytes(const ArchiveTensor& tensor) {
  return std::string(reinterpret_cast<const char*>(tensor.data), tensor.size);
}

// Reads |bytes| (kept alive by the caller); "" or the error.
std::string Read(const std::string& bytes, ParameterArchive* archive) {
  return ReadParameterArchive(reinterpret_cast<const uint8_t*>(bytes.data()),
                              bytes.size(), "test", archive);
}

std::string Message(const std::string& bytes) {
  ParameterArchive archive;
  std::string error = Read(bytes, &archive);
  return error.empty() ? "read" : error;
}

const std::vector<std::pair<std::string, std::string>> kMembers = {
    {"w.npy", Npy("<f4", "(2, 3)", Floats({1, 2, 3, 4, 5, 6}))},
    {"b.npy", Npy("<i2", "(3,)", std::string("\x01\x00\x02\x00\xff\xff", 6))},
    {"s.npy", Npy("|u1", "()", std::string("\x2a", 1))},
    {"notes.txt", "not a tensor"}};

TEST(ParameterArchiveTest, ReadsStoredAndDeflatedMembers) {
  for (bool deflated : {false, true}) {
    std::string bytes = Zip(kMembers, deflated);
    ParameterArchive archive;
    ASSERT_EQ(Read(bytes, &archive), "");
    EXPECT_EQ(archive.format, "npz");
    ASSERT_EQ(archive.tensors.size(), 3u);  // notes.txt is no tensor
    const ArchiveTensor& w = archive.tensors["w"];
    EXPECT_EQ(w.dtype, "F32");
    EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(Bytes(w), Floats({1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(archive.tensors["b"].dtype, "I16");
    EXPECT_EQ(archive.tensors["b"].size, 6u);
    EXPECT_EQ(archive.tensors["s"].dtype, "U8");
    EXPECT_TRUE(archive.tensors["s"].shape.empty());
    EXPECT_EQ(Bytes(archive.tensors["s"]), "\x2a");
  }
}

TEST(ParameterArchiveTest, RefusesEveryTruncation) {
  for (bool deflated : {false, true}) {
    std::string bytes = Zip(kMembers, deflated);
    for (size_t size = 0; size < bytes.size(); ++size) {
      // Without its end record no prefix is a zip; the short ones are not
      // safetensors files either.
      std::string message = Message(bytes.substr(0, size));
      EXPECT_NE(message.find("parameter archive 'test'"), std::string::npos)
          << "prefix of " << size << " bytes: " << message;
    }
  }
}

TEST(ParameterArchiveTest, SurvivesEveryCorruptedByte) {
  for (bool deflated : {false, true}) {
    std::string bytes = Zip(kMembers, deflated);
    size_t accepted = 0, refused = 0;
    for (size_t at = 0; at < bytes.size(); ++at) {
      for (uint8_t flip : {0x01, 0x80, 0xFF}) {
        std::string corrupted = bytes;
        corrupted[at] = char(uint8_t(corrupted[at]) ^ flip);
        ParameterArchive archive;
        if (!Read(corrupted, &archive).empty()) {
          ++refused;
          continue;
        }
        ++accepted;
        // Whatever was read is consistent with the buffers it points into.
        for (const auto& entry : archive.tensors)
          EXPECT_LE(entry.second.size, corrupted.size() * 64);
      }
    }
    // Damage to the data is caught by the CRC; only bytes that do not
    // matter (e.g. times, attributes, padding) leave a readable archive.
    EXPECT_GT(refused, accepted);
  }
}

TEST(ParameterArchiveTest, NamesWhatIsWrongInAnNpz) {
  std::string fortran = Npy("<f4", "(2,)", Floats({1, 2}));
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_NE(Message(Zip({{"f.npy", fortran}}, false)).find("Fortran"),
            std::string::npos);
  EXPECT_NE(Message(Zip({{"c.npy", Npy("<c8", "(1,)", Floats({1, 2}))}}, false))
                .find("'<c8'"),
            std::string::npos);
  EXPECT_NE(Message(Zip({{"s.npy", Npy("<f4", "(3,)", Floats({1, 2}))}}, false))
                .find("8 bytes of data; its shape and type need 12"),
            std::string::npos);
  EXPECT_NE(Message(Zip({{"a.npy", Npy("<f4", "(1,)", Floats({1}))},
                         {"a.npy", Npy("<f4", "(1,)", Floats({2}))}},
                        true))
                .find("a second member of that name"),
            std::string::npos);
  // A deflated member claiming more than deflate can produce is refused
  // before anything is allocated for it.
  std::string huge = Zip({{"h.npy", Npy("<f4", "(1,)", Floats({1}))}}, true);
  size_t directory = huge.find(std::string("\x50\x4b\x01\x02", 4));
  huge.replace(directory + 24, 4, std::string("\xff\xff\xff\x7f", 4));
  EXPECT_NE(Message(huge).find("cannot come from its"), std::string::npos);
}

const char kHeader[] =
    R"({"__metadata__": {"format": "pt"},)"
    R"( "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},)"
    R"( "b\u00e9": {"dtype": "BF16", "shape": [], "data_offsets": [24, 26]}})";

TEST(ParameterArchiveTest, ReadsSafetensors) {
  std::string data = Floats({1, 2, 3, 4, 5, 6}) + std::string("\x80\x3f", 2);
  std::string bytes = Safetensors(kHeader, data);
  ParameterArchive archive;
  ASSERT_EQ(Read(bytes, &archive), "");
  EXPECT_EQ(archive.format, "safetensors");
  ASSERT_EQ(archive.tensors.size(), 2u);
  EXPECT_EQ(archive.tensors["w"].dtype, "F32");
  EXPECT_EQ(archive.tensors["w"].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Bytes(archive.tensors["w"]), Floats({1, 2, 3, 4, 5, 6}));
  // \u escapes become UTF-8.
  const ArchiveTensor& b = archive.tensors["b\xc3\xa9"];
  EXPECT_EQ(b.dtype, "BF16");
  EXPECT_TRUE(b.shape.empty());
  EXPECT_EQ(Bytes(b), std::string("\x80\x3f", 2));
}

TEST(ParameterArchiveTest, NamesWhatIsWrongInSafetensors) {
  std::string data = Floats({1, 2, 3, 4, 5, 6});
  auto message = [&](const std::string& header) {
    return Message(Safetensors(header, data));
  };
  EXPECT_NE(message("[1]").find("its header is not a JSON object"),
            std::string::npos);
  EXPECT_NE(message(R"({"w": 1})").find("entry 'w' is not an object"),
            std::string::npos);
  EXPECT_NE(message(R"({"w": {"dtype": "F32"}})").find("lacks dtype, shape"),
            std::string::npos);
  EXPECT_NE(message(R"({"w": {"dtype": "F32", "shape": [-1],)"
                    R"( "data_offsets": [0, 4]}})")
                .find("bad shape"),
            std::string::npos);
  EXPECT_NE(message(R"({"w": {"dtype": "F32", "shape": [1.5],)"
                    R"( "data_offsets": [0, 4]}})")
                .find("bad shape"),
            std::string::npos);
  EXPECT_NE(message(R"({"w": {"dtype": "F32", "shape": [7],)"
                    R"( "data_offsets": [0, 28]}})")
                .find("data offsets outside the 24 bytes of data"),
            std::string::npos);
  EXPECT_NE(message(R"({"w": {"dtype": "F32", "shape": [1],)"
                    R"( "data_offsets": [0, 99999999999999999999]}})")
                .find("data offsets outside"),
            std::string::npos);
  std::string entry =
      R"({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  EXPECT_NE(message(R"({"w": )" + entry + R"(, "w": )" + entry + "}")
                .find("names 'w' twice"),
            std::string::npos);
  EXPECT_NE(message(R"({"w": "unterminated)").find("not JSON"),
            std::string::npos);
  EXPECT_NE(message(R"({"w": "\ud800"})").find("lone surrogate"),
            std::string::npos);
  EXPECT_NE(message(R"({"a": 1} x)").find("text after the JSON value"),
            std::string::npos);
  // Nesting is bounded instead of exhausting the stack.
  EXPECT_NE(message(std::string(100000, '[')).find("nesting deeper"),
            std::string::npos);
}

TEST(ParameterArchiveTest, SafetensorsSurviveEveryTruncationAndCorruption) {
  std::string data = Floats({1, 2, 3, 4, 5, 6}) + std::string("\x80\x3f", 2);
  std::string bytes = Safetensors(kHeader, data);
  for (size_t size = 0; size < bytes.size(); ++size) {
    ParameterArchive archive;
    std::string prefix = bytes.substr(0, size);
    if (Read(prefix, &archive).empty()) {
      for (const auto& entry : archive.tensors)
        EXPECT_LE(entry.second.data + entry.second.size,
                  reinterpret_cast<const uint8_t*>(prefix.data()) + size);
    }
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t flip : {0x01, 0x20, 0x80}) {
      std::string corrupted = bytes;
      corrupted[at] = char(uint8_t(corrupted[at]) ^ flip);
      ParameterArchive archive;
      if (!Read(corrupted, &archive).empty()) continue;
      for (const auto& entry : archive.tensors)
        EXPECT_LE(entry.second.data + entry.second.size,
                  reinterpret_cast<const uint8_t*>(corrupted.data()) +
                      corrupted.size());
    }
  }
}

}  // namespace
