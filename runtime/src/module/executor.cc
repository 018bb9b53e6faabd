#include "module/executor.h"

#include <algorithm>

#include <cinttypes>
#include <string>
#include <vector>

#include "module/buffer_transfer.h"

namespace kiln {
namespace module {

using namespace kiln::schema;  // NOLINT: schema names are the vocabulary here

ModuleExecutor::~ModuleExecutor() = default;

kiln_status_t ModuleExecutor::Create(
    std::shared_ptr<const ModuleImage> image, kiln_hal_device_t* device,
    const std::vector<FunctionChannels>& channels,
    const std::vector<RodataBytes>& rodata,
    std::unique_ptr<ModuleExecutor>* out) {
  out->reset();
  if (!image || !device) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "module executor needs an image and a device");
  }
  if (!channels.empty() && channels.size() != image->functions().size()) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "module executor got channels for %zu functions; "
                            "the module has %zu", channels.size(),
                            image->functions().size());
  }
  std::unique_ptr<ModuleExecutor> executor(new ModuleExecutor());
  executor->image_ = std::move(image);
  kiln_hal_device_retain(device);
  executor->device_.reset(device);
  KILN_RETURN_IF_ERROR(executor->PrepareExecutables());
  KILN_RETURN_IF_ERROR(executor->UploadRodata(rodata));
  const auto& layouts = executor->image_->functions();
  for (size_t f = 0; f < layouts.size(); ++f) {
    const FunctionLayout& layout = layouts[f];
    RecordedFunction recorded;
    kiln_status_t status = executor->RecordFunction(
        layout, channels.empty() ? nullptr : &channels[f], &recorded);
    if (!kiln_status_is_ok(status)) {
      return kiln_status_annotate(status, "while recording function '%s' of "
                                  "module '%s'", layout.name.c_str(),
                                  executor->image_->source().c_str());
    }
    executor->functions_.push_back(std::move(recorded));
  }
  *out = std::move(executor);
  return kiln_ok_status();
}

kiln_status_t ModuleExecutor::PrepareExecutables() {
  const auto* executables = image_->module().executables();
  if (!executables || executables->size() == 0) return kiln_ok_status();
  kiln_hal_executable_cache_t* cache = nullptr;
  KILN_RETURN_IF_ERROR(kiln_hal_executable_cache_create(device_.get(), &cache));
  cache_.reset(cache);

  for (uint32_t i = 0; i < executables->size(); ++i) {
    const Executable* executable = executables->Get(i);
    const char* name =
        executable->name() ? executable->name()->c_str() : "<unnamed>";
    std::string tried;
    PreparedExecutable prepared;
    // Variants built for this very chip first: a driver that knows its
    // target ("cuda:sm_90", "rocm:gfx942") answers the format query for it
    // too. Then the rest in module order, by binary format (a PTX for an
    // older chip still runs, say).
    std::vector<const ExecutableVariant*> ordered;
    for (const ExecutableVariant* variant : *executable->variants())
      if (variant->target() &&
          kiln_hal_executable_cache_can_prepare_format(
              cache, variant->target()->c_str()))
        ordered.push_back(variant);
    for (const ExecutableVariant* variant : *executable->variants())
      if (std::find(ordered.begin(), ordered.end(), variant) == ordered.end())
        ordered.push_back(variant);
    for (const ExecutableVariant* variant : ordered) {
      if (!tried.empty()) tried += ", ";
      tried += variant->target()->str() + " (" + variant->format()->str() + ")";
      if (!kiln_hal_executable_cache_can_prepare_format(
              cache, variant->format()->c_str())) {
        continue;
      }
      std::vector<kiln_hal_executable_export_t> exports;
      if (variant->exports()) {
        for (const ExecutableExport* exp : *variant->exports()) {
          kiln_hal_executable_export_t desc = {};
          desc.name = exp->name()->c_str();
          for (int d = 0; d < 3; ++d) {
            desc.workgroup_count[d] = exp->workgroup_count()->Get(d);
            desc.workgroup_size[d] =
                exp->workgroup_size() ? exp->workgroup_size()->Get(d) : 1;
          }
          desc.binding_count = exp->binding_count();
          desc.push_constant_count = exp->push_constant_count();
          desc.shared_memory_bytes = exp->shared_memory_bytes();
          exports.push_back(desc);
        }
      }
      kiln_hal_executable_params_t params = {};
      params.format = variant->format()->c_str();
      params.target = variant->target() ? variant->target()->c_str() : nullptr;
      params.data = variant->binary() ? variant->binary()->data() : nullptr;
      params.data_length = variant->binary() ? variant->binary()->size() : 0;
      params.export_count = static_cast<uint32_t>(exports.size());
      params.exports = exports.data();
      kiln_hal_executable_t* hal_executable = nullptr;
      kiln_status_t status = kiln_hal_executable_cache_prepare_executable(
          cache, &params, &hal_executable);
      if (kiln_status_code(status) == KILN_STATUS_INCOMPATIBLE) {
        // The device recognizes the format but not this binary (another
        // chip, say): the next variant may fit.
        kiln_status_free(status);
        continue;
      }
      if (!kiln_status_is_ok(status)) {
        return kiln_status_annotate(
            status, "while preparing executable '%s' variant '%s' of module "
            "'%s'", name, variant->target()->c_str(),
            image_->source().c_str());
      }
      prepared.executable.reset(hal_executable);
      prepared.target = variant->target()->str();
      prepared.variant = variant;
      break;
    }
    if (!prepared.executable) {
      return kiln_make_status(
          KILN_STATUS_INCOMPATIBLE,
          "module '%s': executable '%s' has no variant that device '%s' can "
          "run (variants: %s); recompile for this device's target",
          image_->source().c_str(), name,
          kiln_hal_device_driver_name(device_.get()), tried.c_str());
    }
    executables_.push_back(std::move(prepared));
  }
  return kiln_ok_status();
}

