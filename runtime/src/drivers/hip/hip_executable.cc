#include "drivers/hip/hip_executable.h"

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "drivers/common/export_table.h"
#include "schemas/module_constants.h"

namespace kiln::hip {
namespace {

struct HipExecutable {
  kiln_hal_executable_t base;
  std::shared_ptr<const DeviceContext> context;
  hipModule_t module = nullptr;
  drivers::ExportTable exportTable;
  std::vector<KernelInfo> kernels;

  ~HipExecutable() {
    if (!module) return;
    kiln_status_t status = context->bind();
    if (!status) context->platform->moduleUnload(module);
    freeStatus(status);
  }
};

void destroyExecutable(kiln_hal_resource_t* resource) {
  delete reinterpret_cast<HipExecutable*>(resource);
}

const kiln_hal_executable_vtable_t kExecutableVTable = {destroyExecutable};

struct HipExecutableCache {
  kiln_hal_executable_cache_t base;
  std::shared_ptr<const DeviceContext> context;
};

HipExecutableCache* cast(kiln_hal_executable_cache_t* cache) {
  return reinterpret_cast<HipExecutableCache*>(cache);
}

void destroyCache(kiln_hal_resource_t* resource) {
  delete cast(reinterpret_cast<kiln_hal_executable_cache_t*>(resource));
}

std::string deviceTarget(const DeviceContext& context) {
  return std::string(context.platform->targetBackend()) + ":" + context.arch;
}

// "sm_90" and "sm_90a" -> 90; 0 if not of that form.
unsigned smNumber(const std::string& arch) {
  if (arch.compare(0, 3, "sm_") != 0) return 0;
  unsigned number = 0;
  for (size_t i = 3; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i)
    number = number * 10 + unsigned(arch[i] - '0');
  return number;
}

// "sm_90a": PTX with the chip's arch-specific features (wgmma), which the
// driver compiles for that very chip only, not for newer ones.
bool isArchSpecific(const std::string& arch) {
  return smNumber(arch) != 0 && arch.back() == 'a';
}

// Whether a PTX target `wanted` ("sm_80", "sm_90a") runs on a chip `have`
// ("sm_90"): PTX is JIT-compiled forward, except the arch-specific forms.
bool ptxRunsOn(const std::string& wanted, const std::string& have) {
  unsigned wantedSm = smNumber(wanted), haveSm = smNumber(have);
  if (!wantedSm || !haveSm) return false;
  return isArchSpecific(wanted) ? wantedSm == haveSm : wantedSm <= haveSm;
}

bool canPrepareFormat(kiln_hal_executable_cache_t* base, const char* format) {
  const DeviceContext& context = *cast(base)->context;
  // The device's own target, and its arch-specific form ("cuda:sm_90a" on
  // an sm_90 device), count as built for this very chip.
  std::string target = deviceTarget(context);
  return std::strcmp(format, context.platform->executableFormat()) == 0 ||
         format == target ||
         (smNumber(context.arch) != 0 && format == target + "a");
}

// A PTX module states the oldest chip it runs on (".target sm_80"); the
// driver JIT-compiles it for newer chips but refuses older ones.
kiln_status_t checkPtxTarget(const DeviceContext& context,
                             const std::string& ptx) {
  size_t position = ptx.find(".target");
  if (position == std::string::npos) return nullptr;  // the loader will judge
  size_t begin = ptx.find_first_not_of(" \t", position + 7);
  if (begin == std::string::npos) return nullptr;
  size_t end = ptx.find_first_of(" \t,\r\n", begin);
  std::string target = ptx.substr(begin, end - begin);
  if (smNumber(target) && smNumber(context.arch) &&
      !ptxRunsOn(target, context.arch))
    return makeStatus(
        KILN_STATUS_INCOMPATIBLE, "PTX for %s cannot run on hip://%d (%s)%s",
        target.c_str(), context.ordinal, context.arch.c_str(),
        isArchSpecific(target) ? ": arch-specific PTX runs on its own chip only"
                               : "");
  return nullptr;
}

// A module variant's target against the device: the backend must be the
// platform's; a "cuda:sm_X" variant runs on sm >= X (PTX is JIT-compiled
// forward), a "rocm:gfxN" one only on that very chip.
kiln_status_t checkVariantTarget(const DeviceContext& context,
                                 const std::string& target) {
  std::string backend = context.platform->targetBackend();
  std::string device = deviceTarget(context);
  size_t colon = target.find(':');
  std::string variantBackend = target.substr(0, colon);
  std::string chip = colon == std::string::npos ? "" : target.substr(colon + 1);
  bool runs = variantBackend == backend;
  if (runs && backend == "cuda") {
    runs = ptxRunsOn(chip, context.arch);
  } else if (runs) {
    runs = chip == context.arch;
  }
  if (!runs)
    return makeStatus(KILN_STATUS_INCOMPATIBLE,
                      "executable variant built for '%s' cannot run on "
                      "hip://%d, a %s device%s",
                      target.c_str(), context.ordinal, device.c_str(),
                      backend == "cuda"
                          ? " (PTX runs on its sm or newer ones; "
                            "arch-specific sm_XXa PTX on its own sm only)"
                          : " (code objects run on their own gfx chip only)");
  return nullptr;
}

// The gfx chip of an AMDGPU code object, from its ELF header's e_flags
// (EF_AMDGPU_MACH); "" if unknown.
std::string hsacoChip(const std::vector<char>& image) {
  if (image.size() < 64 || std::memcmp(image.data(), "\x7f" "ELF", 4) != 0)
    return "";
  uint16_t machine = 0;
  uint32_t flags = 0;
  std::memcpy(&machine, image.data() + 18, 2);
  std::memcpy(&flags, image.data() + 48, 4);
  if (machine != 224) return "";  // EM_AMDGPU
  struct Mach {
    uint32_t value;
    const char* chip;
  };
  static const Mach kMachs[] = {
      {0x2f, "gfx908"}, {0x30, "gfx90a"}, {0x3f, "gfx90a"},
      {0x40, "gfx940"}, {0x4b, "gfx941"}, {0x4c, "gfx942"},
      {0x4f, "gfx950"}, {0x41, "gfx1100"}, {0x42, "gfx1101"},
      {0x43, "gfx1102"}, {0x36, "gfx1030"}, {0x4e, "gfx1201"},
      {0x4d, "gfx1200"},
  };
  for (const Mach& mach : kMachs)
    if ((flags & 0xff) == mach.value) return mach.chip;
  return "";
}

kiln_status_t prepareExecutable(kiln_hal_executable_cache_t* base,
                                const kiln_hal_executable_params_t* params,
                                kiln_hal_executable_t** outExecutable) {
  std::shared_ptr<const DeviceContext> context = cast(base)->context;
  Platform& platform = *context->platform;
  if (std::strcmp(params->format, platform.executableFormat()) != 0)
    return makeStatus(KILN_STATUS_INCOMPATIBLE,
                      "executable format '%s' cannot run on hip://%d (%s), "
                      "which loads '%s'",
                      params->format, context->ordinal,
                      deviceTarget(*context).c_str(),
                      platform.executableFormat());
  if (params->target)
    KILN_HIP_RETURN_IF_ERROR(checkVariantTarget(*context, params->target));
  // PTX is text that the loader reads up to a NUL; the module's bytes need
  // not end with one, so load from a terminated copy.
  std::vector<char> image(static_cast<const char*>(params->data),
                          static_cast<const char*>(params->data) +
                              params->data_length);
  image.push_back('\0');
  bool ptx = std::strcmp(params->format, KILN_CUDA_FORMAT) == 0;
  if (ptx) {
    KILN_HIP_RETURN_IF_ERROR(checkPtxTarget(*context, image.data()));
  } else {
    std::string chip = hsacoChip(image);
    if (!chip.empty() && chip != context->arch)
      return makeStatus(KILN_STATUS_INCOMPATIBLE,
                        "HSACO for %s cannot run on hip://%d (%s)",
                        chip.c_str(), context->ordinal, context->arch.c_str());
  }
  std::unique_ptr<HipExecutable> executable(new (std::nothrow)
                                                HipExecutable());
  if (!executable)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory preparing an executable");
  executable->context = context;
  KILN_HIP_RETURN_IF_ERROR(context->bind());
  hipError_t error = platform.moduleLoadData(&executable->module, image.data());
  if (error != hipSuccess) {
    executable->module = nullptr;
    kiln_status_code_t code = error == hipErrorOutOfMemory
                                  ? KILN_STATUS_RESOURCE_EXHAUSTED
                                  : KILN_STATUS_INVALID_ARGUMENT;
    return annotate(context->check(error, "hipModuleLoadData", code),
                    "loading a %zu-byte '%s' code object (corrupt, or built "
                    "for another chip than %s?)",
                    params->data_length, params->format, context->arch.c_str());
  }
  int sharedLimit = 0;
  platform.deviceGetAttribute(&sharedLimit,
                              hipDeviceAttributeSharedMemPerBlockOptin,
                              context->ordinal);
  for (uint32_t i = 0; i < params->export_count; ++i) {
    const kiln_hal_executable_export_t& source = params->exports[i];
    KernelInfo kernel;
    error = platform.moduleGetFunction(&kernel.function, executable->module,
                                       source.name);
    if (error != hipSuccess)
      return annotate(
          context->check(error, "hipModuleGetFunction",
                         KILN_STATUS_INVALID_ARGUMENT),
          "the code object does not define export %u '%s' (the binary and its "
          "export table disagree)",
          i, source.name);
    for (int d = 0; d < 3; ++d)
      kernel.blockSize[d] = source.workgroup_size[d] ? source.workgroup_size[d] : 1;
    // shared_memory_bytes is all the shared memory a workgroup of the
    // kernel uses (module.fbs). What the code object does not reserve
    // statically is dynamic shared memory, passed at every launch (CUDA
    // allows it above 48 KiB only after the function's opt-in).
    if (sharedLimit > 0 && source.shared_memory_bytes > uint32_t(sharedLimit))
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        "export '%s' needs %u bytes of shared memory; "
                        "hip://%d allows %d per workgroup",
                        source.name, source.shared_memory_bytes,
                        context->ordinal, sharedLimit);
    if (source.shared_memory_bytes > 0) {
      int staticBytes = 0;
      error = platform.functionStaticSharedBytes(kernel.function, &staticBytes);
      if (error != hipSuccess)
        return annotate(context->check(error, "hipFuncGetAttribute",
                                       KILN_STATUS_INTERNAL),
                        "reading the static shared memory of export '%s'",
                        source.name);
      if (staticBytes >= 0 && source.shared_memory_bytes > uint32_t(staticBytes))
        kernel.dynamicSharedBytes = source.shared_memory_bytes - staticBytes;
      if (kernel.dynamicSharedBytes > 0) {
        error = platform.functionAllowDynamicSharedBytes(
            kernel.function, int(kernel.dynamicSharedBytes));
        if (error != hipSuccess)
          return annotate(context->check(error, "hipFuncSetAttribute",
                                         KILN_STATUS_INVALID_ARGUMENT),
                          "allowing export '%s' %u bytes of dynamic shared "
                          "memory on hip://%d",
                          source.name, kernel.dynamicSharedBytes,
                          context->ordinal);
      }
    }
    executable->kernels.push_back(kernel);
  }
  kiln_hal_resource_initialize(&kExecutableVTable, &executable->base.resource);
  executable->exportTable.assign(*params, &executable->base);
  *outExecutable = &executable.release()->base;
  return nullptr;
}

const kiln_hal_executable_cache_vtable_t kCacheVTable = {
    destroyCache, canPrepareFormat, prepareExecutable};

}  // namespace

kiln_status_t createExecutableCache(std::shared_ptr<const DeviceContext> context,
                                    kiln_hal_executable_cache_t** outCache) {
  auto* cache = new (std::nothrow) HipExecutableCache();
  if (!cache)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory creating an executable cache");
  kiln_hal_resource_initialize(&kCacheVTable, &cache->base.resource);
  cache->context = std::move(context);
  *outCache = &cache->base;
  return nullptr;
}

const KernelInfo* lookupKernel(kiln_hal_executable_t* executable,
                               uint32_t ordinal) {
  if (!executable || executable->resource.vtable != &kExecutableVTable)
    return nullptr;
  auto* hip = reinterpret_cast<HipExecutable*>(executable);
  return ordinal < hip->kernels.size() ? &hip->kernels[ordinal] : nullptr;
}

}  // namespace kiln::hip
