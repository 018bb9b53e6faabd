#include "module/module_verifier.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "module_constants.h"
#include "module_trailer.h"
#include "kiln/schemas/module_generated.h"
#include "module/element_type.h"

namespace kiln {
namespace module {
namespace {

using namespace kiln::schema;  // NOLINT: schema names are the vocabulary here

// Limits that keep a hostile module from making the runtime do unbounded work
// before anything runs; real modules are far below them.
constexpr size_t kMaxRank = 16;
constexpr uint32_t kMaxAlignment = 1u << 16;
constexpr uint64_t kMaxWorkgroupCount = uint64_t{1} << 31;
// Most ranks a function's grid may have.
constexpr int64_t kMaxWorldSize = int64_t{1} << 16;
// kiln_hal_window_create's limits (hal.h).
constexpr uint64_t kMaxWindowSize = uint64_t{1} << 40;
constexpr uint32_t kMaxWindowSignals = 1u << 20;

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// The FlatBuffers verifier checks the alignment of a vector's length but not
// of its 8-byte elements (scalars or structs); a corrupt offset can misalign
// them.
bool IsAligned(const flatbuffers::Vector<int64_t>* vector) {
  return !vector ||
         reinterpret_cast<uintptr_t>(vector->Data()) % alignof(int64_t) == 0;
}
bool IsAligned(const flatbuffers::Vector<const BufferRef*>* vector) {
  return !vector ||
         reinterpret_cast<uintptr_t>(vector->Data()) % alignof(BufferRef) == 0;
}

const char* CommandKindName(Command type) {
  switch (type) {
    case Command::DispatchCommand: return "dispatch";
    case Command::CopyCommand: return "copy";
    case Command::FillCommand: return "fill";
    case Command::BarrierCommand: return "barrier";
    case Command::CollectiveCommand: return "collective";
    default: return "unknown";
  }
}

// Verifies one module; every check that fails returns a status whose message
// names the module, the object (function, command, executable) and the
// offending value.
class ModuleChecker {
 public:
  ModuleChecker(const Module& module, const char* source)
      : module_(module), source_(source) {}

  kiln_status_t Check() {
    std::vector<uint64_t> rodata_sizes;
    if (const auto* rodata = module_.rodata()) {
      for (uint32_t i = 0; i < rodata->size(); ++i) {
        const Rodata* entry = rodata->Get(i);
        uint32_t alignment = entry->alignment();
        if (alignment != 0 &&
            (!IsPowerOfTwo(alignment) || alignment > kMaxAlignment)) {
          return Error("rodata %u has alignment %u (expected a power of two "
                       "up to %u)", i, alignment, kMaxAlignment);
        }
        uint64_t size = entry->data() ? entry->data()->size() : 0;
        if (const ParameterRef* parameter = entry->parameter()) {
          KILN_RETURN_IF_ERROR(CheckParameter(i, *entry, *parameter, &size));
        }
        rodata_sizes.push_back(size);
      }
    }
    rodata_sizes_ = std::move(rodata_sizes);

    if (const auto* executables = module_.executables()) {
      for (uint32_t i = 0; i < executables->size(); ++i) {
        KILN_RETURN_IF_ERROR(CheckExecutable(i, *executables->Get(i)));
      }
    }

    std::set<std::string> names;
    if (const auto* functions = module_.functions()) {
      for (uint32_t i = 0; i < functions->size(); ++i) {
        const Function* function = functions->Get(i);
        std::string name = function->name()->str();
        if (name.empty()) return Error("function %u has an empty name", i);
        // Names reach callers as C strings: one with a NUL inside could be
        // neither found nor told apart from its prefix.
        if (name.find('\0') != std::string::npos) {
          return Error("function %u's name '%s' contains a NUL byte", i,
                       name.c_str());
        }
        if (!names.insert(name).second) {
          return Error("function '%s' is defined more than once", name.c_str());
        }
        KILN_RETURN_IF_ERROR(CheckFunction(*function));
      }
    }
    return kiln_ok_status();
  }

 private:
  kiln_status_t Error(const char* format, ...) KILN_PRINTF_FORMAT(2, 3) {
    char message[512];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof(message), format, args);
    va_end(args);
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "malformed module '%s': %s", source_, message);
  }