kiln_status_t ModuleExecutor::UploadRodata(
    const std::vector<RodataBytes>& bytes) {
  const auto* rodata = image_->module().rodata();
  if (!rodata) return kiln_ok_status();
  if (bytes.size() != rodata->size()) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "module executor got the bytes of %zu rodata "
                            "segments; module '%s' has %u",
                            bytes.size(), image_->source().c_str(),
                            rodata->size());
  }
  for (uint32_t i = 0; i < rodata->size(); ++i) {
    const Rodata* entry = rodata->Get(i);
    kiln_hal_buffer_t* buffer = nullptr;
    KILN_RETURN_IF_ERROR(AllocateTensorBuffer(device_.get(), bytes[i].size,
                                              entry->alignment(), &buffer));
    rodata_.emplace_back(buffer);
    if (bytes[i].size != 0) {
      kiln_status_t status = WriteBufferFromHost(device_.get(), buffer, 0,
                                                 bytes[i].data, bytes[i].size);
      if (!kiln_status_is_ok(status) && entry->parameter()) {
        return kiln_status_annotate(status,
                                    "while uploading parameter '%s' "
                                    "of module '%s'",
                                    entry->parameter()->name()->c_str(),
                                    image_->source().c_str());
      }
      KILN_RETURN_IF_ERROR(status);
    }
  }
  return kiln_ok_status();
}

kiln_hal_buffer_ref_t ModuleExecutor::MakeRef(const FunctionLayout& layout,
                                              const RecordedFunction& recorded,
                                              const BufferRef& ref,
                                              bool* uses_transient) const {
  kiln_hal_buffer_ref_t result = {};
  result.offset = ref.offset();
  result.length = ref.length();
  const uint32_t input_count = static_cast<uint32_t>(layout.inputs.size());
  const uint32_t output_count = static_cast<uint32_t>(layout.outputs.size());
  switch (ref.space()) {
    case BufferSpace::Input:
      result.slot = ref.index();
      break;
    case BufferSpace::Output:
      result.slot = input_count + ref.index();
      break;
    case BufferSpace::Transient:
      result.slot = input_count + output_count;
      *uses_transient = true;
      break;
    case BufferSpace::Rodata:
      result.buffer = rodata_[ref.index()].get();
      break;
    case BufferSpace::WindowData:
      result.buffer = kiln_hal_window_data(recorded.windows[ref.index()].get());
      break;
    case BufferSpace::WindowSignals:
      result.buffer =
          kiln_hal_window_signals(recorded.windows[ref.index()].get());
      break;
    case BufferSpace::WindowPeers:
      result.buffer =
          kiln_hal_window_peer_table(recorded.windows[ref.index()].get());
      break;
  }
  return result;
}

