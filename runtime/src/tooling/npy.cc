#include "tooling/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/file.h"

namespace kiln {
namespace tooling {
namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLength = 6;
constexpr uint64_t kMaxNpyBytes = uint64_t{1} << 40;
// The data and the largest header (a 4-byte length in versions 2 and 3).
constexpr uint64_t kMaxNpyFileBytes = kMaxNpyBytes + (uint64_t{1} << 32) + 12;

struct DtypeName {
  kiln_element_type_t type;
  const char* descr;  // as written (little-endian or byte-order free)
};
const DtypeName kDtypes[] = {
    {KILN_ELEMENT_TYPE_I1, "|b1"},  {KILN_ELEMENT_TYPE_I8, "|i1"},
    {KILN_ELEMENT_TYPE_I16, "<i2"}, {KILN_ELEMENT_TYPE_I32, "<i4"},
    {KILN_ELEMENT_TYPE_I64, "<i8"}, {KILN_ELEMENT_TYPE_U8, "|u1"},
    {KILN_ELEMENT_TYPE_U16, "<u2"}, {KILN_ELEMENT_TYPE_U32, "<u4"},
    {KILN_ELEMENT_TYPE_U64, "<u8"}, {KILN_ELEMENT_TYPE_F16, "<f2"},
    {KILN_ELEMENT_TYPE_BF16, "<V2"}, {KILN_ELEMENT_TYPE_F32, "<f4"},
    {KILN_ELEMENT_TYPE_F64, "<f8"},
};

kiln_status_t Bad(const std::string& source, const std::string& why) {
  return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                          "'%s' is not a valid .npy file: %s", source.c_str(),
                          why.c_str());
}

// Returns the text after "'key':" in the header dict (whitespace skipped),
// or npos.
size_t FindValue(const std::string& header, const std::string& key) {
  for (const char* quote : {"'", "\""}) {
    std::string needle = std::string(quote) + key + quote;
    size_t at = header.find(needle);
    if (at == std::string::npos) continue;
    at = header.find(':', at + needle.size());
    if (at == std::string::npos) return at;
    ++at;
    while (at < header.size() && header[at] == ' ') ++at;
    return at;
  }
  return std::string::npos;
}

kiln_element_type_t DtypeFromDescr(std::string descr) {
  // '=' is native (little-endian here); 1-byte types may use any order mark.
  if (!descr.empty() && descr[0] == '=') descr[0] = '<';
  if (descr.size() == 3 && descr[2] == '1' && descr[0] != '>') descr[0] = '|';
  if (descr == "|V2") descr = "<V2";
  for (const DtypeName& dtype : kDtypes) {
    if (descr == dtype.descr) return dtype.type;
  }
  return KILN_ELEMENT_TYPE_INVALID;
}

}  // namespace

