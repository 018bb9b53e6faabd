// Constants shared by the .vmfb writer (kiln-compile) and reader (runtime).
#ifndef KILN_SCHEMAS_MODULE_CONSTANTS_H_
#define KILN_SCHEMAS_MODULE_CONSTANTS_H_

// Module.version written by this compiler and accepted by this runtime.
// Version 2: the file ends in an integrity trailer (module_trailer.h).
// Version 3: functions may hold symmetric windows (Function.windows) and
// commands may bind them (BufferSpace WindowData/WindowSignals/WindowPeers).
// Version 4: rodata segments may be load-time parameters (Rodata.parameter:
// a name and a tensor type, no data).
#define KILN_MODULE_VERSION 4u

// ExecutableVariant.format of host shared objects following host_abi.h.
#define KILN_HOST_FORMAT "elf-so-v1"

// ExecutableVariant.format of AMD GPU code objects (amdhsa ELF, code object
// v5) and of NVIDIA PTX text (NUL-terminated), one variant per chip.
#define KILN_ROCM_FORMAT "hsaco"
#define KILN_CUDA_FORMAT "ptx"

#endif  // KILN_SCHEMAS_MODULE_CONSTANTS_H_
