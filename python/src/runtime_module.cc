// kiln._runtime: the Python binding of the runtime's C API (kiln/runtime.h).
//
// A thin layer: objects own one reference of their C object, calls release
// the GIL while the runtime works, and every failed kiln_status_t becomes a
// kiln.KilnError carrying the status code name (.code) and message. It deals
// in raw buffers (the buffer protocol), not numpy: kiln/runtime.py maps
// element types to numpy dtypes and shapes arrays.
#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/runtime.h"

namespace py = pybind11;

namespace {

// The kiln.KilnError type (a RuntimeError), set once at import.
PyObject* errorType = nullptr;

// Raises KilnError for |status| (taken), prefixed with |context| if given.
[[noreturn]] void raise(kiln_status_t status, const std::string& context = "") {
  std::string code = kiln_status_code_string(kiln_status_code(status));
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  if (!context.empty()) message = context + ": " + message;
  py::object error =
      py::reinterpret_borrow<py::object>(errorType)(py::str(message));
  error.attr("code") = py::str(code);
  PyErr_SetObject(errorType, error.ptr());
  throw py::error_already_set();
}

void check(kiln_status_t status, const std::string& context = "") {
  if (!kiln_status_is_ok(status)) raise(status, context);
}

kiln_element_type_t parseElementType(const std::string& name) {
  kiln_element_type_t type = kiln_element_type_from_name(name.c_str());
  if (type == KILN_ELEMENT_TYPE_INVALID)
    throw py::value_error("unknown element type '" + name +
                          "' (expected i1, i8, i16, i32, i64, u8, u16, u32, "
                          "u64, f16, bf16, f32 or f64)");
  return type;
}

py::tuple shapeTuple(const int64_t* shape, size_t rank) {
  py::tuple result(rank);
  for (size_t i = 0; i < rank; ++i) result[i] = py::int_(shape[i]);
  return result;
}

py::tuple typeTuple(const kiln_tensor_type_t& type) {
  return py::make_tuple(kiln_element_type_name(type.element_type),
                        shapeTuple(type.shape, type.rank));
}

// Owning handles of the C objects.
template <typename T, void (*Release)(T*)>
struct Handle {
  std::shared_ptr<T> ptr;
  Handle() = default;
  explicit Handle(T* raw) : ptr(raw, [](T* p) { Release(p); }) {}
  T* get() const { return ptr.get(); }
};
using InstanceHandle = Handle<kiln_instance_t, kiln_instance_release>;
using DeviceHandle = Handle<kiln_device_t, kiln_device_release>;
using ModuleHandle = Handle<kiln_module_t, kiln_module_release>;
using ViewHandle = Handle<kiln_buffer_view_t, kiln_buffer_view_release>;
using FenceHandle = Handle<kiln_fence_t, kiln_fence_release>;
using ParametersHandle = Handle<kiln_parameters_t, kiln_parameters_release>;

struct View;
struct Fence;

// Runs the deleters of imported DLPack tensors the runtime let go of on its
// own threads (see "DLPack" below).
int runPendingDeletes(void*);

struct Device {
  DeviceHandle handle;
};

// A tensor in a device buffer.
struct View {
  ViewHandle handle;

  std::string elementType() const {
    return kiln_element_type_name(kiln_buffer_view_element_type(handle.get()));
  }
  py::tuple shape() const {
    return shapeTuple(kiln_buffer_view_shape(handle.get()),
                      kiln_buffer_view_rank(handle.get()));
  }
  uint64_t byteLength() const {
    return kiln_buffer_view_byte_length(handle.get());
  }
  // Copies the contents into |out| (a writable, C-contiguous buffer of
  // exactly byteLength() bytes); waits for the call that produced the view.
  void read(py::buffer out) const {
    py::buffer_info info = out.request(/*writable=*/true);
    size_t length = size_t(info.size) * size_t(info.itemsize);
    if (length != byteLength())
      throw py::value_error("read: the buffer has " + std::to_string(length) +
                            " bytes, the tensor " +
                            std::to_string(byteLength()));
    kiln_status_t status;
    {
      py::gil_scoped_release release;
      status = kiln_buffer_view_read(handle.get(), info.ptr, length);
    }
    check(status);
  }
};

struct Fence {
  FenceHandle handle;

