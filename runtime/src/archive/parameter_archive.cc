#include "archive/parameter_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string_view>
#include <utility>

namespace kiln {
namespace archive {
namespace {

using Bytes = std::string_view;

uint16_t Le16(Bytes bytes, uint64_t at) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + at);
  return uint16_t(p[0] | p[1] << 8);
}
uint32_t Le32(Bytes bytes, uint64_t at) {
  return uint32_t(Le16(bytes, at)) | uint32_t(Le16(bytes, at + 2)) << 16;
}
uint64_t Le64(Bytes bytes, uint64_t at) {
  return uint64_t(Le32(bytes, at)) | uint64_t(Le32(bytes, at + 4)) << 32;
}

const uint8_t* Data(Bytes bytes) {
  return reinterpret_cast<const uint8_t*>(bytes.data());
}

//===----------------------------------------------------------------------===//
// JSON, as much as a safetensors header needs: objects, arrays, strings
// (with escapes), integers, and the other literals parsed and ignored.
// Nesting is bounded so that a hostile header cannot exhaust the stack.
//===----------------------------------------------------------------------===//

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool is_integer = false;  // a number without fraction or exponent in int64
  int64_t integer = 0;
  std::string text;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  const Json* Find(const char* key) const {
    for (const auto& [name, value] : members)
      if (name == key) return &value;
    return nullptr;
  }
};

class JsonParser {
 public:
  explicit JsonParser(Bytes text) : text_(text) {}

