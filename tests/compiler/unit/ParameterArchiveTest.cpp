// The .npz reader of kiln-bind-parameters (ParameterArchive.h) on archives
// written here byte by byte (stored and deflated members), and on every
// truncation and single-byte corruption of them: each is read or refused
// with a message, never a crash or an out-of-bounds read (CI runs the
// compiler tests under the sanitizers' fuzzing stage too).

#include "ParameterArchive.h"

#include <gtest/gtest.h>

#include "llvm/Support/MemoryBuffer.h"

#include <cstring>
#include <string>
#include <vector>

#include <zlib.h>

using namespace mlir::kiln;

namespace {

void put16(std::string &out, uint16_t v) {
  out.push_back(char(v & 0xFF));
  out.push_back(char(v >> 8));
}
void put32(std::string &out, uint32_t v) {
  put16(out, uint16_t(v & 0xFFFF));
  put16(out, uint16_t(v >> 16));
}

// An .npy (version 1.0) of `descr` and `shape` holding `data`.
std::string npy(const std::string &descr, const std::string &shape,
                const std::string &data) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0)
    header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  put16(out, uint16_t(header.size()));
  return out + header + data;
}

std::string deflateRaw(const std::string &in) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&s, uLong(in.size())), '\0');
  s.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  s.avail_in = uInt(in.size());
  s.next_out = reinterpret_cast<Bytef *>(out.data());
  s.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// A zip of `members` (name, contents), stored or deflated.
std::string zip(const std::vector<std::pair<std::string, std::string>> &members,
                bool deflated) {
  std::string out, directory;
  for (const auto &[name, contents] : members) {
    std::string packed = deflated ? deflateRaw(contents) : contents;
    uint32_t crc = uint32_t(crc32_z(
        0, reinterpret_cast<const Bytef *>(contents.data()), contents.size()));
    uint32_t offset = uint32_t(out.size());
    put32(out, 0x04034b50);
    put16(out, 20);
    put16(out, 0);
    put16(out, deflated ? 8 : 0);
    put32(out, 0); // time, date
    put32(out, crc);
    put32(out, uint32_t(packed.size()));
    put32(out, uint32_t(contents.size()));
    put16(out, uint16_t(name.size()));
    put16(out, 0);
    out += name + packed;
    put32(directory, 0x02014b50);
    put16(directory, 20);
    put16(directory, 20);
    put16(directory, 0);
    put16(directory, deflated ? 8 : 0);
    put32(directory, 0);
    put32(directory, crc);
    put32(directory, uint32_t(packed.size()));
    put32(directory, uint32_t(contents.size()));
    put16(directory, uint16_t(name.size()));
    put32(directory, 0); // extra and comment lengths
    put32(directory, 0); // disk, internal attributes
    put32(directory, 0); // external attributes
    put32(directory, offset);
    directory += name;
  }
  uint32_t start = uint32_t(out.size());
  out += directory;
  put32(out, 0x06054b50);
  put32(out, 0);
  put16(out, uint16_t(members.size()));
  put16(out, uint16_t(members.size()));
  put32(out, uint32_t(directory.size()));
  put32(out, start);
  put16(out, 0);
  return out;
}

