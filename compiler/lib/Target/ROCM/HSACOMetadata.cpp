//===- HSACOMetadata.cpp - Resource usage of HSACO kernels ----------------===//
//
// Layout: AMDGPUUsage "Code Object V3+ Metadata". The note named "AMDGPU" of
// type NT_AMDGPU_METADATA holds a msgpack map whose "amdhsa.kernels" array
// has one map per kernel with keys such as ".vgpr_count".
//
//===----------------------------------------------------------------------===//

#include "HSACOMetadata.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELF.h"
#include "llvm/Object/ELFTypes.h"

using namespace llvm;

namespace mlir::kiln {

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

// Reads unsigned field `key` of a kernel map; absent fields stay 0 (older
// code objects omit e.g. .agpr_count on chips without AGPRs).
static Error readField(msgpack::MapDocNode &kernel, msgpack::Document &doc,
                       StringRef kernelName, StringRef key, uint32_t &out) {
  auto it = kernel.find(doc.getNode(key));
  if (it == kernel.end())
    return Error::success();
  msgpack::DocNode &value = it->second;
  uint64_t number;
  if (value.getKind() == msgpack::Type::UInt)
    number = value.getUInt();
  else if (value.getKind() == msgpack::Type::Int && value.getInt() >= 0)
    number = value.getInt();
  else
    return makeError("kernel '" + kernelName + "' metadata field " + key +
                     " is not a non-negative integer");
  if (number > UINT32_MAX)
    return makeError("kernel '" + kernelName + "' metadata field " + key +
                     " is out of range");
  out = static_cast<uint32_t>(number);
  return Error::success();
}

static Expected<StringMap<HSACOKernelMetadata>>
parseMetadata(StringRef blob) {
  msgpack::Document doc;
  if (!doc.readFromBlob(blob, /*Multi=*/false))
    return makeError("the amdhsa metadata note is not valid msgpack");
  if (!doc.getRoot().isMap())
    return makeError("the amdhsa metadata is not a map");
  msgpack::MapDocNode &root = doc.getRoot().getMap();
  auto kernelsIt = root.find(doc.getNode("amdhsa.kernels"));
  if (kernelsIt == root.end() || !kernelsIt->second.isArray())
    return makeError("the amdhsa metadata has no amdhsa.kernels array");
  StringMap<HSACOKernelMetadata> result;
  for (msgpack::DocNode &node : kernelsIt->second.getArray()) {
    if (!node.isMap())
      return makeError("an amdhsa.kernels entry is not a map");
    msgpack::MapDocNode &kernel = node.getMap();
    auto nameIt = kernel.find(doc.getNode(".name"));
    if (nameIt == kernel.end() || !nameIt->second.isString())
      return makeError("an amdhsa.kernels entry has no .name");
    StringRef name = nameIt->second.getString();
    HSACOKernelMetadata &md = result[name];
    struct {
      StringRef key;
      uint32_t &field;
    } fields[] = {
        {".vgpr_count", md.vgprCount},
        {".sgpr_count", md.sgprCount},
        {".agpr_count", md.agprCount},
        {".group_segment_fixed_size", md.groupSegmentFixedSize},
        {".private_segment_fixed_size", md.privateSegmentFixedSize},
        {".vgpr_spill_count", md.vgprSpillCount},
        {".sgpr_spill_count", md.sgprSpillCount},
        {".kernarg_segment_size", md.kernargSegmentSize},
        {".wavefront_size", md.wavefrontSize},
    };
    for (auto &field : fields)
      if (Error error = readField(kernel, doc, name, field.key, field.field))
        return std::move(error);
  }
  return result;
}

Expected<StringMap<HSACOKernelMetadata>>
readHSACOKernelMetadata(ArrayRef<uint8_t> hsaco) {
  using ELFT = object::ELF64LE;
  Expected<object::ELFFile<ELFT>> file = object::ELFFile<ELFT>::create(
      StringRef(reinterpret_cast<const char *>(hsaco.data()), hsaco.size()));
  if (!file)
    return file.takeError();
  if (file->getHeader().e_machine != ELF::EM_AMDGPU)
    return makeError("not an AMDGPU code object");
  Expected<typename ELFT::ShdrRange> sections = file->sections();
  if (!sections)
    return sections.takeError();
  for (const typename ELFT::Shdr &section : *sections) {
    if (section.sh_type != ELF::SHT_NOTE)
      continue;
    Error error = Error::success();
    for (const typename ELFT::Note &note : file->notes(section, error)) {
      if (note.getName() != "AMDGPU" ||
          note.getType() != ELF::NT_AMDGPU_METADATA)
        continue;
      // Consume `error` before returning: the iterator checked it.
      cantFail(std::move(error));
      return parseMetadata(note.getDescAsStringRef(section.sh_addralign));
    }
    if (error)
      return std::move(error);
  }
  return makeError("the code object has no amdhsa metadata note");
}

} // namespace mlir::kiln