  // Parses the whole text; returns "" or what is wrong and where.
  std::string Parse(Json* out) {
    if (!Value(out, 0)) return error_;
    SkipSpace();
    if (at_ != text_.size()) {
      Fail("text after the JSON value");
      return error_;
    }
    return "";
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool Fail(const std::string& why) {
    error_ = why + " at byte " + std::to_string(at_);
    return false;
  }
  void SkipSpace() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' ||
                                  text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool Literal(const char* word) {
    size_t length = std::strlen(word);
    if (text_.substr(at_, length) != word) return Fail("invalid literal");
    at_ += length;
    return true;
  }

  bool Value(Json* out, int depth) {
    if (depth > kMaxDepth) return Fail("nesting deeper than 64 levels");
    SkipSpace();
    if (at_ >= text_.size()) return Fail("unexpected end");
    char c = text_[at_];
    if (c == '{') return Object(out, depth);
    if (c == '[') return Array(out, depth);
    if (c == '"') {
      out->kind = Json::Kind::kString;
      return String(&out->text);
    }
    if (c == 't' || c == 'f') {
      out->kind = Json::Kind::kBool;
      return Literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      out->kind = Json::Kind::kNull;
      return Literal("null");
    }
    if (c == '-' || (c >= '0' && c <= '9')) return Number(out);
    return Fail(std::string("unexpected character '") + c + "'");
  }

  bool Object(Json* out, int depth) {
    out->kind = Json::Kind::kObject;
    ++at_;  // '{'
    if (Consume('}')) return true;
    do {
      SkipSpace();
      std::string key;
      if (at_ >= text_.size() || text_[at_] != '"')
        return Fail("expected a member name");
      if (!String(&key)) return false;
      if (!Consume(':')) return Fail("expected ':'");
      out->members.emplace_back(std::move(key), Json());
      if (!Value(&out->members.back().second, depth + 1)) return false;
    } while (Consume(','));
    if (!Consume('}')) return Fail("expected ',' or '}'");
    return true;
  }

  bool Array(Json* out, int depth) {
    out->kind = Json::Kind::kArray;
    ++at_;  // '['
    if (Consume(']')) return true;
    do {
      out->items.emplace_back();
      if (!Value(&out->items.back(), depth + 1)) return false;
    } while (Consume(','));
    if (!Consume(']')) return Fail("expected ',' or ']'");
    return true;
  }

  bool Hex4(uint32_t* out) {
    if (text_.size() - at_ < 4) return Fail("short \\u escape");
    *out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[at_++];
      uint32_t digit;
      if (c >= '0' && c <= '9') {
        digit = uint32_t(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = uint32_t(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = uint32_t(c - 'A' + 10);
      } else {
        return Fail("bad \\u escape");
      }
      *out = *out << 4 | digit;
    }
    return true;
  }

  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      out->push_back(char(code));
    } else if (code < 0x800) {
      out->push_back(char(0xC0 | code >> 6));
      out->push_back(char(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(char(0xE0 | code >> 12));
      out->push_back(char(0x80 | (code >> 6 & 0x3F)));
      out->push_back(char(0x80 | (code & 0x3F)));
    } else {
      out->push_back(char(0xF0 | code >> 18));
      out->push_back(char(0x80 | (code >> 12 & 0x3F)));
      out->push_back(char(0x80 | (code >> 6 & 0x3F)));
      out->push_back(char(0x80 | (code & 0x3F)));
    }
  }

  bool String(std::string* out) {
    ++at_;  // '"'
    while (true) {
      if (at_ >= text_.size()) return Fail("unterminated string");
      char c = text_[at_++];
      if (c == '"') return true;
      if (uint8_t(c) < 0x20) return Fail("control character in a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (at_ >= text_.size()) return Fail("unterminated string");
      char escape = text_[at_++];
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out->push_back(escape);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t code;
          if (!Hex4(&code)) return false;
          if (code >= 0xD800 && code < 0xDC00) {
            uint32_t low;
            if (text_.substr(at_, 2) != "\\u") return Fail("lone surrogate");
            at_ += 2;
            if (!Hex4(&low)) return false;
            if (low < 0xDC00 || low >= 0xE000) return Fail("lone surrogate");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code < 0xE000) {
            return Fail("lone surrogate");
          }
          AppendUtf8(code, out);
          break;
        }
        default:
          return Fail("bad escape in a string");
      }
    }
  }

  bool Number(Json* out) {
    out->kind = Json::Kind::kNumber;
    bool negative = text_[at_] == '-';
    if (negative) ++at_;
    size_t digits_start = at_;
    uint64_t magnitude = 0;
    bool overflow = false;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
      uint64_t digit = uint64_t(text_[at_++] - '0');
      if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10)
        overflow = true;
      else
        magnitude = magnitude * 10 + digit;
    }
    if (at_ == digits_start) return Fail("expected digits");
    bool integral = true;
    if (at_ < text_.size() && text_[at_] == '.') {
      integral = false;
      ++at_;
      size_t start = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9')
        ++at_;
      if (at_ == start) return Fail("expected digits after '.'");
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      integral = false;
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      size_t start = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9')
        ++at_;
      if (at_ == start) return Fail("expected exponent digits");
    }
    uint64_t limit =
        uint64_t(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
    out->is_integer = integral && !overflow && magnitude <= limit;
    if (out->is_integer)
      out->integer = negative ? int64_t(0 - magnitude) : int64_t(magnitude);
    return true;
  }

  Bytes text_;
  size_t at_ = 0;
  std::string error_;
};

std::string Invalid(const std::string& source, const char* format,
                    const std::string& why) {
  return "parameter archive '" + source + "' is not a valid " + format + ": " +
         why;
}

//===----------------------------------------------------------------------===//
// safetensors: an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the data.
//===----------------------------------------------------------------------===//

