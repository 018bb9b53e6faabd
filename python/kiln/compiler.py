"""Compile MLIR tensor programs to Kiln modules, in-process.

    import kiln.compiler
    module_bytes = kiln.compiler.compile_str(text, target="cuda,host",
                                             cuda_chip="sm_90")
    module_bytes = kiln.compiler.compile_file("model.mlir", target="host")

Options are kiln-compile's, as keyword arguments (dashes become
underscores): target ("host", "rocm", "cuda" or a comma-separated list, or a
list), rocm_chip, cuda_chip (a string or a list), rocm_device_libs,
rocm_matrix_cores (bool), cuda_layout_fragments (bool), gpu_opt_level, host_cpu, host_features,
host_opt_level, module_name, dump_intermediates, parameters (a
safetensors or .npz archive of the kiln.parameter arguments), parameter_mode
("compile", the default: bind them from parameters into the module; "load":
the module names them and Device.load(module, parameters=...) gives them;
parameters, if also given, is then only checked). A bad option raises
ValueError; a program the compiler refuses raises CompileError, whose
.diagnostics are Diagnostic tuples (severity, file, line, column, message)
and whose message lists them as "file:line:column: error: message".
"""

import collections
import os

from kiln import _compiler as _c

Diagnostic = collections.namedtuple(
    "Diagnostic", ["severity", "file", "line", "column", "message"])


class CompileError(Exception):
    """The compiler refused the program; .diagnostics say why and where."""

    def __init__(self, diagnostics):
        self.diagnostics = diagnostics
        super().__init__("\n".join(_format(d) for d in diagnostics)
                         or "compile failed")


def _format(d):
    where = d.file or "<input>"
    if d.line:
        where += f":{d.line}:{d.column}"
    return f"{where}: {d.severity}: {d.message}"


_FLAGS = ("target", "rocm_chip", "cuda_chip", "rocm_device_libs",
          "rocm_matrix_cores", "cuda_layout_fragments", "gpu_opt_level", "host_cpu", "host_features",
          "host_opt_level", "module_name", "dump_intermediates", "parameters",
          "parameter_mode")


def flags(**options):
    """kiln-compile flags for keyword options (see the module docstring)."""
    result = []
    for name, value in options.items():
        if name not in _FLAGS:
            raise TypeError(f"unknown compile option '{name}' (known: "
                            f"{', '.join(_FLAGS)})")
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            result.append(f"{flag}={'1' if value else '0'}")
        elif isinstance(value, (list, tuple)):
            result.append(f"{flag}={','.join(str(v) for v in value)}")
        else:
            result.append(f"{flag}={os.fspath(value) if isinstance(value, os.PathLike) else value}")
    return result


class Session:
    """Compile options, reusable (and usable from several threads)."""

    def __init__(self, **options):
        self._native = _c.Session(flags(**options))

    def compile_str(self, text, name="<input>"):
        """Compiles MLIR text; returns the module's bytes. name: what
        diagnostics call the source (and the module's default name)."""
        module, diagnostics = self._native.compile(text, name)
        diagnostics = [Diagnostic(*d) for d in diagnostics]
        if module is None:
            raise CompileError(diagnostics)
        return module

    def compile_file(self, path):
        """Compiles the MLIR file at path; returns the module's bytes."""
        path = os.fspath(path)
        with open(path, encoding="utf-8") as f:
            return self.compile_str(f.read(), name=path)


def compile_str(text, name="<input>", **options):
    """Compiles MLIR text with kiln-compile's options; returns the module's
    bytes (load them with kiln.runtime.Device.load)."""
    return Session(**options).compile_str(text, name)


def compile_file(path, **options):
    """Compiles an MLIR file; returns the module's bytes."""
    return Session(**options).compile_file(path)


def version():
    return _c.version()
