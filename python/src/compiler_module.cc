// kiln._compiler: the Python binding of the compiler's C API
// (kiln/compiler.h). Compiles release the GIL; kiln/compiler.py turns the
// diagnostics into kiln.CompileError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "kiln/compiler.h"

namespace py = pybind11;

namespace {

struct Session {
  std::shared_ptr<kiln_compiler_session_t> handle;

  explicit Session(const std::vector<std::string> &flags) {
    std::vector<const char *> raw;
    for (const std::string &flag : flags)
      raw.push_back(flag.c_str());
    char error[1024];
    kiln_compiler_session_t *session = kiln_compiler_session_create(
        raw.data(), raw.size(), error, sizeof(error));
    if (!session)
      throw py::value_error(error);
    handle.reset(session, kiln_compiler_session_destroy);
  }

  // (module bytes or None, [(severity, file, line, column, message)]).
  py::tuple compile(const std::string &source, const std::string &name) const {
    kiln_compiler_output_t *output;
    {
      py::gil_scoped_release release;
      output = kiln_compiler_compile(handle.get(), source.data(), source.size(),
                                     name.c_str());
    }
    if (!output)
      throw std::bad_alloc();
    std::unique_ptr<kiln_compiler_output_t, void (*)(kiln_compiler_output_t *)>
        owned(output, kiln_compiler_output_destroy);
    static const char *kSeverities[] = {"error", "warning", "note", "remark"};
    py::list diagnostics;
    for (size_t i = 0; i < kiln_compiler_output_diagnostic_count(output); ++i) {
      const kiln_compiler_diagnostic_t *d =
          kiln_compiler_output_diagnostic(output, i);
      diagnostics.append(py::make_tuple(kSeverities[d->severity & 3], d->file,
                                        d->line, d->column, d->message));
    }
    size_t length = 0;
    const void *module = kiln_compiler_output_module(output, &length);
    py::object bytes = py::none();
    if (module)
      bytes = py::bytes(static_cast<const char *>(module), length);
    return py::make_tuple(bytes, diagnostics);
  }
};

} // namespace

PYBIND11_MODULE(_compiler, m) {
  m.doc() = "Kiln compiler (native layer of kiln.compiler)";
  m.def("version", &kiln_compiler_version);
  py::class_<Session>(m, "Session")
      .def(py::init<const std::vector<std::string> &>(), py::arg("flags"))
      .def("compile", &Session::compile, py::arg("source"), py::arg("name"));
}