std::string ReadSafetensors(Bytes bytes, const std::string& source,
                            ParameterArchive* archive) {
  auto fail = [&](const std::string& why) {
    return Invalid(source, "safetensors file", why);
  };
  if (bytes.size() < 8) return fail("shorter than its 8-byte header length");
  uint64_t header_size = Le64(bytes, 0);
  if (header_size > bytes.size() - 8)
    return fail("its header length (" + std::to_string(header_size) +
                ") runs past the end of the file");
  Bytes header = bytes.substr(8, header_size);
  Bytes data = bytes.substr(8 + header_size);
  Json json;
  std::string why = JsonParser(header).Parse(&json);
  if (!why.empty()) return fail("its header is not JSON (" + why + ")");
  if (json.kind != Json::Kind::kObject)
    return fail("its header is not a JSON object");
  for (const auto& [key, value] : json.members) {
    if (key == "__metadata__") continue;
    const Json* dtype = value.Find("dtype");
    const Json* shape = value.Find("shape");
    const Json* offsets = value.Find("data_offsets");
    if (value.kind != Json::Kind::kObject)
      return fail("entry '" + key + "' is not an object");
    if (!dtype || dtype->kind != Json::Kind::kString || !shape ||
        shape->kind != Json::Kind::kArray || !offsets ||
        offsets->kind != Json::Kind::kArray || offsets->items.size() != 2)
      return fail("entry '" + key + "' lacks dtype, shape or two data_offsets");
    ArchiveTensor tensor;
    tensor.dtype = dtype->text;
    for (const Json& extent : shape->items) {
      if (!extent.is_integer || extent.integer < 0)
        return fail("entry '" + key + "' has a bad shape");
      tensor.shape.push_back(extent.integer);
    }
    const Json& begin = offsets->items[0];
    const Json& end = offsets->items[1];
    if (!begin.is_integer || !end.is_integer || begin.integer < 0 ||
        end.integer < begin.integer || uint64_t(end.integer) > data.size())
      return fail("entry '" + key + "' has data offsets outside the " +
                  std::to_string(data.size()) + " bytes of data");
    tensor.data = Data(data) + begin.integer;
    tensor.size = uint64_t(end.integer - begin.integer);
    if (!archive->tensors.emplace(key, std::move(tensor)).second)
      return fail("its header names '" + key + "' twice");
  }
  return "";
}

//===----------------------------------------------------------------------===//
// .npy: "\x93NUMPY", a version, a header length (2 bytes in version 1, 4
// in 2 and 3), a Python dict literal {'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), }, then the data.
//===----------------------------------------------------------------------===//

// The safetensors dtype name of a numpy little-endian type string, or "".
std::string DtypeOfDescr(const std::string& descr) {
  static const char* const kTypes[][2] = {
      {"f8", "F64"}, {"f4", "F32"}, {"f2", "F16"}, {"i8", "I64"},
      {"i4", "I32"}, {"i2", "I16"}, {"i1", "I8"},  {"u8", "U64"},
      {"u4", "U32"}, {"u2", "U16"}, {"u1", "U8"},  {"b1", "BOOL"}};
  if (descr.size() != 3 ||
      (descr[0] != '<' && descr[0] != '|' && descr[0] != '='))
    return "";
  for (const auto& type : kTypes)
    if (descr.compare(1, 2, type[0]) == 0) return type[1];
  return "";
}

// A cursor over the header dict of an .npy member.
class NpyHeader {
 public:
  explicit NpyHeader(Bytes text) : rest_(text) {}

  void Skip() {
    while (!rest_.empty() && (rest_[0] == ' ' || rest_[0] == '\t' ||
                              rest_[0] == '\n' || rest_[0] == '\r'))
      rest_.remove_prefix(1);
  }
  bool Consume(Bytes token) {
    Skip();
    if (rest_.substr(0, token.size()) != token) return false;
    rest_.remove_prefix(token.size());
    return true;
  }
  bool Peek(char c) {
    Skip();
    return !rest_.empty() && rest_[0] == c;
  }
  bool Quoted(std::string* out) {
    Skip();
    if (rest_.empty() || (rest_[0] != '\'' && rest_[0] != '"')) return false;
    size_t end = rest_.find(rest_[0], 1);
    if (end == Bytes::npos) return false;
    *out = std::string(rest_.substr(1, end - 1));
    rest_.remove_prefix(end + 1);
    return true;
  }
  bool Size(int64_t* out) {
    Skip();
    uint64_t value = 0;
    size_t digits = 0;
    while (digits < rest_.size() && rest_[digits] >= '0' &&
           rest_[digits] <= '9') {
      uint64_t digit = uint64_t(rest_[digits] - '0');
      if (value > (uint64_t(INT64_MAX) - digit) / 10) return false;
      value = value * 10 + digit;
      ++digits;
    }
    if (digits == 0) return false;
    rest_.remove_prefix(digits);
    *out = int64_t(value);
    return true;
  }

 private:
  Bytes rest_;
};