  // Waits until signaled; |timeoutNs| < 0 waits forever.
  void wait(int64_t timeoutNs) const {
    kiln_status_t status;
    {
      py::gil_scoped_release release;
      status = kiln_fence_wait(handle.get(), timeoutNs < 0 ? INT64_MAX : timeoutNs);
    }
    check(status);
  }
  bool query() const {
    bool signaled = false;
    check(kiln_fence_query(handle.get(), &signaled));
    return signaled;
  }
  void signal() const { check(kiln_fence_signal(handle.get())); }
};

struct Function {
  ModuleHandle module;         // keeps the borrowed function alive
  kiln_function_t* function;   // borrowed from |module|

  std::string name() const { return kiln_function_name(function); }
  std::string signature() const {
    size_t length = kiln_function_format_signature(function, nullptr, 0);
    std::string text(length, '\0');
    kiln_function_format_signature(function, text.data(), length + 1);
    return text;
  }
  py::list inputTypes() const {
    return types(kiln_function_input_count, kiln_function_input_type);
  }
  py::list outputTypes() const {
    return types(kiln_function_output_count, kiln_function_output_type);
  }
  // [(element type, shape)] of the inputs or outputs.
  py::list types(size_t (*count)(const kiln_function_t*),
                 kiln_status_t (*typeAt)(const kiln_function_t*, size_t,
                                         kiln_tensor_type_t*)) const {
    py::list result;
    for (size_t i = 0; i < count(function); ++i) {
      kiln_tensor_type_t type;
      check(typeAt(function, i, &type));
      result.append(typeTuple(type));
    }
    return result;
  }

  // A synchronous call (|async|: false) or one that returns once submitted,
  // after |wait| and signalling |signal| (either may be None).
  std::vector<View> call(const std::vector<View>& inputs, bool async,
                         const Fence* wait, const Fence* signal) const {
    runPendingDeletes(nullptr);
    std::vector<kiln_buffer_view_t*> raw;
    for (const View& view : inputs) raw.push_back(view.handle.get());
    std::vector<kiln_buffer_view_t*> outputs(
        kiln_function_output_count(function), nullptr);
    kiln_status_t status;
    {
      py::gil_scoped_release release;
      status =
          async ? kiln_function_call_async(
                      function, raw.size(), raw.data(),
                      wait ? wait->handle.get() : nullptr,
                      signal ? signal->handle.get() : nullptr, outputs.size(),
                      outputs.data())
                : kiln_function_call(function, raw.size(), raw.data(),
                                     outputs.size(), outputs.data());
    }
    check(status);
    std::vector<View> result;
    for (kiln_buffer_view_t* view : outputs) result.push_back(View{ViewHandle(view)});
    return result;
  }
};

struct Module {
  ModuleHandle handle;

  std::string name() const { return kiln_module_name(handle.get()); }
  std::vector<std::string> functionNames() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < kiln_module_function_count(handle.get()); ++i) {
      kiln_function_t* function = nullptr;
      check(kiln_module_function_at(handle.get(), i, &function));
      names.push_back(kiln_function_name(function));
    }
    return names;
  }
  Function function(const std::string& name) const {
    kiln_function_t* function = nullptr;
    check(kiln_module_lookup_function(handle.get(), name.c_str(), &function));
    return Function{handle, function};
  }
};

std::string deviceUri(const Device& device) {
  return kiln_device_uri(device.handle.get());
}

