// The collective communication library of the hip driver: NCCL on the
// NVIDIA platform, RCCL on the AMD one (same C API). Loaded with dlopen the
// first time a process uses a collective channel, so that machines without
// it run everything else.
//
// Only what the driver uses is declared here (no NCCL header is needed):
// opaque communicators, the 128-byte unique id, and the enum values below,
// which NCCL and RCCL share. The symbols are listed in
// dynamic_symbol_tables.h.
//
// Ownership: the library handle is never closed (communicators may be
// destroyed at process exit). NcclLibrary is immutable after loading, so
// thread-safe; NCCL itself is thread-safe per communicator as documented.
#ifndef KILN_DRIVERS_HIP_NCCL_LIBRARY_H_
#define KILN_DRIVERS_HIP_NCCL_LIBRARY_H_

#include <cstddef>
#include <memory>
#include <string>

#include "drivers/hip/hip_platform.h"
#include "kiln/status.h"

namespace kiln::hip {

using ncclComm_t = struct NcclOpaqueComm*;
struct ncclUniqueId {
  char internal[128];
};

// ncclDataType_t.
enum NcclDataType : int {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
};

// ncclRedOp_t.
enum NcclRedOp : int {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
};

// ncclResult_t values the driver tests for.
constexpr int ncclSuccess = 0;
constexpr int ncclInvalidArgument = 4;
constexpr int ncclInvalidUsage = 5;
constexpr int ncclInProgress = 7;

// Library paths and their environment overrides (docs/drivers.md).
#define KILN_HIP_NCCL_LIBRARY_ENV "KILN_HIP_NCCL_LIBRARY"
#define KILN_HIP_RCCL_LIBRARY_ENV "KILN_HIP_RCCL_LIBRARY"

struct NcclLibrary {
  std::string path;     // as given to dlopen
  const char* kind = "NCCL";  // or "RCCL"
  int version = 0;      // ncclGetVersion: 22803 = 2.28.3
#define KILN_NCCL_REQUIRED(name, ret, params) ret(*name) params = nullptr;
#define KILN_NCCL_OPTIONAL(name, ret, params) ret(*name) params = nullptr;
#include "drivers/hip/dynamic_symbol_tables.h"

  // "2.28.3".
  std::string versionText() const;
  // Turns a failed call into a status naming |what|, the library's error
  // string and the code; OK for ncclSuccess. Invalid argument/usage errors
  // become INVALID_ARGUMENT, the rest |code|.
  kiln_status_t check(int result, const char* what,
                      kiln_status_code_t code = KILN_STATUS_INTERNAL) const;
};

// Loads the library for platform |platformName| ("nvidia": libnccl.so.2 or
// $KILN_HIP_NCCL_LIBRARY; "amd": librccl.so.1, librccl.so or
// $KILN_HIP_RCCL_LIBRARY). UNAVAILABLE naming every path tried, what dlopen
// said and the variable to set, or the functions a library lacks.
kiln_status_t loadNcclLibrary(const std::string& platformName,
                              std::shared_ptr<const NcclLibrary>* out);

}  // namespace kiln::hip

#endif  // KILN_DRIVERS_HIP_NCCL_LIBRARY_H_
