#include "base/dynamic_library.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>

namespace kiln {

DynamicLibrary::~DynamicLibrary() {
  if (handle) dlclose(handle);
  if (fd >= 0) close(fd);
}

static std::string lastDlError() {
  const char* error = dlerror();
  return error ? error : "unknown dlopen error";
}

kiln_status_t DynamicLibrary::load(const char* path,
                                   std::unique_ptr<DynamicLibrary>* outLibrary) {
  outLibrary->reset();
  if (!path || !*path)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "empty shared library path");
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return kiln_make_status(KILN_STATUS_NOT_FOUND,
                            "cannot load shared library '%s': %s", path,
                            lastDlError().c_str());
  outLibrary->reset(new DynamicLibrary(handle, -1, path));
  return nullptr;
}

kiln_status_t DynamicLibrary::loadFromMemory(
    const char* debugName, const void* data, size_t size,
    std::unique_ptr<DynamicLibrary>* outLibrary) {
  outLibrary->reset();
  if (!data || size == 0)
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "shared object '%s' is empty", debugName);
  int fd = memfd_create(debugName, MFD_CLOEXEC);
  if (fd < 0)
    return kiln_make_status(KILN_STATUS_UNAVAILABLE,
                            "memfd_create for '%s' failed: %s", debugName,
                            strerror(errno));
  const char* bytes = static_cast<const char*>(data);
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, bytes + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = errno;
      close(fd);
      return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                              "writing '%s' to a memfd failed: %s", debugName,
                              strerror(error));
    }
    written += size_t(n);
  }
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string error = lastDlError();
    close(fd);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "cannot load shared object '%s' (%zu bytes): %s",
                            debugName, size, error.c_str());
  }
  outLibrary->reset(new DynamicLibrary(handle, fd, path));
  return nullptr;
}

void* DynamicLibrary::symbol(const char* name) const {
  return dlsym(handle, name);
}

}  // namespace kiln
