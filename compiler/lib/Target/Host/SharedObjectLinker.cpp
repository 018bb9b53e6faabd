//===- SharedObjectLinker.cpp - In-process ELF linking --------------------===//

#include "SharedObjectLinker.h"

#include "kiln/Target/TargetBackend.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <shared_mutex>

LLD_HAS_DRIVER(elf)

using namespace llvm;

namespace mlir::kiln {

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

namespace {

std::shared_mutex &codegenMutex() {
  static std::shared_mutex mutex;
  return mutex;
}
thread_local int scopeDepth = 0;

// Exclusive use of the process for a link; the calling thread's shared
// CodegenScope (if any) is released meanwhile and taken again after.
struct LinkLock {
  LinkLock() {
    if (scopeDepth > 0)
      codegenMutex().unlock_shared();
    codegenMutex().lock();
  }
  ~LinkLock() {
    codegenMutex().unlock();
    if (scopeDepth > 0)
      codegenMutex().lock_shared();
  }
};

} // namespace

mlir::kiln::CodegenScope::CodegenScope() {
  if (scopeDepth++ == 0)
    codegenMutex().lock_shared();
}

mlir::kiln::CodegenScope::~CodegenScope() {
  if (--scopeDepth == 0)
    codegenMutex().unlock_shared();
}

Expected<std::vector<uint8_t>> linkSharedObject(ArrayRef<char> object) {
  SmallString<128> objectPath, outputPath;
  int objectFd;
  if (std::error_code ec = sys::fs::createTemporaryFile("kiln-host", "o",
                                                        objectFd, objectPath))
    return makeError("cannot create a temporary object file: " + ec.message());
  FileRemover objectRemover(objectPath);
  {
    raw_fd_ostream os(objectFd, /*shouldClose=*/true);
    os.write(object.data(), object.size());
    os.close();
    if (os.has_error())
      return makeError("cannot write " + objectPath + ": " +
                       os.error().message());
  }
  if (std::error_code ec =
          sys::fs::createTemporaryFile("kiln-host", "so", outputPath))
    return makeError("cannot create a temporary output file: " + ec.message());
  FileRemover outputRemover(outputPath);

  std::string diagnostics;
  raw_string_ostream diagOs(diagnostics);
  // Undefined symbols are allowed here (libm is resolved when the driver
  // dlopens the object); the caller checks the import list instead.
  const char *args[] = {"ld.lld",      "-shared", "-z",         "noexecstack",
                        "--hash-style=both",      "-o",         outputPath.c_str(),
                        objectPath.c_str()};
  lld::Result result;
  {
    // lld keeps global state and resets cl::opts: it runs alone, outside
    // every thread's CodegenScope (this thread's included, for the link).
    LinkLock lock;
    result = lld::lldMain(args, diagOs, diagOs, {{lld::Gnu, &lld::elf::link}});
  }
  if (result.retCode != 0)
    return makeError("lld failed to link the shared object: " + diagnostics);

  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(outputPath, /*IsText=*/false);
  if (!buffer)
    return makeError("cannot read back " + outputPath + ": " +
                     buffer.getError().message());
  StringRef bytes = (*buffer)->getBuffer();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

Expected<std::vector<std::string>>
getUndefinedDynamicSymbols(ArrayRef<uint8_t> sharedObject) {
  MemoryBufferRef ref(
      StringRef(reinterpret_cast<const char *>(sharedObject.data()),
                sharedObject.size()),
      "kernel.so");
  Expected<std::unique_ptr<object::ObjectFile>> file =
      object::ObjectFile::createObjectFile(ref);
  if (!file)
    return file.takeError();
  auto *elf = dyn_cast<object::ELFObjectFileBase>(file->get());
  if (!elf)
    return makeError("not an ELF file");
  std::vector<std::string> names;
  for (const object::ELFSymbolRef &symbol : elf->getDynamicSymbolIterators()) {
    Expected<uint32_t> flags = symbol.getFlags();
    if (!flags)
      return flags.takeError();
    if (!(*flags & object::SymbolRef::SF_Undefined))
      continue;
    Expected<StringRef> name = symbol.getName();
    if (!name)
      return name.takeError();
    if (!name->empty())
      names.push_back(name->str());
  }
  return names;
}

bool isAllowedLibmSymbol(StringRef name) {
  // C99 <math.h> functions (and sincos), double and float forms.
  static const StringSet<> libm = [] {
    StringSet<> set;
    for (const char *base :
         {"acos",  "acosh", "asin",  "asinh",     "atan",  "atan2", "atanh",
          "cbrt",  "ceil",  "copysign", "cos",    "cosh",  "erf",   "erfc",
          "exp",   "exp2",  "expm1", "fabs",      "fdim",  "floor", "fma",
          "fmax",  "fmin",  "fmod",  "hypot",     "ldexp", "lgamma", "log",
          "log10", "log1p", "log2",  "nearbyint", "pow",   "remainder",
          "rint",  "round", "roundeven", "sin",   "sinh",  "sqrt",  "tan",
          "tanh",  "tgamma", "trunc", "frexp",    "modf",
          // x86-64 code generation turns sin and cos of one value into
          // one sincos call (GNU extension; glibc's and musl's libm have
          // it).
          "sincos"}) {
      set.insert(base);
      set.insert((Twine(base) + "f").str());
    }
    return set;
  }();
  return libm.contains(name);
}

} // namespace mlir::kiln
