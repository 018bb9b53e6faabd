//===- HSACOMetadata.h - Resource usage of HSACO kernels ---------*- C++ -*-===//
//
// Reads the amdhsa metadata note (NT_AMDGPU_METADATA, msgpack) of a linked
// code object: per kernel register counts, LDS, scratch and spills.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_TARGET_ROCM_HSACOMETADATA_H_
#define KILN_LIB_TARGET_ROCM_HSACOMETADATA_H_

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlir::kiln {

struct HSACOKernelMetadata {
  uint32_t vgprCount = 0;
  uint32_t sgprCount = 0;
  uint32_t agprCount = 0;
  uint32_t groupSegmentFixedSize = 0;
  uint32_t privateSegmentFixedSize = 0;
  uint32_t vgprSpillCount = 0;
  uint32_t sgprSpillCount = 0;
  uint32_t kernargSegmentSize = 0;
  uint32_t wavefrontSize = 0;
};

// Kernel name (.name) -> metadata, for every kernel of the code object.
llvm::Expected<llvm::StringMap<HSACOKernelMetadata>>
readHSACOKernelMetadata(llvm::ArrayRef<uint8_t> hsaco);

} // namespace mlir::kiln

#endif // KILN_LIB_TARGET_ROCM_HSACOMETADATA_H_
