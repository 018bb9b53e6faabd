// ModuleExecutor: one verified module prepared on one HAL device.
//
// Creation does all per-device work once:
//   - for each executable, a variant built for the device's exact target
//     (can_prepare_format answers "cuda:sm_90"-style targets too) is
//     preferred; otherwise the first variant whose format the device can
//     prepare (none: INCOMPATIBLE listing the variants' targets);
//   - each rodata segment is uploaded into a device buffer (the module's
//     bytes, or a load-time parameter's, resolved by the caller:
//     parameter_set.h);
//   - each function's command program is recorded into a REUSABLE command
//     buffer whose commands reference binding-table slots for the per-call
//     buffers: slot i = input i, slot n_in + j = output j, slot
//     n_in + n_out = the transient arena. Rodata is referenced directly (its
//     buffers are fixed for the executor's life).
// A call (Submit) then only allocates the outputs and the transient arena,
// fills a binding table and issues one queue_execute.
//
// Functions with collective commands record each collective on the HAL
// channel given for its Function.channels entry (see FunctionChannels), and
// create their symmetric windows (Function.windows) on those channels once,
// here: window creation is collective, so every rank of a channel creates its
// executor for the module concurrently (as kiln_module_load on every device of
// a collective group does). Dispatches bind the windows' buffers directly. A
// function given no channels is recorded as unsupported: Submit returns
// FAILED_PRECONDITION with the reason the caller gave (the rest of the
// module works).
//
// Ownership: holds a reference to the device, the image, the executables,
// rodata buffers and command buffers. Thread-safety: immutable after
// creation; Submit may be called concurrently from many threads.
#ifndef KILN_RUNTIME_SRC_MODULE_EXECUTOR_H_
#define KILN_RUNTIME_SRC_MODULE_EXECUTOR_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kiln/hal/hal.h"
#include "module/hal_ptr.h"
#include "module/module_image.h"
#include "module/parameter_set.h"

namespace kiln {
namespace module {

// The HAL channels of one function: channels[c] serves Function.channels[c]
// (borrowed for Create; the recorded command buffer retains them). Empty for
// a function without channels, or with |unavailable_reason| saying why the
// device has none.
struct FunctionChannels {
  std::vector<kiln_hal_channel_t*> channels;
  std::string unavailable_reason;
};

class ModuleExecutor {
 public:
  // |channels| has one entry per function of the image, or is empty when the
  // device takes part in no collective group. |rodata| holds the bytes of
  // each of the image's rodata segments (ResolveRodata), read only during
  // Create.
  static kiln_status_t Create(std::shared_ptr<const ModuleImage> image,
                              kiln_hal_device_t* device,
                              const std::vector<FunctionChannels>& channels,
                              const std::vector<RodataBytes>& rodata,
                              std::unique_ptr<ModuleExecutor>* out);
  ~ModuleExecutor();

  const ModuleImage& image() const { return *image_; }
  kiln_hal_device_t* device() const { return device_.get(); }

  // Target of the variant chosen for executable |index| (e.g.
  // "host:x86_64").
  const std::string& selected_target(size_t index) const {
    return executables_[index].target;
  }

  // Runs function |function_index| once. |inputs| holds one binding per
  // function input whose length must equal the input's byte size (the caller
  // checked element types and shapes). New output buffers, one reference
  // each owned by the caller, are written to |out_outputs| (one per output).
  // The work starts after |wait| and signals |signal| when done (or fails
  // them). On error nothing is submitted and no outputs are returned.
  // With |profile|, the submission is profiled
  // (kiln_hal_device_queue_execute_profiled): the timings' command indices
  // are indices into the function's command program.
  kiln_status_t Submit(size_t function_index, const kiln_hal_binding_t* inputs,
                       const kiln_hal_semaphore_list_t& wait,
                       const kiln_hal_semaphore_list_t& signal,
                       kiln_hal_buffer_t** out_outputs,
                       kiln_hal_execution_profile_t* profile = nullptr) const;

  // The number of commands in function |function_index|'s program.
  size_t CommandCount(size_t function_index) const;
  // What profiles call command |command| of that program: a dispatch's
  // kernel (export) name, a collective's operation, else its kind.
  // Borrowed from the image or static.
  const char* CommandName(size_t function_index, uint32_t command) const;

 private:
  struct PreparedExecutable {
    HalExecutablePtr executable;
    std::string target;
    const schema::ExecutableVariant* variant = nullptr;  // in image_
  };
  struct RecordedFunction {
    HalCommandBufferPtr command_buffer;  // null when unsupported
    std::vector<HalWindowPtr> windows;   // Function.windows, in order
    std::string unsupported_reason;
    uint32_t slot_count = 0;
    bool uses_transient = false;
  };

  ModuleExecutor() = default;
  kiln_status_t PrepareExecutables();
  kiln_status_t UploadRodata(const std::vector<RodataBytes>& rodata);
  kiln_status_t RecordFunction(const FunctionLayout& layout,
                               const FunctionChannels* channels,
                               RecordedFunction* out);
  // The export a dispatch runs, in the variant prepared for this device
  // (its grid: variants for other targets may count workgroups differently).
  const schema::ExecutableExport* PreparedExport(
      const schema::DispatchCommand& dispatch) const;
  // Translates a module BufferRef into a HAL ref (slot or rodata buffer).
  kiln_hal_buffer_ref_t MakeRef(const FunctionLayout& layout,
                                const RecordedFunction& recorded,
                                const schema::BufferRef& ref,
                                bool* uses_transient) const;
  // Creates the function's windows on their channels (collective: every
  // rank of each channel loads the module).
  kiln_status_t CreateWindows(const FunctionLayout& layout,
                              const FunctionChannels& channels,
                              RecordedFunction* out);

  std::shared_ptr<const ModuleImage> image_;
  HalDevicePtr device_;
  HalExecutableCachePtr cache_;
  std::vector<PreparedExecutable> executables_;
  std::vector<HalBufferPtr> rodata_;
  std::vector<RecordedFunction> functions_;
};

}  // namespace module
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_MODULE_EXECUTOR_H_