  kiln_status_t CheckExecutable(uint32_t index, const Executable& executable) {
    const char* name =
        executable.name() ? executable.name()->c_str() : "<unnamed>";
    const auto* variants = executable.variants();
    if (!variants || variants->size() == 0) {
      return Error("executable %u ('%s') has no variants", index, name);
    }
    const auto* first_exports = variants->Get(0)->exports();
    uint32_t export_count = first_exports ? first_exports->size() : 0;
    for (uint32_t v = 0; v < variants->size(); ++v) {
      const ExecutableVariant* variant = variants->Get(v);
      if (!variant->target() || variant->target()->size() == 0) {
        return Error("executable '%s' variant %u has no target", name, v);
      }
      if (!variant->format() || variant->format()->size() == 0) {
        return Error("executable '%s' variant %u ('%s') has no format", name,
                     v, variant->target()->c_str());
      }
      const auto* exports = variant->exports();
      uint32_t count = exports ? exports->size() : 0;
      if (count != export_count) {
        return Error("executable '%s' variant '%s' has %u exports but variant "
                     "'%s' has %u (every variant must export the same "
                     "functions)", name, variant->target()->c_str(), count,
                     variants->Get(0)->target()->c_str(), export_count);
      }
      for (uint32_t e = 0; e < count; ++e) {
        const ExecutableExport* exp = exports->Get(e);
        const ExecutableExport* first = first_exports->Get(e);
        if (!exp->name() || exp->name()->size() == 0) {
          return Error("executable '%s' variant '%s' export %u has no name",
                       name, variant->target()->c_str(), e);
        }
        // The name is looked up as a C string (dlsym, module symbols): a NUL
        // inside would bind a different symbol.
        if (exp->name()->str().find('\0') != std::string::npos) {
          return Error("executable '%s' variant '%s' export %u's name '%s' "
                       "contains a NUL byte", name, variant->target()->c_str(),
                       e, exp->name()->c_str());
        }
        if (!first->name() || exp->name()->str() != first->name()->str() ||
            exp->binding_count() != first->binding_count() ||
            exp->push_constant_count() != first->push_constant_count()) {
          return Error("executable '%s' variant '%s' export %u ('%s') does "
                       "not match the first variant's export (name, bindings "
                       "and push constants must agree)", name,
                       variant->target()->c_str(), e, exp->name()->c_str());
        }
        const auto* counts = exp->workgroup_count();
        if (!counts || counts->size() != 3) {
          return Error("executable '%s' export '%s' has %u workgroup count "
                       "entries (expected 3)", name, exp->name()->c_str(),
                       counts ? counts->size() : 0);
        }
        // Each count is at most 2^32 - 1 and the running product is kept
        // at most kMaxWorkgroupCount, so no product overflows.
        uint64_t total = 1;
        for (uint32_t d = 0; d < 3; ++d) {
          const uint32_t count = counts->Get(d);
          if (count == 0) {
            return Error("executable '%s' export '%s' has a workgroup count "
                         "of 0 in dimension %u (the kernel would never run "
                         "and its outputs would be left uninitialized)",
                         name, exp->name()->c_str(), d);
          }
          total *= count;
          if (total > kMaxWorkgroupCount) {
            return Error("executable '%s' export '%s' has workgroup counts "
                         "%u x %u x %u (more than %" PRIu64 " workgroups)",
                         name, exp->name()->c_str(), counts->Get(0),
                         counts->Get(1), counts->Get(2), kMaxWorkgroupCount);
          }
        }
        const auto* sizes = exp->workgroup_size();
        if (sizes && sizes->size() != 3) {
          return Error("executable '%s' export '%s' has %u workgroup size "
                       "entries (expected 3)", name, exp->name()->c_str(),
                       sizes->size());
        }
      }
    }
    return kiln_ok_status();
  }