View upload(const Device& device, const std::string& elementType,
            const std::vector<int64_t>& shape, py::buffer data) {
  kiln_element_type_t type = parseElementType(elementType);
  if (shape.size() > KILN_MAX_RANK)
    throw py::value_error("rank " + std::to_string(shape.size()) +
                          " exceeds the runtime's maximum of " +
                          std::to_string(KILN_MAX_RANK));
  py::buffer_info info = data.request();
  if (info.ndim > 1) {
    // Contiguity: the Python layer passes C-contiguous arrays; check.
    py::ssize_t stride = info.itemsize;
    for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
      if (info.shape[d] > 1 && info.strides[d] != stride)
        throw py::value_error("upload: the buffer is not C-contiguous");
      stride *= info.shape[d];
    }
  }
  size_t length = size_t(info.size) * size_t(info.itemsize);
  kiln_buffer_view_t* view = nullptr;
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = kiln_buffer_view_create_from_host(
        device.handle.get(), type, shape.size(), shape.data(),
        length ? info.ptr : nullptr, length, &view);
  }
  check(status);
  return View{ViewHandle(view)};
}

// Named tensors given when a module is loaded (kiln_parameters_t).
struct Parameters {
  ParametersHandle handle;

  Parameters() {
    kiln_parameters_t* parameters = nullptr;
    check(kiln_parameters_create(&parameters));
    handle = ParametersHandle(parameters);
  }
  void addArchiveFile(const std::string& path) {
    kiln_status_t status;
    {
      py::gil_scoped_release release;
      status = kiln_parameters_add_archive_file(handle.get(), path.c_str());
    }
    check(status);
  }
  void addTensor(const std::string& name, const std::string& elementType,
                 const std::vector<int64_t>& shape, py::buffer data) {
    py::buffer_info info = data.request();
    check(kiln_parameters_add_tensor(
        handle.get(), name.c_str(), parseElementType(elementType), shape.data(),
        shape.size(), info.ptr, size_t(info.size) * size_t(info.itemsize)));
  }
  size_t count() const { return kiln_parameters_count(handle.get()); }
};

Module loadModuleFile(const Device& device, const std::string& path,
                      const Parameters* parameters) {
  kiln_module_t* module = nullptr;
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = kiln_module_load_file_with_parameters(
        device.handle.get(), path.c_str(),
        parameters ? parameters->handle.get() : nullptr, &module);
  }
  check(status);
  return Module{ModuleHandle(module)};
}

Module loadModuleBytes(const Device& device, py::buffer data,
                       const Parameters* parameters) {
  py::buffer_info info = data.request();
  kiln_module_t* module = nullptr;
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = kiln_module_load_memory_with_parameters(
        device.handle.get(), info.ptr,
        size_t(info.size) * size_t(info.itemsize),
        parameters ? parameters->handle.get() : nullptr, &module);
  }
  check(status);
  return Module{ModuleHandle(module)};
}

struct Instance {
  InstanceHandle handle;

  Instance(const std::vector<std::string>& plugins, bool useEnvironment) {
    std::vector<const char*> paths;
    for (const std::string& path : plugins) paths.push_back(path.c_str());
    kiln_instance_options_t options = {};
    options.plugin_paths = paths.data();
    options.plugin_path_count = paths.size();
    options.ignore_plugin_environment = !useEnvironment;
    kiln_instance_t* instance = nullptr;
    check(kiln_instance_create(&options, &instance));
    handle = InstanceHandle(instance);
  }
  void loadPlugin(const std::string& path) {
    check(kiln_instance_load_plugin(handle.get(), path.c_str()));
  }
  std::vector<std::string> devices() const {
    size_t length = kiln_instance_list_devices(handle.get(), nullptr, 0);
    std::string text(length, '\0');
    kiln_instance_list_devices(handle.get(), text.data(), length + 1);
    std::vector<std::string> uris;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      if (end > start) uris.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return uris;
  }
  Device createDevice(const std::string& uri) const {
    kiln_device_t* device = nullptr;
    check(kiln_device_create(handle.get(), uri.c_str(), &device));
    return Device{DeviceHandle(device)};
  }
};

Fence createFence(const Device& device) {
  kiln_fence_t* fence = nullptr;
  check(kiln_fence_create(device.handle.get(), &fence));
  return Fence{FenceHandle(fence)};
}

