// Executable cache and executables of the sample driver. The device runs
// host executables ("elf-so-v1", kiln/host_abi.h): ELF shared objects that
// define one function per export. The bytes arrive in memory (from the
// .vmfb), so they are written to an anonymous memfd and dlopen'ed through
// /proc/self/fd, which needs no temporary file and leaves nothing behind.
#define _GNU_SOURCE  // memfd_create

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sample_driver.h"

// The format string of host executables (KILN_HOST_FORMAT in the runtime's
// module constants, which are not installed).
#define SAMPLE_EXECUTABLE_FORMAT "elf-so-v1"

typedef struct sample_executable_t {
  kiln_hal_executable_t base;
  void* library;  // dlopen handle
  // Our copy of the export table (base.exports points here); the core reads
  // it to validate dispatches, and kernel errors name the export.
  kiln_hal_executable_export_t* exports;
  kiln_host_kernel_fn_t* kernels;  // one per export
} sample_executable_t;

static void executable_destroy(kiln_hal_resource_t* resource) {
  sample_executable_t* executable = (sample_executable_t*)resource;
  for (uint32_t i = 0; i < executable->base.export_count; ++i)
    free((char*)executable->exports[i].name);
  free(executable->exports);
  free(executable->kernels);
  if (executable->library) dlclose(executable->library);
  free(executable);
}

// Executables have nothing to do but be destroyed: the vtable exists so the
// HAL can free them and so we can recognize our own (see
// sample_executable_kernel).
static const kiln_hal_executable_vtable_t executable_vtable = {
    executable_destroy,
};

kiln_host_kernel_fn_t sample_executable_kernel(kiln_hal_executable_t* base,
                                               uint32_t ordinal) {
  if (!base || base->resource.vtable != &executable_vtable) return NULL;
  sample_executable_t* executable = (sample_executable_t*)base;
  return ordinal < base->export_count ? executable->kernels[ordinal] : NULL;
}

// dlopen()s |length| bytes of a shared object held in memory.
static kiln_status_t load_from_memory(const void* data, size_t length,
                                      void** out_library) {
  if (length == 0)
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "host executable is empty");
  // The name shows in /proc/<pid>/maps and in debuggers' library lists.
  int fd = memfd_create("kiln_sample_executable", MFD_CLOEXEC);
  if (fd < 0)
    return sample_status(KILN_STATUS_UNAVAILABLE, "memfd_create failed: %s",
                         strerror(errno));
  const uint8_t* bytes = (const uint8_t*)data;
  size_t written = 0;
  while (written < length) {
    ssize_t n = write(fd, bytes + written, length - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = errno;
      close(fd);
      return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                           "writing a host executable to a memfd failed: %s",
                           strerror(error));
    }
    written += (size_t)n;
  }
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  // RTLD_LOCAL: kernels of different executables may share symbol names.
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  // The mapping keeps the file alive; the descriptor is no longer needed.
  close(fd);
  if (!library) {
    const char* error = dlerror();
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "cannot load the host executable (%zu bytes): %s",
                         length, error ? error : "unknown dlopen error");
  }
  *out_library = library;
  return NULL;
}

//===----------------------------------------------------------------------===//
// Executable cache
//===----------------------------------------------------------------------===//
// A cache prepares executables for one device. Real drivers may keep
// compiled binaries here (a JIT's output, for example); preparing a shared
// object is cheap, so the sample keeps nothing.

typedef struct sample_executable_cache_t {
  kiln_hal_executable_cache_t base;
} sample_executable_cache_t;

static void cache_destroy(kiln_hal_resource_t* resource) {
  free(resource);  // the resource begins the object
}

// Lets the module loader pick the variant of a .vmfb this device runs before
// trying to load any.
static bool cache_can_prepare_format(kiln_hal_executable_cache_t* base,
                                     const char* format) {
  (void)base;
  return strcmp(format, SAMPLE_EXECUTABLE_FORMAT) == 0;
}

static kiln_status_t cache_prepare_executable(
    kiln_hal_executable_cache_t* base,
    const kiln_hal_executable_params_t* params,
    kiln_hal_executable_t** out_executable) {
  if (!cache_can_prepare_format(base, params->format))
    return sample_status(KILN_STATUS_INCOMPATIBLE,
                         "the sample driver runs '%s' executables, not '%s'",
                         SAMPLE_EXECUTABLE_FORMAT, params->format);
  sample_executable_t* executable =
      (sample_executable_t*)calloc(1, sizeof(*executable));
  uint32_t count = params->export_count;
  if (executable && count) {
    executable->exports = (kiln_hal_executable_export_t*)calloc(
        count, sizeof(kiln_hal_executable_export_t));
    executable->kernels =
        (kiln_host_kernel_fn_t*)calloc(count, sizeof(kiln_host_kernel_fn_t));
  }
  if (!executable || (count && (!executable->exports || !executable->kernels))) {
    if (executable) executable_destroy(&executable->base.resource);
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory preparing an executable");
  }
  kiln_hal_resource_initialize(&executable_vtable, &executable->base.resource);
  executable->base.exports = executable->exports;
  kiln_status_t status = load_from_memory(params->data, params->data_length,
                                          &executable->library);
  for (uint32_t i = 0; i < count && !status; ++i) {
    const kiln_hal_executable_export_t* source = &params->exports[i];
    void* symbol = dlsym(executable->library, source->name);
    if (!symbol) {
      status = sample_status(KILN_STATUS_INVALID_ARGUMENT,
                             "host executable does not define export %u '%s' "
                             "(the binary and its export table disagree)",
                             i, source->name);
      break;
    }
    char* name = strdup(source->name);
    if (!name) {
      status = sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory preparing an executable");
      break;
    }
    executable->exports[i] = *source;
    executable->exports[i].name = name;
    // POSIX guarantees dlsym's result converts to a function pointer.
    *(void**)&executable->kernels[i] = symbol;
    executable->base.export_count = i + 1;  // what destroy must free
  }
  if (status) {
    executable_destroy(&executable->base.resource);
    return status;
  }
  *out_executable = &executable->base;
  return NULL;
}

static const kiln_hal_executable_cache_vtable_t cache_vtable = {
    cache_destroy,
    cache_can_prepare_format,
    cache_prepare_executable,
};

kiln_status_t sample_executable_cache_create(
    kiln_hal_executable_cache_t** out_cache) {
  sample_executable_cache_t* cache =
      (sample_executable_cache_t*)calloc(1, sizeof(*cache));
  if (!cache)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory creating an executable cache");
  kiln_hal_resource_initialize(&cache_vtable, &cache->base.resource);
  *out_cache = &cache->base;
  return NULL;
}