  // A load-time parameter: a non-empty name without NUL, a valid tensor
  // type (its dense size is the segment's size) and no data of its own.
  kiln_status_t CheckParameter(uint32_t index, const Rodata& entry,
                               const ParameterRef& parameter, uint64_t* size) {
    const flatbuffers::String* name = parameter.name();
    if (name->size() == 0 ||
        std::memchr(name->c_str(), '\0', name->size()) != nullptr) {
      return Error(
          "rodata %u is a parameter with an empty name or one "
          "holding a NUL byte",
          index);
    }
    if (entry.data() && entry.data()->size() != 0) {
      return Error(
          "rodata %u is parameter '%s' but also holds %u bytes of "
          "data",
          index, name->c_str(), entry.data()->size());
    }
    const TensorType* type = parameter.type();
    if (!IsValidElementType(type->element_type())) {
      return Error("rodata %u (parameter '%s') has invalid element type %u",
                   index, name->c_str(),
                   static_cast<unsigned>(type->element_type()));
    }
    const auto* shape = type->shape();
    size_t rank = shape ? shape->size() : 0;
    if (!IsAligned(shape) || rank > kMaxRank) {
      return Error(
          "rodata %u (parameter '%s') has a misaligned shape or rank "
          "%zu (at most %zu)",
          index, name->c_str(), rank, kMaxRank);
    }
    uint64_t count = 0;
    if (!ComputeTensorByteSize(ElementTypeByteSize(type->element_type()),
                               shape ? shape->data() : nullptr, rank, &count,
                               size)) {
      return Error(
          "rodata %u (parameter '%s') has a negative dimension or a "
          "size beyond %" PRIu64 " bytes",
          index, name->c_str(), kMaxByteSize);
    }
    return kiln_ok_status();
  }

  kiln_status_t CheckTensorTypes(const Function& function, const char* what,
                                 const flatbuffers::Vector<
                                     flatbuffers::Offset<TensorType>>* types,
                                 std::vector<uint64_t>* sizes) {
    if (!types) return kiln_ok_status();
    for (uint32_t i = 0; i < types->size(); ++i) {
      const TensorType* type = types->Get(i);
      if (!IsValidElementType(type->element_type())) {
        return Error("function '%s' %s %u has invalid element type %u",
                     function.name()->c_str(), what, i,
                     static_cast<unsigned>(type->element_type()));
      }
      const auto* shape = type->shape();
      if (!IsAligned(shape)) {
        return Error("function '%s' %s %u has a misaligned shape",
                     function.name()->c_str(), what, i);
      }
      size_t rank = shape ? shape->size() : 0;
      if (rank > kMaxRank) {
        return Error("function '%s' %s %u has rank %zu (at most %zu)",
                     function.name()->c_str(), what, i, rank, kMaxRank);
      }
      uint64_t count = 0, bytes = 0;
      if (!ComputeTensorByteSize(ElementTypeByteSize(type->element_type()),
                                 shape ? shape->data() : nullptr, rank, &count,
                                 &bytes)) {
        return Error("function '%s' %s %u has a negative dimension or a size "
                     "beyond %" PRIu64 " bytes", function.name()->c_str(),
                     what, i, kMaxByteSize);
      }
      sizes->push_back(bytes);
    }
    return kiln_ok_status();
  }

  // Checks that |ref| lies within its space. |what| describes the reference
  // ("dispatch binding 2") for the message.
  kiln_status_t CheckBufferRef(const BufferRef* ref, const std::string& where,
                               const char* what) {
    if (!ref) return Error("%s: %s is missing", where.c_str(), what);
    uint64_t space_size = 0;
    switch (ref->space()) {
      case BufferSpace::Input:
        if (ref->index() >= input_sizes_.size()) {
          return Error("%s: %s refers to input %u but the function has %zu "
                       "inputs", where.c_str(), what, ref->index(),
                       input_sizes_.size());
        }
        space_size = input_sizes_[ref->index()];
        break;
      case BufferSpace::Output:
        if (ref->index() >= output_sizes_.size()) {
          return Error("%s: %s refers to output %u but the function has %zu "
                       "outputs", where.c_str(), what, ref->index(),
                       output_sizes_.size());
        }
        space_size = output_sizes_[ref->index()];
        break;
      case BufferSpace::Transient:
        space_size = transient_size_;
        break;
      case BufferSpace::Rodata:
        if (ref->index() >= rodata_sizes_.size()) {
          return Error("%s: %s refers to rodata %u but the module has %zu "
                       "rodata entries", where.c_str(), what, ref->index(),
                       rodata_sizes_.size());
        }
        space_size = rodata_sizes_[ref->index()];
        break;
      case BufferSpace::WindowData:
      case BufferSpace::WindowSignals:
      case BufferSpace::WindowPeers: {
        if (ref->index() >= window_sizes_.size()) {
          return Error(
              "%s: %s refers to window %u but the function has %zu "
              "windows",
              where.c_str(), what, ref->index(), window_sizes_.size());
        }
        const WindowSizes& window = window_sizes_[ref->index()];
        space_size = ref->space() == BufferSpace::WindowData ? window.data
                     : ref->space() == BufferSpace::WindowSignals
                         ? window.signals
                         : window.peers;
        break;
      }
      default:
        return Error("%s: %s has unknown buffer space %u", where.c_str(), what,
                     static_cast<unsigned>(ref->space()));
    }
    uint64_t end = 0;
    if (__builtin_add_overflow(ref->offset(), ref->length(), &end) ||
        end > space_size) {
      return Error("%s: %s range [%" PRIu64 ", +%" PRIu64 ") is outside its "
                   "%s %u of %" PRIu64 " bytes", where.c_str(), what,
                   ref->offset(), ref->length(),
                   EnumNameBufferSpace(ref->space()), ref->index(), space_size);
    }
    return kiln_ok_status();
  }

