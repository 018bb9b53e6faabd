//===- TargetRegistry.h - The code generation targets by name ---*- C++ -*-===//
//
// What the compile driver knows about targets: each target folder registers
// its name ("host", "rocm", "cuda"), a one-line description, the
// kiln-compile options it owns and a factory of its TargetBackend. The
// driver parses --target and the targets' flags against a registry and
// builds backends through the factories, so it names no target.
//
// Registration is explicit, not by static initializers (which a static
// library link drops): each target folder defines
// `void register<Name>Target(TargetRegistry &)`, and registerAllTargets()
// calls those of the folders of compiler/lib/Target, through an include
// that compiler/lib/Target/CMakeLists.txt generates.
//
// A registry is filled once and then only read; reading it is thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_TARGETREGISTRY_H_
#define KILN_TARGET_TARGETREGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kiln/Target/TargetBackend.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

namespace mlir::kiln {

// The options of a compile that any target's factory may read; the driver
// owns their flags.
struct SharedTargetOptions {
  // --gpu-opt-level: LLVM optimization level (0-3) of device kernels.
  unsigned gpuOptLevel = 3;
  // --gpu-stage-rows: row kernels' held rows in shared memory (auto,
  // always, never; see kiln-gpu-lower-rows).
  std::string gpuStageRows = "auto";
};

// The value of one target option: a comma-separated list (each item once,
// none empty), text as written, a bool (--flag, --flag=true|1, else false)
// or an optimization level 0 to 3.
using TargetOptionValue =
    std::variant<std::vector<std::string>, std::string, bool, unsigned>;

// One kiln-compile flag a target owns.
struct TargetOption {
  enum class Kind { StringList, String, Bool, Level };
  // The flag without "--": "rocm-chip".
  std::string name;
  Kind kind = Kind::String;
  // Of the value's type for `kind`.
  TargetOptionValue defaultValue;
  // --help text, and the value placeholder it shows ("gfx942,gfx1100").
  std::string help;
  std::string valueName;
  // Given without its target in --target, the flag is an error ("--rocm-chip
  // needs --target=rocm"); otherwise it is accepted and unused.
  bool needsTarget = false;
  // Checks a value of the selected targets (null: any value of the kind).
  // The driver reports the error as "--<name>: <message>".
  std::function<llvm::Error(const TargetOptionValue &)> verify;
};

// Values of target options by flag name.
class TargetOptionValues {
public:
  void set(StringRef name, TargetOptionValue value) {
    values[name] = std::move(value);
  }
  bool contains(StringRef name) const { return values.contains(name); }
  // The value of `name`, which must be present with that type.
  const std::vector<std::string> &getList(StringRef name) const;
  const std::string &getString(StringRef name) const;
  bool getBool(StringRef name) const;
  unsigned getLevel(StringRef name) const;
  const TargetOptionValue &get(StringRef name) const;

private:
  llvm::StringMap<TargetOptionValue> values;
};

// One registered target.
struct TargetInfo {
  // Its --target name.
  std::string name;
  // One line for --help.
  std::string description;
  std::vector<TargetOption> options;
  // Makes the backend from the target's option values (every option of
  // `options`, defaults where not given) and the shared options.
  std::function<std::unique_ptr<TargetBackend>(const TargetOptionValues &,
                                               const SharedTargetOptions &)>
      create;
  // Whether its kernels run on GPUs: the program's other collectives then
  // run on the GPU collective libraries (NCCL/RCCL).
  bool gpu = false;
  // Whether it is compiled for when --target is not given (one target at
  // most; none: the first registered).
  bool isDefault = false;
};

class TargetRegistry {
public:
  // Adds `target`, whose name and option names must be new, and which may be
  // the default only if no other is (programming errors otherwise: reported
  // with report_fatal_error).
  void add(TargetInfo target);
  // Null when no target is called `name`.
  const TargetInfo *lookup(StringRef name) const;
  // The target owning flag `name` (without "--"), and the option; null when
  // no target owns it.
  const TargetInfo *lookupOption(StringRef name,
                                 const TargetOption **option = nullptr) const;
  // In registration order.
  ArrayRef<TargetInfo> getTargets() const { return targets; }
  // "cuda, host, rocm" (registration order).
  std::string getTargetNames() const;
  // The target compiled for when --target is not given.
  StringRef getDefaultTarget() const;
  // The option values of `target` (every option, at its default) overlaid
  // with those of `given` that it owns.
  TargetOptionValues getOptionValues(const TargetInfo &target,
                                     const TargetOptionValues &given) const;

  // The registry of the targets built into Kiln (registerAllTargets), made
  // on first use.
  static const TargetRegistry &getGlobal();

private:
  std::vector<TargetInfo> targets;
};

// Registers the target of every folder of compiler/lib/Target, in the
// folders' alphabetical order.
void registerAllTargets(TargetRegistry &registry);

} // namespace mlir::kiln

#endif // KILN_TARGET_TARGETREGISTRY_H_
