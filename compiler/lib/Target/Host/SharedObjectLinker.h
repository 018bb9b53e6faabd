//===- SharedObjectLinker.h - In-process ELF linking ------------*- C++ -*-===//
//
// Links one x86-64 ELF relocatable object into a shared object with lld, in
// process (no external tool), and checks what the result imports.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_TARGET_HOST_SHAREDOBJECTLINKER_H_
#define KILN_LIB_TARGET_HOST_SHAREDOBJECTLINKER_H_

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kiln {

// Links `object` with `ld.lld -shared`. Thread-safe (lld keeps global state,
// so calls are serialized).
llvm::Expected<std::vector<uint8_t>>
linkSharedObject(llvm::ArrayRef<char> object);

// Names of the undefined dynamic symbols of an ELF shared object.
llvm::Expected<std::vector<std::string>>
getUndefinedDynamicSymbols(llvm::ArrayRef<uint8_t> sharedObject);

// True for the math library functions a host kernel may import.
bool isAllowedLibmSymbol(llvm::StringRef name);

} // namespace mlir::kiln

#endif // KILN_LIB_TARGET_HOST_SHAREDOBJECTLINKER_H_
