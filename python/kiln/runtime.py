"""Devices, modules and calls of the Kiln runtime, with numpy arrays.

Objects:
  Instance   the runtime's root (driver registry); one default per process,
             made on first use (instance()).
  Device     a device by URI: "local", "local://1", "hip", "hip://0", ...
  Module     a compiled module loaded on a device; its functions are
             attributes (module.main) and items (module["main"]).
  Function   callable with numpy arrays (or DeviceArrays), returning numpy
             arrays (call(..., outputs="device") returns DeviceArrays).
  DeviceArray  a tensor in device memory: .numpy(), .shape, .dtype.
  Fence      a point on a device timeline, for asynchronous calls.

Element types map to numpy dtypes: i1 <-> bool, i8..i64 <-> int8..int64,
u8..u64 <-> uint8..uint64, f16 <-> float16, f32 <-> float32, f64 <-> float64,
and bf16 <-> ml_dtypes.bfloat16 when ml_dtypes is installed, else uint16 (the
raw bfloat16 bits; inputs may be either).

Driver plugins: those in $KILN_HAL_DRIVER_PLUGINS, those given to
Instance(plugins=[...]), and the ones installed next to libkiln_runtime.so
(libkiln_hal_*.so; found automatically, so Device("hip") works without
naming a plugin).

Errors from the runtime raise KilnError (a RuntimeError) whose .code is the
status code name, e.g. "INVALID_ARGUMENT", "NOT_FOUND", "DATA_LOSS".
"""

import glob
import os
import threading
import warnings

import numpy as np

from kiln import _runtime as _rt

KilnError = _rt.KilnError

try:  # optional: a real bfloat16 dtype
    import ml_dtypes as _ml_dtypes

    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _BF16 = None

_DTYPES = {
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16),
    "bf16": _BF16 if _BF16 is not None else np.dtype(np.uint16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}


def _parameters(parameters):
    """The native parameter set of Device.load's parameters argument, or
    None."""
    if parameters is None:
        return None
    native = _rt.Parameters()
    sources = (parameters if isinstance(parameters, (list, tuple))
               else [parameters])
    for source in sources:
        if isinstance(source, dict):
            for name, value in source.items():
                array = np.ascontiguousarray(np.asarray(value))
                native.add_tensor(str(name), element_type(array.dtype),
                                  list(array.shape),
                                  array.reshape(-1).view(np.uint8))
        elif isinstance(source, (str, os.PathLike)):
            native.add_archive_file(os.fspath(source))
        else:
            raise TypeError(
                "parameters must be an archive path, a dict of name -> array "
                f"or a list of those, not {type(source).__name__}")
    return native


def numpy_dtype(element_type):
    """The numpy dtype of a Kiln element type name ("f32", "bf16", ...)."""
    try:
        return _DTYPES[element_type]
    except KeyError:
        raise ValueError(f"unknown element type '{element_type}'") from None


def element_type(dtype):
    """The Kiln element type name of a numpy dtype (bfloat16 needs
    ml_dtypes; uint16 maps to u16)."""
    dtype = np.dtype(dtype)
    if _BF16 is not None and dtype == _BF16:
        return "bf16"
    for name, candidate in _DTYPES.items():
        if name != "bf16" and dtype == candidate:
            return name
    raise TypeError(f"numpy dtype {dtype} has no Kiln element type")


def _type_text(element, shape):
    return "x".join([str(d) for d in shape] + [element])


