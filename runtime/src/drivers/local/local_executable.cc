#include "drivers/local/local_executable.h"

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "base/dynamic_library.h"
#include "drivers/common/export_table.h"
#include "schemas/module_constants.h"

namespace kiln::local {
namespace {

struct LocalExecutable {
  kiln_hal_executable_t base;
  std::unique_ptr<DynamicLibrary> library;
  drivers::ExportTable exportTable;
  std::vector<kiln_host_kernel_fn_t> kernels;
};

void destroyExecutable(kiln_hal_resource_t* resource) {
  delete reinterpret_cast<LocalExecutable*>(resource);
}

const kiln_hal_executable_vtable_t kExecutableVTable = {destroyExecutable};

struct LocalExecutableCache {
  kiln_hal_executable_cache_t base;
};

void destroyCache(kiln_hal_resource_t* resource) {
  delete reinterpret_cast<LocalExecutableCache*>(resource);
}

bool canPrepareFormat(kiln_hal_executable_cache_t*, const char* format) {
  return std::strcmp(format, KILN_HOST_FORMAT) == 0;
}

kiln_status_t prepareExecutable(kiln_hal_executable_cache_t*,
                                const kiln_hal_executable_params_t* params,
                                kiln_hal_executable_t** outExecutable) {
  std::unique_ptr<LocalExecutable> executable(new (std::nothrow)
                                                  LocalExecutable());
  if (!executable)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory preparing an executable");
  // Name the memfd after the first export so /proc/<pid>/maps and debuggers
  // show which executable a kernel came from.
  std::string debugName = "kiln_host_executable";
  if (params->export_count > 0)
    debugName += std::string("_") + params->exports[0].name;
  KILN_RETURN_IF_ERROR(DynamicLibrary::loadFromMemory(
      debugName.c_str(), params->data, params->data_length,
      &executable->library));
  executable->kernels.reserve(params->export_count);
  for (uint32_t i = 0; i < params->export_count; ++i) {
    const kiln_hal_executable_export_t& source = params->exports[i];
    void* symbol = executable->library->symbol(source.name);
    if (!symbol)
      return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                              "host executable does not define export %u "
                              "'%s' (the binary and its export table "
                              "disagree)",
                              i, source.name);
    executable->kernels.push_back(
        reinterpret_cast<kiln_host_kernel_fn_t>(symbol));
  }
  kiln_hal_resource_initialize(&kExecutableVTable,
                               &executable->base.resource);
  executable->exportTable.assign(*params, &executable->base);
  *outExecutable = &executable.release()->base;
  return nullptr;
}

const kiln_hal_executable_cache_vtable_t kCacheVTable = {
    destroyCache, canPrepareFormat, prepareExecutable};

}  // namespace

kiln_status_t createExecutableCache(kiln_hal_executable_cache_t** outCache) {
  auto* cache = new (std::nothrow) LocalExecutableCache();
  if (!cache)
    return kiln_make_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory creating an executable cache");
  kiln_hal_resource_initialize(&kCacheVTable, &cache->base.resource);
  *outCache = &cache->base;
  return nullptr;
}

kiln_host_kernel_fn_t lookupKernel(kiln_hal_executable_t* executable,
                                   uint32_t ordinal) {
  if (!executable || executable->resource.vtable != &kExecutableVTable)
    return nullptr;
  auto* local = reinterpret_cast<LocalExecutable*>(executable);
  return ordinal < local->kernels.size() ? local->kernels[ordinal] : nullptr;
}

}  // namespace kiln::local
