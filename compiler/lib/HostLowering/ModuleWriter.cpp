//===- ModuleWriter.cpp - .vmfb module serialization ----------------------===//
//
// Builds the module with the FlatBuffers object API: the lowered IR already
// holds every decision (buffers, commands, rodata), so this file only maps
// ops to schema tables and checks that the binaries of every target variant
// match the IR. The launch contract of GPU variants is in ModuleWriter.h.
//
//===----------------------------------------------------------------------===//
#include "kiln/HostLowering/ModuleWriter.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/schemas/module_generated.h"
#include "module_constants.h"
#include "module_trailer.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kiln;
namespace fb = ::kiln::schema;

std::string mlir::kiln::computeSourceDigest(llvm::StringRef text) {
  std::array<uint8_t, 32> hash = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(text.bytes_begin(), text.bytes_end()));
  return llvm::toHex(hash, /*LowerCase=*/true);
}

static fb::ElementType getElementType(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type)) {
    bool isUnsigned = intType.isUnsigned();
    switch (intType.getWidth()) {
    case 1:
      return fb::ElementType::I1;
    case 8:
      return isUnsigned ? fb::ElementType::U8 : fb::ElementType::I8;
    case 16:
      return isUnsigned ? fb::ElementType::U16 : fb::ElementType::I16;
    case 32:
      return isUnsigned ? fb::ElementType::U32 : fb::ElementType::I32;
    case 64:
      return isUnsigned ? fb::ElementType::U64 : fb::ElementType::I64;
    default:
      return fb::ElementType::Invalid;
    }
  }
  if (type.isF16())
    return fb::ElementType::F16;
  if (type.isBF16())
    return fb::ElementType::BF16;
  if (type.isF32())
    return fb::ElementType::F32;
  if (type.isF64())
    return fb::ElementType::F64;
  return fb::ElementType::Invalid;
}

static FailureOr<std::unique_ptr<fb::TensorTypeT>>
getTensorType(Location loc, Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  fb::ElementType elementType =
      tensorType ? getElementType(tensorType.getElementType())
                 : fb::ElementType::Invalid;
  if (!tensorType || !tensorType.hasStaticShape() ||
      elementType == fb::ElementType::Invalid)
    return emitError(loc, "cannot serialize function signature type ")
           << type << ": expected a static-shape tensor of i1..i64 or "
           << "f16/bf16/f32/f64";
  auto result = std::make_unique<fb::TensorTypeT>();
  result->element_type = elementType;
  result->shape.assign(tensorType.getShape().begin(),
                       tensorType.getShape().end());
  return result;
}

static fb::BufferRef toBufferRef(BufferAttr buffer) {
  return fb::BufferRef(static_cast<fb::BufferSpace>(buffer.getSpace()),
                       buffer.getIndex(), buffer.getOffset(),
                       buffer.getLength());
}

// Stores `value` in `bytes` little-endian bytes (i1 widens to a byte).
static void appendLittleEndian(const APInt &value, unsigned bytes,
                               std::vector<uint8_t> &out) {
  APInt wide = value.zextOrTrunc(bytes * 8);
  for (unsigned i = 0; i < bytes; ++i)
    out.push_back(static_cast<uint8_t>(wide.extractBitsAsZExtValue(8, 8 * i)));
}

// The bytes of a constant as the runtime and kernels see them: dense,
// row-major, one or more whole bytes per element.
static LogicalResult getConstantBytes(Location loc, ElementsAttr value,
                                      std::vector<uint8_t> &out) {
  Type elementType = value.getElementType();
  if (!elementType.isIntOrFloat())
    return emitError(loc, "cannot serialize constant of element type ")
           << elementType;
  unsigned bytes = getStoredByteSize(elementType);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitError(loc, "constant resource '")
             << resource.getRawHandle().getKey() << "' has no data";
    ArrayRef<char> data = blob->getData();
    if (data.size() != value.getNumElements() * bytes)
      return emitError(loc, "constant resource '")
             << resource.getRawHandle().getKey() << "' holds " << data.size()
             << " bytes, expected " << value.getNumElements() * bytes;
    out.insert(out.end(), data.begin(), data.end());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return emitError(loc, "cannot serialize constant attribute ") << value;
  out.reserve(out.size() + dense.getNumElements() * bytes);
  if (isa<FloatType>(elementType)) {
    for (const APFloat &element : dense.getValues<APFloat>())
      appendLittleEndian(element.bitcastToAPInt(), bytes, out);
  } else {
    for (const APInt &element : dense.getValues<APInt>())
      appendLittleEndian(element, bytes, out);
  }
  return success();
}

