//===- ROCMDeviceLibs.h - AMD device-library linking -------------*- C++ -*-===//
//
// Links the ocml/ockl bitcode libraries into a kernel module when it calls
// them, and defines the oclc control constants those libraries read.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_TARGET_ROCM_ROCMDEVICELIBS_H_
#define KILN_LIB_TARGET_ROCM_ROCMDEVICELIBS_H_

#include "kiln/Target/ROCM/ROCMTarget.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::kiln {

// True for the transcendental intrinsics (GPUTargetUtils.h) the AMDGPU
// backend expands itself: f32/f16 exp, exp2, exp10, log, log2, log10, sin,
// cos (hardware v_exp_f32, v_log_f32, v_sin_f32 with range reduction).
bool isNativeAMDGPUTranscendental(llvm::StringRef name, llvm::Type *scalarType);

// Replaces the calls of scalar transcendental intrinsics the AMDGPU backend
// cannot expand (f64 math, tanh, atan2, pow, ...) with calls of the
// equivalent ocml functions (__ocml_tanh_f32, ...), which
// linkROCMDeviceLibs then provides.
void replaceTranscendentalsWithOCML(llvm::Module &module);

// Default places searched for ocml.bc/ockl.bc when no directory is given.
llvm::ArrayRef<llvm::StringRef> getDefaultROCMDeviceLibsDirs();

// When `module` declares __ocml_*/__ockl_* functions, links the libraries
// that define them from `libsDir` (or the first default directory holding
// them) and defines the oclc control constants for `chip`. Leaves `module`
// unchanged otherwise. Not thread-safe for one module; each call reads the
// bitcode files afresh into the module's context.
llvm::Error linkROCMDeviceLibs(llvm::Module &module, const ROCMChipInfo &chip,
                               llvm::StringRef libsDir);

} // namespace mlir::kiln

#endif // KILN_LIB_TARGET_ROCM_ROCMDEVICELIBS_H_
