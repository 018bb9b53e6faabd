// kiln._runtime: the Python binding of the runtime's C API (kiln/runtime.h).
//
// A thin layer: objects own one reference of their C object, calls release
// the GIL while the runtime works, and every failed kiln_status_t becomes a
// kiln.KilnError carrying the status code name (.code) and message. It deals
// in raw buffers (the buffer protocol), not numpy: kiln/runtime.py maps
// element types to numpy dtypes and shapes arrays.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <memory>
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

struct View;
struct Fence;

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

Module loadModuleFile(const Device& device, const std::string& path) {
  kiln_module_t* module = nullptr;
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = kiln_module_load_file(device.handle.get(), path.c_str(), &module);
  }
  check(status);
  return Module{ModuleHandle(module)};
}

Module loadModuleBytes(const Device& device, py::buffer data) {
  py::buffer_info info = data.request();
  kiln_module_t* module = nullptr;
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = kiln_module_load_memory(device.handle.get(), info.ptr,
                                     size_t(info.size) * size_t(info.itemsize),
                                     &module);
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
      .def("trim", [](const Device& d) { check(kiln_device_trim(d.handle.get())); })
      .def("upload", &upload)
      .def("load_module_file", &loadModuleFile)
      .def("load_module_bytes", &loadModuleBytes)
      .def("create_fence", &createFence);
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
      .def("read", &View::read);
  py::class_<Fence>(m, "Fence")
      .def("wait", &Fence::wait, py::arg("timeout_ns"))
      .def("query", &Fence::query)
      .def("signal", &Fence::signal);
}