// Parses the header dict of an .npy member into |tensor| (all but data) and
// |item_bytes|. Returns why it cannot, or "".
std::string ParseNpyHeader(Bytes text, ArchiveTensor* tensor,
                           uint64_t* item_bytes) {
  NpyHeader header(text);
  if (!header.Consume("{")) return "its header is not a dict";
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  bool have_shape = false;
  while (!header.Consume("}")) {
    std::string key;
    if (!header.Quoted(&key) || !header.Consume(":"))
      return "its header is not a dict of named fields";
    if (key == "descr") {
      std::string value;
      if (!header.Quoted(&value))
        return "its 'descr' is not a type string (structured dtypes are not "
               "tensors)";
      descr = value;
    } else if (key == "fortran_order") {
      if (header.Consume("True")) {
        fortran = true;
      } else if (header.Consume("False")) {
        fortran = false;
      } else {
        return "its 'fortran_order' is neither True nor False";
      }
    } else if (key == "shape") {
      if (!header.Consume("(")) return "its 'shape' is not a tuple";
      tensor->shape.clear();
      while (!header.Consume(")")) {
        int64_t extent = 0;
        if (!header.Size(&extent)) return "its 'shape' is not a tuple of sizes";
        tensor->shape.push_back(extent);
        if (!header.Consume(",") && !header.Peek(')'))
          return "its 'shape' is not a tuple of sizes";
      }
      have_shape = true;
    } else {
      return "its header has an unknown field '" + key + "'";
    }
    if (!header.Consume(",") && !header.Peek('}'))
      return "its header is not a dict of named fields";
  }
  if (!descr || !fortran || !have_shape)
    return "its header lacks 'descr', 'fortran_order' or 'shape'";
  if (!descr->empty() && (*descr)[0] == '>')
    return "its data are big-endian ('" + *descr + "')";
  std::string dtype = DtypeOfDescr(*descr);
  if (dtype.empty())
    return "its element type '" + *descr +
           "' is not one of numpy's integer, float or bool types";
  if (*fortran)
    return "it is in Fortran (column-major) order; save "
           "np.ascontiguousarray(a) instead";
  tensor->dtype = dtype;
  *item_bytes = DtypeByteSize(dtype);
  return "";
}

// Reads one .npy member into |tensor|, or says why it cannot.
std::string ParseNpy(Bytes bytes, ArchiveTensor* tensor) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != Bytes("\x93NUMPY", 6))
    return "it does not start with the .npy magic";
  uint8_t major = uint8_t(bytes[6]);
  uint64_t header_bytes = 0, start = 0;
  if (major == 1) {
    header_bytes = Le16(bytes, 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return "its header length is cut off";
    header_bytes = Le32(bytes, 8);
    start = 12;
  } else {
    return ".npy format version " + std::to_string(major) + " is unknown";
  }
  if (header_bytes > bytes.size() - start)
    return "its header runs past the end of the member";
  uint64_t item_bytes = 0;
  std::string why =
      ParseNpyHeader(bytes.substr(start, header_bytes), tensor, &item_bytes);
  if (!why.empty()) return why;
  Bytes data = bytes.substr(start + header_bytes);
  uint64_t expected = item_bytes;
  for (int64_t extent : tensor->shape)
    if (__builtin_mul_overflow(expected, uint64_t(extent), &expected))
      return "its shape is too large";
  if (data.size() != expected)
    return "it has " + std::to_string(data.size()) +
           " bytes of data; its shape and type need " +
           std::to_string(expected);
  tensor->data = Data(data);
  tensor->size = data.size();
  return "";
}

//===----------------------------------------------------------------------===//
// .npz: a zip archive (stored or deflated members, zip64 as numpy writes
// it) of NAME.npy members.
//===----------------------------------------------------------------------===//

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;

