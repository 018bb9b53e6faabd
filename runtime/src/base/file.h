// Reading whole files that users name (modules, .npy inputs) without trusting
// them to be files: only regular files are read, and never more bytes than
// fstat reported, so /dev/zero, FIFOs and directories are clean errors instead
// of unbounded reads or blocked opens. Thread-safe (stateless).
//
// Compiled into libkiln_runtime (kiln_base) and into kiln_tooling, which
// reaches the runtime only through its public API.
#ifndef KILN_BASE_FILE_H_
#define KILN_BASE_FILE_H_

#include <cstdint>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// Reads the regular file at |path| into |out|. |what| names the file's role
// in messages ("module file"). Errors:
//  - NOT_FOUND (missing) or PERMISSION_DENIED (cannot be opened);
//  - INVALID_ARGUMENT when |path| is not a regular file (a directory, FIFO,
//    socket or device such as /dev/zero; named in the message) or is larger
//    than |max_bytes|;
//  - RESOURCE_EXHAUSTED when its bytes cannot be allocated;
//  - DATA_LOSS on a read error or when the file changes size while read.
kiln_status_t readRegularFile(const char* path, const char* what,
                              uint64_t max_bytes, std::vector<uint8_t>* out);

}  // namespace kiln

#endif  // KILN_BASE_FILE_H_
