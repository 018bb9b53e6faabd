//===- ParameterArchive.cpp - Tensors of a parameter archive --------------===//

#include "ParameterArchive.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"

#include <zlib.h>

using namespace mlir;
using namespace mlir::kiln;
using llvm::StringRef;
using llvm::Twine;

namespace {

llvm::Error archiveError(StringRef path, StringRef format, const Twine &why) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      ("parameter archive '" + path + "' is not a valid " + format + ": " + why)
          .str());
}

//===----------------------------------------------------------------------===//
// safetensors: an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the data.
//===----------------------------------------------------------------------===//

llvm::Error readSafetensors(StringRef path, ParameterArchive &archive) {
  StringRef bytes = archive.buffer->getBuffer();
  auto fail = [&](const Twine &why) {
    return archiveError(path, "safetensors file", why);
  };
  if (bytes.size() < 8)
    return fail("shorter than its 8-byte header length");
  uint64_t headerSize = llvm::support::endian::read64le(bytes.data());
  if (headerSize > bytes.size() - 8)
    return fail("its header length (" + Twine(headerSize) +
                ") runs past the end of the file");
  StringRef header = bytes.substr(8, headerSize);
  StringRef data = bytes.substr(8 + headerSize);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return fail("its header is not JSON (" + llvm::toString(json.takeError()) +
                ")");
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return fail("its header is not a JSON object");
  for (const auto &[key, value] : *object) {
    if (key == "__metadata__")
      continue;
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return fail("entry '" + key.str() + "' is not an object");
    std::optional<StringRef> dtype = entry->getString("dtype");
    const llvm::json::Array *shape = entry->getArray("shape");
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!dtype || !shape || !offsets || offsets->size() != 2)
      return fail("entry '" + key.str() +
                  "' lacks dtype, shape or two data_offsets");
    ArchiveTensor tensor;
    tensor.dtype = dtype->str();
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> extent = d.getAsInteger();
      if (!extent || *extent < 0)
        return fail("entry '" + key.str() + "' has a bad shape");
      tensor.shape.push_back(*extent);
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        uint64_t(*end) > data.size())
      return fail("entry '" + key.str() + "' has data offsets outside the " +
                  Twine(data.size()) + " bytes of data");
    tensor.data = data.slice(*begin, *end);
    archive.tensors[key.str()] = std::move(tensor);
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// .npy: "\x93NUMPY", a version, a header length (2 bytes in version 1, 4
// in 2 and 3), a Python dict literal {'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), }, then the data.
//===----------------------------------------------------------------------===//

// The safetensors dtype name of a numpy little-endian type string.
std::optional<StringRef> dtypeOfDescr(StringRef descr) {
  static const std::pair<StringRef, StringRef> kTypes[] = {
      {"f8", "F64"}, {"f4", "F32"}, {"f2", "F16"}, {"i8", "I64"},
      {"i4", "I32"}, {"i2", "I16"}, {"i1", "I8"},  {"u8", "U64"},
      {"u4", "U32"}, {"u2", "U16"}, {"u1", "U8"},  {"b1", "BOOL"}};
  if (descr.size() != 3 || !StringRef("<|=").contains(descr[0]))
    return std::nullopt;
  for (auto [code, dtype] : kTypes)
    if (descr.drop_front() == code)
      return dtype;
  return std::nullopt;
}