class Instance:
    """The runtime's root object: built-in drivers plus plugins."""

    def __init__(self, plugins=(), use_environment=True, find_installed=True):
        """plugins: driver plugin paths to load (a failure raises).
        use_environment: also load $KILN_HAL_DRIVER_PLUGINS.
        find_installed: also load the libkiln_hal_*.so installed next to
        libkiln_runtime.so (one that fails to load is skipped with a
        warning naming it)."""
        self._native = _rt.Instance([os.fspath(p) for p in plugins],
                                    use_environment)
        if find_installed:
            loaded = {os.path.realpath(os.fspath(p)) for p in plugins}
            if use_environment:
                for p in os.environ.get("KILN_HAL_DRIVER_PLUGINS", "").split(":"):
                    if p:
                        loaded.add(os.path.realpath(p))
            for path in _installed_plugins():
                if os.path.realpath(path) in loaded:
                    continue
                try:
                    self._native.load_plugin(path)
                except KilnError as e:
                    warnings.warn(f"kiln: skipped driver plugin {path}: {e}")

    def devices(self):
        """URIs of the devices the drivers see, e.g. ["local://0", ...]."""
        return self._native.devices()

    def load_plugin(self, path):
        self._native.load_plugin(os.fspath(path))

    def device(self, uri="local"):
        return Device(uri, instance=self)


def _installed_plugins():
    directory = _rt.plugin_directory()
    if not directory:
        return []
    return sorted(glob.glob(os.path.join(directory, "libkiln_hal_*.so")))


_default_instance = None
_default_lock = threading.Lock()


def instance():
    """The process's default Instance (made on first use)."""
    global _default_instance
    with _default_lock:
        if _default_instance is None:
            _default_instance = Instance()
        return _default_instance


def devices():
    """URIs of the default instance's devices."""
    return instance().devices()


class Device:
    """A device by URI ("local", "local://1", "hip", "hip://0", ...)."""

    def __init__(self, uri="local", instance=None):
        self.instance = instance if instance is not None else globals()["instance"]()
        self._native = self.instance._native.create_device(uri)
        self._dlpack = None  # (DLPack device, stream), on first use

    @property
    def uri(self):
        return self._native.uri

    def __repr__(self):
        return f"kiln.runtime.Device({self.uri!r})"

    def load(self, module, parameters=None):
        """Loads a compiled module: a path (str or os.PathLike) or the
        module's bytes (bytes, bytearray, memoryview).

        parameters: the tensors of a module compiled with load-time
        parameters (kiln-compile --parameter-mode=load): a parameter archive
        (a safetensors or .npz path), a dict of name -> array (anything
        np.asarray takes), or a list of those. Every name may be given once;
        a missing, mistyped or misshapen parameter raises KilnError naming
        it."""
        native = _parameters(parameters)
        if isinstance(module, (bytes, bytearray, memoryview)):
            return Module(self._native.load_module_bytes(module, native), self)
        return Module(self._native.load_module_file(os.fspath(module), native),
                      self)

    def array(self, value, element=None):
        """A DeviceArray holding a copy of value (a numpy array or anything
        np.asarray takes; element: the Kiln element type, default from the
        dtype)."""
        if element is None:
            array = np.asarray(value)
            element = element_type(array.dtype)
        else:
            array = np.asarray(value, dtype=numpy_dtype(element))
        array = np.ascontiguousarray(array)
        return DeviceArray(self._native.upload(
            element, list(array.shape), array.reshape(-1).view(np.uint8)), self)

    def fence(self):
        """A new unsignaled Fence on this device."""
        return Fence(self._native.create_fence())

    @property
    def dlpack_device(self):
        """(DLPack device type, ordinal) of the memory this device computes
        on: (1, 0) (kDLCPU) for local devices, (2, N) (kDLCUDA) for hip://N
        on NVIDIA, (10, N) (kDLROCM) on AMD."""
        if self._dlpack is None:  # fixed for the device's life: asked once
            self._dlpack = (tuple(self._native.dlpack_device()),
                            self._native.dlpack_stream())
        return self._dlpack[0]

    def from_dlpack(self, value, element=None):
        """A DeviceArray over the memory of value (a torch tensor, numpy or
        JAX array, anything with __dlpack__) without copying it; value must
        live where this device computes (dlpack_device), dense row-major and
        16-byte aligned. element: the Kiln element type to take the data as
        (default: the tensor's dtype; "i1" also takes uint8 and "bf16"
        uint16 data, the bits as they are). The array keeps value's memory alive;
        calls read it in place, so do not write value while calls that take
        the array may run. On GPUs the producer orders its pending writes
        before this device's work (__dlpack__'s stream argument)."""
        got = tuple(value.__dlpack_device__())
        if got != self.dlpack_device:
            raise ValueError(
                f"the tensor is on DLPack device {got}, {self.uri} computes on "
                f"{self.dlpack_device}: move it there first")
        stream = self._dlpack[1]
        capsule = (value.__dlpack__() if stream is None
                   else value.__dlpack__(stream=stream))
        return DeviceArray(self._native.import_dlpack(capsule, element or ""),
                           self)

    def trim(self):
        """Returns the device's cached memory to the system."""
        self._native.trim()


