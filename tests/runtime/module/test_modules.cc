#include "test_modules.h"

#include <cstdio>
#include <cstring>

#include "module_constants.h"
#include "module_trailer.h"

namespace kiln {
namespace testing {

using namespace kiln::schema;  // NOLINT

std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  std::vector<uint8_t> bytes;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return bytes;
  uint8_t chunk[4096];
  size_t read = 0;
  while ((read = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
    bytes.insert(bytes.end(), chunk, chunk + read);
  }
  std::fclose(file);
  return bytes;
}

bool WriteFileBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return false;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  return (std::fclose(file) == 0) && ok;
}

std::vector<uint8_t> TestKernelBinary() {
  return ReadFileBytes(KILN_TEST_KERNEL_PATH);
}

namespace {

std::unique_ptr<TensorTypeT> Tensor(ElementType type,
                                    std::vector<int64_t> shape) {
  auto tensor = std::make_unique<TensorTypeT>();
  tensor->element_type = type;
  tensor->shape = std::move(shape);
  return tensor;
}

std::unique_ptr<ExecutableExportT> Export(const char* name,
                                          uint32_t workgroups) {
  auto exp = std::make_unique<ExecutableExportT>();
  exp->name = name;
  exp->workgroup_count = {workgroups, 1, 1};
  exp->workgroup_size = {1, 1, 1};
  exp->binding_count = 3;
  return exp;
}

std::unique_ptr<CommandEntryT> Dispatch(uint32_t export_ordinal,
                                        std::vector<BufferRef> bindings) {
  DispatchCommandT dispatch;
  dispatch.executable = 0;
  dispatch.export_ = export_ordinal;
  dispatch.bindings = std::move(bindings);
  auto entry = std::make_unique<CommandEntryT>();
  entry->command.Set(std::move(dispatch));
  return entry;
}

constexpr uint64_t kTensorBytes = 6 * sizeof(float);

}  // namespace

std::unique_ptr<ModuleT> BuildTestModule() {
  auto module = std::make_unique<ModuleT>();
  module->version = KILN_MODULE_VERSION;
  module->name = "kiln_test";
  module->source_digest = std::string(64, 'a');
  module->compile_flags = "--target=host";

  auto executable = std::make_unique<ExecutableT>();
  executable->name = "test_kernels";
  for (int v = 0; v < 2; ++v) {
    auto variant = std::make_unique<ExecutableVariantT>();
    if (v == 0) {
      variant->target = "rocm:gfx942";
      variant->format = "hsaco";
      variant->binary = {0x7f, 'E', 'L', 'F'};
    } else {
      variant->target = "host:x86_64";
      variant->format = KILN_HOST_FORMAT;
      variant->binary = TestKernelBinary();
    }
    variant->exports.push_back(Export("add_f32", 4));
    variant->exports.push_back(Export("fail_always", 2));
    executable->variants.push_back(std::move(variant));
  }
  module->executables.push_back(std::move(executable));

  auto bias = std::make_unique<RodataT>();
  bias->name = "bias";
  bias->alignment = 64;
  const float bias_values[6] = {10, 20, 30, 40, 50, 60};
  bias->data.resize(sizeof(bias_values));
  std::memcpy(bias->data.data(), bias_values, sizeof(bias_values));
  module->rodata.push_back(std::move(bias));

  const BufferRef in0(BufferSpace::Input, 0, 0, kTensorBytes);
  const BufferRef in1(BufferSpace::Input, 1, 0, kTensorBytes);
  const BufferRef out0(BufferSpace::Output, 0, 0, kTensorBytes);

  {
    auto function = std::make_unique<FunctionT>();
    function->name = "add";
    function->inputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->inputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->outputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->commands.push_back(Dispatch(0, {in0, in1, out0}));
    module->functions.push_back(std::move(function));
  }
  {
    auto function = std::make_unique<FunctionT>();
    function->name = "add_bias";
    function->inputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->outputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->transient_size = 64;
    const BufferRef scratch(BufferSpace::Transient, 0, 32, kTensorBytes);
    CopyCommandT copy;
    copy.source = std::make_unique<BufferRef>(in0);
    copy.target = std::make_unique<BufferRef>(scratch);
    auto copy_entry = std::make_unique<CommandEntryT>();
    copy_entry->command.Set(std::move(copy));
    function->commands.push_back(std::move(copy_entry));
    auto barrier_entry = std::make_unique<CommandEntryT>();
    barrier_entry->command.Set(BarrierCommandT());
    function->commands.push_back(std::move(barrier_entry));
    const BufferRef rodata(BufferSpace::Rodata, 0, 0, kTensorBytes);
    function->commands.push_back(Dispatch(0, {scratch, rodata, out0}));
    module->functions.push_back(std::move(function));
  }
  {
    auto function = std::make_unique<FunctionT>();
    function->name = "fill";
    function->outputs.push_back(Tensor(ElementType::I32, {4}));
    FillCommandT fill;
    fill.target = std::make_unique<BufferRef>(BufferSpace::Output, 0, 0, 16);
    fill.pattern = {7, 0, 0, 0};
    auto entry = std::make_unique<CommandEntryT>();
    entry->command.Set(std::move(fill));
    function->commands.push_back(std::move(entry));
    module->functions.push_back(std::move(function));
  }
  {
    auto function = std::make_unique<FunctionT>();
    function->name = "fail";
    function->inputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->inputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->outputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->commands.push_back(Dispatch(1, {in0, in1, out0}));
    module->functions.push_back(std::move(function));
  }
  return module;
}

namespace {

std::unique_ptr<CommandEntryT> Collective(CollectiveOp op, ReductionOp reduction,
                                          uint64_t count, BufferRef send,
                                          BufferRef recv, uint32_t channel,
                                          int32_t root = 0) {
  CollectiveCommandT collective;
  collective.op = op;
  collective.reduction = reduction;
  collective.element_type = ElementType::F32;
  collective.element_count = count;
  collective.send = std::make_unique<BufferRef>(send);
  collective.recv = std::make_unique<BufferRef>(recv);
  collective.channel = channel;
  collective.root = root;
  auto entry = std::make_unique<CommandEntryT>();
  entry->command.Set(std::move(collective));
  return entry;
}

std::unique_ptr<ChannelT> GridChannel(const std::vector<int64_t>& grid,
                                      std::vector<int16_t> axes) {
  auto channel = std::make_unique<ChannelT>();
  channel->grid = "grid";
  channel->grid_shape = grid;
  channel->axes = std::move(axes);
  return channel;
}

// A function `name(count_in x f32) -> count_out x f32` running one
// collective from input 0 to output 0 over a channel with |axes|.
std::unique_ptr<FunctionT> CollectiveFunction(
    const char* name, const std::vector<int64_t>& grid,
    std::vector<int16_t> axes, CollectiveOp op, ReductionOp reduction,
    int64_t count_in, int64_t count_out, int32_t root = 0) {
  auto function = std::make_unique<FunctionT>();
  function->name = name;
  function->inputs.push_back(Tensor(ElementType::F32, {count_in}));
  function->outputs.push_back(Tensor(ElementType::F32, {count_out}));
  function->channels.push_back(GridChannel(grid, std::move(axes)));
  function->commands.push_back(Collective(
      op, reduction, uint64_t(count_in),
      BufferRef(BufferSpace::Input, 0, 0, uint64_t(count_in) * 4),
      BufferRef(BufferSpace::Output, 0, 0, uint64_t(count_out) * 4), 0, root));
  return function;
}

}  // namespace

std::unique_ptr<ModuleT> BuildSpmdModule(const std::vector<int64_t>& grid) {
  std::unique_ptr<ModuleT> module = BuildTestModule();
  module->name = "kiln_spmd";
  // Keep "add" (no collectives) and replace the rest.
  module->functions.resize(1);
  int64_t n = 1;
  for (int64_t extent : grid) n *= extent;
  std::vector<int16_t> all;
  for (size_t d = 0; d < grid.size(); ++d) all.push_back(int16_t(d));

  module->functions.push_back(CollectiveFunction(
      "all_reduce", grid, all, CollectiveOp::AllReduce, ReductionOp::Sum, 4, 4));
  module->functions.push_back(CollectiveFunction(
      "all_gather", grid, all, CollectiveOp::AllGather, ReductionOp::None, 2,
      2 * n));
  module->functions.push_back(CollectiveFunction(
      "reduce_scatter", grid, all, CollectiveOp::ReduceScatter,
      ReductionOp::Sum, 2 * n, 2));
  module->functions.push_back(CollectiveFunction(
      "all_to_all", grid, all, CollectiveOp::AllToAll, ReductionOp::None,
      2 * n, 2 * n));
  module->functions.push_back(CollectiveFunction(
      "broadcast", grid, all, CollectiveOp::Broadcast, ReductionOp::None, 4, 4,
      int32_t(n - 1)));
  {
    auto function = std::make_unique<FunctionT>();
    function->name = "add_all_reduce";
    function->inputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->inputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->outputs.push_back(Tensor(ElementType::F32, {2, 3}));
    function->transient_size = kTensorBytes;
    function->channels.push_back(GridChannel(grid, all));
    const BufferRef sum(BufferSpace::Transient, 0, 0, kTensorBytes);
    function->commands.push_back(
        Dispatch(0, {BufferRef(BufferSpace::Input, 0, 0, kTensorBytes),
                     BufferRef(BufferSpace::Input, 1, 0, kTensorBytes), sum}));
    auto barrier = std::make_unique<CommandEntryT>();
    barrier->command.Set(BarrierCommandT());
    function->commands.push_back(std::move(barrier));
    function->commands.push_back(Collective(
        CollectiveOp::AllReduce, ReductionOp::Sum, 6, sum,
        BufferRef(BufferSpace::Output, 0, 0, kTensorBytes), 0));
    module->functions.push_back(std::move(function));
  }
  if (grid.size() == 2) {
    module->functions.push_back(CollectiveFunction(
        "row_sum", grid, {1}, CollectiveOp::AllReduce, ReductionOp::Sum, 4, 4));
    module->functions.push_back(CollectiveFunction(
        "column_gather", grid, {0}, CollectiveOp::AllGather, ReductionOp::None,
        1, grid[0]));
  }
  return module;
}

std::vector<uint8_t> SerializeContents(const ModuleT& module) {
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(Module::Pack(builder, &module), ModuleIdentifier());
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

std::vector<uint8_t> Serialize(const ModuleT& module) {
  return Seal(SerializeContents(module));
}

std::vector<uint8_t> Seal(std::vector<uint8_t> flatbuffer) {
  auto trailer = module_trailer::Make(flatbuffer.data(), flatbuffer.size());
  flatbuffer.insert(flatbuffer.end(), trailer.begin(), trailer.end());
  return flatbuffer;
}

std::vector<uint8_t> Reseal(std::vector<uint8_t> file) {
  if (file.size() >= module_trailer::kSize) {
    file.resize(file.size() - module_trailer::kSize);
  }
  return Seal(std::move(file));
}

std::unique_ptr<ModuleT> BuildParameterTestModule() {
  std::unique_ptr<ModuleT> module = BuildTestModule();
  RodataT& bias = *module->rodata[0];
  bias.data.clear();
  bias.parameter = std::make_unique<ParameterRefT>();
  bias.parameter->name = "bias";
  bias.parameter->type = std::make_unique<TensorTypeT>();
  bias.parameter->type->element_type = ElementType::F32;
  bias.parameter->type->shape = {2, 3};
  return module;
}

std::vector<uint8_t> TestModuleBytes() { return Serialize(*BuildTestModule()); }

}  // namespace testing
}  // namespace kiln