  kiln_status_t CheckFunction(const Function& function) {
    const char* name = function.name()->c_str();
    input_sizes_.clear();
    output_sizes_.clear();
    KILN_RETURN_IF_ERROR(
        CheckTensorTypes(function, "input", function.inputs(), &input_sizes_));
    KILN_RETURN_IF_ERROR(CheckTensorTypes(function, "output",
                                          function.outputs(), &output_sizes_));
    transient_size_ = function.transient_size();
    if (transient_size_ > kMaxByteSize) {
      return Error("function '%s' transient size %" PRIu64 " exceeds %" PRIu64,
                   name, transient_size_, kMaxByteSize);
    }
    uint32_t alignment = function.transient_alignment();
    if (!IsPowerOfTwo(alignment) || alignment > kMaxAlignment) {
      return Error("function '%s' transient alignment %u is not a power of "
                   "two up to %u", name, alignment, kMaxAlignment);
    }
    channel_sizes_.clear();
    channel_world_ = 0;
    if (const auto* channels = function.channels()) {
      for (uint32_t c = 0; c < channels->size(); ++c) {
        int64_t size = 0;
        KILN_RETURN_IF_ERROR(CheckChannel(function, c, *channels->Get(c),
                                          &size));
        channel_sizes_.push_back(size);
      }
    }
    window_sizes_.clear();
    if (const auto* windows = function.windows()) {
      for (uint32_t w = 0; w < windows->size(); ++w) {
        KILN_RETURN_IF_ERROR(CheckWindow(function, w, *windows->Get(w)));
      }
    }
    const auto* commands = function.commands();
    if (!commands) return kiln_ok_status();
    for (uint32_t i = 0; i < commands->size(); ++i) {
      const CommandEntry* entry = commands->Get(i);
      std::string where = "function '" + function.name()->str() +
                          "' command " + std::to_string(i) + " (" +
                          CommandKindName(entry->command_type()) + ")";
      switch (entry->command_type()) {
        case Command::DispatchCommand:
          KILN_RETURN_IF_ERROR(
              CheckDispatch(*entry->command_as_DispatchCommand(), where));
          break;
        case Command::CopyCommand: {
          const CopyCommand* copy = entry->command_as_CopyCommand();
          KILN_RETURN_IF_ERROR(CheckBufferRef(copy->source(), where, "source"));
          KILN_RETURN_IF_ERROR(CheckBufferRef(copy->target(), where, "target"));
          if (copy->source()->length() != copy->target()->length()) {
            return Error("%s: source length %" PRIu64 " differs from target "
                         "length %" PRIu64, where.c_str(),
                         copy->source()->length(), copy->target()->length());
          }
          if (IsReadOnly(copy->target()->space())) {
            return Error("%s: target is read-only (%s)", where.c_str(),
                         EnumNameBufferSpace(copy->target()->space()));
          }
          break;
        }
        case Command::FillCommand: {
          const FillCommand* fill = entry->command_as_FillCommand();
          KILN_RETURN_IF_ERROR(CheckBufferRef(fill->target(), where, "target"));
          size_t pattern = fill->pattern() ? fill->pattern()->size() : 0;
          if (pattern != 1 && pattern != 2 && pattern != 4 && pattern != 8) {
            return Error("%s: pattern has %zu bytes (expected 1, 2, 4 or 8)",
                         where.c_str(), pattern);
          }
          if (fill->target()->length() % pattern != 0 ||
              fill->target()->offset() % pattern != 0) {
            return Error("%s: target offset/length are not multiples of the "
                         "%zu byte pattern", where.c_str(), pattern);
          }
          if (IsReadOnly(fill->target()->space())) {
            return Error("%s: target is read-only (%s)", where.c_str(),
                         EnumNameBufferSpace(fill->target()->space()));
          }
          break;
        }
        case Command::BarrierCommand:
          break;
        case Command::CollectiveCommand:
          KILN_RETURN_IF_ERROR(CheckCollective(
              *entry->command_as_CollectiveCommand(), where));
          break;
        default:
          return Error("%s: unknown command type %u", where.c_str(),
                       static_cast<unsigned>(entry->command_type()));
      }
    }
    return kiln_ok_status();
  }