kiln_status_t ParseNpy(const uint8_t* data, size_t size,
                       const std::string& source, HostTensor* out,
                       const ExpectedType* expected) {
  if (size < kMagicLength + 4 || std::memcmp(data, kMagic, kMagicLength) != 0) {
    return Bad(source, "missing the \\x93NUMPY magic");
  }
  uint8_t major = data[6];
  size_t header_length = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_length = data[8] | (static_cast<size_t>(data[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return Bad(source, "truncated header");
    header_length = data[8] | (static_cast<size_t>(data[9]) << 8) |
                    (static_cast<size_t>(data[10]) << 16) |
                    (static_cast<size_t>(data[11]) << 24);
    header_start = 12;
  } else {
    return Bad(source, "unsupported format version " + std::to_string(major));
  }
  if (header_length > size - header_start) {
    return Bad(source, "truncated header");
  }
  std::string header(reinterpret_cast<const char*>(data) + header_start,
                     header_length);

  size_t at = FindValue(header, "descr");
  if (at == std::string::npos || at >= header.size() ||
      (header[at] != '\'' && header[at] != '"')) {
    return Bad(source, "header has no 'descr' string (structured dtypes are "
               "not supported)");
  }
  size_t close = header.find(header[at], at + 1);
  if (close == std::string::npos) return Bad(source, "unterminated 'descr'");
  std::string descr = header.substr(at + 1, close - at - 1);
  out->element_type = DtypeFromDescr(descr);
  if (out->element_type == KILN_ELEMENT_TYPE_INVALID) {
    return Bad(source, "unsupported dtype '" + descr +
               "' (supported: little-endian bool, int8..int64, "
               "uint8..uint64, float16, float32, float64, and V2 as bf16)");
  }

  at = FindValue(header, "fortran_order");
  if (at == std::string::npos) return Bad(source, "header has no 'fortran_order'");
  if (header.compare(at, 4, "True") == 0) {
    return Bad(source, "Fortran-ordered arrays are not supported (save a "
               "C-contiguous array, e.g. np.ascontiguousarray)");
  }
  if (header.compare(at, 5, "False") != 0) {
    return Bad(source, "invalid 'fortran_order' value");
  }

  at = FindValue(header, "shape");
  if (at == std::string::npos || at >= header.size() || header[at] != '(') {
    return Bad(source, "header has no 'shape' tuple");
  }
  close = header.find(')', at);
  if (close == std::string::npos) return Bad(source, "unterminated 'shape'");
  out->shape.clear();
  std::string dims = header.substr(at + 1, close - at - 1);
  size_t pos = 0;
  uint64_t element_count = 1;
  while (pos < dims.size()) {
    while (pos < dims.size() && (dims[pos] == ' ' || dims[pos] == ',')) ++pos;
    if (pos >= dims.size()) break;
    size_t end = pos;
    while (end < dims.size() && dims[end] >= '0' && dims[end] <= '9') ++end;
    if (end == pos || end - pos > 12) {
      return Bad(source, "invalid dimension in shape '(" + dims + ")'");
    }
    int64_t dim = std::strtoll(dims.substr(pos, end - pos).c_str(), nullptr, 10);
    if (dim != 0 && element_count > kMaxNpyBytes / static_cast<uint64_t>(dim)) {
      return Bad(source, "shape '(" + dims + ")' is too large");
    }
    element_count *= static_cast<uint64_t>(dim);
    out->shape.push_back(dim);
    if (out->shape.size() > KILN_MAX_RANK) {
      return Bad(source, "rank above " + std::to_string(KILN_MAX_RANK));
    }
    pos = end;
  }

  if (expected) {
    kiln_status_t status = CheckType(*out, *expected);
    if (!kiln_status_is_ok(status)) {
      return kiln_status_annotate(status, "in '%s'", source.c_str());
    }
  }
  uint64_t bytes = element_count * kiln_element_type_size(out->element_type);
  size_t data_start = header_start + header_length;
  if (bytes > size - data_start) {
    return Bad(source, "truncated data: " + out->TypeString() + " needs " +
               std::to_string(bytes) + " bytes, the file has " +
               std::to_string(size - data_start));
  }
  if (bytes < size - data_start) {
    return Bad(source, std::to_string(size - data_start - bytes) +
               " bytes after the data of the " + out->TypeString() +
               " array (a concatenation of arrays or a corrupt header?)");
  }
  KILN_RETURN_IF_ERROR(out->Allocate());
  if (bytes) std::memcpy(out->data.data(), data + data_start, bytes);
  return kiln_ok_status();
}

std::vector<uint8_t> SerializeNpy(const HostTensor& tensor) {
  const char* descr = "|u1";
  for (const DtypeName& dtype : kDtypes) {
    if (dtype.type == tensor.element_type) descr = dtype.descr;
  }
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    shape += std::to_string(tensor.shape[i]);
    if (tensor.shape.size() == 1 || i + 1 < tensor.shape.size()) shape += ",";
    if (i + 1 < tensor.shape.size()) shape += " ";
  }
  shape += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so the data starts 64-byte aligned; end with '\n'.
  size_t total = kMagicLength + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicLength);
  bytes.push_back(1);
  bytes.push_back(0);
  bytes.push_back(static_cast<uint8_t>(header.size() & 0xff));
  bytes.push_back(static_cast<uint8_t>(header.size() >> 8));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), tensor.data.begin(), tensor.data.end());
  return bytes;
}

kiln_status_t ReadNpyFile(const std::string& path, HostTensor* out,
                          const ExpectedType* expected) {
  std::vector<uint8_t> bytes;
  KILN_RETURN_IF_ERROR(
      readRegularFile(path.c_str(), ".npy file", kMaxNpyFileBytes, &bytes));
  return ParseNpy(bytes.data(), bytes.size(), path, out, expected);
}

kiln_status_t WriteNpyFile(const std::string& path, const HostTensor& tensor) {
  std::vector<uint8_t> bytes = SerializeNpy(tensor);
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) {
    return kiln_make_status(KILN_STATUS_PERMISSION_DENIED,
                            "cannot create '%s': %s", path.c_str(),
                            std::strerror(errno));
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  ok = (std::fclose(file) == 0) && ok;
  if (!ok) {
    return kiln_make_status(KILN_STATUS_DATA_LOSS, "error writing '%s'",
                            path.c_str());
  }
  return kiln_ok_status();
}

}  // namespace tooling
}  // namespace kiln