namespace {

// A kernel of an executable as the module exports it.
struct KernelInfo {
  Operation *op;
  StringRef name;
  unsigned bindingCount;
};

// The kernels of `executable` in op order: tensor-form func.func kernels, or
// (when an executable is compiled on its own) GPU kernels already lowered to
// llvm.func, which take one pointer per binding.
SmallVector<KernelInfo> getKernels(ExecutableOp executable) {
  SmallVector<KernelInfo> kernels;
  for (Operation &op : executable.getBlock()) {
    if (auto func = dyn_cast<func::FuncOp>(op))
      kernels.push_back({func, func.getSymName(),
                         func.getNumArguments() + func.getNumResults()});
    else if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op))
      if (func->hasAttr("rocdl.kernel") || func->hasAttr("nvvm.kernel"))
        kernels.push_back({func, func.getSymName(), func.getNumArguments()});
  }
  return kernels;
}

class ModuleWriter {
public:
  ModuleWriter(ModuleOp module, const ExecutableBinaryMap &binaries)
      : module(module), binaries(binaries) {}

  LogicalResult write(const ModuleWriterOptions &options,
                      llvm::raw_ostream &os);

private:
  LogicalResult addExecutable(ExecutableOp executable);
  LogicalResult addRodata(RodataOp rodata);
  LogicalResult addFunction(ProgramOp program);
  FailureOr<std::unique_ptr<fb::CommandEntryT>> getCommand(Operation &op);

  ModuleOp module;
  const ExecutableBinaryMap &binaries;
  fb::ModuleT result;
  // Executable name -> (index, export name -> export index).
  llvm::StringMap<std::pair<uint32_t, llvm::StringMap<uint32_t>>> exports;
};

} // namespace

LogicalResult ModuleWriter::addExecutable(ExecutableOp executable) {
  auto it = binaries.find(executable.getSymName());
  if (it == binaries.end() || it->second.empty())
    return executable.emitError("no binary was produced for executable ")
           << executable.getSymName();
  SmallVector<KernelInfo> kernels = getKernels(executable);

  auto entry = std::make_unique<fb::ExecutableT>();
  entry->name = executable.getSymName().str();
  llvm::StringSet<> targets;
  // The runtime picks one variant by device and uses the same export index
  // for every variant, so all variants must list the kernels in op order.
  for (const ExecutableVariantBinary &binary : it->second) {
    if (!targets.insert(binary.target).second)
      return executable.emitError("executable ")
             << executable.getSymName() << " has two variants for target '"
             << binary.target << "'";
    if (kernels.size() != binary.exports.size())
      return executable.emitError()
             << binary.target << " binary of " << executable.getSymName()
             << " has " << binary.exports.size()
             << " exports, but the executable has " << kernels.size()
             << " kernels";
    auto variant = std::make_unique<fb::ExecutableVariantT>();
    variant->target = binary.target;
    variant->format = binary.format;
    variant->binary = binary.binary;
    for (auto [index, kernel] : llvm::enumerate(kernels)) {
      const VariantExport &binaryExport = binary.exports[index];
      if (binaryExport.name != kernel.name)
        return kernel.op->emitError()
               << binary.target << " binary export #" << index
               << " is named '" << binaryExport.name
               << "', expected the kernel '" << kernel.name << "'";
      if (binaryExport.bindingCount != kernel.bindingCount)
        return kernel.op->emitError()
               << binary.target << " binary export '" << binaryExport.name
               << "' takes " << binaryExport.bindingCount
               << " bindings, expected " << kernel.bindingCount;
      auto exportEntry = std::make_unique<fb::ExecutableExportT>();
      exportEntry->name = binaryExport.name;
      exportEntry->workgroup_count.assign(binaryExport.workgroupCount.begin(),
                                          binaryExport.workgroupCount.end());
      exportEntry->workgroup_size.assign(binaryExport.workgroupSize.begin(),
                                         binaryExport.workgroupSize.end());
      exportEntry->binding_count = binaryExport.bindingCount;
      exportEntry->push_constant_count = binaryExport.pushConstantCount;
      exportEntry->shared_memory_bytes = binaryExport.sharedMemoryBytes;
      exportEntry->vgpr_count = binaryExport.vgprCount;
      exportEntry->sgpr_count = binaryExport.sgprCount;
      exportEntry->agpr_count = binaryExport.agprCount;
      exportEntry->scratch_bytes = binaryExport.scratchBytes;
      variant->exports.push_back(std::move(exportEntry));
    }
    entry->variants.push_back(std::move(variant));
  }

  auto &exportIndex = exports[executable.getSymName()];
  exportIndex.first = result.executables.size();
  for (auto [index, kernel] : llvm::enumerate(kernels))
    exportIndex.second[kernel.name] = index;
  result.executables.push_back(std::move(entry));
  return success();
}