namespace {

kiln_hal_collective_kind_t ToHalCollectiveKind(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce: return KILN_HAL_COLLECTIVE_ALL_REDUCE;
    case CollectiveOp::AllGather: return KILN_HAL_COLLECTIVE_ALL_GATHER;
    case CollectiveOp::ReduceScatter: return KILN_HAL_COLLECTIVE_REDUCE_SCATTER;
    case CollectiveOp::AllToAll: return KILN_HAL_COLLECTIVE_ALL_TO_ALL;
    case CollectiveOp::Broadcast: return KILN_HAL_COLLECTIVE_BROADCAST;
  }
  return KILN_HAL_COLLECTIVE_ALL_REDUCE;  // unreachable: verified
}

kiln_hal_reduction_t ToHalReduction(ReductionOp reduction) {
  switch (reduction) {
    case ReductionOp::None: return KILN_HAL_REDUCTION_NONE;
    case ReductionOp::Sum: return KILN_HAL_REDUCTION_SUM;
    case ReductionOp::Prod: return KILN_HAL_REDUCTION_PROD;
    case ReductionOp::Min: return KILN_HAL_REDUCTION_MIN;
    case ReductionOp::Max: return KILN_HAL_REDUCTION_MAX;
    case ReductionOp::Avg: return KILN_HAL_REDUCTION_AVG;
  }
  return KILN_HAL_REDUCTION_NONE;  // unreachable: verified
}

// Collective commands, or windows for compiled collectives.
bool HasCollectives(const Function& function) {
  if (function.windows() && function.windows()->size() != 0) return true;
  if (const auto* commands = function.commands()) {
    for (const CommandEntry* entry : *commands) {
      if (entry->command_type() == Command::CollectiveCommand) return true;
    }
  }
  return false;
}

}  // namespace

