"""kiln.torch: compile PyTorch modules with Kiln.

    import torch, kiln.torch
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                torch.nn.Linear(128, 10)).eval()
    compiled = kiln.torch.compile(model, (torch.randn(8, 64),),
                                  target="host", device="local")
    y = compiled(torch.randn(8, 64))        # a torch tensor, computed by Kiln
    print(compiled.mlir)                    # the program Kiln compiled

The model is traced (tracer=) with torch.fx ("fx": symbolic tracing of
its Python, as torch 1.13 has it) or to ATen ops ("aten": torch.export on
torch >= 2.1, make_fx on older torch; kiln/_torch_aten.py, which lists its
ops), its shapes and element types taken from example_inputs, and written
as an MLIR program over static-shape tensors (linalg, tensor, arith, math)
by one emitter whose helpers both front ends call; parameters and buffers
become constants of the program, or arguments read from a safetensors
archive. export() returns that text and needs only torch and numpy;
compile() imports kiln.compiler and kiln.runtime. The default tracer is
"aten" where torch.export exists, else "fx".

The ops of the fx front end:

nn.Linear, nn.Conv2d (numeric zero padding, any groups), nn.MaxPool2d,
nn.AvgPool2d (no padding), nn.AdaptiveAvgPool2d(1), nn.BatchNorm2d (eval),
nn.Embedding, nn.ReLU, nn.GELU, nn.SiLU, nn.Sigmoid, nn.Tanh, nn.Softmax,
nn.LogSoftmax, nn.LayerNorm, nn.Dropout and nn.Identity (eval: identity),
nn.Flatten; torch / torch.nn.functional / tensor-method forms of linear,
matmul / bmm / @, relu, gelu (exact and tanh), silu, sigmoid, tanh, exp,
log, sqrt, rsqrt, abs, pow / ** by a number (RMS norm written by hand),
softmax, log_softmax, layer_norm, +, -, *, / (broadcasting, tensors and
Python numbers), neg, sum / mean (dims, keepdim), cat, reshape / view /
flatten, permute / transpose / .t(), contiguous, indexing with integers and
slices (integer bounds, positive steps), scaled_dot_product_attention (torch 2; is_causal, no mask or dropout:
the attention chain that becomes one fused kernel on NVIDIA GPUs). Anything else raises UnsupportedOpError naming the op and the line of
the model's source that called it.
"""

import collections
import contextlib
import copy
import io
import operator

import numpy as np
import torch
import torch.fx
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

_ELEMENT = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.bool: "i1",
}


class UnsupportedOpError(Exception):
    """The model uses an op kiln.torch cannot translate (yet)."""


# A value the emitter wrote that no graph node holds (an operand cast to
# the type torch promoted it to); the helpers take it where they take nodes.
_Value = collections.namedtuple("_Value", "ssa shape element")


def _element(dtype):
    try:
        return _ELEMENT[dtype]
    except KeyError:
        raise UnsupportedOpError(f"element type {dtype} is not supported") from None


def _ttype(shape, element):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def _float_literal(value, element):
    if element in ("f32", "f16", "bf16", "f64"):
        if np.isfinite(value):
            # MLIR float literals need a '.' before any exponent (1.0e-05).
            mantissa, _, exponent = repr(float(value)).partition("e")
            if "." not in mantissa:
                mantissa += ".0"
            return mantissa + ("e" + exponent if exponent else "")
        return {
            float("inf"): "0x7F800000", float("-inf"): "0xFF800000"}.get(
                float(value), "0x7FC00000")
    return str(int(value))


# nn.Conv2d padding modes: zeros (tensor.pad), or the border's values
# gathered (pad_spatial_mode).
PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _pair(v):
    """(a, b) of an int or a sequence of one or two ints (torch's int[2])."""
    if isinstance(v, (tuple, list)):
        return tuple(v) * 2 if len(v) == 1 else tuple(v)
    return (v, v)


def _pad_pairs(pads):
    """((top, bottom), (left, right)) of (ph, pw) or of the pairs themselves."""
    return tuple(p if isinstance(p, tuple) else (p, p) for p in pads)

_SAFETENSORS_DTYPE = {"f32": "F32", "f16": "F16", "bf16": "BF16", "f64": "F64",
                      "i64": "I64", "i32": "I32", "i16": "I16", "i8": "I8"}


def write_safetensors(path, tensors):
    """Writes {name: (numpy array, Kiln element type)} as a safetensors
    archive (bf16 arrays hold float32 values, rounded to nearest even)."""
    import json
    import struct
    header, blobs, offset = {}, [], 0
    for name, (array, element) in tensors.items():
        if element not in _SAFETENSORS_DTYPE:
            raise UnsupportedOpError(f"parameter {name}: {element} cannot go in a "
                                     "safetensors archive")
        if element == "bf16":
            bits = np.ascontiguousarray(array, np.float32).view(np.uint32)
            blob = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()
        else:
            blob = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _SAFETENSORS_DTYPE[element], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def _frames(stack_trace):
    """[('File "f.py", line 3, in g', source line or "")] of a formatted
    stack, in its order."""
    lines = (stack_trace or "").strip().splitlines()
    frames = []
    for i, line in enumerate(lines):
        text = line.strip()
        if text.startswith("File "):
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if code.startswith("File "):  # no source line (exec'd code)
                code = ""
            frames.append((text, code))
    return frames


def _at(text, code):
    return f" at {text}" + (f": {code}" if code else "")