  // A channel's grid: 1..kMaxRank positive extents whose product (the world
  // size the function runs on) is at most kMaxWorldSize, and distinct axes
  // of the grid. The channel's group size goes to |out_size|.
  kiln_status_t CheckChannel(const Function& function, uint32_t index,
                             const Channel& channel, int64_t* out_size) {
    const char* name = function.name()->c_str();
    const auto* shape = channel.grid_shape();
    if (!IsAligned(shape)) {
      return Error("function '%s' channel %u has a misaligned grid shape",
                   name, index);
    }
    const uint32_t rank = shape ? shape->size() : 0;
    if (rank == 0 || rank > kMaxRank) {
      return Error("function '%s' channel %u has a grid of rank %u (expected "
                   "1 to %zu axes)", name, index, rank, kMaxRank);
    }
    int64_t world = 1;
    for (uint32_t d = 0; d < rank; ++d) {
      int64_t extent = shape->Get(d);
      if (extent <= 0 || extent > kMaxWorldSize ||
          world * extent > kMaxWorldSize) {
        return Error("function '%s' channel %u: grid axis %u has extent "
                     "%" PRId64 " (extents must be positive and the grid at "
                     "most %" PRId64 " ranks)", name, index, d, extent,
                     kMaxWorldSize);
      }
      world *= extent;
    }
    if (channel_world_ == 0) channel_world_ = world;
    if (world != channel_world_) {
      return Error("function '%s' channel %u has a grid of %" PRId64 " ranks "
                   "but channel 0 has %" PRId64 " (the channels of a function "
                   "share its grid)", name, index, world, channel_world_);
    }
    int64_t size = 1;
    std::set<int16_t> seen;
    if (const auto* axes = channel.axes()) {
      for (uint32_t a = 0; a < axes->size(); ++a) {
        int16_t axis = axes->Get(a);
        if (axis < 0 || uint32_t(axis) >= rank) {
          return Error("function '%s' channel %u has axis %d (the grid has "
                       "axes 0..%u)", name, index, axis, rank - 1);
        }
        if (!seen.insert(axis).second) {
          return Error("function '%s' channel %u lists axis %d twice", name,
                       index, axis);
        }
        size *= shape->Get(axis);
      }
    }
    *out_size = size;
    return kiln_ok_status();
  }

  // Inputs, rodata and a window's peer table (the driver's) are never
  // written by commands.
  static bool IsReadOnly(BufferSpace space) {
    return space == BufferSpace::Input || space == BufferSpace::Rodata ||
           space == BufferSpace::WindowPeers;
  }