//===----------------------------------------------------------------------===//
// DLPack: tensors shared with other libraries in place
//===----------------------------------------------------------------------===//
// Capsules follow the DLPack protocol's unversioned form (a PyCapsule named
// "dltensor" holding a DLManagedTensor; renamed "used_dltensor" by the
// consumer that takes ownership), which numpy, PyTorch, JAX and CuPy all
// produce and consume.

// DLPack 0.8's boolean type code (Debian's dlpack.h 0.6 predates it).
constexpr uint8_t kDLBoolCode = 6;

// The DLPack device of |memoryType| (kiln_external_memory_type_t).
int32_t dlpackDeviceType(kiln_external_memory_type_t memoryType) {
  switch (memoryType) {
    case KILN_EXTERNAL_MEMORY_HOST:
      return kDLCPU;
    case KILN_EXTERNAL_MEMORY_CUDA:
      return kDLCUDA;
    case KILN_EXTERNAL_MEMORY_ROCM:
      return kDLROCM;
  }
  return 0;
}

kiln_device_external_info_t externalInfo(const Device& device) {
  kiln_device_external_info_t info = {};
  check(kiln_device_query_external_info(device.handle.get(), &info));
  return info;
}

// (DLPack device type, ordinal) of the memory |device| computes on.
py::tuple deviceDlpackDevice(const Device& device) {
  kiln_device_external_info_t info = externalInfo(device);
  return py::make_tuple(dlpackDeviceType(info.memory_type),
                        info.device_ordinal);
}

// DLPack's stream argument for producers handing memory to |device|: the
// device's stream, or None for host memory (no streams).
py::object deviceDlpackStream(const Device& device) {
  kiln_device_external_info_t info = externalInfo(device);
  if (info.memory_type == KILN_EXTERNAL_MEMORY_HOST) return py::none();
  return py::int_(info.stream);
}

// The Kiln element type of a DLPack dtype, or INVALID.
kiln_element_type_t elementTypeOf(DLDataType dtype) {
  if (dtype.lanes != 1) return KILN_ELEMENT_TYPE_INVALID;
  std::string name;
  switch (dtype.code) {
    case kDLInt:
      name = "i" + std::to_string(dtype.bits);
      break;
    case kDLUInt:
      name = "u" + std::to_string(dtype.bits);
      break;
    case kDLFloat:
      name = "f" + std::to_string(dtype.bits);
      break;
    case kDLBfloat:
      name = dtype.bits == 16 ? "bf16" : "";
      break;
    case kDLBoolCode:
      name = dtype.bits == 8 ? "i1" : "";
      break;
    default:
      break;
  }
  return name.empty() ? KILN_ELEMENT_TYPE_INVALID
                      : kiln_element_type_from_name(name.c_str());
}

DLDataType dlpackTypeOf(kiln_element_type_t type) {
  std::string name = kiln_element_type_name(type);
  DLDataType dtype = {0, 0, 1};
  if (name == "i1") {
    dtype.code = kDLBoolCode;
    dtype.bits = 8;
    return dtype;
  }
  dtype.code = name == "bf16"   ? kDLBfloat
               : name[0] == 'f' ? kDLFloat
               : name[0] == 'u' ? kDLUInt
                                : kDLInt;
  dtype.bits = uint8_t(kiln_element_type_size(type) * 8);
  return dtype;
}

// Deleters of imported tensors run when the runtime lets go of the memory,
// often on a driver thread. Producers' deleters may touch Python objects
// (numpy's drops its array), so they run with the GIL, and a driver thread
// never waits for the GIL (a Python thread holding it may be waiting for
// that driver thread): it queues the tensor, and the interpreter runs the
// queue as a pending call, or the next call into this module does.
std::mutex deleteMutex;
std::vector<DLManagedTensor*> pendingDeletes;
bool deleteScheduled = false;

int runPendingDeletes(void*) {
  std::vector<DLManagedTensor*> tensors;
  {
    std::lock_guard<std::mutex> lock(deleteMutex);
    tensors.swap(pendingDeletes);
    deleteScheduled = false;
  }
  for (DLManagedTensor* tensor : tensors)
    if (tensor->deleter) tensor->deleter(tensor);
  return 0;
}

