//===- ParameterArchive.h - Tensors of a parameter archive ------*- C++ -*-===//
//
// The archives kiln-bind-parameters reads: safetensors files and numpy .npz
// archives (a zip of .npy files, stored as np.savez writes them or deflated
// as np.savez_compressed does). Internal to compiler/lib/InputConversion.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_INPUTCONVERSION_PARAMETERARCHIVE_H_
#define KILN_LIB_INPUTCONVERSION_PARAMETERARCHIVE_H_

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::kiln {

// One tensor of an archive: its element type by the safetensors dtype name
// (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL, ...), its shape and
// its row-major little-endian bytes.
struct ArchiveTensor {
  std::string dtype;
  llvm::SmallVector<int64_t> shape;
  llvm::StringRef data;
};

// An archive read whole; tensors point into `buffer` or, for deflated .npz
// members, into `inflated`.
struct ParameterArchive {
  std::string format; // "safetensors" or "npz"
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::vector<std::unique_ptr<char[]>> inflated;
  llvm::StringMap<ArchiveTensor> tensors;
};

// Reads the archive at `path`, a safetensors or .npz file (told apart by
// content: a zip starts with "PK\3\4"). Errors name the file and what is
// wrong with it.
llvm::Expected<ParameterArchive> readParameterArchive(llvm::StringRef path);
// The same for an archive already in memory, named `path` in errors.
llvm::Expected<ParameterArchive>
readParameterArchive(std::unique_ptr<llvm::MemoryBuffer> buffer,
                     llvm::StringRef path);

} // namespace mlir::kiln

#endif // KILN_LIB_INPUTCONVERSION_PARAMETERARCHIVE_H_