class DeviceArray:
    """A tensor in device memory (an input or output of calls)."""

    def __init__(self, native, device):
        self._native = native
        self.device = device

    @property
    def shape(self):
        return self._native.shape

    @property
    def element_type(self):
        return self._native.element_type

    @property
    def dtype(self):
        return numpy_dtype(self._native.element_type)

    def numpy(self):
        """A numpy copy of the contents; waits for the call producing it
        (and raises its failure, if it failed)."""
        out = np.empty(self.shape, dtype=self.dtype)
        self._native.read(out.reshape(-1).view(np.uint8))
        return out

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None,
                   copy=None):
        """DLPack export (torch.from_dlpack(array), np.from_dlpack on local
        devices): the array's memory in place, once the call producing it has
        finished, as an unversioned capsule (which max_version allows).
        stream: the consumer's stream (GPU); the memory goes back to the
        device only after the work the consumer enqueued there before letting
        go of it has finished."""
        if copy:
            raise BufferError("kiln DeviceArrays are exported in place only")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"the array is on DLPack device "
                              f"{self.__dlpack_device__()}, not {tuple(dl_device)}")
        return self._native.export_dlpack(stream)

    def __dlpack_device__(self):
        return tuple(self._native.dlpack_device())

    def __repr__(self):
        return (f"kiln.runtime.DeviceArray({_type_text(self.element_type, self.shape)}"
                f" on {self.device.uri})")


class Fence:
    """A point on a device timeline: signaled once, by the host or by an
    asynchronous call, or failed."""

    def __init__(self, native):
        self._native = native

    def wait(self, timeout=None):
        """Waits until signaled (timeout in seconds, None: forever); raises
        KilnError with code DEADLINE_EXCEEDED on timeout, or the failure."""
        self._native.wait(-1 if timeout is None else int(timeout * 1e9))

    @property
    def signaled(self):
        return self._native.query()

    def signal(self):
        self._native.signal()


class Module:
    """A module loaded on a device. Functions: module.name_of_function,
    module["name"], module.functions (names)."""

    def __init__(self, native, device):
        self._native = native
        self.device = device
        self._functions = {}

    @property
    def name(self):
        return self._native.name

    @property
    def functions(self):
        return self._native.function_names()

    def __getitem__(self, name):
        function = self._functions.get(name)
        if function is None:
            function = Function(self._native.function(name), self)
            self._functions[name] = function
        return function

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KilnError as e:
            raise AttributeError(str(e)) from None

    def __dir__(self):
        return list(super().__dir__()) + self.functions

    def __repr__(self):
        return f"kiln.runtime.Module({self.name!r} on {self.device.uri})"


