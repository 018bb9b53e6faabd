// The integrity trailer of a .vmfb, shared by the writer (kiln-compile, the
// runtime tests' module builder) and the reader (the runtime's loader).
//
// A module file is its FlatBuffer (file identifier "KILN") followed by a
// 16-byte trailer, all fields little-endian:
//
//   offset 0   u64  content size: the FlatBuffer's size in bytes, which is
//                   the file size minus 16
//   offset 8   u32  CRC-32C (Castagnoli) of the FlatBuffer's bytes
//   offset 12  u8[4] magic "KSUM"
//
// The loader recomputes the checksum before it looks inside the FlatBuffer:
// a truncated, extended or corrupted file is DATA_LOSS. The checksum guards
// against accidents (bad disks, partial copies, transfers), not tampering: a
// module carries native code and is loaded only from trusted sources
// (docs/embedding.md).
#ifndef KILN_SCHEMAS_MODULE_TRAILER_H_
#define KILN_SCHEMAS_MODULE_TRAILER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kiln {
namespace module_trailer {

constexpr size_t kSize = 16;
constexpr char kMagic[4] = {'K', 'S', 'U', 'M'};

namespace detail {

// CRC-32C with the reflected polynomial 0x82F63B78, table-driven 8 bytes at
// a time (slicing-by-8); tables[k][b] is the CRC of byte b followed by k
// zero bytes.
struct Tables {
  uint32_t t[8][256];
  constexpr Tables() : t() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t crc = b;
      for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
      t[0][b] = crc;
    }
    for (uint32_t b = 0; b < 256; ++b) {
      for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    }
  }
};
inline constexpr Tables kTables{};

inline uint32_t Crc32cSoftware(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = kTables.t;
  while (n >= 8) {
    uint32_t lo = crc ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 |
                         uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
          t[4][lo >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// SSE4.2's crc32 instruction computes the same CRC-32C, 8 bytes per
// instruction (several GB/s, for modules with large rodata).
__attribute__((target("sse4.2"))) inline uint32_t Crc32cSse42(
    uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
#endif

}  // namespace detail

// CRC-32C of |size| bytes (initial value and final xor 0xFFFFFFFF, as in
// iSCSI and ext4: Crc32c("123456789") == 0xE3069283).
inline uint32_t Crc32c(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
  if (kHaveSse42) return ~detail::Crc32cSse42(0xFFFFFFFFu, p, size);
#endif
  return ~detail::Crc32cSoftware(0xFFFFFFFFu, p, size);
}

// The trailer for a FlatBuffer of |size| bytes at |data|.
inline std::array<uint8_t, kSize> Make(const void* data, size_t size) {
  std::array<uint8_t, kSize> trailer{};
  uint64_t content = size;
  uint32_t crc = Crc32c(data, size);
  for (int i = 0; i < 8; ++i) trailer[i] = static_cast<uint8_t>(content >> (8 * i));
  for (int i = 0; i < 4; ++i) trailer[8 + i] = static_cast<uint8_t>(crc >> (8 * i));
  std::memcpy(trailer.data() + 12, kMagic, 4);
  return trailer;
}

// What a file's last kSize bytes say; |valid| is false when the magic is
// missing (a truncated file, or one written before module version 2).
struct Parsed {
  bool valid = false;
  uint64_t content_size = 0;
  uint32_t crc = 0;
};
inline Parsed Parse(const uint8_t* file, size_t file_size) {
  Parsed parsed;
  if (file_size < kSize) return parsed;
  const uint8_t* t = file + file_size - kSize;
  if (std::memcmp(t + 12, kMagic, 4) != 0) return parsed;
  parsed.valid = true;
  for (int i = 0; i < 8; ++i) parsed.content_size |= uint64_t{t[i]} << (8 * i);
  for (int i = 0; i < 4; ++i) parsed.crc |= uint32_t{t[8 + i]} << (8 * i);
  return parsed;
}

}  // namespace module_trailer
}  // namespace kiln

#endif  // KILN_SCHEMAS_MODULE_TRAILER_H_