class _Emitter:
    def __init__(self, gm, name, archive=None):
        self.gm = gm
        self.name = name
        # With an archive ({name: (array, element)}), parameters become
        # kiln.parameter arguments instead of constants.
        self.archive = archive
        self.parameter_args = []
        self.lines = []
        self.values = {}   # fx node -> (ssa name, shape, element)
        self.counter = 0
        self.modules = dict(gm.named_modules())

    # --- helpers -------------------------------------------------------------

    def fresh(self):
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, line):
        self.lines.append("  " + line)

    def where(self, node):
        """Where the model's source made `node`: the innermost frame of its
        recorded stack outside kiln.torch (torch.fx lists innermost first)."""
        for text, code in _frames(node.stack_trace):
            if __file__ not in text:
                return _at(text, code)
        return ""

    def unsupported(self, node, what):
        raise UnsupportedOpError(f"kiln.torch: unsupported op {what}{self.where(node)}")

    def value(self, node, arg):
        if isinstance(arg, torch.fx.Node):
            return self.values[arg]
        if isinstance(arg, _Value):
            return arg
        self.unsupported(node, f"argument {arg!r} of {node.target}")

    def empty(self, shape, element):
        name = self.fresh()
        self.emit(f"{name} = tensor.empty() : {_ttype(shape, element)}")
        return name

    def tensor_value(self, qualified, tensor):
        """A parameter or buffer: an archive argument or a constant."""
        tensor = tensor.detach().cpu()
        element = _element(tensor.dtype)
        array = tensor.float().numpy() if element == "bf16" else tensor.numpy()
        if self.archive is None or element not in _SAFETENSORS_DTYPE:
            return self.constant(array, element), tuple(tensor.shape), element
        ssa = f"%p{len(self.parameter_args)}"
        self.parameter_args.append(
            f'{ssa}: {_ttype(tuple(tensor.shape), element)} {{kiln.parameter = "{qualified}"}}')
        self.archive[qualified] = (array, element)
        self.elements[ssa] = element
        return ssa, tuple(tensor.shape), element

    def constant(self, array, element):
        array = np.ascontiguousarray(array)
        name = self.fresh()
        ttype = _ttype(array.shape, element)
        if array.size > 1 and element != "i1" and np.all(array == array.flat[0]) and \
                np.isfinite(array.flat[0]):
            # One value (a full(), zeros(), ones()): a splat, not its bytes.
            self.emit(f"{name} = arith.constant dense<{_float_literal(array.flat[0], element)}> "
                      f": {ttype}")
            return name
        if element == "bf16":
            data = (np.asarray(array, np.float32).view(np.uint32) >> 16).astype(np.uint16)
        elif element == "i1":
            # MLIR's hex i1 data is bit-packed, first element in the low bit.
            data = np.packbits(array.astype(bool).ravel(), bitorder="little")
        else:
            data = array
        self.emit(f'{name} = arith.constant dense<"0x{data.tobytes().hex().upper()}"> : {ttype}')
        return name

    def generic(self, inputs, out_shape, element, body, reduce_dims=(), init=None):
        """A linalg.generic over out_shape (+ reduce_dims appended as the
        innermost loops for reductions). inputs: (ssa, shape, map exprs);
        body(args) -> list of body lines ending with the yielded value name."""
        rank = len(out_shape) + len(reduce_dims)
        dims = [f"d{i}" for i in range(rank)]
        maps, ins = [], []
        for ssa, shape, exprs in inputs:
            maps.append(f"affine_map<({', '.join(dims)}) -> ({', '.join(exprs)})>")
            ins.append((ssa, _ttype(shape, self.values_element(ssa, element))))
        out_exprs = [f"d{i}" for i in range(len(out_shape))]
        maps.append(f"affine_map<({', '.join(dims)}) -> ({', '.join(out_exprs)})>")
        iters = ['"parallel"'] * len(out_shape) + ['"reduction"'] * len(reduce_dims)
        out_type = _ttype(out_shape, element)
        out = init if init is not None else self.empty(out_shape, element)
        name = self.fresh()
        args = [f"%in{i}" for i in range(len(inputs))]
        ins_text = ", ".join(s for s, _ in ins)
        ins_types = ", ".join(t for _, t in ins)
        block_args = ", ".join(f"{a}: {self.values_element(s, element)}"
                               for a, (s, _) in zip(args, ins))
        block_args += (", " if block_args else "") + f"%out: {element}"
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                  f"iterator_types = [{', '.join(iters)}]}}"
                  + (f" ins({ins_text} : {ins_types})" if inputs else "")
                  + f" outs({out} : {out_type}) {{")
        self.emit(f"^bb0({block_args}):")
        lines = body(args, "%out")
        for line in lines[:-1]:
            self.emit("  " + line)
        self.emit(f"  linalg.yield {lines[-1]} : {element}")
        self.emit(f"}} -> {out_type}")
        return name

    def values_element(self, ssa, default):
        return self.elements.get(ssa, default)

    # --- lowering ------------------------------------------------------------

    def run(self, example_inputs):
        self.elements = {}
        args = []
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(example_inputs):
            raise UnsupportedOpError(
                f"kiln.torch: the model takes {len(placeholders)} inputs, "
                f"{len(example_inputs)} example inputs were given")
        for i, node in enumerate(placeholders):
            meta = node.meta["tensor_meta"]
            element = _element(meta.dtype)
            ssa = f"%arg{i}"
            args.append(f"{ssa}: {_ttype(tuple(meta.shape), element)}")
            self.set(node, ssa, tuple(meta.shape), element)
        result = None
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                result = node.args[0]
                continue
            self.lower(node)
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        return self.function(args, [self.values[o] for o in outputs])

    def function(self, args, returned):
        """The func.func text: args (argument declarations), the lowered
        lines, returning the values `returned`."""
        out_types = ", ".join(_ttype(s, e) for _, s, e in returned)
        header = (f"func.func @{self.name}({', '.join(args + self.parameter_args)}) "
                  f"-> ({out_types}) {{")
        self.emit(f"return {', '.join(v for v, _, _ in returned)} : {out_types}")
        return "\n".join([header] + self.lines + ["}", ""])

    def set(self, node, ssa, shape, element):
        self.values[node] = (ssa, tuple(shape), element)
        self.elements[ssa] = element

    def meta(self, node):
        meta = node.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            meta = node.meta.get("val")     # torch.export's FakeTensor
        if not isinstance(meta, torch.Tensor) and not hasattr(meta, "shape"):
            self.unsupported(node, f"{node.target} (its result is not one tensor)")
        try:
            shape = tuple(int(d) for d in meta.shape)
        except (TypeError, RuntimeError):
            self.unsupported(node, f"{node.target} with a dynamic shape {tuple(meta.shape)}")
        return shape, _element(meta.dtype)

    def lower(self, node):
        if node.op == "get_attr":
            tensor = self.gm
            for part in node.target.split("."):
                tensor = getattr(tensor, part)
            ssa, shape, element = self.tensor_value(node.target, tensor)
            self.set(node, ssa, shape, element)
            return
        if node.op == "call_module":
            return self.lower_module(node, self.modules[node.target])
        if node.op == "call_function":
            return self.lower_function(node, node.target, node.args, node.kwargs)
        if node.op == "call_method":
            return self.lower_method(node, node.target, node.args, node.kwargs)
        self.unsupported(node, node.op)

    # modules
    def lower_module(self, node, module):
        x = node.args[0]
        nn = torch.nn
        if isinstance(module, (nn.Dropout, nn.Identity)):
            self.values[node] = self.values[x]
            return
        param = lambda attr: self.param(node.target, module, attr)
        if isinstance(module, nn.Linear):
            return self.linear(node, x, param("weight"),
                               param("bias") if module.bias is not None else None)
        if isinstance(module, nn.ReLU):
            return self.unary(node, x, "relu")
        if isinstance(module, nn.GELU):
            return self.unary(node, x, "gelu_tanh" if module.approximate == "tanh" else "gelu")
        if isinstance(module, nn.SiLU):
            return self.unary(node, x, "silu")
        if isinstance(module, nn.Sigmoid):
            return self.unary(node, x, "sigmoid")
        if isinstance(module, nn.Tanh):
            return self.unary(node, x, "tanh")
        if isinstance(module, nn.Softmax):
            return self.softmax(node, x, module.dim, log=False)
        if isinstance(module, nn.LogSoftmax):
            return self.softmax(node, x, module.dim, log=True)
        if isinstance(module, nn.LayerNorm):
            return self.layer_norm(node, x, tuple(module.normalized_shape),
                                   param("weight") if module.weight is not None else None,
                                   param("bias") if module.bias is not None else None,
                                   module.eps)
        if isinstance(module, nn.Flatten):
            return self.reshape(node, x)
        if isinstance(module, nn.Conv2d):
            padding = module.padding
            if padding == "valid":
                padding = (0, 0)
            elif padding == "same":
                # torch's split: the odd extra element goes after (bottom,
                # right); "same" requires stride 1.
                padding = tuple(((d * (k - 1)) // 2, d * (k - 1) - (d * (k - 1)) // 2)
                                for d, k in zip(module.dilation, module.kernel_size))
            if (not isinstance(padding, tuple)
                    or module.padding_mode not in PADDING_MODES):
                self.unsupported(node, f"module Conv2d ({node.target}) with padding "
                                 f"{module.padding!r}, padding_mode {module.padding_mode!r}")
            return self.conv2d(node, x, param("weight"),
                               param("bias") if module.bias is not None else None,
                               module.stride, padding, module.dilation,
                               module.groups, module.padding_mode)
        if isinstance(module, (nn.MaxPool2d, nn.AvgPool2d)):
            is_max = isinstance(module, nn.MaxPool2d)
            if not is_max and module.divisor_override is not None:
                self.unsupported(node, f"AvgPool2d ({node.target}) with divisor_override")
            return self.pool2d(node, x, module.kernel_size, module.stride, module.padding,
                               getattr(module, "dilation", 1), module.ceil_mode, is_max,
                               f"{type(module).__name__} ({node.target})")
        if isinstance(module, nn.AdaptiveAvgPool2d):
            return self.adaptive_avg_pool(node, x, module.output_size)
        if isinstance(module, nn.BatchNorm2d):
            return self.batch_norm(node, x, module, node.target)
        if isinstance(module, nn.Embedding):
            return self.embedding(node, x, param("weight"))
        self.unsupported(node, f"module {type(module).__name__} ({node.target})")

    def param(self, path, module, attr):
        return self.tensor_value(f"{path}.{attr}", getattr(module, attr))

    # functions
    def lower_function(self, node, fn, args, kwargs):
        unary = {torch.relu: "relu", F.relu: "relu", torch.sigmoid: "sigmoid",
                 torch.tanh: "tanh", F.silu: "silu", torch.exp: "exp",
                 torch.neg: "neg", operator.neg: "neg", torch.rsqrt: "rsqrt",
                 torch.sqrt: "sqrt", torch.abs: "abs", torch.log: "log"}
        if fn in unary:
            return self.unary(node, args[0], unary[fn])
        if fn in (operator.pow, torch.pow):
            return self.power(node, args[0], args[1])
        if fn is F.gelu:
            approximate = kwargs.get("approximate", "none")
            return self.unary(node, args[0], "gelu_tanh" if approximate == "tanh" else "gelu")
        binary = {operator.add: "add", torch.add: "add", operator.sub: "sub",
                  torch.sub: "sub", operator.mul: "mul", torch.mul: "mul",
                  operator.truediv: "div", torch.div: "div"}
        if fn in binary:
            return self.binary(node, binary[fn], args[0], args[1])
        if fn in (torch.matmul, operator.matmul, torch.bmm):
            return self.matmul(node, args[0], args[1])
        sdpa = getattr(F, "scaled_dot_product_attention", None)
        if sdpa is not None and fn is sdpa:
            names = ("query", "key", "value", "attn_mask", "dropout_p",
                     "is_causal", "scale")
            defaults = (None, None, None, None, 0.0, False, None)
            given = dict(zip(names, args))
            given.update(kwargs)
            options = {n: given.get(n, d) for n, d in zip(names, defaults)}
            return self.attention(node, options)
        if fn is F.linear:
            weight = self.values[args[1]]
            bias = args[2] if len(args) > 2 else kwargs.get("bias")
            return self.linear(node, args[0], weight,
                               self.values[bias] if bias is not None else None)
        if fn in (F.softmax, torch.softmax, F.log_softmax, torch.log_softmax):
            dim = args[1] if len(args) > 1 else kwargs.get("dim")
            return self.softmax(node, args[0], dim,
                                log=fn in (F.log_softmax, torch.log_softmax))
        if fn is F.layer_norm:
            shape = tuple(args[1] if len(args) > 1 else kwargs["normalized_shape"])
            weight = args[2] if len(args) > 2 else kwargs.get("weight")
            bias = args[3] if len(args) > 3 else kwargs.get("bias")
            eps = args[4] if len(args) > 4 else kwargs.get("eps", 1e-5)
            return self.layer_norm(node, args[0], shape,
                                   self.values[weight] if weight is not None else None,
                                   self.values[bias] if bias is not None else None, eps)
        if fn in (torch.flatten, torch.reshape):
            return self.reshape(node, args[0])
        if fn in (torch.transpose, torch.permute):
            return self.permute(node, args[0])
        if fn is operator.getitem:
            return self.getitem(node, args[0], args[1])
        if fn is torch.cat:
            tensors = args[0]
            dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
            return self.cat(node, tensors, dim)
        if fn in (torch.mean, torch.sum):
            dims = args[1] if len(args) > 1 else kwargs.get("dim")
            keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
            return self.reduce(node, args[0], dims, fn is torch.mean)
        name = getattr(fn, "__name__", str(fn))
        self.unsupported(node, f"{getattr(fn, '__module__', '') or ''}.{name}".lstrip("."))

    def lower_method(self, node, method, args, kwargs):
        if method in ("view", "reshape", "flatten"):
            return self.reshape(node, args[0])
        if method in ("permute", "transpose", "t"):
            return self.permute(node, args[0])
        if method == "contiguous":
            self.values[node] = self.values[args[0]]
            return
        if method in ("relu", "sigmoid", "tanh", "exp", "neg", "rsqrt", "sqrt",
                      "abs", "log"):
            return self.unary(node, args[0], method)
        if method == "pow":
            return self.power(node, args[0], args[1])
        if method in ("softmax", "log_softmax"):
            dim = args[1] if len(args) > 1 else kwargs.get("dim")
            return self.softmax(node, args[0], dim, log=method == "log_softmax")
        if method in ("add", "sub", "mul", "div"):
            return self.binary(node, method, args[0], args[1])
        if method == "matmul":
            return self.matmul(node, args[0], args[1])
        if method in ("mean", "sum"):
            dims = args[1] if len(args) > 1 else kwargs.get("dim")
            return self.reduce(node, args[0], dims, method == "mean")
        self.unsupported(node, f"Tensor.{method}")

    # --- op emitters ---------------------------------------------------------

    def float_only(self, node, element):
        if element not in ("f32", "f16", "bf16", "f64"):
            self.unsupported(node, f"{node.target} on {element} tensors")

    def unary(self, node, x, kind):
        ssa, shape, element = self.value(node, x)
        self.float_only(node, element)
        t = element

        def body(a, out):
            v = a[0]
            c = lambda name, value: f"{name} = arith.constant {_float_literal(value, t)} : {t}"
            if kind == "relu":
                return [c("%zero", 0.0), f"%r = arith.maximumf {v}, %zero : {t}", "%r"]
            if kind == "neg":
                return [f"%r = arith.negf {v} : {t}", "%r"]
            if kind == "exp":
                return [f"%r = math.exp {v} : {t}", "%r"]
            if kind in ("rsqrt", "sqrt", "log"):
                return [f"%r = math.{kind} {v} : {t}", "%r"]
            if kind == "abs":
                return [f"%r = math.absf {v} : {t}", "%r"]
            if kind == "tanh":
                return [f"%r = math.tanh {v} : {t}", "%r"]
            if kind in ("sigmoid", "silu"):
                lines = [c("%one", 1.0), f"%n = arith.negf {v} : {t}",
                         f"%e = math.exp %n : {t}", f"%d = arith.addf %one, %e : {t}",
                         f"%s = arith.divf %one, %d : {t}"]
                if kind == "silu":
                    return lines + [f"%r = arith.mulf {v}, %s : {t}", "%r"]
                return lines + ["%s"]
            if kind == "gelu":
                return [c("%half", 0.5), c("%one", 1.0), c("%rsqrt2", 0.7071067811865476),
                        f"%a = arith.mulf {v}, %rsqrt2 : {t}", f"%e = math.erf %a : {t}",
                        f"%b = arith.addf %one, %e : {t}", f"%h = arith.mulf {v}, %half : {t}",
                        f"%r = arith.mulf %h, %b : {t}", "%r"]
            if kind == "gelu_tanh":
                return [c("%half", 0.5), c("%one", 1.0), c("%k", 0.7978845608028654),
                        c("%c", 0.044715), f"%x2 = arith.mulf {v}, {v} : {t}",
                        f"%x3 = arith.mulf %x2, {v} : {t}", f"%cx3 = arith.mulf %c, %x3 : {t}",
                        f"%in = arith.addf {v}, %cx3 : {t}", f"%kin = arith.mulf %k, %in : {t}",
                        f"%th = math.tanh %kin : {t}", f"%b = arith.addf %one, %th : {t}",
                        f"%h = arith.mulf {v}, %half : {t}", f"%r = arith.mulf %h, %b : {t}", "%r"]
            raise AssertionError(kind)

        identity = [f"d{i}" for i in range(len(shape))]
        out = self.generic([(ssa, shape, identity)], shape, element, body)
        self.set(node, out, shape, element)

    def power(self, node, x, exponent):
        """x ** exponent for a Python number exponent (2 and 0.5 exactly)."""
        if not isinstance(exponent, (int, float)):
            self.unsupported(node, "pow with a tensor exponent")
        ssa, shape, element = self.value(node, x)
        self.float_only(node, element)
        t = element

        def body(a, out):
            v = a[0]
            if exponent == 2:
                return [f"%r = arith.mulf {v}, {v} : {t}", "%r"]
            if exponent == 0.5:
                return [f"%r = math.sqrt {v} : {t}", "%r"]
            return [f"%e = arith.constant {_float_literal(float(exponent), t)} : {t}",
                    f"%r = math.powf {v}, %e : {t}", "%r"]

        identity = [f"d{i}" for i in range(len(shape))]
        out = self.generic([(ssa, shape, identity)], shape, element, body)
        self.set(node, out, shape, element)

    def broadcast_map(self, shape, out_shape):
        offset = len(out_shape) - len(shape)
        return [("0" if shape[i] == 1 and out_shape[offset + i] != 1 else f"d{offset + i}")
                for i in range(len(shape))]

    def binary(self, node, kind, a, b, alpha=1):
        """a <kind> (alpha * b), broadcasting; a and b are nodes or numbers."""
        out_shape, element = self.meta(node)
        self.float_only(node, element)
        inputs, operands = [], []
        for arg in (a, b):
            if isinstance(arg, (int, float)):
                operands.append(("const", float(arg)))
                continue
            ssa, shape, _ = self.value(node, arg)
            inputs.append((ssa, shape, self.broadcast_map(shape, out_shape)))
            operands.append(("in", len(inputs) - 1))
        op = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
              "div": "arith.divf"}[kind]

        def body(args, out):
            lines, names = [], []
            for i, (k, v) in enumerate(operands):
                if k == "const":
                    lines.append(f"%c{i} = arith.constant {_float_literal(v, element)} : {element}")
                    names.append(f"%c{i}")
                else:
                    names.append(args[v])
            if alpha != 1:
                lines.append(f"%alpha = arith.constant {_float_literal(alpha, element)} : {element}")
                lines.append(f"%b = arith.mulf {names[1]}, %alpha : {element}")
                names[1] = "%b"
            return lines + [f"%r = {op} {names[0]}, {names[1]} : {element}", "%r"]

        out = self.generic(inputs, out_shape, element, body)
        self.set(node, out, out_shape, element)

    def contraction(self, a, b, out_shape, element, a_exprs, b_exprs):
        """out[d0..dn] = sum_k a * b, with k the innermost (reduction) loop."""
        zero = self.fresh()
        self.emit(f"{zero} = arith.constant {_float_literal(0.0, element)} : {element}")
        init = self.fresh()
        self.emit(f"{init} = linalg.fill ins({zero} : {element}) outs({self.empty(out_shape, element)} : "
                  f"{_ttype(out_shape, element)}) -> {_ttype(out_shape, element)}")
        return self.generic([(a[0], a[1], a_exprs), (b[0], b[1], b_exprs)], out_shape,
                            element,
                            lambda args, out: [f"%p = arith.mulf {args[0]}, {args[1]} : {element}",
                                               f"%s = arith.addf {out}, %p : {element}", "%s"],
                            reduce_dims=(1,), init=init)

    def matmul(self, node, a, b):
        out_shape, element = self.meta(node)
        self.float_only(node, element)
        av, bv = self.value(node, a), self.value(node, b)
        ra, rb = len(av[1]), len(bv[1])
        if ra < 2 or rb < 2:
            self.unsupported(node, "matmul with a vector operand")
        n = len(out_shape)          # batch dims then m, n
        k = f"d{n}"
        a_exprs = self.broadcast_map(av[1][:-2], out_shape[:-2]) + [f"d{n - 2}", k]
        b_exprs = self.broadcast_map(bv[1][:-2], out_shape[:-2]) + [k, f"d{n - 1}"]
        out = self.contraction(av, bv, out_shape, element, a_exprs, b_exprs)
        self.set(node, out, out_shape, element)

    def attention(self, node, options):
        """scaled_dot_product_attention(q [..., L, D], k [..., S, D],
        v [..., S, D]) without dropout, written as the chain Kiln fuses into
        one GPU kernel (kiln/DispatchCreation/Attention.h): S = q k^T
        accumulated in f32, the row max, exp((S - max) * scale), the row
        sum, the probabilities in the input type, P v accumulated in f32, the
        division. is_causal masks the keys after the query. An attn_mask
        (broadcastable to [..., L, S]; bool: True takes part, float: added
        to the scaled scores) is applied to S * scale, and the exponent
        then takes no scale (the chain is no longer the fused kernel's).
        Leading dims are flattened into one batch dim (host aliases)."""
        if options["dropout_p"] not in (0, 0.0):
            self.unsupported(node, "scaled_dot_product_attention with dropout_p")
        if options["attn_mask"] is not None and options["is_causal"]:
            self.unsupported(node, "scaled_dot_product_attention with both attn_mask "
                                   "and is_causal (torch refuses it too)")
        (q, qs, t), (k, ks, kt), (v, vs, vt) = (
            self.value(node, options[n]) for n in ("query", "key", "value"))
        self.float_only(node, t)
        if (kt, vt) != (t, t) or len(qs) < 2 or ks[:-2] != qs[:-2] or \
                vs[:-2] != qs[:-2] or ks[-1] != qs[-1] or vs[-2] != ks[-2]:
            self.unsupported(node, "scaled_dot_product_attention with broadcast or "
                                   "mismatched shapes " + f"{qs}, {ks}, {vs}")
        lead, (L, D), S, Dv = qs[:-2], qs[-2:], ks[-2], vs[-1]
        B = int(np.prod(lead)) if lead else 1
        q = self.reshape_value(q, qs, (B, L, D), t)
        k = self.reshape_value(k, ks, (B, S, D), t)
        v = self.reshape_value(v, vs, (B, S, Dv), t)
        scale = options["scale"]
        scale = 1.0 / float(np.sqrt(D)) if scale is None else float(scale)
        acc = "f32" if t in ("f16", "bf16") else t
        for ssa in (q, k, v):
            self.elements[ssa] = t

        def operand(a, name):
            """(lines, value): block argument a of type t as acc."""
            if acc == t:
                return [], a
            return [f"{name} = arith.extf {a} : {t} to {acc}"], name

        def product(a, b, out):
            la, va = operand(a, "%a")
            lb, vb = operand(b, "%b")
            return la + lb + [f"%p = arith.mulf {va}, {vb} : {acc}",
                              f"%s = arith.addf {out}, %p : {acc}", "%s"]

        def typed(ssa, element):
            self.elements[ssa] = element
            return ssa

        scores_shape = (B, L, S)
        scores = typed(self.generic([(q, (B, L, D), ["d0", "d1", "d3"]),
                                     (k, (B, S, D), ["d0", "d2", "d3"])], scores_shape, acc,
                                    lambda a, o: product(a[0], a[1], o), reduce_dims=(1,),
                                    init=self.filled(scores_shape, acc, 0.0)), acc)
        full, rows = ["d0", "d1", "d2"], ["d0", "d1"]
        if options["is_causal"]:
            # Keys after the query (top-left aligned, as torch's is_causal).
            scores = typed(self.generic(
                [(scores, scores_shape, full)], scores_shape, acc,
                lambda a, o: ["%i = linalg.index 1 : index", "%j = linalg.index 2 : index",
                              "%after = arith.cmpi ugt, %j, %i : index",
                              f"%minf = arith.constant {_float_literal(float('-inf'), acc)} : {acc}",
                              f"%r = arith.select %after, %minf, {a[0]} : {acc}", "%r"]), acc)
        if options["attn_mask"] is not None:
            mask = self.broadcast_mask(node, options["attn_mask"], tuple(lead) + (L, S), B)
            scaled = _float_literal(scale, acc)

            def apply(a, o):
                lines = [f"%c = arith.constant {scaled} : {acc}",
                         f"%s = arith.mulf {a[0]}, %c : {acc}"]
                if self.elements[mask] == "i1":
                    return lines + [
                        f"%minf = arith.constant {_float_literal(float('-inf'), acc)} : {acc}",
                        f"%r = arith.select {a[1]}, %s, %minf : {acc}", "%r"]
                m, mv = operand_of(a[1], self.elements[mask], "%m")
                return lines + m + [f"%r = arith.addf %s, {mv} : {acc}", "%r"]

            def operand_of(a, element, name):
                if element == acc:
                    return [], a
                if element not in ("f16", "bf16", "f32", "f64"):
                    self.unsupported(node, f"scaled_dot_product_attention with an "
                                           f"attn_mask of type {element}")
                return [f"{name} = arith.extf {a} : {element} to {acc}"], name

            scores = typed(self.generic([(scores, scores_shape, full),
                                         (mask, scores_shape, full)],
                                        scores_shape, acc, apply), acc)
            scale = 1.0
        mx = typed(self.reduce_last(scores, scores_shape, acc, "arith.maximumf",
                                    float("-inf")), acc)
        c = _float_literal(scale, acc)
        p = typed(self.generic([(scores, scores_shape, full), (mx, (B, L), rows)],
                               scores_shape, acc,
                               lambda a, o: [f"%d = arith.subf {a[0]}, {a[1]} : {acc}",
                                             f"%c = arith.constant {c} : {acc}",
                                             f"%z = arith.mulf %d, %c : {acc}",
                                             f"%x = math.exp %z : {acc}", "%x"]), acc)
        total = typed(self.reduce_last(p, scores_shape, acc, "arith.addf", 0.0), acc)
        if acc != t:
            p = typed(self.generic([(p, scores_shape, full)], scores_shape, t,
                                   lambda a, o: [f"%r = arith.truncf {a[0]} : {acc} to {t}",
                                                 "%r"]), t)
        # P v as the named op: a generic would take the truncation into its
        # body (elementwise fusion), and the chain would no longer be one.
        out_shape = (B, L, Dv)
        o = typed(self.fresh(), acc)
        self.emit(f"{o} = linalg.batch_matmul ins({p}, {v} : {_ttype(scores_shape, t)}, "
                  f"{_ttype((B, S, Dv), t)}) outs({self.filled(out_shape, acc, 0.0)} : "
                  f"{_ttype(out_shape, acc)}) -> {_ttype(out_shape, acc)}")
        out = self.generic([(o, out_shape, full), (total, (B, L), rows)], out_shape, t,
                           lambda a, o: [f"%n = arith.divf {a[0]}, {a[1]} : {acc}"]
                           + ([f"%y = arith.truncf %n : {acc} to {t}", "%y"]
                              if acc != t else ["%n"]))
        result_shape = tuple(lead) + (L, Dv)
        self.set(node, self.reshape_value(out, out_shape, result_shape, t), result_shape, t)

    def broadcast_mask(self, node, mask, shape, batch):
        """The attention mask `mask` broadcast to `shape` ([..., L, S]) and
        viewed as (batch, L, S)."""
        ssa, mshape, element = self.value(node, mask)
        if len(mshape) > len(shape) or any(
                m not in (1, s) for m, s in zip(mshape[::-1], shape[::-1])):
            self.unsupported(node, f"scaled_dot_product_attention with an attn_mask of "
                                   f"shape {tuple(mshape)}, not broadcastable to {shape}")
        offset = len(shape) - len(mshape)
        exprs = [("0" if m == 1 and shape[offset + i] != 1 else f"d{offset + i}")
                 for i, m in enumerate(mshape)]
        full = self.generic([(ssa, mshape, exprs)], shape, element,
                            lambda a, o: [a[0]])
        self.elements[full] = element
        flat = self.reshape_value(full, shape, (batch,) + tuple(shape[-2:]), element)
        self.elements[flat] = element
        return flat

    def linear(self, node, x, weight, bias):
        out_shape, element = self.meta(node)
        self.float_only(node, element)
        xv = self.value(node, x)
        n = len(out_shape)
        k = f"d{n}"
        x_exprs = [f"d{i}" for i in range(n - 1)] + [k]
        w_exprs = [f"d{n - 1}", k]          # weight is (out_features, in_features)
        out = self.contraction(xv, weight, out_shape, element, x_exprs, w_exprs)
        if bias is not None:
            b_exprs = [f"d{n - 1}"]
            out = self.generic([(out, out_shape, [f"d{i}" for i in range(n)]),
                                (bias[0], bias[1], b_exprs)], out_shape, element,
                               lambda a, o: [f"%r = arith.addf {a[0]}, {a[1]} : {element}", "%r"])
        self.set(node, out, out_shape, element)

    def reduce_last(self, ssa, shape, element, combine, neutral, pre=None):
        """Reduces the last dim of ssa (shape) into shape[:-1]; pre(arg) maps
        each element first (lines, value)."""
        rows = shape[:-1]
        c = self.fresh()
        self.emit(f"{c} = arith.constant {_float_literal(neutral, element)} : {element}")
        init = self.fresh()
        self.emit(f"{init} = linalg.fill ins({c} : {element}) outs({self.empty(rows, element)} : "
                  f"{_ttype(rows, element)}) -> {_ttype(rows, element)}")
        exprs = [f"d{i}" for i in range(len(shape))]

        def body(args, out):
            lines, v = pre(args[0]) if pre else ([], args[0])
            return lines + [f"%r = {combine} {out}, {v} : {element}", "%r"]

        return self.generic([(ssa, shape, exprs)], rows, element, body,
                            reduce_dims=(1,), init=init)

    def row_map(self, shape):
        return [f"d{i}" for i in range(len(shape) - 1)]

    def moved_last(self, node, x, dim):
        """(ssa, shape, element, permutation or None): x with `dim` moved last."""
        ssa, shape, element = self.value(node, x)
        rank = len(shape)
        dim = dim % rank
        if dim == rank - 1:
            return ssa, shape, element, None
        perm = [i for i in range(rank) if i != dim] + [dim]
        return self.transpose(ssa, shape, element, perm), tuple(shape[p] for p in perm), element, perm

    def transpose(self, ssa, shape, element, perm):
        out_shape = tuple(shape[p] for p in perm)
        name = self.fresh()
        self.emit(f"{name} = linalg.transpose ins({ssa} : {_ttype(shape, element)}) "
                  f"outs({self.empty(out_shape, element)} : {_ttype(out_shape, element)}) "
                  f"permutation = [{', '.join(str(p) for p in perm)}]")
        return name

    def softmax(self, node, x, dim, log):
        if dim is None:
            self.unsupported(node, "softmax without dim")
        ssa, shape, element, perm = self.moved_last(node, x, dim)
        self.float_only(node, element)
        t = element
        mx = self.reduce_last(ssa, shape, t, "arith.maximumf", float("-inf"))
        full = [f"d{i}" for i in range(len(shape))]
        rows = self.row_map(shape)
        # exp(x - max) and its sum
        e = self.generic([(ssa, shape, full), (mx, shape[:-1], rows)], shape, t,
                         lambda a, o: [f"%d = arith.subf {a[0]}, {a[1]} : {t}",
                                       f"%r = math.exp %d : {t}", "%r"])
        sm = self.reduce_last(e, shape, t, "arith.addf", 0.0)
        if log:
            out = self.generic([(ssa, shape, full), (mx, shape[:-1], rows), (sm, shape[:-1], rows)],
                               shape, t,
                               lambda a, o: [f"%d = arith.subf {a[0]}, {a[1]} : {t}",
                                             f"%l = math.log {a[2]} : {t}",
                                             f"%r = arith.subf %d, %l : {t}", "%r"])
        else:
            out = self.generic([(e, shape, full), (sm, shape[:-1], rows)], shape, t,
                               lambda a, o: [f"%r = arith.divf {a[0]}, {a[1]} : {t}", "%r"])
        if perm is not None:
            inverse = [perm.index(i) for i in range(len(perm))]
            out = self.transpose(out, shape, t, inverse)
            shape = tuple(shape[p] for p in inverse)
        self.set(node, out, shape, t)

    def layer_norm(self, node, x, normalized, weight, bias, eps):
        ssa, shape, element = self.value(node, x)
        self.float_only(node, element)
        t = element
        count = int(np.prod(normalized))
        lead = shape[:len(shape) - len(normalized)]
        flat = lead + (count,)
        if len(normalized) != 1:
            ssa = self.reshape_value(ssa, shape, flat, t)
        full = [f"d{i}" for i in range(len(flat))]
        rows = self.row_map(flat)
        inv_n = _float_literal(1.0 / count, t)
        total = self.reduce_last(ssa, flat, t, "arith.addf", 0.0)
        mean = self.generic([(total, lead, [f"d{i}" for i in range(len(lead))])], lead, t,
                            lambda a, o: [f"%n = arith.constant {inv_n} : {t}",
                                          f"%r = arith.mulf {a[0]}, %n : {t}", "%r"])
        centered = self.generic([(ssa, flat, full), (mean, lead, rows)], flat, t,
                                lambda a, o: [f"%r = arith.subf {a[0]}, {a[1]} : {t}", "%r"])
        sq = self.reduce_last(centered, flat, t, "arith.addf", 0.0,
                              pre=lambda v: ([f"%q = arith.mulf {v}, {v} : {t}"], "%q"))
        eps_text = _float_literal(eps, t)
        rstd = self.generic([(sq, lead, [f"d{i}" for i in range(len(lead))])], lead, t,
                            lambda a, o: [f"%n = arith.constant {inv_n} : {t}",
                                          f"%e = arith.constant {eps_text} : {t}",
                                          f"%v = arith.mulf {a[0]}, %n : {t}",
                                          f"%ve = arith.addf %v, %e : {t}",
                                          f"%r = math.rsqrt %ve : {t}", "%r"])
        inputs = [(centered, flat, full), (rstd, lead, rows)]
        if weight is not None:
            w = weight if len(normalized) == 1 else (
                self.reshape_value(weight[0], weight[1], (count,), t), (count,), t)
            inputs.append((w[0], (count,), [f"d{len(flat) - 1}"]))
        if bias is not None:
            bb = bias if len(normalized) == 1 else (
                self.reshape_value(bias[0], bias[1], (count,), t), (count,), t)
            inputs.append((bb[0], (count,), [f"d{len(flat) - 1}"]))

        def body(a, o):
            lines = [f"%n = arith.mulf {a[0]}, {a[1]} : {t}"]
            v = "%n"
            if weight is not None:
                lines.append(f"%w = arith.mulf {v}, {a[2]} : {t}")
                v = "%w"
            if bias is not None:
                lines.append(f"%b = arith.addf {v}, {a[-1]} : {t}")
                v = "%b"
            return lines + [v]

        out = self.generic(inputs, flat, t, body)
        if len(normalized) != 1:
            out = self.reshape_value(out, flat, shape, t)
        self.set(node, out, shape, t)

    def reshape_value(self, ssa, shape, out_shape, element):
        """ssa of shape as out_shape (same element count), through 1-D."""
        shape, out_shape = tuple(shape), tuple(out_shape)
        if shape == out_shape:
            return ssa
        if shape == () or out_shape == ():
            # Rank 0 <-> all-ones shapes: no dims to group.
            name = self.fresh()
            if shape == ():
                self.emit(f"{name} = tensor.expand_shape {ssa} [] output_shape "
                          f"[{', '.join(str(d) for d in out_shape)}] : "
                          f"{_ttype(shape, element)} into {_ttype(out_shape, element)}")
            else:
                self.emit(f"{name} = tensor.collapse_shape {ssa} [] : "
                          f"{_ttype(shape, element)} into {_ttype(out_shape, element)}")
            return name
        count = int(np.prod(shape))
        flat = ssa
        if len(shape) != 1:
            flat = self.fresh()
            groups = "[[" + ", ".join(str(i) for i in range(len(shape))) + "]]"
            self.emit(f"{flat} = tensor.collapse_shape {ssa} {groups} : "
                      f"{_ttype(shape, element)} into {_ttype((count,), element)}")
        if len(out_shape) == 1:
            return flat
        out = self.fresh()
        groups = "[[" + ", ".join(str(i) for i in range(len(out_shape))) + "]]"
        self.emit(f"{out} = tensor.expand_shape {flat} {groups} output_shape "
                  f"[{', '.join(str(d) for d in out_shape)}] : "
                  f"{_ttype((count,), element)} into {_ttype(out_shape, element)}")
        return out

    def getitem(self, node, x, index):
        """x[i], x[:, i], x[1:5], x[:, ::2], ...: integers and slices with
        integer bounds and a positive step (a strided tensor.extract_slice)."""
        ssa, shape, element = self.value(node, x)
        if not isinstance(index, tuple):
            index = (index,)

        def plain(i):
            if isinstance(i, int):
                return True
            return isinstance(i, slice) and all(
                v is None or isinstance(v, int) for v in (i.start, i.stop, i.step)) and (
                i.step is None or i.step > 0)

        if len(index) > len(shape) or not all(plain(i) for i in index):
            self.unsupported(node, f"indexing with {index!r} (integers and slices with "
                             "integer bounds and a positive step only)")
        offsets, sizes, strides = [], [], []
        for d, extent in enumerate(shape):
            i = index[d] if d < len(index) else slice(None)
            if isinstance(i, int):
                if not -extent <= i < extent:
                    self.unsupported(node, f"index {i} out of range for dimension {d} "
                                     f"of size {extent}")
                offsets.append(str(i % extent))
                sizes.append("1")
                strides.append("1")
                continue
            start, stop, step = i.indices(extent)
            count = len(range(start, stop, step))
            if count == 0:
                self.unsupported(node, f"slice {i!r} of dimension {d} (size {extent}) "
                                 "is empty")
            offsets.append(str(start))
            sizes.append(str(count))
            strides.append(str(step))
        out_shape, _ = self.meta(node)
        name = self.fresh()
        self.emit(f"{name} = tensor.extract_slice {ssa}[{', '.join(offsets)}] "
                  f"[{', '.join(sizes)}] [{', '.join(strides)}] : "
                  f"{_ttype(shape, element)} to {_ttype(out_shape, element)}")
        self.set(node, name, out_shape, element)

    def pad_spatial(self, ssa, shape, element, pads, value):
        """Pads dims 2 and 3 of an NCHW tensor by pads = (ph, pw) on both
        sides, or ((top, bottom), (left, right))."""
        (top, bottom), (left, right) = _pad_pairs(pads)
        if top == bottom == left == right == 0:
            return ssa, shape
        out_shape = (shape[0], shape[1], shape[2] + top + bottom, shape[3] + left + right)
        name = self.fresh()
        self.emit(f"{name} = tensor.pad {ssa} low[0, 0, {top}, {left}] "
                  f"high[0, 0, {bottom}, {right}] {{")
        self.emit(f"^bb0(%i0: index, %i1: index, %i2: index, %i3: index):")
        pv = self.fresh()
        self.emit(f"  {pv} = arith.constant {_float_literal(value, element)} : {element}")
        self.emit(f"  tensor.yield {pv} : {element}")
        self.emit(f"}} : {_ttype(shape, element)} to {_ttype(out_shape, element)}")
        return name, out_shape

    def filled(self, shape, element, value):
        start = self.fresh()
        self.emit(f"{start} = arith.constant {_float_literal(value, element)} : {element}")
        init = self.fresh()
        self.emit(f"{init} = linalg.fill ins({start} : {element}) outs({self.empty(shape, element)} : "
                  f"{_ttype(shape, element)}) -> {_ttype(shape, element)}")
        return init

    def pad_spatial_mode(self, node, ssa, shape, element, pads, mode):
        """Pads dims 2 and 3 of an NCHW tensor by pads = (ph, pw) with the
        border's values (mode "reflect", "replicate" or "circular", as
        torch's Conv2d padding_mode): a gather whose source row and column
        are the padded position folded back into the tensor."""
        (top, bottom), (left, right) = _pad_pairs(pads)
        if top == bottom == left == right == 0:
            return ssa, shape
        n, c, h, w = shape
        ph, pw = max(top, bottom), max(left, right)
        if mode == "reflect" and (ph >= h or pw >= w):
            self.unsupported(node, f"reflect padding {pads} of a {h}x{w} image "
                             "(torch needs the padding below the size)")
        if mode == "circular" and (ph > h or pw > w):
            self.unsupported(node, f"circular padding {pads} of a {h}x{w} image "
                             "(torch needs the padding at most the size)")
        out_shape = (n, c, h + top + bottom, w + left + right)

        def fold(position, pad, size, tag):
            # t = position - pad, then into [0, size).
            lines = [f"%p{tag} = linalg.index {position} : index",
                     f"%pad{tag} = arith.constant {pad} : index",
                     f"%t{tag} = arith.subi %p{tag}, %pad{tag} : index",
                     f"%zero{tag} = arith.constant 0 : index",
                     f"%last{tag} = arith.constant {size - 1} : index",
                     f"%low{tag} = arith.cmpi slt, %t{tag}, %zero{tag} : index",
                     f"%high{tag} = arith.cmpi sgt, %t{tag}, %last{tag} : index"]
            if mode == "replicate":
                lines += [f"%a{tag} = arith.select %low{tag}, %zero{tag}, %t{tag} : index",
                          f"%s{tag} = arith.select %high{tag}, %last{tag}, %a{tag} : index"]
            elif mode == "reflect":
                lines += [f"%neg{tag} = arith.subi %zero{tag}, %t{tag} : index",
                          f"%twice{tag} = arith.constant {2 * (size - 1)} : index",
                          f"%back{tag} = arith.subi %twice{tag}, %t{tag} : index",
                          f"%a{tag} = arith.select %low{tag}, %neg{tag}, %t{tag} : index",
                          f"%s{tag} = arith.select %high{tag}, %back{tag}, %a{tag} : index"]
            else:  # circular
                lines += [f"%size{tag} = arith.constant {size} : index",
                          f"%up{tag} = arith.addi %t{tag}, %size{tag} : index",
                          f"%down{tag} = arith.subi %t{tag}, %size{tag} : index",
                          f"%a{tag} = arith.select %low{tag}, %up{tag}, %t{tag} : index",
                          f"%s{tag} = arith.select %high{tag}, %down{tag}, %a{tag} : index"]
            return lines

        def body(a, o):
            return (["%n = linalg.index 0 : index", "%c = linalg.index 1 : index"]
                    + fold(2, top, h, "h") + fold(3, left, w, "w")
                    + [f"%r = tensor.extract {ssa}[%n, %c, %sh, %sw] : {_ttype(shape, element)}",
                       "%r"])

        return self.generic([], out_shape, element, body), out_shape

    def conv2d(self, node, x, weight, bias, stride, padding, dilation, groups=1,
               padding_mode="zeros"):
        """x (NCHW) convolved with weight (F, C/groups, KH, KW) plus bias (F):
        values (ssa, shape, element); bias may be None."""
        out_shape, element = self.meta(node)
        self.float_only(node, element)
        ssa, shape, _ = self.value(node, x)
        if padding_mode == "zeros":
            padded, padded_shape = self.pad_spatial(ssa, shape, element, padding, 0.0)
        else:
            padded, padded_shape = self.pad_spatial_mode(node, ssa, shape, element,
                                                         padding, padding_mode)
        wv = weight
        attrs = (f"{{dilations = dense<[{dilation[0]}, {dilation[1]}]> : tensor<2xi64>, "
                 f"strides = dense<[{stride[0]}, {stride[1]}]> : tensor<2xi64>}}")
        conv = self.fresh()
        if groups == 1:
            init = self.filled(out_shape, element, 0.0)
            self.emit(f"{conv} = linalg.conv_2d_nchw_fchw {attrs} "
                      f"ins({padded}, {wv[0]} : {_ttype(padded_shape, element)}, {_ttype(wv[1], element)}) "
                      f"outs({init} : {_ttype(out_shape, element)}) -> {_ttype(out_shape, element)}")
        else:
            # Grouped (depthwise when groups = channels): the channels split
            # into groups, linalg.conv_2d_ngchw_gfchw, the groups merged back.
            n, c, h, w = padded_shape
            f, cg, kh, kw = wv[1]
            x5 = (n, groups, c // groups, h, w)
            w5 = (groups, f // groups, cg, kh, kw)
            o5 = (n, groups, f // groups, out_shape[2], out_shape[3])
            xg = self.reshape_value(padded, padded_shape, x5, element)
            wg = self.reshape_value(wv[0], wv[1], w5, element)
            init = self.filled(o5, element, 0.0)
            grouped = self.fresh()
            self.emit(f"{grouped} = linalg.conv_2d_ngchw_gfchw {attrs} "
                      f"ins({xg}, {wg} : {_ttype(x5, element)}, {_ttype(w5, element)}) "
                      f"outs({init} : {_ttype(o5, element)}) -> {_ttype(o5, element)}")
            conv = self.reshape_value(grouped, o5, out_shape, element)
        if bias is not None:
            bv = bias
            conv = self.generic([(conv, out_shape, ["d0", "d1", "d2", "d3"]), (bv[0], bv[1], ["d1"])],
                                out_shape, element,
                                lambda a, o: [f"%r = arith.addf {a[0]}, {a[1]} : {element}", "%r"])
        self.set(node, conv, out_shape, element)

    def pool2d(self, node, x, kernel, stride, padding, dilation, ceil_mode, is_max, what):
        """Max or average pooling of NCHW x; kernel, stride (None or empty:
        the kernel), padding and dilation are ints or pairs; `what` names
        the op in errors."""
        out_shape, element = self.meta(node)
        self.float_only(node, element)
        kernel, stride = _pair(kernel), _pair(stride or kernel)
        padding, dilation = _pair(padding), _pair(dilation)
        if ceil_mode or (not is_max and padding != (0, 0)):
            self.unsupported(node, f"{what} with ceil_mode or (average) padding")
        ssa, shape, _ = self.value(node, x)
        start = float("-inf") if is_max else 0.0
        padded, padded_shape = self.pad_spatial(ssa, shape, element, padding, start)
        init = self.filled(out_shape, element, start)
        window = self.empty(kernel, element)
        pooled = self.fresh()
        op = "linalg.pooling_nchw_max" if is_max else "linalg.pooling_nchw_sum"
        self.emit(f"{pooled} = {op} {{dilations = dense<[{dilation[0]}, {dilation[1]}]> : tensor<2xi64>, "
                  f"strides = dense<[{stride[0]}, {stride[1]}]> : tensor<2xi64>}} "
                  f"ins({padded}, {window} : {_ttype(padded_shape, element)}, {_ttype(kernel, element)}) "
                  f"outs({init} : {_ttype(out_shape, element)}) -> {_ttype(out_shape, element)}")
        if not is_max:
            scale = _float_literal(1.0 / (kernel[0] * kernel[1]), element)
            pooled = self.generic([(pooled, out_shape, ["d0", "d1", "d2", "d3"])], out_shape, element,
                                  lambda a, o: [f"%k = arith.constant {scale} : {element}",
                                                f"%r = arith.mulf {a[0]}, %k : {element}", "%r"])
        self.set(node, pooled, out_shape, element)

    def adaptive_avg_pool(self, node, x, output_size):
        size = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size, output_size)
        if size != (1, 1):
            self.unsupported(node, f"AdaptiveAvgPool2d to {size} (only (1, 1))")
        out_shape, element = self.meta(node)
        ssa, shape, _ = self.value(node, x)
        n, c, h, w = shape
        flat = self.reshape_value(ssa, shape, (n, c, h * w), element)
        total = self.reduce_last(flat, (n, c, h * w), element, "arith.addf", 0.0)
        scale = _float_literal(1.0 / (h * w), element)
        mean = self.generic([(total, (n, c), ["d0", "d1"])], (n, c), element,
                            lambda a, o: [f"%k = arith.constant {scale} : {element}",
                                          f"%r = arith.mulf {a[0]}, %k : {element}", "%r"])
        self.set(node, self.reshape_value(mean, (n, c), out_shape, element), out_shape, element)

    def batch_norm(self, node, x, module, path):
        """Evaluation batch norm: x * scale + shift per channel (dim 1)."""
        if module.training or module.running_mean is None:
            self.unsupported(node, f"BatchNorm2d ({path}) in training mode or without running statistics")
        with torch.no_grad():
            inv = torch.rsqrt(module.running_var.double() + module.eps)
            weight = module.weight.double() if module.weight is not None else 1.0
            bias = module.bias.double() if module.bias is not None else 0.0
            scale = (inv * weight).to(module.running_var.dtype)
            shift = (bias - module.running_mean.double() * inv * weight).to(module.running_var.dtype)
        self.channel_affine(node, x, self.tensor_value(f"{path}.scale", scale),
                            self.tensor_value(f"{path}.shift", shift))

    def channel_affine(self, node, x, scale, shift):
        """x * scale + shift, scale and shift per channel (dim 1): an
        evaluation batch norm."""
        out_shape, element = self.meta(node)
        self.float_only(node, element)
        ssa, shape, _ = self.value(node, x)
        full = [f"d{i}" for i in range(len(shape))]
        out = self.generic([(ssa, shape, full), (scale[0], scale[1], ["d1"]),
                            (shift[0], shift[1], ["d1"])], shape, element,
                           lambda a, o: [f"%m = arith.mulf {a[0]}, {a[1]} : {element}",
                                         f"%r = arith.addf %m, {a[2]} : {element}", "%r"])
        self.set(node, out, out_shape, element)

    def embedding(self, node, indices, weight):
        out_shape, element = self.meta(node)
        ssa, shape, index_element = self.value(node, indices)
        if index_element not in ("i64", "i32"):
            self.unsupported(node, f"embedding indices of type {index_element}")
        w_ssa, w_shape, _ = weight
        rank = len(out_shape)
        idx_exprs = [f"d{i}" for i in range(rank - 1)]

        def body(a, o):
            return [f"%i = arith.index_cast {a[0]} : {index_element} to index",
                    f"%j = linalg.index {rank - 1} : index",
                    f"%r = tensor.extract {w_ssa}[%i, %j] : {_ttype(w_shape, element)}", "%r"]

        out = self.generic([(ssa, shape, idx_exprs)], out_shape, element, body)
        self.set(node, out, out_shape, element)

    def cat(self, node, tensors, dim):
        out_shape, element = self.meta(node)
        values = [self.value(node, t) for t in tensors]
        dim = dim % len(out_shape)
        name = self.fresh()
        self.emit(f"{name} = tensor.concat dim({dim}) {', '.join(v[0] for v in values)} : "
                  f"({', '.join(_ttype(v[1], element) for v in values)}) -> {_ttype(out_shape, element)}")
        self.set(node, name, out_shape, element)

    def reduce(self, node, x, dims, mean, correction=None):
        """sum / mean over dims (None: all), keepdim or not (from the result's
        shape); with a correction, the variance (the squared deviations from
        the mean summed, over count - correction)."""
        out_shape, element = self.meta(node)
        self.float_only(node, element)
        ssa, shape, _ = self.value(node, x)
        rank = len(shape)
        if dims is None:
            dims = list(range(rank))
        dims = sorted({d % rank for d in ((dims,) if isinstance(dims, int) else dims)})
        keep = [d for d in range(rank) if d not in dims]
        perm = keep + dims
        moved = ssa if perm == list(range(rank)) else self.transpose(ssa, shape, element, perm)
        kept_shape = tuple(shape[d] for d in keep)
        count = int(np.prod([shape[d] for d in dims]))
        flat = self.reshape_value(moved, tuple(shape[d] for d in perm), kept_shape + (count,), element)
        total = self.reduce_last(flat, kept_shape + (count,), element, "arith.addf", 0.0)
        kept = [f"d{i}" for i in range(len(kept_shape))]

        def scaled(ssa, factor):
            k = _float_literal(factor, element)
            return self.generic([(ssa, kept_shape, kept)], kept_shape, element,
                                lambda a, o: [f"%k = arith.constant {k} : {element}",
                                              f"%r = arith.mulf {a[0]}, %k : {element}", "%r"])

        if mean or correction is not None:
            total = scaled(total, 1.0 / count)
        if correction is not None:
            rows = kept_shape + (count,)
            centered = self.generic(
                [(flat, rows, kept + [f"d{len(kept)}"]), (total, kept_shape, kept)], rows,
                element, lambda a, o: [f"%r = arith.subf {a[0]}, {a[1]} : {element}", "%r"])
            squares = self.reduce_last(centered, rows, element, "arith.addf", 0.0,
                                       pre=lambda v: ([f"%q = arith.mulf {v}, {v} : {element}"],
                                                      "%q"))
            total = scaled(squares, 1.0 / (count - correction) if count > correction
                           else float("inf"))
        self.set(node, self.reshape_value(total, kept_shape, out_shape, element), out_shape, element)

    def reshape(self, node, x):
        out_shape, element = self.meta(node)
        ssa, shape, _ = self.value(node, x)
        self.set(node, self.reshape_value(ssa, shape, out_shape, element), out_shape, element)

    def permute(self, node, x):
        rank = len(self.value(node, x)[1])
        if node.op == "call_method" and node.target == "t" or (
                node.op == "call_function" and node.target is torch.transpose) or (
                node.op == "call_method" and node.target == "transpose"):
            if node.target == "t":
                d0, d1 = 0, 1
            else:
                d0, d1 = node.args[1] % rank, node.args[2] % rank
            perm = list(range(rank))
            perm[d0], perm[d1] = perm[d1], perm[d0]
        else:
            dims = node.args[1:] if node.op == "call_method" else node.args[1]
            if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
                dims = dims[0]
            perm = [d % rank for d in dims]
        self.permuted(node, x, perm)

    def permuted(self, node, x, perm):
        """x with its dims in the order perm (linalg.transpose)."""
        out_shape, element = self.meta(node)
        ssa, shape, _ = self.value(node, x)
        self.set(node, self.transpose(ssa, shape, element, perm), out_shape, element)


class _Tracer(torch.fx.Tracer):
    def __init__(self):
        super().__init__()
        self.record_stack_traces = True


def default_tracer():
    """"aten" (torch.export) where torch has it (2.1 and later), else "fx"."""
    from kiln import _torch_aten
    return "aten" if _torch_aten.has_export() else "fx"


def export(module, example_inputs, function_name="main", parameters_file=None,
           tracer=None):
    """The MLIR program (text) of module for inputs shaped like
    example_inputs (a tuple of tensors). Parameters and buffers are
    constants of the program, or, with parameters_file, arguments marked
    {kiln.parameter = "<qualified name>"} whose tensors are written to that
    safetensors archive (compile with --parameters=parameters_file).
    tracer: "fx" (torch.fx symbolic tracing of the module's Python),
    "aten" (the ATen ops it runs: torch.export on torch >= 2.1, make_fx on
    older torch; kiln/_torch_aten.py), or None for default_tracer()."""
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    tracer = tracer or default_tracer()
    if tracer not in ("fx", "aten"):
        raise ValueError(f"kiln.torch: tracer must be \"fx\" or \"aten\", not {tracer!r}")
    module = module.eval()
    archive = {} if parameters_file is not None else None
    if tracer == "aten":
        from kiln import _torch_aten
        text = _torch_aten.export(module, example_inputs, function_name, archive)
    else:
        text = _export_fx(module, example_inputs, function_name, archive)
    if archive is not None:
        write_safetensors(parameters_file, archive)
    return text


def _export_fx(module, example_inputs, function_name, archive):
    tracer = _Tracer()
    graph = tracer.trace(module)
    gm = torch.fx.GraphModule(tracer.root, graph)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        raise UnsupportedOpError(
            f"kiln.torch: the model takes {len(placeholders)} inputs, "
            f"{len(example_inputs)} example inputs were given")
    _propagate_shapes(gm, example_inputs)
    return _Emitter(gm, function_name, archive).run(example_inputs)


def _propagate_shapes(gm, example_inputs):
    """Records each node's shape and dtype (torch.fx ShapeProp). Runs the
    model on the example inputs; when an op has no CPU kernel for their
    dtype (f16 convolutions on torch 1.13), on a copy of the model and the
    inputs on the meta device instead, which computes no values."""
    with torch.no_grad():
        try:
            # ShapeProp prints the traceback of a failing op before raising.
            with contextlib.redirect_stderr(io.StringIO()):
                ShapeProp(gm).propagate(*example_inputs)
            return
        except RuntimeError as e:
            chain, cause = [], e
            while cause is not None:
                chain.append(str(cause))
                cause = cause.__cause__ or cause.__context__
            if not any("not implemented for" in text for text in chain):
                raise
        meta = copy.deepcopy(gm).to("meta")
        ShapeProp(meta).propagate(*(t.to("meta") if isinstance(t, torch.Tensor) else t
                                    for t in example_inputs))
    metas = {n.name: n.meta for n in meta.graph.nodes}
    for n in gm.graph.nodes:
        if "tensor_meta" in metas.get(n.name, {}):
            n.meta["tensor_meta"] = metas[n.name]["tensor_meta"]


def _dlpack_has_bool():
    """Whether this torch exchanges bool tensors through DLPack (kDLBool,
    DLPack 0.8: torch 2; torch 1.13 refuses them)."""
    try:
        torch.utils.dlpack.to_dlpack(torch.zeros(1, dtype=torch.bool))
        return True
    except RuntimeError:
        return False


class CompiledModule:
    """A PyTorch module compiled by Kiln: call it with tensors shaped like
    the example inputs; returns torch tensors in the memory of the Kiln
    device (CPU tensors for local devices, CUDA tensors for hip ones).
    Tensors already there are used in place (DLPack: no copies either way;
    torch's queued work on them is ordered before Kiln's); others are
    copied in."""

    def __init__(self, mlir, module_bytes, device, function_name):
        self.mlir = mlir
        self.module_bytes = module_bytes
        self.device = device
        self.module = device.load(module_bytes)
        self.function = self.module[function_name]
        self._share_bool = _dlpack_has_bool()

    def __call__(self, *inputs):
        arrays = []
        for x in inputs:
            if isinstance(x, torch.Tensor):
                x = x.detach()
                if (tuple(x.__dlpack_device__()) == self.device.dlpack_device
                        and (x.dtype != torch.bool or self._share_bool)):
                    # In place when it can be: dense and 16-byte aligned.
                    if not x.is_contiguous() or x.data_ptr() % 16:
                        x = x.clone(memory_format=torch.contiguous_format)
                else:
                    x = x.cpu()
                    if x.dtype == torch.bfloat16:
                        x = x.view(torch.int16).numpy().view(np.uint16)
                    else:
                        x = x.contiguous().numpy()
            arrays.append(x)
        results = self.function.call(*arrays, outputs="device")
        single = not isinstance(results, tuple)
        tensors = [self._to_torch(r) for r in ((results,) if single else results)]
        return tensors[0] if single else tuple(tensors)

    def _to_torch(self, array):
        if array.element_type == "i1" and not self._share_bool:
            return torch.from_numpy(array.numpy())  # copied: see _dlpack_has_bool
        return torch.from_dlpack(array)


def compile(module, example_inputs, target="host", device="local",
            function_name="main", tracer=None, **compile_options):
    """Traces module (tracer as export's), compiles it with Kiln
    (kiln-compile's options as keywords) and loads it on device (a URI or a
    kiln.runtime.Device)."""
    import os
    import tempfile
    # Imported here: export() needs only torch (and runs where the compiler
    # library is not, e.g. on torch 2 machines without LLVM).
    import kiln.compiler
    import kiln.runtime
    with tempfile.TemporaryDirectory(prefix="kiln_torch_") as folder:
        # Parameters travel in an archive, not as text in the program.
        archive = os.path.join(folder, "parameters.safetensors")
        mlir = export(module, example_inputs, function_name, parameters_file=archive,
                      tracer=tracer)
        module_bytes = kiln.compiler.compile_str(
            mlir, name=f"{type(module).__name__}.mlir", target=target,
            parameters=archive, **compile_options)
    if not isinstance(device, kiln.runtime.Device):
        device = kiln.runtime.Device(device)
    return CompiledModule(mlir, module_bytes, device, function_name)