LogicalResult ModuleWriter::addRodata(RodataOp rodata) {
  auto entry = std::make_unique<fb::RodataT>();
  entry->name = rodata.getSymName().str();
  entry->alignment = rodata.getAlignment();
  if (std::optional<StringRef> parameter = rodata.getParameter()) {
    // A load-time parameter: its name and type, no bytes.
    auto type = getTensorType(rodata.getLoc(), rodata.getTensorType());
    if (failed(type))
      return failure();
    entry->parameter = std::make_unique<fb::ParameterRefT>();
    entry->parameter->name = parameter->str();
    entry->parameter->type = std::move(*type);
  } else if (failed(getConstantBytes(rodata.getLoc(), rodata.getValueAttr(),
                                     entry->data))) {
    return failure();
  }
  result.rodata.push_back(std::move(entry));
  return success();
}

// The dialect's collective enums are written as the schema's values.
static_assert(static_cast<int>(fb::CollectiveOp::AllReduce) ==
                      static_cast<int>(CollectiveKind::AllReduce) &&
                  static_cast<int>(fb::CollectiveOp::AllGather) ==
                      static_cast<int>(CollectiveKind::AllGather) &&
                  static_cast<int>(fb::CollectiveOp::ReduceScatter) ==
                      static_cast<int>(CollectiveKind::ReduceScatter) &&
                  static_cast<int>(fb::CollectiveOp::AllToAll) ==
                      static_cast<int>(CollectiveKind::AllToAll) &&
                  static_cast<int>(fb::CollectiveOp::Broadcast) ==
                      static_cast<int>(CollectiveKind::Broadcast),
              "kiln::CollectiveKind must mirror kiln.schema.CollectiveOp");
static_assert(static_cast<int>(fb::ReductionOp::None) ==
                      static_cast<int>(ReductionKind::None) &&
                  static_cast<int>(fb::ReductionOp::Sum) ==
                      static_cast<int>(ReductionKind::Sum) &&
                  static_cast<int>(fb::ReductionOp::Prod) ==
                      static_cast<int>(ReductionKind::Prod) &&
                  static_cast<int>(fb::ReductionOp::Min) ==
                      static_cast<int>(ReductionKind::Min) &&
                  static_cast<int>(fb::ReductionOp::Max) ==
                      static_cast<int>(ReductionKind::Max) &&
                  static_cast<int>(fb::ReductionOp::Avg) ==
                      static_cast<int>(ReductionKind::Avg),
              "kiln::ReductionKind must mirror kiln.schema.ReductionOp");

FailureOr<std::unique_ptr<fb::CommandEntryT>>
ModuleWriter::getCommand(Operation &op) {
  auto entry = std::make_unique<fb::CommandEntryT>();
  if (auto dispatch = dyn_cast<DispatchCommandOp>(op)) {
    SymbolRefAttr ref = dispatch.getEntryPoint();
    auto it = exports.find(ref.getRootReference().getValue());
    if (it == exports.end() ||
        !it->second.second.count(ref.getLeafReference().getValue()))
      return op.emitError("dispatch of unknown kernel ") << ref;
    fb::DispatchCommandT command;
    command.executable = it->second.first;
    command.export_ = it->second.second.lookup(ref.getLeafReference().getValue());
    for (Attribute binding : dispatch.getBindings())
      command.bindings.push_back(toBufferRef(cast<BufferAttr>(binding)));
    entry->command.Set(std::move(command));
  } else if (auto copy = dyn_cast<CopyCommandOp>(op)) {
    fb::CopyCommandT command;
    command.source = std::make_unique<fb::BufferRef>(toBufferRef(copy.getSource()));
    command.target = std::make_unique<fb::BufferRef>(toBufferRef(copy.getTarget()));
    entry->command.Set(std::move(command));
  } else if (auto fill = dyn_cast<FillCommandOp>(op)) {
    fb::FillCommandT command;
    command.target = std::make_unique<fb::BufferRef>(toBufferRef(fill.getTarget()));
    auto pattern = cast<IntegerAttr>(fill.getPattern());
    appendLittleEndian(pattern.getValue(), pattern.getValue().getBitWidth() / 8,
                       command.pattern);
    entry->command.Set(std::move(command));
  } else if (isa<BarrierCommandOp>(op)) {
    entry->command.Set(fb::BarrierCommandT());
  } else if (auto collective = dyn_cast<CollectiveCommandOp>(op)) {
    fb::CollectiveCommandT command;
    // kiln::CollectiveKind and ReductionKind mirror the schema's enums.
    command.op = static_cast<fb::CollectiveOp>(collective.getKind());
    command.reduction = static_cast<fb::ReductionOp>(collective.getReduction());
    command.element_type = getElementType(collective.getElementType());
    if (command.element_type == fb::ElementType::Invalid)
      return op.emitError("collective element type ")
             << collective.getElementType() << " has no module encoding";
    command.element_count = collective.getCount();
    command.send = std::make_unique<fb::BufferRef>(toBufferRef(collective.getSend()));
    command.recv = std::make_unique<fb::BufferRef>(toBufferRef(collective.getRecv()));
    command.root = static_cast<int32_t>(collective.getRoot());
    command.channel = static_cast<uint32_t>(collective.getChannel());
    entry->command.Set(std::move(command));
  } else {
    return op.emitError("cannot serialize command '") << op.getName() << "'";
  }
  return entry;
}