void releaseImported(void* userData) {
  auto* tensor = static_cast<DLManagedTensor*>(userData);
  if (!Py_IsInitialized()) return;  // interpreter gone: leak, as numpy does
  if (PyGILState_Check()) {
    if (tensor->deleter) tensor->deleter(tensor);
    return;
  }
  std::lock_guard<std::mutex> lock(deleteMutex);
  pendingDeletes.push_back(tensor);
  // Needs neither the GIL nor a thread state; fails only when the
  // interpreter's queue is full, and then the next call drains ours.
  if (!deleteScheduled)
    deleteScheduled = Py_AddPendingCall(runPendingDeletes, nullptr) == 0;
}

// Imports the DLPack capsule |capsule| as a view on |device| without
// copying; |elementType| ("" for the capsule's dtype) is the type expected:
// the capsule's, or i1 for u8 and bf16 for u16 data (their raw bits).
// ValueError when the tensor cannot be used in place (memory of another device,
// strided, misaligned), TypeError for a dtype Kiln lacks.
View importDlpack(const Device& device, py::capsule capsule,
                  const std::string& elementType) {
  runPendingDeletes(nullptr);
  if (std::strcmp(capsule.name(), "dltensor") != 0)
    throw py::value_error(
        std::string("expected a DLPack capsule named 'dltensor', got '") +
        capsule.name() + "' (a capsule can be consumed only once)");
  auto* managed = capsule.get_pointer<DLManagedTensor>();
  const DLTensor& tensor = managed->dl_tensor;
  kiln_device_external_info_t info = externalInfo(device);
  int32_t deviceType = dlpackDeviceType(info.memory_type);
  bool sameDevice =
      (int32_t(tensor.device.device_type) == deviceType ||
       (deviceType == kDLCUDA &&
        tensor.device.device_type == kDLCUDAManaged)) &&
      (deviceType == kDLCPU || tensor.device.device_id == info.device_ordinal);
  if (!sameDevice)
    throw py::value_error("the tensor is on DLPack device (" +
                          std::to_string(int(tensor.device.device_type)) +
                          ", " + std::to_string(tensor.device.device_id) +
                          "), " + kiln_device_uri(device.handle.get()) +
                          " computes on (" + std::to_string(deviceType) + ", " +
                          std::to_string(info.device_ordinal) + ")");
  kiln_element_type_t type = elementTypeOf(tensor.dtype);
  if (type == KILN_ELEMENT_TYPE_INVALID)
    throw py::type_error("DLPack dtype (code " +
                         std::to_string(int(tensor.dtype.code)) + ", " +
                         std::to_string(int(tensor.dtype.bits)) + " bits, " +
                         std::to_string(int(tensor.dtype.lanes)) +
                         " lanes) has no Kiln element type");
  if (!elementType.empty()) {
    // The raw-bits forms numpy gives types it lacks: uint8 for booleans
    // (older DLPack producers too), uint16 for bfloat16.
    std::string got = kiln_element_type_name(type);
    bool same = got == elementType || (elementType == "i1" && got == "u8") ||
                (elementType == "bf16" && got == "u16");
    if (!same)
      throw py::type_error("got a " + got + " tensor, expected " + elementType);
    type = parseElementType(elementType);
  }
  if (tensor.ndim < 0 || tensor.ndim > KILN_MAX_RANK)
    throw py::value_error("rank " + std::to_string(tensor.ndim) +
                          " exceeds the runtime's maximum of " +
                          std::to_string(KILN_MAX_RANK));
  std::vector<int64_t> shape(tensor.shape, tensor.shape + tensor.ndim);
  if (tensor.strides) {
    int64_t expected = 1;
    for (int32_t d = tensor.ndim - 1; d >= 0; --d) {
      if (shape[size_t(d)] > 1 && tensor.strides[d] != expected)
        throw py::value_error(
            "the tensor is not dense row-major (strides differ from its "
            "shape's); pass a contiguous copy");
      expected *= shape[size_t(d)];
    }
  }
  uint64_t bytes = kiln_element_type_size(type);
  for (int64_t d : shape) bytes *= uint64_t(d < 0 ? 0 : d);
  kiln_external_memory_t memory = {};
  memory.type = info.memory_type;
  memory.data = static_cast<char*>(tensor.data) + tensor.byte_offset;
  memory.byte_length = bytes;
  memory.release = releaseImported;
  memory.user_data = managed;
  if (bytes && reinterpret_cast<uintptr_t>(memory.data) % 16)
    throw py::value_error(
        "the tensor's data is not 16-byte aligned (a view into another "
        "tensor?); pass a copy");
  kiln_buffer_view_t* view = nullptr;
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = kiln_buffer_view_import(device.handle.get(), type, shape.size(),
                                     shape.data(), &memory, &view);
  }
  check(status);
  // Ours now: the producer's capsule destructor must not delete it.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  return View{ViewHandle(view)};
}