std::string floats(std::initializer_list<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

class ParameterArchiveTest : public ::testing::Test {
protected:
  llvm::Expected<ParameterArchive> read(const std::string &bytes) {
    return readParameterArchive(
        llvm::MemoryBuffer::getMemBufferCopy(bytes, "test.npz"), "test.npz");
  }
};

const std::vector<std::pair<std::string, std::string>> kMembers = {
    {"w.npy", npy("<f4", "(2, 3)", floats({1, 2, 3, 4, 5, 6}))},
    {"b.npy", npy("<i2", "(3,)", std::string("\x01\x00\x02\x00\xff\xff", 6))},
    {"s.npy", npy("|u1", "()", std::string("\x2a", 1))},
    {"notes.txt", "not a tensor"}};

TEST_F(ParameterArchiveTest, ReadsStoredAndDeflatedMembers) {
  for (bool deflated : {false, true}) {
    llvm::Expected<ParameterArchive> archive = read(zip(kMembers, deflated));
    ASSERT_TRUE(bool(archive)) << llvm::toString(archive.takeError());
    EXPECT_EQ(archive->format, "npz");
    ASSERT_EQ(archive->tensors.size(), 3u); // notes.txt is no tensor
    const ArchiveTensor &w = archive->tensors["w"];
    EXPECT_EQ(w.dtype, "F32");
    EXPECT_EQ(std::vector<int64_t>(w.shape.begin(), w.shape.end()),
              (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(w.data.str(), floats({1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(archive->tensors["b"].dtype, "I16");
    EXPECT_EQ(archive->tensors["b"].data.size(), 6u);
    EXPECT_EQ(archive->tensors["s"].dtype, "U8");
    EXPECT_TRUE(archive->tensors["s"].shape.empty());
    EXPECT_EQ(archive->tensors["s"].data.str(), "\x2a");
  }
}

TEST_F(ParameterArchiveTest, RefusesEveryTruncation) {
  for (bool deflated : {false, true}) {
    std::string bytes = zip(kMembers, deflated);
    for (size_t size = 0; size < bytes.size(); ++size) {
      llvm::Expected<ParameterArchive> archive = read(bytes.substr(0, size));
      // Without its end record no prefix is a zip; the short ones are not
      // safetensors files either.
      ASSERT_FALSE(bool(archive)) << "prefix of " << size << " bytes";
      std::string message = llvm::toString(archive.takeError());
      EXPECT_NE(message.find("parameter archive"), std::string::npos)
          << message;
    }
  }
}

TEST_F(ParameterArchiveTest, SurvivesEveryCorruptedByte) {
  for (bool deflated : {false, true}) {
    std::string bytes = zip(kMembers, deflated);
    size_t accepted = 0, refused = 0;
    for (size_t at = 0; at < bytes.size(); ++at) {
      for (uint8_t flip : {0x01, 0x80, 0xFF}) {
        std::string corrupted = bytes;
        corrupted[at] = char(uint8_t(corrupted[at]) ^ flip);
        llvm::Expected<ParameterArchive> archive = read(corrupted);
        if (!archive) {
          llvm::consumeError(archive.takeError());
          ++refused;
          continue;
        }
        ++accepted;
        // Whatever was read is consistent with the buffers it points into.
        for (const auto &entry : archive->tensors)
          EXPECT_LE(entry.second.data.size(), corrupted.size() * 64);
      }
    }
    // Damage to the data is caught by the CRC; only bytes that do not
    // matter (e.g. times, attributes, padding) leave a readable archive.
    EXPECT_GT(refused, accepted);
  }
}

TEST_F(ParameterArchiveTest, NamesWhatIsWrong) {
  auto message = [&](const std::string &bytes) {
    llvm::Expected<ParameterArchive> archive = read(bytes);
    return archive ? std::string("read") : llvm::toString(archive.takeError());
  };
  std::string fortran = npy("<f4", "(2,)", floats({1, 2}));
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_NE(message(zip({{"f.npy", fortran}}, false)).find("Fortran"),
            std::string::npos);
  EXPECT_NE(message(zip({{"c.npy", npy("<c8", "(1,)", floats({1, 2}))}}, false))
                .find("'<c8'"),
            std::string::npos);
  EXPECT_NE(message(zip({{"s.npy", npy("<f4", "(3,)", floats({1, 2}))}}, false))
                .find("8 bytes of data; its shape and type need 12"),
            std::string::npos);
  EXPECT_NE(message(zip({{"a.npy", npy("<f4", "(1,)", floats({1}))},
                         {"a.npy", npy("<f4", "(1,)", floats({2}))}},
                        true))
                .find("a second member of that name"),
            std::string::npos);
}

} // namespace