LogicalResult ModuleWriter::addFunction(ProgramOp program) {
  auto function = std::make_unique<fb::FunctionT>();
  function->name = program.getSymName().str();
  FunctionType type = program.getFunctionType();
  for (Type input : type.getInputs()) {
    auto tensorType = getTensorType(program.getLoc(), input);
    if (failed(tensorType))
      return failure();
    function->inputs.push_back(std::move(*tensorType));
  }
  for (Type output : type.getResults()) {
    auto tensorType = getTensorType(program.getLoc(), output);
    if (failed(tensorType))
      return failure();
    function->outputs.push_back(std::move(*tensorType));
  }
  function->transient_size = program.getTransientSize();
  function->transient_alignment = 64;
  if (std::optional<ArrayAttr> channels = program.getChannels()) {
    for (Attribute attr : *channels) {
      auto channel = cast<ChannelAttr>(attr);
      auto entry = std::make_unique<fb::ChannelT>();
      entry->grid = channel.getGrid().getValue().str();
      entry->axes.assign(channel.getAxes().begin(), channel.getAxes().end());
      entry->grid_shape.assign(channel.getShape().begin(),
                               channel.getShape().end());
      function->channels.push_back(std::move(entry));
    }
  }
  if (std::optional<ArrayAttr> windows = program.getWindows()) {
    for (Attribute attr : *windows) {
      auto window = cast<WindowAttr>(attr);
      auto entry = std::make_unique<fb::WindowT>();
      entry->channel = window.getChannel();
      entry->size = window.getSize();
      entry->signal_count = window.getSignals();
      function->windows.push_back(std::move(entry));
    }
  }
  for (Operation &op : program.getBlock()) {
    auto command = getCommand(op);
    if (failed(command))
      return failure();
    function->commands.push_back(std::move(*command));
  }
  result.functions.push_back(std::move(function));
  return success();
}

LogicalResult ModuleWriter::write(const ModuleWriterOptions &options,
                                  llvm::raw_ostream &os) {
  result.version = KILN_MODULE_VERSION;
  result.name = options.name;
  result.source_digest = options.sourceDigest;
  result.compile_flags = options.compileFlags;
  for (Operation &op : module.getBody()->getOperations()) {
    LogicalResult status =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case<ExecutableOp>([&](auto e) { return addExecutable(e); })
            .Case<RodataOp>([&](auto r) { return addRodata(r); })
            .Case<ProgramOp>([](auto) { return success(); })
            .Default([](Operation *other) {
              return other->emitError("cannot serialize '")
                     << other->getName()
                     << "': host lowering must turn every function into a "
                        "kiln.program";
            });
    if (failed(status))
      return failure();
  }
  // Functions last: their dispatches refer to executable/export indices.
  for (ProgramOp program : module.getOps<ProgramOp>())
    if (failed(addFunction(program)))
      return failure();

  flatbuffers::FlatBufferBuilder builder;
  fb::FinishModuleBuffer(builder, fb::Module::Pack(builder, &result));
  os.write(reinterpret_cast<const char *>(builder.GetBufferPointer()),
           builder.GetSize());
  auto trailer = ::kiln::module_trailer::Make(builder.GetBufferPointer(),
                                              builder.GetSize());
  os.write(reinterpret_cast<const char *>(trailer.data()), trailer.size());
  return success();
}

LogicalResult mlir::kiln::writeModule(ModuleOp module,
                                      const ExecutableBinaryMap &binaries,
                                      const ModuleWriterOptions &options,
                                      llvm::raw_ostream &os) {
  return ModuleWriter(module, binaries).write(options, os);
}