kiln_status_t ModuleExecutor::RecordFunction(const FunctionLayout& layout,
                                             const FunctionChannels* channels,
                                             RecordedFunction* out) {
  const Function& function = *layout.function;
  out->slot_count =
      static_cast<uint32_t>(layout.inputs.size() + layout.outputs.size() + 1);
  const uint32_t channel_count =
      function.channels() ? function.channels()->size() : 0;
  if (HasCollectives(function) &&
      (!channels || channels->channels.size() != channel_count)) {
    out->unsupported_reason =
        channels && !channels->unavailable_reason.empty()
            ? channels->unavailable_reason
            : "function '" + layout.name + "' runs collectives and needs its "
              "device in a collective group (kiln_collective_group_create)";
    return kiln_ok_status();
  }

  if (channels) KILN_RETURN_IF_ERROR(CreateWindows(layout, *channels, out));

  kiln_hal_command_buffer_t* command_buffer = nullptr;
  KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_create(
      device_.get(), KILN_HAL_COMMAND_BUFFER_MODE_REUSABLE, out->slot_count,
      &command_buffer));
  out->command_buffer.reset(command_buffer);
  KILN_RETURN_IF_ERROR(kiln_hal_command_buffer_begin(command_buffer));
  if (const auto* commands = function.commands()) {
    uint32_t index = 0;
    for (const CommandEntry* entry : *commands) {
      kiln_status_t status = kiln_ok_status();
      switch (entry->command_type()) {
        case Command::DispatchCommand: {
          const DispatchCommand* dispatch = entry->command_as_DispatchCommand();
          // The grid of the variant that was prepared: variants for other
          // targets may tile (and so count workgroups) differently.
          const ExecutableExport* exp = PreparedExport(*dispatch);
          uint32_t workgroup_count[3] = {exp->workgroup_count()->Get(0),
                                         exp->workgroup_count()->Get(1),
                                         exp->workgroup_count()->Get(2)};
          std::vector<kiln_hal_buffer_ref_t> bindings;
          if (dispatch->bindings()) {
            for (const BufferRef* ref : *dispatch->bindings()) {
              bindings.push_back(
                  MakeRef(layout, *out, *ref, &out->uses_transient));
            }
          }
          const auto* push = dispatch->push_constants();
          status = kiln_hal_command_buffer_dispatch(
              command_buffer,
              executables_[dispatch->executable()].executable.get(),
              dispatch->export_(), workgroup_count, push ? push->size() : 0,
              push ? push->data() : nullptr,
              static_cast<uint32_t>(bindings.size()), bindings.data());
          break;
        }
        case Command::CopyCommand: {
          const CopyCommand* copy = entry->command_as_CopyCommand();
          status = kiln_hal_command_buffer_copy_buffer(
              command_buffer,
              MakeRef(layout, *out, *copy->source(), &out->uses_transient),
              MakeRef(layout, *out, *copy->target(), &out->uses_transient));
          break;
        }
        case Command::FillCommand: {
          const FillCommand* fill = entry->command_as_FillCommand();
          status = kiln_hal_command_buffer_fill_buffer(
              command_buffer,
              MakeRef(layout, *out, *fill->target(), &out->uses_transient),
              fill->pattern()->data(), fill->pattern()->size());
          break;
        }
        case Command::BarrierCommand:
          status = kiln_hal_command_buffer_execution_barrier(command_buffer);
          break;
        case Command::CollectiveCommand: {
          const CollectiveCommand* collective =
              entry->command_as_CollectiveCommand();
          kiln_hal_collective_op_t op = {};
          op.kind = ToHalCollectiveKind(collective->op());
          op.reduction = ToHalReduction(collective->reduction());
          // Module and HAL element types share their values.
          op.element_type =
              static_cast<kiln_hal_element_type_t>(collective->element_type());
          op.element_count = collective->element_count();
          op.root = collective->root();
          status = kiln_hal_command_buffer_collective(
              command_buffer, channels->channels[collective->channel()], &op,
              MakeRef(layout, *out, *collective->send(), &out->uses_transient),
              MakeRef(layout, *out, *collective->recv(), &out->uses_transient));
          break;
        }
        default:
          // The verifier admits no other command types.
          status = kiln_make_status(KILN_STATUS_INTERNAL,
                                    "unexpected command type %u",
                                    static_cast<unsigned>(entry->command_type()));
          break;
      }
      if (!kiln_status_is_ok(status)) {
        return kiln_status_annotate(status, "command %u", index);
      }
      ++index;
    }
  }
  return kiln_hal_command_buffer_end(command_buffer);
}

kiln_status_t ModuleExecutor::CreateWindows(const FunctionLayout& layout,
                                            const FunctionChannels& channels,
                                            RecordedFunction* out) {
  const auto* windows = layout.function->windows();
  if (!windows) return kiln_ok_status();
  for (uint32_t w = 0; w < windows->size(); ++w) {
    const Window* window = windows->Get(w);
    kiln_hal_window_params_t params = {};
    params.size = window->size();
    params.signal_count = window->signal_count();
    kiln_hal_window_t* created = nullptr;
    kiln_status_t status = kiln_hal_window_create(
        channels.channels[window->channel()], &params, &created);
    if (!kiln_status_is_ok(status)) {
      return kiln_status_annotate(
          status,
          "while creating window %u (%" PRIu64
          " bytes, %u signal "
          "slots) of function '%s' for its compiled collectives",
          w, params.size, params.signal_count, layout.name.c_str());
    }
    out->windows.emplace_back(created);
  }
  return kiln_ok_status();
}

const ExecutableExport* ModuleExecutor::PreparedExport(
    const DispatchCommand& dispatch) const {
  return executables_[dispatch.executable()].variant->exports()->Get(
      dispatch.export_());
}

size_t ModuleExecutor::CommandCount(size_t function_index) const {
  const auto* commands = image_->functions()[function_index].function->commands();
  return commands ? commands->size() : 0;
}