// What an exported capsule owns: a reference to the view (its memory) and
// the DLTensor's shape; with a consumer stream, the deleter waits for that
// stream's work before the memory goes back to the device.
struct ExportedTensor {
  DLManagedTensor managed;
  ViewHandle view;
  std::vector<int64_t> shape;
  bool waitStream = false;
  uint64_t stream = 0;
};

void deleteExported(DLManagedTensor* managed) {
  auto* exported = static_cast<ExportedTensor*>(managed->manager_ctx);
  if (exported->waitStream) {
    kiln_device_t* device = kiln_buffer_view_device(exported->view.get());
    // A wait holding the GIL would stall every Python thread.
    PyThreadState* saved = nullptr;
    if (Py_IsInitialized() && PyGILState_Check()) saved = PyEval_SaveThread();
    kiln_status_t status =
        kiln_device_wait_external_stream(device, exported->stream);
    if (saved) PyEval_RestoreThread(saved);
    // A deleter cannot report: a failed wait means the stream's context is
    // broken, and its work will not touch the memory again.
    kiln_status_free(status);
  }
  delete exported;
}

void destroyExportCapsule(PyObject* capsule) {
  // Consumed capsules were renamed; the consumer owns the tensor then.
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed && managed->deleter) managed->deleter(managed);
}

// A DLPack capsule over |view|'s memory (after the call producing it has
// finished). |stream|: the consumer's stream (DLPack's protocol), None for
// the legacy default stream on GPUs; -1 asks for no synchronization.
py::capsule exportDlpack(const View& view, py::object stream) {
  runPendingDeletes(nullptr);
  kiln_external_memory_t memory = {};
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = kiln_buffer_view_export(view.handle.get(), &memory);
  }
  check(status);
  auto exported = std::make_unique<ExportedTensor>();
  exported->view = view.handle;
  size_t rank = kiln_buffer_view_rank(view.handle.get());
  const int64_t* shape = kiln_buffer_view_shape(view.handle.get());
  exported->shape.assign(shape, shape + rank);
  if (memory.type != KILN_EXTERNAL_MEMORY_HOST) {
    int64_t value = stream.is_none() ? 1 : stream.cast<int64_t>();
    exported->waitStream = value != -1;
    exported->stream = uint64_t(value);
  }
  kiln_device_external_info_t info = {};
  check(kiln_device_query_external_info(
      kiln_buffer_view_device(view.handle.get()), &info));
  DLTensor& tensor = exported->managed.dl_tensor;
  tensor.data = memory.data;
  tensor.device.device_type = DLDeviceType(dlpackDeviceType(memory.type));
  tensor.device.device_id =
      memory.type == KILN_EXTERNAL_MEMORY_HOST ? 0 : info.device_ordinal;
  tensor.ndim = int32_t(rank);
  tensor.dtype = dlpackTypeOf(kiln_buffer_view_element_type(view.handle.get()));
  tensor.shape = exported->shape.data();
  tensor.strides = nullptr;  // dense row-major
  tensor.byte_offset = 0;
  exported->managed.manager_ctx = exported.get();
  exported->managed.deleter = deleteExported;
  PyObject* capsule =
      PyCapsule_New(&exported->managed, "dltensor", destroyExportCapsule);
  if (!capsule) throw py::error_already_set();
  exported.release();
  return py::reinterpret_steal<py::capsule>(capsule);
}