  // A window's channel exists and its sizes are within what
  // kiln_hal_window_create accepts; records the byte sizes of its three
  // buffers for CheckBufferRef.
  kiln_status_t CheckWindow(const Function& function, uint32_t index,
                            const Window& window) {
    const char* name = function.name()->c_str();
    if (window.channel() >= channel_sizes_.size()) {
      return Error(
          "function '%s' window %u is over channel %u, but the "
          "function has %zu channels",
          name, index, window.channel(), channel_sizes_.size());
    }
    if (window.size() == 0 || window.size() > kMaxWindowSize ||
        window.signal_count() > kMaxWindowSignals) {
      return Error("function '%s' window %u has %" PRIu64
                   " data bytes and "
                   "%u signal slots (expected 1 to %" PRIu64
                   " bytes and at "
                   "most %u slots)",
                   name, index, window.size(), window.signal_count(),
                   kMaxWindowSize, kMaxWindowSignals);
    }
    WindowSizes sizes;
    sizes.data = window.size();
    sizes.signals = 8 * std::max<uint64_t>(window.signal_count(), 1);
    sizes.peers = 16 * uint64_t(channel_sizes_[window.channel()]) + 8;
    window_sizes_.push_back(sizes);
    return kiln_ok_status();
  }

  // Checks a collective's op, types, channel and that its send and recv
  // ranges hold exactly what the op reads and writes for the channel's group
  // size N (all_gather: N x count out; reduce_scatter: count / N out;
  // reduce_scatter and all_to_all: count divisible by N).
  kiln_status_t CheckCollective(const CollectiveCommand& collective,
                                const std::string& where) {
    const char* at = where.c_str();
    if (collective.op() > CollectiveOp::MAX ||
        collective.reduction() > ReductionOp::MAX) {
      return Error("%s: unknown collective op %u or reduction %u", at,
                   static_cast<unsigned>(collective.op()),
                   static_cast<unsigned>(collective.reduction()));
    }
    const char* op = EnumNameCollectiveOp(collective.op());
    const bool reduces = collective.op() == CollectiveOp::AllReduce ||
                         collective.op() == CollectiveOp::ReduceScatter;
    if (reduces != (collective.reduction() != ReductionOp::None)) {
      return Error("%s: %s with reduction %s (%s)", at, op,
                   EnumNameReductionOp(collective.reduction()),
                   reduces ? "it needs one" : "only reductions take one");
    }
    if (!IsValidElementType(collective.element_type())) {
      return Error("%s: invalid element type %u", at,
                   static_cast<unsigned>(collective.element_type()));
    }
    if (collective.channel() >= channel_sizes_.size()) {
      return Error("%s: channel %u out of range (the function has %zu "
                   "channels)", at, collective.channel(),
                   channel_sizes_.size());
    }
    KILN_RETURN_IF_ERROR(CheckBufferRef(collective.send(), where,
                                        "send buffer"));
    KILN_RETURN_IF_ERROR(CheckBufferRef(collective.recv(), where,
                                        "recv buffer"));
    if (IsReadOnly(collective.recv()->space())) {
      return Error("%s: recv buffer is read-only (%s)", at,
                   EnumNameBufferSpace(collective.recv()->space()));
    }
    const uint64_t n = uint64_t(channel_sizes_[collective.channel()]);
    const uint64_t count = collective.element_count();
    const uint64_t element_size = ElementTypeByteSize(collective.element_type());
    uint64_t send_bytes = 0, recv_count = count, recv_bytes = 0;
    if (__builtin_mul_overflow(count, element_size, &send_bytes)) {
      return Error("%s: element count %" PRIu64 " overflows", at, count);
    }
    switch (collective.op()) {
      case CollectiveOp::AllGather:
        if (__builtin_mul_overflow(count, n, &recv_count)) {
          return Error("%s: element count %" PRIu64 " overflows", at, count);
        }
        break;
      case CollectiveOp::ReduceScatter:
      case CollectiveOp::AllToAll:
        if (count % n != 0) {
          return Error("%s: %s of %" PRIu64 " elements does not split evenly "
                       "over the %" PRIu64 " ranks of channel %u", at, op,
                       count, n, collective.channel());
        }
        if (collective.op() == CollectiveOp::ReduceScatter) {
          recv_count = count / n;
        }
        break;
      case CollectiveOp::Broadcast:
        if (collective.root() < 0 || uint64_t(collective.root()) >= n) {
          return Error("%s: broadcast root %d is not a rank of channel %u "
                       "(%" PRIu64 " ranks)", at, collective.root(),
                       collective.channel(), n);
        }
        break;
      default:
        break;
    }
    if (__builtin_mul_overflow(recv_count, element_size, &recv_bytes)) {
      return Error("%s: element count %" PRIu64 " overflows", at, count);
    }
    if (collective.send()->length() != send_bytes ||
        collective.recv()->length() != recv_bytes) {
      return Error("%s: %s of %" PRIu64 " %s over %" PRIu64 " ranks sends "
                   "%" PRIu64 " and receives %" PRIu64 " bytes, but the send "
                   "range has %" PRIu64 " and the recv range %" PRIu64
                   " bytes", at, op, count,
                   EnumNameElementType(collective.element_type()), n,
                   send_bytes, recv_bytes, collective.send()->length(),
                   collective.recv()->length());
    }
    return kiln_ok_status();
  }