const char* ModuleExecutor::CommandName(size_t function_index,
                                        uint32_t command) const {
  const auto* commands = image_->functions()[function_index].function->commands();
  if (!commands || command >= commands->size()) return "?";
  const CommandEntry* entry = commands->Get(command);
  switch (entry->command_type()) {
    case Command::DispatchCommand: {
      return PreparedExport(*entry->command_as_DispatchCommand())
          ->name()
          ->c_str();
    }
    case Command::CollectiveCommand:
      switch (entry->command_as_CollectiveCommand()->op()) {
        case CollectiveOp::AllReduce: return "all_reduce";
        case CollectiveOp::AllGather: return "all_gather";
        case CollectiveOp::ReduceScatter: return "reduce_scatter";
        case CollectiveOp::AllToAll: return "all_to_all";
        case CollectiveOp::Broadcast: return "broadcast";
      }
      return "collective";
    case Command::CopyCommand: return "copy";
    case Command::FillCommand: return "fill";
    case Command::BarrierCommand: return "barrier";
    default: return "?";
  }
}

kiln_status_t ModuleExecutor::Submit(size_t function_index,
                                     const kiln_hal_binding_t* inputs,
                                     const kiln_hal_semaphore_list_t& wait,
                                     const kiln_hal_semaphore_list_t& signal,
                                     kiln_hal_buffer_t** out_outputs,
                                     kiln_hal_execution_profile_t* profile) const {
  if (function_index >= functions_.size()) {
    return kiln_make_status(KILN_STATUS_OUT_OF_RANGE,
                            "function index %zu out of range (%zu functions)",
                            function_index, functions_.size());
  }
  const FunctionLayout& layout = image_->functions()[function_index];
  const RecordedFunction& recorded = functions_[function_index];
  if (!recorded.command_buffer) {
    return kiln_make_status(KILN_STATUS_FAILED_PRECONDITION, "%s",
                            recorded.unsupported_reason.c_str());
  }
  const size_t input_count = layout.inputs.size();
  const size_t output_count = layout.outputs.size();
  for (size_t i = 0; i < input_count; ++i) {
    if (!inputs[i].buffer || inputs[i].length != layout.inputs[i].byte_size) {
      return kiln_make_status(
          KILN_STATUS_INVALID_ARGUMENT,
          "function '%s' input %zu: expected %" PRIu64 " bytes, got %" PRIu64,
          layout.name.c_str(), i, layout.inputs[i].byte_size,
          inputs[i].buffer ? static_cast<uint64_t>(inputs[i].length) : 0);
    }
  }

  std::vector<HalBufferPtr> outputs(output_count);
  HalBufferPtr transient;
  std::vector<kiln_hal_binding_t> table(recorded.slot_count);
  for (size_t i = 0; i < input_count; ++i) table[i] = inputs[i];
  for (size_t j = 0; j < output_count; ++j) {
    kiln_hal_buffer_t* buffer = nullptr;
    KILN_RETURN_IF_ERROR(AllocateTensorBuffer(
        device_.get(), layout.outputs[j].byte_size, 0, &buffer));
    outputs[j].reset(buffer);
    table[input_count + j] = {buffer, 0, layout.outputs[j].byte_size};
  }
  if (recorded.uses_transient) {
    const Function& function = *layout.function;
    kiln_hal_buffer_t* buffer = nullptr;
    KILN_RETURN_IF_ERROR(AllocateTensorBuffer(
        device_.get(), function.transient_size(),
        function.transient_alignment(), &buffer));
    transient.reset(buffer);
    table[input_count + output_count] = {buffer, 0, function.transient_size()};
  }

  kiln_hal_binding_table_t binding_table = {recorded.slot_count, table.data()};
  kiln_hal_command_buffer_t* command_buffer = recorded.command_buffer.get();
  // queue_execute retains the bound buffers until the work is done, so the
  // transient arena can be released as soon as the call is submitted.
  if (profile) {
    KILN_RETURN_IF_ERROR(kiln_hal_device_queue_execute_profiled(
        device_.get(), KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 1,
        &command_buffer, &binding_table, profile));
  } else {
    KILN_RETURN_IF_ERROR(kiln_hal_device_queue_execute(
        device_.get(), KILN_HAL_QUEUE_AFFINITY_ANY, &wait, &signal, 1,
        &command_buffer, &binding_table));
  }
  for (size_t j = 0; j < output_count; ++j) {
    out_outputs[j] = outputs[j].release();
  }
  return kiln_ok_status();
}

}  // namespace module
}  // namespace kiln
