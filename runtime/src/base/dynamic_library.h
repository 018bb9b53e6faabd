// A loaded shared object (dlopen wrapper): from a path (driver plugins) or
// from bytes in memory (host executables, through memfd_create).
//
// Errors are statuses naming the file and dlerror()'s text. The object owns
// the dlopen handle (and the memfd, kept open while the library is loaded so
// that the "/proc/self/fd/N" name stays unique: the dynamic loader treats two
// dlopens of one name as the same library). symbol() is thread-safe.
#ifndef KILN_BASE_DYNAMIC_LIBRARY_H_
#define KILN_BASE_DYNAMIC_LIBRARY_H_

#include <cstddef>
#include <memory>
#include <string>

#include "kiln/status.h"

namespace kiln {

class DynamicLibrary {
 public:
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // dlopen(path, RTLD_NOW | RTLD_LOCAL). NOT_FOUND if it cannot be loaded.
  static kiln_status_t load(const char* path,
                            std::unique_ptr<DynamicLibrary>* outLibrary);

  // Writes |data| to a memfd named |debugName| and loads it. INVALID_ARGUMENT
  // if the bytes are not a loadable shared object.
  static kiln_status_t loadFromMemory(
      const char* debugName, const void* data, size_t size,
      std::unique_ptr<DynamicLibrary>* outLibrary);

  // The address of |name|, or nullptr if the library does not define it.
  void* symbol(const char* name) const;

  const std::string& path() const { return loadedPath; }

 private:
  DynamicLibrary(void* dlHandle, int memfd, std::string path)
      : handle(dlHandle), fd(memfd), loadedPath(std::move(path)) {}
  void* handle;
  int fd;
  std::string loadedPath;
};

}  // namespace kiln

#endif  // KILN_BASE_DYNAMIC_LIBRARY_H_