  kiln_status_t CheckDispatch(const DispatchCommand& dispatch,
                              const std::string& where) {
    const auto* executables = module_.executables();
    uint32_t executable_count = executables ? executables->size() : 0;
    if (dispatch.executable() >= executable_count) {
      return Error("%s: executable %u out of range (the module has %u)",
                   where.c_str(), dispatch.executable(), executable_count);
    }
    // Every variant exports the same entry points (checked above), so the
    // first variant describes them all.
    const Executable* executable = executables->Get(dispatch.executable());
    const auto* exports = executable->variants()->Get(0)->exports();
    uint32_t export_count = exports ? exports->size() : 0;
    if (dispatch.export_() >= export_count) {
      return Error("%s: export %u out of range (executable %u has %u)",
                   where.c_str(), dispatch.export_(), dispatch.executable(),
                   export_count);
    }
    const ExecutableExport* exp = exports->Get(dispatch.export_());
    uint32_t binding_count = dispatch.bindings() ? dispatch.bindings()->size() : 0;
    if (binding_count != exp->binding_count()) {
      return Error("%s: %u bindings but export '%s' takes %u", where.c_str(),
                   binding_count, exp->name()->c_str(), exp->binding_count());
    }
    uint32_t push_count =
        dispatch.push_constants() ? dispatch.push_constants()->size() : 0;
    if (push_count != exp->push_constant_count()) {
      return Error("%s: %u push constants but export '%s' takes %u",
                   where.c_str(), push_count, exp->name()->c_str(),
                   exp->push_constant_count());
    }
    if (!IsAligned(dispatch.bindings())) {
      return Error("%s: misaligned bindings", where.c_str());
    }
    uint64_t largest_binding = 0;
    for (uint32_t b = 0; b < binding_count; ++b) {
      std::string what = "binding " + std::to_string(b);
      const BufferRef* ref = dispatch.bindings()->Get(b);
      KILN_RETURN_IF_ERROR(CheckBufferRef(ref, where, what.c_str()));
      largest_binding = std::max<uint64_t>(largest_binding, ref->length());
    }
    // Every workgroup kiln-compile emits owns at least one element of some
    // binding (a tile of an output, a row of a reduction), so a grid larger
    // than the largest binding's byte count is not one the compiler wrote:
    // running it would index past the bindings (counts are checked nonzero
    // and overflow-free with the executables).
    // Each variant has its own grid (a GPU tile is not a host tile).
    for (const ExecutableVariant* variant : *executable->variants()) {
      const auto* counts =
          variant->exports()->Get(dispatch.export_())->workgroup_count();
      const uint64_t workgroups = uint64_t{counts->Get(0)} * counts->Get(1) *
                                  counts->Get(2);
      if (workgroups > std::max<uint64_t>(largest_binding, 1)) {
        return Error("%s: export '%s' of variant '%s' runs %" PRIu64
                     " workgroups (%u x %u x %u) over bindings of at most "
                     "%" PRIu64 " bytes; a dispatch has at most one workgroup "
                     "per byte of its largest binding", where.c_str(),
                     exp->name()->c_str(), variant->target()->c_str(),
                     workgroups, counts->Get(0), counts->Get(1),
                     counts->Get(2), largest_binding);
      }
    }
    return kiln_ok_status();
  }