// Inflates raw deflate |input| into exactly |size| bytes at |out|, or says
// why not (zlib counts in 32 bits: both sides are fed in slices of up to
// 1 GiB).
std::string Inflate(Bytes input, uint64_t size, uint8_t* out) {
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
    return "zlib could not start inflating";
  constexpr uint64_t kSlice = uint64_t(1) << 30;
  uint64_t read = 0, written = 0;
  int status = Z_OK;
  while (status == Z_OK) {
    if (stream.avail_in == 0 && read < input.size()) {
      stream.next_in = const_cast<Bytef*>(Data(input) + read);
      stream.avail_in = uInt(std::min<uint64_t>(kSlice, input.size() - read));
      read += stream.avail_in;
    }
    if (stream.avail_out == 0 && written < size) {
      stream.next_out = out + written;
      stream.avail_out = uInt(std::min(kSlice, size - written));
      written += stream.avail_out;
    }
    status = inflate(&stream, Z_NO_FLUSH);
    bool refill = (stream.avail_in == 0 && read < input.size()) ||
                  (stream.avail_out == 0 && written < size);
    if (status == Z_BUF_ERROR && refill) status = Z_OK;  // feed the next slice
  }
  uint64_t produced = written - stream.avail_out;
  inflateEnd(&stream);
  if (status != Z_STREAM_END || produced != size)
    return "its deflated data do not inflate to its recorded " +
           std::to_string(size) + " bytes";
  return "";
}

uint32_t Crc32(Bytes bytes) {
  uLong crc = crc32(0, Z_NULL, 0);
  const uint8_t* at = Data(bytes);
  uint64_t left = bytes.size();
  while (left > 0) {  // crc32 counts in uInt
    uInt slice = uInt(std::min<uint64_t>(left, uint64_t(1) << 30));
    crc = crc32(crc, at, slice);
    at += slice;
    left -= slice;
  }
  return uint32_t(crc);
}