// Parses the header dict of an .npy member into `tensor` (all but data).
// Returns why it cannot, or "" on success.
std::string parseNpyHeader(StringRef header, ArchiveTensor &tensor,
                           uint64_t &itemBytes) {
  StringRef rest = header.trim();
  auto skip = [&] { rest = rest.ltrim(); };
  auto consume = [&](StringRef token) {
    skip();
    return rest.consume_front(token);
  };
  auto quoted = [&](std::string &out) {
    skip();
    if (rest.empty() || (rest[0] != '\'' && rest[0] != '"'))
      return false;
    char quote = rest[0];
    size_t end = rest.find(quote, 1);
    if (end == StringRef::npos)
      return false;
    out = rest.slice(1, end).str();
    rest = rest.drop_front(end + 1);
    return true;
  };
  if (!consume("{"))
    return "its header is not a dict";
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  bool haveShape = false;
  while (!consume("}")) {
    std::string key;
    if (!quoted(key) || !consume(":"))
      return "its header is not a dict of named fields";
    if (key == "descr") {
      std::string value;
      if (!quoted(value))
        return "its 'descr' is not a type string (structured dtypes are not "
               "tensors)";
      descr = value;
    } else if (key == "fortran_order") {
      if (consume("True"))
        fortran = true;
      else if (consume("False"))
        fortran = false;
      else
        return "its 'fortran_order' is neither True nor False";
    } else if (key == "shape") {
      if (!consume("("))
        return "its 'shape' is not a tuple";
      tensor.shape.clear();
      while (!consume(")")) {
        skip();
        unsigned long long extent = 0;
        if (llvm::consumeUnsignedInteger(rest, 10, extent) ||
            extent > uint64_t(INT64_MAX))
          return "its 'shape' is not a tuple of sizes";
        tensor.shape.push_back(int64_t(extent));
        if (!consume(",") && !rest.ltrim().starts_with(")"))
          return "its 'shape' is not a tuple of sizes";
      }
      haveShape = true;
    } else {
      return "its header has an unknown field '" + key + "'";
    }
    if (!consume(",") && !rest.ltrim().starts_with("}"))
      return "its header is not a dict of named fields";
  }
  if (!descr || !fortran || !haveShape)
    return "its header lacks 'descr', 'fortran_order' or 'shape'";
  if (!descr->empty() && (*descr)[0] == '>')
    return "its data are big-endian ('" + *descr + "')";
  std::optional<StringRef> dtype = dtypeOfDescr(*descr);
  if (!dtype)
    return "its element type '" + *descr +
           "' is not one of numpy's integer, float or bool types";
  if (*fortran)
    return "it is in Fortran (column-major) order; save "
           "np.ascontiguousarray(a) instead";
  tensor.dtype = dtype->str();
  uint64_t digits = 0;
  StringRef(*descr).drop_front(2).getAsInteger(10, digits);
  itemBytes = digits;
  return "";
}

