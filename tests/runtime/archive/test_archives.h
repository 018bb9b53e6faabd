// Writers of small parameter archives for the runtime tests: .npy members,
// zips of them (.npz, stored or deflated) and safetensors files, byte by
// byte, so that tests control (and can damage) every field. Header-only.
#ifndef KILN_TESTS_RUNTIME_ARCHIVE_TEST_ARCHIVES_H_
#define KILN_TESTS_RUNTIME_ARCHIVE_TEST_ARCHIVES_H_

#include <zlib.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln {
namespace testing {

inline void Put16(std::string& out, uint16_t v) {
  out.push_back(char(v & 0xFF));
  out.push_back(char(v >> 8));
}
inline void Put32(std::string& out, uint32_t v) {
  Put16(out, uint16_t(v & 0xFFFF));
  Put16(out, uint16_t(v >> 16));
}
inline void Put64(std::string& out, uint64_t v) {
  Put32(out, uint32_t(v));
  Put32(out, uint32_t(v >> 32));
}

// An .npy (version 1.0) of |descr| and |shape| holding |data|.
inline std::string Npy(const std::string& descr, const std::string& shape,
                       const std::string& data) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  Put16(out, uint16_t(header.size()));
  return out + header + data;
}

inline std::string DeflateRaw(const std::string& in) {
  z_stream s{};
  deflateInit2(&s, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
               Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&s, uLong(in.size())), '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = uInt(in.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = uInt(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// A zip of |members| (name, contents), stored or deflated.
inline std::string Zip(
    const std::vector<std::pair<std::string, std::string>>& members,
    bool deflated) {
  std::string out, directory;
  for (const auto& [name, contents] : members) {
    std::string packed = deflated ? DeflateRaw(contents) : contents;
    uint32_t crc =
        uint32_t(crc32(0, reinterpret_cast<const Bytef*>(contents.data()),
                       uInt(contents.size())));
    uint32_t offset = uint32_t(out.size());
    Put32(out, 0x04034b50);
    Put16(out, 20);
    Put16(out, 0);
    Put16(out, deflated ? 8 : 0);
    Put32(out, 0);  // time, date
    Put32(out, crc);
    Put32(out, uint32_t(packed.size()));
    Put32(out, uint32_t(contents.size()));
    Put16(out, uint16_t(name.size()));
    Put16(out, 0);
    out += name + packed;
    Put32(directory, 0x02014b50);
    Put16(directory, 20);
    Put16(directory, 20);
    Put16(directory, 0);
    Put16(directory, deflated ? 8 : 0);
    Put32(directory, 0);
    Put32(directory, crc);
    Put32(directory, uint32_t(packed.size()));
    Put32(directory, uint32_t(contents.size()));
    Put16(directory, uint16_t(name.size()));
    Put32(directory, 0);  // extra and comment lengths
    Put32(directory, 0);  // disk, internal attributes
    Put32(directory, 0);  // external attributes
    Put32(directory, offset);
    directory += name;
  }
  uint32_t start = uint32_t(out.size());
  out += directory;
  Put32(out, 0x06054b50);
  Put32(out, 0);
  Put16(out, uint16_t(members.size()));
  Put16(out, uint16_t(members.size()));
  Put32(out, uint32_t(directory.size()));
  Put32(out, start);
  Put16(out, 0);
  return out;
}

// A safetensors file of |header| (JSON text) and |data|.
inline std::string Safetensors(const std::string& header,
                               const std::string& data) {
  std::string out;
  Put64(out, header.size());
  return out + header + data;
}

}  // namespace testing
}  // namespace kiln

#endif  // KILN_TESTS_RUNTIME_ARCHIVE_TEST_ARCHIVES_H_