std::string ReadNpz(Bytes bytes, const std::string& source,
                    ParameterArchive* archive) {
  auto fail = [&](const std::string& why) {
    return Invalid(source, ".npz archive", why);
  };
  // The end-of-central-directory record: 22 bytes and a comment of up to
  // 65535 bytes at the end of the file.
  if (bytes.size() < 22) return fail("too short for a zip archive");
  std::optional<uint64_t> end;
  uint64_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (uint64_t at = bytes.size() - 22 + 1; at-- > lowest;) {
    if (Le32(bytes, at) == kEndOfDirectory &&
        at + 22 + Le16(bytes, at + 20) == bytes.size()) {
      end = at;
      break;
    }
  }
  if (!end)
    return fail("it has no zip end-of-central-directory record (truncated?)");
  uint64_t entries = Le16(bytes, *end + 10);
  uint64_t directory_size = Le32(bytes, *end + 12);
  uint64_t directory = Le32(bytes, *end + 16);
  if (entries == 0xFFFF || directory_size == 0xFFFFFFFF ||
      directory == 0xFFFFFFFF) {
    if (*end < 20 || Le32(bytes, *end - 20) != kZip64Locator)
      return fail("its zip64 end-of-central-directory locator is missing");
    uint64_t record = Le64(bytes, *end - 20 + 8);
    if (record > bytes.size() || bytes.size() - record < 56 ||
        Le32(bytes, record) != kZip64EndOfDirectory)
      return fail("its zip64 end-of-central-directory record is missing");
    entries = Le64(bytes, record + 32);
    directory_size = Le64(bytes, record + 40);
    directory = Le64(bytes, record + 48);
  }
  if (directory > bytes.size() || directory_size > bytes.size() - directory)
    return fail("its central directory lies outside the file");

  uint64_t at = directory;
  for (uint64_t i = 0; i < entries; ++i) {
    if (directory + directory_size - at < 46 ||
        Le32(bytes, at) != kCentralHeader)
      return fail("central directory entry " + std::to_string(i) +
                  " is malformed");
    uint16_t flags = Le16(bytes, at + 8);
    uint16_t method = Le16(bytes, at + 10);
    uint32_t crc = Le32(bytes, at + 16);
    uint64_t packed = Le32(bytes, at + 20);
    uint64_t size = Le32(bytes, at + 24);
    uint64_t name_bytes = Le16(bytes, at + 28);
    uint64_t extra_bytes = Le16(bytes, at + 30);
    uint64_t comment_bytes = Le16(bytes, at + 32);
    uint64_t local = Le32(bytes, at + 42);
    if (directory + directory_size - at <
        46 + name_bytes + extra_bytes + comment_bytes)
      return fail("central directory entry " + std::to_string(i) +
                  " is cut off");
    std::string name(bytes.substr(at + 46, name_bytes));
    Bytes extra = bytes.substr(at + 46 + name_bytes, extra_bytes);
    at += 46 + name_bytes + extra_bytes + comment_bytes;
    // The zip64 extra field holds, in this order, the sizes and offset that
    // the header marks as 0xFFFFFFFF.
    for (uint64_t e = 0; e + 4 <= extra.size();) {
      uint16_t id = Le16(extra, e), length = Le16(extra, e + 2);
      if (e + 4 + length > extra.size())
        return fail("member '" + name + "' has a malformed extra field");
      if (id == 0x0001) {
        uint64_t field = e + 4, field_end = e + 4 + length;
        for (uint64_t* value : {&size, &packed, &local}) {
          if (*value != 0xFFFFFFFF) continue;
          if (field_end - field < 8)
            return fail("member '" + name + "' has a short zip64 field");
          *value = Le64(extra, field);
          field += 8;
        }
      }
      e += 4 + length;
    }
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      continue;  // np.savez writes only NAME.npy members
    std::string tensor_name = name.substr(0, name.size() - 4);
    auto member_fail = [&](const std::string& why) {
      return fail("member '" + name + "': " + why);
    };
    if (flags & 1) return member_fail("it is encrypted");
    if (method != 0 && method != 8)
      return member_fail("compression method " + std::to_string(method) +
                         " (only stored and deflated members are read)");
    if (local > bytes.size() || bytes.size() - local < 30 ||
        Le32(bytes, local) != kLocalHeader)
      return member_fail("its local header is missing");
    uint64_t data_start =
        local + 30 + Le16(bytes, local + 26) + Le16(bytes, local + 28);
    if (data_start > bytes.size() || bytes.size() - data_start < packed)
      return member_fail("its data run past the end of the file (truncated?)");
    Bytes member = bytes.substr(data_start, packed);
    if (method == 8) {
      // Deflate expands at most 1032:1; a recorded size beyond that is
      // damage, not data (and must not become an allocation).
      if (size / 1032 > packed + 1)
        return member_fail("its recorded size (" + std::to_string(size) +
                           " bytes) cannot come from its " +
                           std::to_string(packed) + " deflated bytes");
      std::unique_ptr<uint8_t[]> inflated(new (std::nothrow)
                                              uint8_t[size ? size : 1]);
      if (!inflated)
        return member_fail("its " + std::to_string(size) +
                           " inflated bytes cannot be allocated");
      std::string why = Inflate(member, size, inflated.get());
      if (!why.empty()) return member_fail(why);
      member = Bytes(reinterpret_cast<const char*>(inflated.get()), size);
      archive->inflated.push_back(std::move(inflated));
    } else if (packed != size) {
      return member_fail("a stored member whose sizes differ");
    }
    if (Crc32(member) != crc)
      return member_fail("its CRC-32 does not match its data (corrupted)");
    ArchiveTensor tensor;
    std::string why = ParseNpy(member, &tensor);
    if (!why.empty()) return member_fail(why);
    if (!archive->tensors.emplace(tensor_name, std::move(tensor)).second)
      return member_fail("a second member of that name");
  }
  return "";
}

}  // namespace

uint64_t DtypeByteSize(const std::string& dtype) {
  static const std::pair<const char*, uint64_t> kSizes[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U64", 8},  {"U32", 4},
      {"U16", 2}, {"U8", 1},  {"BOOL", 1}};
  for (const auto& [name, bytes] : kSizes)
    if (dtype == name) return bytes;
  return 0;
}

std::string ReadParameterArchive(const uint8_t* data, size_t size,
                                 const std::string& source,
                                 ParameterArchive* out) {
  *out = ParameterArchive();
  Bytes bytes(reinterpret_cast<const char*>(data), data ? size : 0);
  bool zip = bytes.substr(0, 4) == Bytes("PK\3\4", 4);
  out->format = zip ? "npz" : "safetensors";
  std::string why =
      zip ? ReadNpz(bytes, source, out) : ReadSafetensors(bytes, source, out);
  if (!why.empty()) out->tensors.clear();
  return why;
}

}  // namespace archive
}  // namespace kiln