// (DLPack device type, ordinal) of |view|'s memory.
py::tuple viewDlpackDevice(const View& view) {
  kiln_device_external_info_t info = {};
  check(kiln_device_query_external_info(
      kiln_buffer_view_device(view.handle.get()), &info));
  return py::make_tuple(dlpackDeviceType(info.memory_type),
                        info.device_ordinal);
}

// Where installed driver plugins live (kiln_plugin_directory), or "".
std::string pluginDirectory() {
  size_t length = kiln_plugin_directory(nullptr, 0);
  std::string directory(length, '\0');
  kiln_plugin_directory(directory.data(), length + 1);
  return directory;
}

}  // namespace

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "Kiln runtime (native layer of kiln.runtime)";
  errorType = PyErr_NewExceptionWithDoc(
      "kiln._runtime.KilnError",
      "An error from the Kiln runtime; .code is the status code name "
      "(e.g. 'INVALID_ARGUMENT').",
      PyExc_RuntimeError, nullptr);
  m.attr("KilnError") = py::handle(errorType);
  m.def("plugin_directory", &pluginDirectory);
  m.def("element_type_size", [](const std::string& name) {
    return kiln_element_type_size(parseElementType(name));
  });

  py::class_<Instance>(m, "Instance")
      .def(py::init<const std::vector<std::string>&, bool>(),
           py::arg("plugins"), py::arg("use_environment"))
      .def("load_plugin", &Instance::loadPlugin)
      .def("devices", &Instance::devices)
      .def("create_device", &Instance::createDevice);
  py::class_<Device>(m, "Device")
      .def_property_readonly("uri", &deviceUri)
      .def("trim",
           [](const Device& d) { check(kiln_device_trim(d.handle.get())); })
      .def("upload", &upload)
      .def("load_module_file", &loadModuleFile, py::arg("path"),
           py::arg("parameters") = nullptr)
      .def("load_module_bytes", &loadModuleBytes, py::arg("data"),
           py::arg("parameters") = nullptr)
      .def("create_fence", &createFence)
      .def("dlpack_device", &deviceDlpackDevice)
      .def("dlpack_stream", &deviceDlpackStream)
      .def("import_dlpack", &importDlpack, py::arg("capsule"),
           py::arg("element_type"));
  py::class_<Parameters>(m, "Parameters")
      .def(py::init<>())
      .def("add_archive_file", &Parameters::addArchiveFile)
      .def("add_tensor", &Parameters::addTensor)
      .def("__len__", &Parameters::count);
  py::class_<Module>(m, "Module")
      .def_property_readonly("name", &Module::name)
      .def("function_names", &Module::functionNames)
      .def("function", &Module::function);
  py::class_<Function>(m, "Function")
      .def_property_readonly("name", &Function::name)
      .def_property_readonly("signature", &Function::signature)
      .def_property_readonly("world_size", [](const Function& f) {
        return kiln_function_world_size(f.function);
      })
      .def("input_types", &Function::inputTypes)
      .def("output_types", &Function::outputTypes)
      .def("call", &Function::call, py::arg("inputs"), py::arg("async_"),
           py::arg("wait").none(true), py::arg("signal").none(true));
  py::class_<View>(m, "View")
      .def_property_readonly("element_type", &View::elementType)
      .def_property_readonly("shape", &View::shape)
      .def_property_readonly("byte_length", &View::byteLength)
      .def("read", &View::read)
      .def("export_dlpack", &exportDlpack, py::arg("stream").none(true))
      .def("dlpack_device", &viewDlpackDevice);
  py::class_<Fence>(m, "Fence")
      .def("wait", &Fence::wait, py::arg("timeout_ns"))
      .def("query", &Fence::query)
      .def("signal", &Fence::signal);
}