// Reads one .npy member into `tensor`, or says why it cannot.
std::string parseNpy(StringRef bytes, ArchiveTensor &tensor) {
  StringRef magic("\x93NUMPY", 6);
  if (!bytes.starts_with(magic) || bytes.size() < 10)
    return "it does not start with the .npy magic";
  uint8_t major = uint8_t(bytes[6]);
  uint64_t headerBytes = 0, start = 0;
  if (major == 1) {
    headerBytes = llvm::support::endian::read16le(bytes.data() + 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return "its header length is cut off";
    headerBytes = llvm::support::endian::read32le(bytes.data() + 8);
    start = 12;
  } else {
    return ".npy format version " + std::to_string(major) + " is unknown";
  }
  if (headerBytes > bytes.size() - start)
    return "its header runs past the end of the member";
  uint64_t itemBytes = 0;
  std::string why =
      parseNpyHeader(bytes.substr(start, headerBytes), tensor, itemBytes);
  if (!why.empty())
    return why;
  StringRef data = bytes.drop_front(start + headerBytes);
  uint64_t expected = itemBytes;
  for (int64_t extent : tensor.shape)
    if (__builtin_mul_overflow(expected, uint64_t(extent), &expected))
      return "its shape is too large";
  if (data.size() != expected)
    return "it has " + std::to_string(data.size()) +
           " bytes of data; its shape and type need " +
           std::to_string(expected);
  tensor.data = data;
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

uint16_t le16(StringRef bytes, uint64_t at) {
  return llvm::support::endian::read16le(bytes.data() + at);
}
uint32_t le32(StringRef bytes, uint64_t at) {
  return llvm::support::endian::read32le(bytes.data() + at);
}
uint64_t le64(StringRef bytes, uint64_t at) {
  return llvm::support::endian::read64le(bytes.data() + at);
}

// Inflates raw deflate `input` into exactly `size` bytes, or says why not
// (zlib counts in 32 bits: both sides are fed in slices of up to 1 GiB).
std::string inflate(StringRef input, uint64_t size, char *out) {
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
    return "zlib could not start inflating";
  constexpr uint64_t kSlice = uint64_t(1) << 30;
  uint64_t read = 0, written = 0;
  int status = Z_OK;
  while (status == Z_OK) {
    if (stream.avail_in == 0 && read < input.size()) {
      stream.next_in =
          reinterpret_cast<Bytef *>(const_cast<char *>(input.data() + read));
      stream.avail_in = uInt(std::min(kSlice, input.size() - read));
      read += stream.avail_in;
    }
    if (stream.avail_out == 0 && written < size) {
      stream.next_out = reinterpret_cast<Bytef *>(out + written);
      stream.avail_out = uInt(std::min(kSlice, size - written));
      written += stream.avail_out;
    }
    status = ::inflate(&stream, Z_NO_FLUSH);
    bool refill = (stream.avail_in == 0 && read < input.size()) ||
                  (stream.avail_out == 0 && written < size);
    if (status == Z_BUF_ERROR && refill)
      status = Z_OK; // a slice ran out: feed the next one
  }
  uint64_t produced = written - stream.avail_out;
  inflateEnd(&stream);
  if (status != Z_STREAM_END || produced != size)
    return "its deflated data do not inflate to its recorded " +
           std::to_string(size) + " bytes";
  return "";
}

llvm::Error readNpz(StringRef path, ParameterArchive &archive) {
  StringRef bytes = archive.buffer->getBuffer();
  auto fail = [&](const Twine &why) {
    return archiveError(path, ".npz archive", why);
  };
  // The end-of-central-directory record: 22 bytes and a comment of up to
  // 65535 bytes at the end of the file.
  if (bytes.size() < 22)
    return fail("too short for a zip archive");
  std::optional<uint64_t> end;
  uint64_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (uint64_t at = bytes.size() - 22 + 1; at-- > lowest;)
    if (le32(bytes, at) == kEndOfDirectory &&
        at + 22 + le16(bytes, at + 20) == bytes.size()) {
      end = at;
      break;
    }
  if (!end)
    return fail("it has no zip end-of-central-directory record (truncated?)");
  uint64_t entries = le16(bytes, *end + 10);
  uint64_t directorySize = le32(bytes, *end + 12);
  uint64_t directory = le32(bytes, *end + 16);
  if (entries == 0xFFFF || directorySize == 0xFFFFFFFF ||
      directory == 0xFFFFFFFF) {
    if (*end < 20 || le32(bytes, *end - 20) != kZip64Locator)
      return fail("its zip64 end-of-central-directory locator is missing");
    uint64_t record = le64(bytes, *end - 20 + 8);
    if (record > bytes.size() || bytes.size() - record < 56 ||
        le32(bytes, record) != kZip64EndOfDirectory)
      return fail("its zip64 end-of-central-directory record is missing");
    entries = le64(bytes, record + 32);
    directorySize = le64(bytes, record + 40);
    directory = le64(bytes, record + 48);
  }
  if (directory > bytes.size() || directorySize > bytes.size() - directory)
    return fail("its central directory lies outside the file");

  uint64_t at = directory;
  for (uint64_t i = 0; i < entries; ++i) {
    if (directory + directorySize - at < 46 ||
        le32(bytes, at) != kCentralHeader)
      return fail("central directory entry " + Twine(i) + " is malformed");
    uint16_t flags = le16(bytes, at + 8);
    uint16_t method = le16(bytes, at + 10);
    uint32_t crc = le32(bytes, at + 16);
    uint64_t packed = le32(bytes, at + 20);
    uint64_t size = le32(bytes, at + 24);
    uint64_t nameBytes = le16(bytes, at + 28);
    uint64_t extraBytes = le16(bytes, at + 30);
    uint64_t commentBytes = le16(bytes, at + 32);
    uint64_t local = le32(bytes, at + 42);
    if (directory + directorySize - at <
        46 + nameBytes + extraBytes + commentBytes)
      return fail("central directory entry " + Twine(i) + " is cut off");
    StringRef name = bytes.substr(at + 46, nameBytes);
    StringRef extra = bytes.substr(at + 46 + nameBytes, extraBytes);
    at += 46 + nameBytes + extraBytes + commentBytes;
    // The zip64 extra field holds, in this order, the sizes and offset that
    // the header marks as 0xFFFFFFFF.
    for (uint64_t e = 0; e + 4 <= extra.size();) {
      uint16_t id = le16(extra, e), length = le16(extra, e + 2);
      if (e + 4 + length > extra.size())
        return fail("member '" + name + "' has a malformed extra field");
      if (id == 0x0001) {
        uint64_t field = e + 4, fieldEnd = e + 4 + length;
        for (uint64_t *value : {&size, &packed, &local}) {
          if (*value != 0xFFFFFFFF)
            continue;
          if (fieldEnd - field < 8)
            return fail("member '" + name + "' has a short zip64 field");
          *value = le64(extra, field);
          field += 8;
        }
      }
      e += 4 + length;
    }
    if (!name.ends_with(".npy"))
      continue; // np.savez writes only NAME.npy members
    std::string tensorName = name.drop_back(4).str();
    auto memberFail = [&](const Twine &why) {
      return fail("member '" + name + "': " + why);
    };
    if (flags & 1)
      return memberFail("it is encrypted");
    if (method != 0 && method != 8)
      return memberFail("compression method " + Twine(method) +
                        " (only stored and deflated members are read)");
    if (local > bytes.size() || bytes.size() - local < 30 ||
        le32(bytes, local) != kLocalHeader)
      return memberFail("its local header is missing");
    uint64_t dataStart =
        local + 30 + le16(bytes, local + 26) + le16(bytes, local + 28);
    if (dataStart > bytes.size() || bytes.size() - dataStart < packed)
      return memberFail("its data run past the end of the file (truncated?)");
    StringRef member = bytes.substr(dataStart, packed);
    if (method == 8) {
      // Deflate expands at most 1032:1; a recorded size beyond that is
      // damage, not data (and must not become an allocation).
      if (size / 1032 > packed + 1)
        return memberFail("its recorded size (" + Twine(size) +
                          " bytes) cannot come from its " + Twine(packed) +
                          " deflated bytes");
      archive.inflated.push_back(
          std::unique_ptr<char[]>(new char[size ? size : 1]));
      std::string why = inflate(member, size, archive.inflated.back().get());
      if (!why.empty())
        return memberFail(why);
      member = StringRef(archive.inflated.back().get(), size);
    } else if (packed != size) {
      return memberFail("a stored member whose sizes differ");
    }
    if (crc32_z(0, reinterpret_cast<const Bytef *>(member.data()),
                member.size()) != crc)
      return memberFail("its CRC-32 does not match its data (corrupted)");
    ArchiveTensor tensor;
    std::string why = parseNpy(member, tensor);
    if (!why.empty())
      return memberFail(why);
    if (!archive.tensors.try_emplace(tensorName, std::move(tensor)).second)
      return memberFail("a second member of that name");
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<ParameterArchive>
mlir::kiln::readParameterArchive(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read parameter archive '" + path +
                                       "': " + buffer.getError().message());
  return readParameterArchive(std::move(*buffer), path);
}

llvm::Expected<ParameterArchive>
mlir::kiln::readParameterArchive(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                 StringRef path) {
  ParameterArchive archive;
  archive.buffer = std::move(buffer);
  bool zip = archive.buffer->getBuffer().starts_with(StringRef("PK\3\4", 4));
  archive.format = zip ? "npz" : "safetensors";
  if (llvm::Error error =
          zip ? readNpz(path, archive) : readSafetensors(path, archive))
    return std::move(error);
  return std::move(archive);
}