class Function:
    """A function of a loaded module."""

    def __init__(self, native, module):
        self._native = native
        self.module = module
        self.input_types = [(e, tuple(s)) for e, s in native.input_types()]
        self.output_types = [(e, tuple(s)) for e, s in native.output_types()]

    @property
    def name(self):
        return self._native.name

    @property
    def signature(self):
        """E.g. "(2x3xf32, f32) -> (2x3xf32)"."""
        return self._native.signature

    def __repr__(self):
        return f"kiln.runtime.Function({self.name}: {self.signature})"

    def _inputs(self, args):
        if len(args) != len(self.input_types):
            raise TypeError(f"{self.name}{self.signature}: expected "
                            f"{len(self.input_types)} inputs, got {len(args)}")
        device = self.module.device
        views = []
        for index, (arg, (element, shape)) in enumerate(zip(args, self.input_types)):
            if isinstance(arg, DeviceArray):
                views.append(arg._native)
                continue
            shared = self._shared(index, arg, element, shape, device)
            if shared is not None:
                views.append(shared._native)
                continue
            views.append(device.array(self._convert(index, arg, element, shape),
                                      element)._native)
        return views

    def _shared(self, index, arg, element, shape, device):
        """A DeviceArray over arg's memory when arg is a DLPack tensor (not a
        numpy array: those are copied, so that callers may reuse them) that
        lives where device computes and can be used in place; None when it
        lives on the host of a GPU device, or cannot be used in place there
        (then it is copied as an array)."""
        if isinstance(arg, (np.ndarray, np.generic)) or not (
                hasattr(arg, "__dlpack__") and hasattr(arg, "__dlpack_device__")):
            return None
        got = tuple(arg.__dlpack_device__())
        if got != device.dlpack_device:
            if got[0] == 1:  # host memory: copied through numpy
                return None
            raise ValueError(
                f"{self.name} input {index}: the tensor is on DLPack device "
                f"{got}, but {device.uri} computes on {device.dlpack_device}: "
                f"move it there first")
        shape_of = tuple(getattr(arg, "shape", ()))
        if shape_of != shape:
            raise ValueError(
                f"{self.name} input {index}: expected shape {shape} "
                f"({_type_text(element, shape)}), got {shape_of}")
        try:
            return device.from_dlpack(arg, element)
        except KilnError:
            raise
        except (ValueError, BufferError, RuntimeError):
            # Host data that cannot be shared (strided, misaligned, or a
            # dtype the producer does not export: torch 1.13's bool) is
            # copied as numpy arrays are.
            if got[0] == 1:
                return None
            raise
        except TypeError as e:
            raise TypeError(f"{self.name} input {index}: expected "
                            f"{_type_text(element, shape)}: {e}") from None

    def _convert(self, index, arg, element, shape):
        """arg as a numpy array of the input's dtype: arrays must have it
        already (bf16 also takes uint16 bits); Python scalars and lists are
        converted."""
        expected = numpy_dtype(element)
        if isinstance(arg, np.ndarray) or isinstance(arg, np.generic):
            array = np.asarray(arg)
            ok = array.dtype == expected or (
                element == "bf16" and array.dtype == np.uint16)
            if not ok:
                raise TypeError(
                    f"{self.name} input {index}: expected "
                    f"{_type_text(element, shape)} ({expected}), got a "
                    f"{array.dtype} array of shape {array.shape}")
            if element == "bf16" and array.dtype != expected:
                array = array.view(expected)
        else:
            array = np.asarray(arg, dtype=expected)
        if array.shape != shape:
            raise ValueError(
                f"{self.name} input {index}: expected shape {shape} "
                f"({_type_text(element, shape)}), got {array.shape}")
        return array

    def call(self, *args, outputs="numpy"):
        """Calls the function synchronously. outputs="numpy": numpy arrays;
        "device": DeviceArrays. Returns one value for one output, a tuple
        otherwise."""
        if outputs not in ("numpy", "device"):
            raise ValueError("outputs must be 'numpy' or 'device'")
        results = [DeviceArray(v, self.module.device)
                   for v in self._native.call(self._inputs(args), False, None, None)]
        if outputs == "numpy":
            results = [r.numpy() for r in results]
        return results[0] if len(results) == 1 else tuple(results)

    __call__ = call

    def call_async(self, *args, wait=None):
        """Submits a call and returns (outputs as DeviceArrays, a Fence
        signaled when it is done); it starts once wait (a Fence, or None)
        is signaled. Reading an output waits for the call."""
        done = self.module.device.fence()
        views = self._native.call(self._inputs(args), True,
                                  wait._native if wait is not None else None,
                                  done._native)
        return tuple(DeviceArray(v, self.module.device) for v in views), done