  const Module& module_;
  const char* source_;
  std::vector<uint64_t> rodata_sizes_;
  std::vector<uint64_t> input_sizes_;
  std::vector<uint64_t> output_sizes_;
  uint64_t transient_size_ = 0;
  std::vector<int64_t> channel_sizes_;  // group size of each channel
  int64_t channel_world_ = 0;           // grid size of the function's channels
  struct WindowSizes {
    uint64_t data = 0, signals = 0, peers = 0;  // bytes of each buffer
  };
  std::vector<WindowSizes> window_sizes_;  // the function's windows
};

}  // namespace

bool ComputeTensorByteSize(uint64_t element_size, const int64_t* shape,
                           size_t rank, uint64_t* element_count,
                           uint64_t* byte_size) {
  uint64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) return false;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(shape[i]),
                               &count) ||
        count > kMaxByteSize) {
      return false;
    }
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, element_size, &bytes) ||
      bytes > kMaxByteSize) {
    return false;
  }
  *element_count = count;
  *byte_size = bytes;
  return true;
}

kiln_status_t VerifyModule(const uint8_t* data, size_t size,
                           const char* source, size_t* content_size) {
  *content_size = 0;
  const size_t header = sizeof(flatbuffers::uoffset_t) +
                        flatbuffers::kFileIdentifierLength;
  if (size < header) {
    return kiln_make_status(KILN_STATUS_DATA_LOSS,
                            "module '%s' is truncated: %zu bytes is too small "
                            "for a Kiln module", source, size);
  }
  const char* identifier = schema::ModuleIdentifier();
  if (!flatbuffers::BufferHasIdentifier(data, identifier)) {
    char found[5] = {0};
    for (int i = 0; i < 4; ++i) {
      char c = static_cast<char>(data[sizeof(flatbuffers::uoffset_t) + i]);
      found[i] = (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "'%s' is not a Kiln module: file identifier is "
                            "'%s', expected '%s' (was it produced by "
                            "kiln-compile?)", source, found, identifier);
  }
  if (size > kMaxByteSize || size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return kiln_make_status(KILN_STATUS_INVALID_ARGUMENT,
                            "module '%s' is too large (%zu bytes)", source,
                            size);
  }
  // The trailer before anything inside: a damaged file is named as such,
  // not as whichever structural check its damage happens to trip.
  const module_trailer::Parsed trailer = module_trailer::Parse(data, size);
  if (!trailer.valid) {
    return kiln_make_status(KILN_STATUS_DATA_LOSS,
                            "module '%s' is truncated: it does not end in an "
                            "integrity trailer (%zu bytes; modules written "
                            "before module version %u have none and must be "
                            "recompiled)", source, size, KILN_MODULE_VERSION);
  }
  const size_t content = size - module_trailer::kSize;
  if (trailer.content_size != content) {
    return kiln_make_status(KILN_STATUS_DATA_LOSS,
                            "module '%s' is truncated or damaged: its trailer "
                            "records %" PRIu64 " bytes of contents, the file "
                            "holds %zu", source, trailer.content_size,
                            content);
  }
  const uint32_t crc = module_trailer::Crc32c(data, content);
  if (crc != trailer.crc) {
    return kiln_make_status(KILN_STATUS_DATA_LOSS,
                            "module '%s' is corrupt: the CRC-32C of its "
                            "%zu bytes is %08x, its trailer records %08x",
                            source, content, crc, trailer.crc);
  }
  size = content;
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/64,
                                 /*max_tables=*/1000000,
                                 /*check_alignment=*/true);
  if (!schema::VerifyModuleBuffer(verifier)) {
    return kiln_make_status(KILN_STATUS_DATA_LOSS,
                            "module '%s' is corrupt or truncated: its "
                            "FlatBuffer structure failed verification (%zu "
                            "bytes)", source, size);
  }
  const schema::Module* module = schema::GetModule(data);
  if (module->version() != KILN_MODULE_VERSION) {
    return kiln_make_status(KILN_STATUS_INCOMPATIBLE,
                            "module '%s' has version %u but this runtime "
                            "reads version %u; recompile it with a matching "
                            "kiln-compile", source, module->version(),
                            KILN_MODULE_VERSION);
  }
  KILN_RETURN_IF_ERROR(ModuleChecker(*module, source).Check());
  *content_size = content;
  return kiln_ok_status();
}

}  // namespace module
}  // namespace kiln
