"""kiln.torch's ATen front end (tracer="aten"): the model as a graph of
ATen ops (torch.ops.aten.*), written as the MLIR the torch.fx front end
writes, through the same kiln.torch._Emitter helpers.

Where the graph comes from:
  torch >= 2.1   torch.export.export(module, example_inputs), decomposed to
                 the core ATen opset (ep.run_decompositions) except
                 aten.scaled_dot_product_attention, kept whole so that it
                 becomes the attention chain Kiln fuses on GPUs. Parameters
                 and buffers are lifted placeholders, named through
                 ep.graph_signature; lifted tensor constants are constants.
  torch 1.13     torch.fx.experimental.proxy_tensor.make_fx of a function
  (and 2.0)      taking the parameters and buffers as arguments
                 (functional_call) besides the inputs, with a few of
                 torch._decomp's decompositions.

Parameters and buffers become, as in the fx front end, arguments marked
{kiln.parameter = "<state_dict name>"} (with an archive) or constants; only
those the program uses. Ops whose inputs are all known at trace time
(factories such as full / ones / arange / triu, and ops on lifted constants)
are evaluated by torch here and become constants. Shapes and element types
come from each node's meta: "val" (FakeTensors, torch.export) or
"tensor_meta" (make_fx).

Ops (aten_<name> below): addmm, mm (a weight's t / permute feeding them
is the fx front end's linear), bmm, matmul, linear, t, permute, transpose,
view, _unsafe_view, _reshape_alias, reshape, squeeze, unsqueeze, flatten,
expand, clone, alias, detach, lift_fresh(_copy), dropout (eval),
convolution (2-D), max_pool2d(_with_indices), avg_pool2d,
_adaptive_avg_pool2d (1x1), mean, sum, var, the evaluation batch norms,
native_layer_norm, _softmax, _log_softmax, relu, gelu, silu, sigmoid, tanh,
exp, log, sqrt, rsqrt, abs, neg, pow.Tensor_Scalar, add, sub, mul, div,
rsub, clamp, hardtanh, leaky_relu, comparisons, where, masked_fill,
bitwise_not / logical_not (bool), _to_copy, embedding, cat, slice, select,
scaled_dot_product_attention, _scaled_dot_product_flash_attention_for_cpu,
and getitem of a multi-result op (result 0 of the norms and max pooling).
"""

import collections
import contextlib
import inspect
import operator
import os

import torch
import torch.fx

from kiln.torch import (UnsupportedOpError, _Emitter, _Value, _at, _element,
                        _float_literal, _frames, _pair, _ttype)

# The traced program: the graph, per placeholder ("input" | "parameter" |
# "constant", state_dict or constant name, tensor), the user outputs' nodes,
# and whether the nodes' stack traces list the outermost frame first.
_Program = collections.namedtuple("_Program", "gm inputs outputs outermost_first")

aten = torch.ops.aten

# Stack frames in these are not the model's source (see _AtenEmitter.where).
_KILN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep

_FLOATS = ("f16", "bf16", "f32", "f64")
_WIDTH = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
          "f16": 16, "bf16": 16, "f32": 32, "f64": 64}

# Never evaluated at trace time, even with known inputs.
_NOT_FOLDED = ("rand", "randn", "randint", "rand_like", "randn_like", "bernoulli",
               "normal", "uniform", "native_dropout", "dropout", "empty", "empty_like",
               "empty_strided")


def has_export():
    """Whether this torch has torch.export (2.1 and later)."""
    return hasattr(torch, "export") and hasattr(torch.export, "export")


def export(module, example_inputs, function_name, archive):
    """The MLIR text of module (see kiln.torch.export), traced to ATen."""
    _check_input_count(module, example_inputs)
    program = _exported(module, example_inputs) if has_export() else \
        _made_fx(module, example_inputs)
    return _AtenEmitter(program, function_name, archive).run()


def _check_input_count(module, example_inputs):
    parameters = inspect.signature(module.forward).parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return
    count = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters)
    if count != len(example_inputs):
        raise UnsupportedOpError(
            f"kiln.torch: the model takes {count} inputs, "
            f"{len(example_inputs)} example inputs were given")


# --- tracing -------------------------------------------------------------------


def _export_decompositions():
    """The core ATen decompositions, less scaled_dot_product_attention's
    (torch >= 2.6 keeps an op whose entry is removed)."""
    try:
        table = torch.export.default_decompositions()
    except AttributeError:
        from torch._decomp import core_aten_decompositions
        table = core_aten_decompositions()
    try:
        del table[aten.scaled_dot_product_attention.default]
    except KeyError:
        pass
    return table


def _exported(module, example_inputs):
    """torch.export (torch >= 2.1)."""
    ep = torch.export.export(module, tuple(example_inputs))
    ep = ep.run_decompositions(_export_decompositions())
    signature = ep.graph_signature
    parameters = dict(signature.inputs_to_parameters)
    buffers = dict(signature.inputs_to_buffers)
    constants = dict(getattr(signature, "inputs_to_lifted_tensor_constants", {}))
    user = set(signature.user_inputs)
    lifted = getattr(ep, "constants", {})   # also non-persistent buffers
    inputs = []
    gm = ep.graph_module
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        if node.name in parameters or node.name in buffers:
            name = parameters.get(node.name) or buffers[node.name]
            tensor = ep.state_dict[name] if name in ep.state_dict else lifted[name]
            inputs.append(("parameter", name, tensor))
        elif node.name in constants:
            inputs.append(("constant", constants[node.name], lifted[constants[node.name]]))
        elif node.name in user:
            inputs.append(("input", node.name, None))
        else:
            raise UnsupportedOpError(f"kiln.torch: exported program input {node.name} "
                                     "is neither a user input, a parameter, a buffer nor "
                                     "a tensor constant")
    output = next(n for n in gm.graph.nodes if n.op == "output")
    results = output.args[0]
    results = list(results) if isinstance(results, (tuple, list)) else [results]
    # Buffer mutations come first, the user's outputs last.
    count = len(signature.user_outputs)
    return _Program(gm, inputs, results[len(results) - count:], outermost_first=True)


@contextlib.contextmanager
def _recording_stack_traces():
    """make_fx builds its own tracer (PythonKeyTracer); this class
    attribute makes it record each node's Python stack, as kiln.torch's fx
    tracer does."""
    from torch.fx.experimental.proxy_tensor import PythonKeyTracer
    saved = PythonKeyTracer.__dict__.get("record_stack_traces")
    PythonKeyTracer.record_stack_traces = True
    try:
        yield
    finally:
        if saved is None:
            del PythonKeyTracer.record_stack_traces
        else:
            PythonKeyTracer.record_stack_traces = saved


def _make_fx_decompositions():
    """torch._decomp's decompositions of ops written here as other ATen ops
    (torch 2's core ATen decomposes them too)."""
    from torch._decomp import get_decompositions
    return get_decompositions([aten.var_mean.correction, aten.std.correction,
                               aten.hardswish, aten.hardsigmoid, aten.mv, aten.dot])


def _made_fx(module, example_inputs):
    """make_fx with the parameters and buffers as arguments (torch < 2.1)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    try:
        from torch.func import functional_call
    except ImportError:
        from torch.nn.utils.stateless import functional_call
    state = dict(module.named_parameters())
    state.update(module.named_buffers())
    names = list(state)

    def forward(*args):
        return functional_call(module, dict(zip(names, args[:len(names)])),
                               tuple(args[len(names):]))

    args = [t.detach() for t in state.values()] + list(example_inputs)
    with torch.no_grad(), _recording_stack_traces():
        try:
            gm = make_fx(forward, _make_fx_decompositions())(*args)
        except RuntimeError as e:
            # An op with no CPU kernel for the inputs' dtype (f16
            # convolutions on torch 1.13): traced on fake tensors instead.
            if "not implemented for" not in str(e):
                raise
            gm = make_fx(forward, _make_fx_decompositions(), tracing_mode="fake")(*args)
    inputs = [("parameter", name, tensor) for name, tensor in state.items()]
    inputs += [("input", f"input{i}", None) for i in range(len(example_inputs))]
    output = next(n for n in gm.graph.nodes if n.op == "output")
    results = output.args[0]
    results = list(results) if isinstance(results, (tuple, list)) else [results]
    return _Program(gm, inputs, results, outermost_first=False)


# --- lowering ------------------------------------------------------------------


class _Values(dict):
    """fx node -> value; parameters, constants and deferred transposes are
    written on first use."""

    def __init__(self, emitter):
        super().__init__()
        self.emitter = emitter

    def __missing__(self, node):
        self.emitter.materialize(node)
        return dict.__getitem__(self, node)


class _AtenEmitter(_Emitter):
    def __init__(self, program, name, archive):
        super().__init__(program.gm, name, archive)
        self.program = program
        self.values = _Values(self)
        self.known = {}        # node -> tensor (or tuple) known at trace time
        self.pending = {}      # node -> writes its value on first use
        self.transposed = {}   # node -> (source node, permutation)

    def run(self):
        self.elements = {}
        args = []
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        for node, (kind, name, tensor) in zip(placeholders, self.program.inputs):
            if kind == "input":
                shape, element = self.meta(node)
                ssa = f"%arg{len(args)}"
                args.append(f"{ssa}: {_ttype(shape, element)}")
                self.set(node, ssa, shape, element)
            elif kind == "parameter":
                self.pending[node] = (lambda node=node, name=name, tensor=tensor:
                                      self.set(node, *self.tensor_value(name, tensor)))
            else:
                self.known[node] = tensor
        for node in self.gm.graph.nodes:
            if node.op not in ("placeholder", "output") and node.users:
                self.lower(node)
        return self.function(args, [self.values[o] for o in self.program.outputs])

    def materialize(self, node):
        if node in self.pending:
            self.pending.pop(node)()
        elif node in self.known and isinstance(self.known[node], torch.Tensor):
            tensor = self.known[node].detach().cpu()
            element = _element(tensor.dtype)
            array = tensor.float().numpy() if element == "bf16" else tensor.numpy()
            self.set(node, self.constant(array, element), tuple(tensor.shape), element)
        else:
            raise KeyError(node)

    def where(self, node):
        """The model's source line of node: the innermost frame outside
        torch and kiln, or else the innermost one inside torch (an
        nn.Module's own code)."""
        frames = _frames(node.stack_trace)
        if self.program.outermost_first:
            frames.reverse()
        inside_torch = ""
        for text, code in frames:
            path = text.split('"')[1] if text.count('"') >= 2 else ""
            if path.startswith(_KILN_DIR):
                break   # kiln.torch's own frames: what follows is the caller's
            if path.startswith(_TORCH_DIR):
                inside_torch = inside_torch or _at(text, code)
                continue
            return _at(text, code)
        return inside_torch

    def meta(self, node):
        """Shape and element of node's result, or of its first result."""
        if isinstance(node.target, torch._ops.OpOverload) and \
                len(node.target._schema.returns) > 1:
            firsts = [u for u in node.users if u.target is operator.getitem and u.args[1] == 0]
            if not firsts:
                self.unsupported(node, f"{node.target} without its first result")
            node = firsts[0]
        return super().meta(node)

    def outputs(self, node):
        """node's value, written by a helper, as the first of its results
        (the others, statistics and indices, are not written)."""
        count = len(node.target._schema.returns)
        if count > 1:
            self.values[node] = (self.values[node],) + (None,) * (count - 1)

    def lower(self, node):
        if node.op == "get_attr":   # make_fx's tensor constants
            tensor = self.gm
            for part in node.target.split("."):
                tensor = getattr(tensor, part)
            self.known[node] = tensor
            return
        if node.op != "call_function":
            self.unsupported(node, node.op)
        target = node.target
        if target is operator.getitem:
            source, index = node.args
            if source in self.known:
                self.known[node] = self.known[source][index]
                return
            results = self.values[source]
            if not isinstance(results, tuple) or results[index] is None:
                self.unsupported(node, f"result {index} of {source.target}")
            self.values[node] = results[index]
            return
        if not isinstance(target, torch._ops.OpOverload):
            name = getattr(target, "__name__", str(target))
            self.unsupported(node, f"{getattr(target, '__module__', '') or ''}.{name}".lstrip("."))
        packet = target.overloadpacket.__name__
        if packet not in _NOT_FOLDED and all(n in self.known for n in node.all_input_nodes):
            known = lambda n: self.known[n]
            with torch.no_grad():
                self.known[node] = target(*torch.fx.node.map_arg(node.args, known),
                                          **torch.fx.node.map_arg(node.kwargs, known))
            return
        lowering = getattr(self, "aten_" + packet, None)
        if lowering is None:
            self.unsupported(node, str(target))
        lowering(node, self.bind(node))

    def bind(self, node):
        """node's arguments by their schema names, defaults filled in."""
        bound = {}
        for i, argument in enumerate(node.target._schema.arguments):
            if i < len(node.args) and not argument.kwarg_only:
                bound[argument.name] = node.args[i]
            elif argument.name in node.kwargs:
                bound[argument.name] = node.kwargs[argument.name]
            else:
                bound[argument.name] = argument.default_value
        return bound

    def overloads(self, node, *names):
        if node.target._overloadname not in names:
            self.unsupported(node, str(node.target))

    def scalar(self, arg):
        """arg as a Python number when it is a known 0-d tensor (a lifted
        or folded constant); else arg itself."""
        if isinstance(arg, torch.fx.Node) and isinstance(self.known.get(arg), torch.Tensor) \
                and self.known[arg].dim() == 0:
            return self.known[arg].item()
        return arg

    def operand(self, node, arg, element):
        """arg (a node) as element, cast when torch promoted it."""
        ssa, shape, have = self.value(node, arg)
        if have == element:
            return arg
        return _Value(self.cast(node, ssa, shape, have, element), shape, element)

    def cast(self, node, ssa, shape, source, target):
        """ssa (shape, element source) converted to element target, as
        torch's .to(dtype) (floats to integers truncate; to bool: != 0)."""
        if source == target:
            return ssa
        if source in ("f16", "bf16") and target in ("f16", "bf16"):
            ssa = self.cast(node, ssa, shape, source, "f32")
            self.elements[ssa] = "f32"
            source = "f32"
        s, t = source, target

        def body(a, o):
            v = a[0]
            if s in _FLOATS and t in _FLOATS:
                op = "arith.extf" if _WIDTH[t] > _WIDTH[s] else "arith.truncf"
                return [f"%r = {op} {v} : {s} to {t}", "%r"]
            if s in _FLOATS and t == "i1":
                return [f"%z = arith.constant 0.0 : {s}",
                        f"%r = arith.cmpf une, {v}, %z : {s}", "%r"]
            if s in _FLOATS:
                return [f"%r = arith.fptosi {v} : {s} to {t}", "%r"]
            if t in _FLOATS:
                op = "arith.uitofp" if s == "i1" else "arith.sitofp"
                return [f"%r = {op} {v} : {s} to {t}", "%r"]
            if t == "i1":
                return [f"%z = arith.constant 0 : {s}",
                        f"%r = arith.cmpi ne, {v}, %z : {s}", "%r"]
            op = ("arith.extui" if s == "i1" else "arith.extsi") if _WIDTH[t] > _WIDTH[s] \
                else "arith.trunci"
            return [f"%r = {op} {v} : {s} to {t}", "%r"]

        out = self.generic([(ssa, shape, [f"d{i}" for i in range(len(shape))])],
                           shape, target, body)
        self.elements[out] = target
        return out

    def elementwise(self, node, operands, element, body):
        """A broadcasting generic over node's shape: operands are nodes or
        Python numbers; body(names) -> lines ending with the result, names
        the operands' values in order (numbers as constants of element)."""
        out_shape, _ = self.meta(node)
        inputs, kinds = [], []
        for arg in operands:
            if isinstance(arg, (torch.fx.Node, _Value)):
                ssa, shape, have = self.value(node, arg)
                inputs.append((ssa, shape, self.broadcast_map(shape, out_shape)))
                kinds.append(("in", len(inputs) - 1, have))
            else:
                kinds.append(("const", arg, None))

        def generic_body(a, o):
            lines, names = [], []
            for i, (kind, v, have) in enumerate(kinds):
                if kind == "in":
                    names.append(a[v])
                else:
                    literal = str(int(bool(v))) if element == "i1" else \
                        _float_literal(v, element)
                    lines.append(f"%k{i} = arith.constant {literal} : {element}")
                    names.append(f"%k{i}")
            return lines + body(names)

        out = self.generic(inputs, out_shape, self.result_element(node), generic_body)
        self.set(node, out, out_shape, self.result_element(node))

    def result_element(self, node):
        return self.meta(node)[1]

    # --- ops -------------------------------------------------------------------
    # aten_<overload packet>(node, arguments by schema name).

    def identity(self, node, x):
        self.values[node] = self.values[x]

    def aten_clone(self, node, a):
        self.identity(node, a["self"])

    aten_alias = aten_detach = aten_lift_fresh = aten_lift_fresh_copy = aten_contiguous = \
        aten_clone

    def aten_dropout(self, node, a):
        if a["train"]:
            self.unsupported(node, f"{node.target} in training mode")
        self.identity(node, a["input"])

    def aten__to_copy(self, node, a):
        out_shape, element = self.meta(node)
        ssa, shape, have = self.value(node, a["self"])
        self.set(node, self.cast(node, ssa, shape, have, element), out_shape, element)

    def aten_view(self, node, a):
        self.reshape(node, a["self"])

    aten__unsafe_view = aten_reshape = aten__reshape_alias = aten_squeeze = aten_unsqueeze = \
        aten_flatten = aten_view_copy = aten_view

    def deferred_permute(self, node, x, perm):
        """A transpose written when first used: a weight's transpose that
        feeds mm / addmm only becomes the contraction's indexing."""
        self.transposed[node] = (x, list(perm))
        self.pending[node] = lambda: self.permuted(node, x, perm)

    def aten_t(self, node, a):
        rank = len(self.meta(node)[0])
        if rank < 2:
            return self.identity(node, a["self"])
        self.deferred_permute(node, a["self"], [1, 0])

    def aten_transpose(self, node, a):
        self.overloads(node, "int")
        rank = len(self.meta(node)[0])
        perm = list(range(rank))
        d0, d1 = a["dim0"] % rank, a["dim1"] % rank
        perm[d0], perm[d1] = perm[d1], perm[d0]
        self.deferred_permute(node, a["self"], perm)

    def aten_permute(self, node, a):
        rank = len(self.meta(node)[0])
        self.deferred_permute(node, a["self"], [d % rank for d in a["dims"]])

    def aten_expand(self, node, a):
        out_shape, element = self.meta(node)
        if tuple(self.value(node, a["self"])[1]) == out_shape:
            return self.identity(node, a["self"])
        self.elementwise(node, [a["self"]], element, lambda n: [n[0]])

    def matrix_product(self, node, x, w, bias=None):
        """x @ w (+ bias): with w a weight's transpose and bias one row,
        the linear layer the fx front end writes, on the weight itself."""
        if w in self.transposed and self.transposed[w][1] == [1, 0] and (
                bias is None or len(self.meta(bias)[0]) == 1):
            return self.linear(node, x, self.values[self.transposed[w][0]],
                               self.values[bias] if bias is not None else None)
        self.matmul(node, x, w)
        if bias is not None:
            self.binary(node, "add", node, bias)

    def aten_mm(self, node, a):
        self.matrix_product(node, a["self"], a["mat2"])

    def aten_addmm(self, node, a):
        if a["beta"] != 1 or a["alpha"] != 1:
            self.unsupported(node, f"{node.target} with beta or alpha other than 1")
        self.matrix_product(node, a["mat1"], a["mat2"], a["self"])

    def aten_bmm(self, node, a):
        self.matmul(node, a["self"], a["mat2"])

    def aten_matmul(self, node, a):
        self.matmul(node, a["self"], a["other"])

    def aten_linear(self, node, a):
        self.linear(node, a["input"], self.values[a["weight"]],
                    self.values[a["bias"]] if a["bias"] is not None else None)

    def aten_convolution(self, node, a):
        if a["transposed"] or len(self.value(node, a["input"])[1]) != 4:
            self.unsupported(node, f"{node.target} other than a 2-D, not transposed one")
        self.conv2d(node, a["input"], self.values[a["weight"]],
                    self.values[a["bias"]] if a["bias"] is not None else None,
                    _pair(a["stride"]), _pair(a["padding"]), _pair(a["dilation"]),
                    a["groups"])

    def aten_max_pool2d_with_indices(self, node, a):
        self.pool2d(node, a["self"], a["kernel_size"], a["stride"], a["padding"],
                    a["dilation"], a["ceil_mode"], True, str(node.target))
        self.outputs(node)

    aten_max_pool2d = aten_max_pool2d_with_indices

    def aten_avg_pool2d(self, node, a):
        if a["divisor_override"] is not None:
            self.unsupported(node, f"{node.target} with divisor_override")
        self.pool2d(node, a["self"], a["kernel_size"], a["stride"], a["padding"], 1,
                    a["ceil_mode"], False, str(node.target))

    def aten__adaptive_avg_pool2d(self, node, a):
        self.adaptive_avg_pool(node, a["self"], a["output_size"])

    aten_adaptive_avg_pool2d = aten__adaptive_avg_pool2d

    def aten_mean(self, node, a):
        self.overloads(node, "dim", "default")
        self.reduce(node, a["self"], a.get("dim") or None, True)

    def aten_sum(self, node, a):
        self.overloads(node, "dim_IntList", "default")
        self.reduce(node, a["self"], a.get("dim") or None, False)

    def aten_var(self, node, a):
        self.overloads(node, "correction")
        correction = 1 if a["correction"] is None else a["correction"]
        self.reduce(node, a["self"], a["dim"] or None, False, correction=correction)

    def batch_norm(self, node, a):
        """Evaluation batch norm from the running statistics: the
        per-channel scale and shift computed in the program, then the fx
        front end's x * scale + shift."""
        if a.get("training") or a["running_mean"] is None:
            self.unsupported(node, f"{node.target} in training mode or without running "
                             "statistics")
        _, element = self.meta(node)
        mean, var = self.values[a["running_mean"]], self.values[a["running_var"]]
        channels = mean[1]
        weight = self.values[a["weight"]] if a["weight"] is not None else None
        bias = self.values[a["bias"]] if a["bias"] is not None else None
        t, eps = element, _float_literal(a["eps"], element)
        inputs = [(var[0], channels, ["d0"])] + ([(weight[0], channels, ["d0"])] if weight else [])
        scale = self.generic(inputs, channels, t, lambda v, o: [
            f"%e = arith.constant {eps} : {t}", f"%s = arith.addf {v[0]}, %e : {t}",
            f"%r = math.rsqrt %s : {t}"] + (
            [f"%w = arith.mulf %r, {v[1]} : {t}", "%w"] if weight else ["%r"]))
        inputs = [(mean[0], channels, ["d0"]), (scale, channels, ["d0"])] + (
            [(bias[0], channels, ["d0"])] if bias else [])
        shift = self.generic(inputs, channels, t, lambda v, o: [
            f"%m = arith.mulf {v[0]}, {v[1]} : {t}"] + (
            [f"%r = arith.subf {v[2]}, %m : {t}", "%r"] if bias else
            [f"%r = arith.negf %m : {t}", "%r"]))
        self.channel_affine(node, a["input"], (scale, channels, t), (shift, channels, t))
        self.outputs(node)

    aten__native_batch_norm_legit_no_training = aten__native_batch_norm_legit = \
        aten_native_batch_norm = aten_batch_norm = batch_norm

    def aten_native_layer_norm(self, node, a):
        self.layer_norm(node, a["input"], tuple(a["normalized_shape"]),
                        self.values[a["weight"]] if a["weight"] is not None else None,
                        self.values[a["bias"]] if a["bias"] is not None else None, a["eps"])
        self.outputs(node)

    aten_layer_norm = aten_native_layer_norm

    def aten__softmax(self, node, a):
        self.softmax(node, a["self"], a["dim"], log=False)

    def aten__log_softmax(self, node, a):
        self.softmax(node, a["self"], a["dim"], log=True)

    aten_softmax, aten_log_softmax = aten__softmax, aten__log_softmax

    def aten_relu(self, node, a):
        self.unary(node, a["self"], node.target.overloadpacket.__name__)

    aten_sigmoid = aten_tanh = aten_exp = aten_log = aten_sqrt = aten_rsqrt = aten_abs = \
        aten_neg = aten_silu = aten_relu

    def aten_gelu(self, node, a):
        self.unary(node, a["self"], "gelu_tanh" if a["approximate"] == "tanh" else "gelu")

    def aten_pow(self, node, a):
        self.overloads(node, "Tensor_Scalar")
        self.power(node, a["self"], a["exponent"])

    def arithmetic(self, node, a):
        kind = node.target.overloadpacket.__name__
        self.overloads(node, "Tensor", "Scalar")
        _, element = self.meta(node)
        x, y = (self.scalar(a[n]) for n in ("self", "other"))
        x, y = [self.operand(node, v, element) if isinstance(v, torch.fx.Node) else v
                for v in (x, y)]
        if kind == "rsub":
            return self.binary(node, "sub", y, x, alpha=a.get("alpha", 1))
        self.binary(node, kind, x, y, alpha=a.get("alpha", 1))

    aten_add = aten_sub = aten_mul = aten_div = aten_rsub = arithmetic

    def aten_embedding(self, node, a):
        self.embedding(node, a["indices"], self.values[a["weight"]])

    def aten_cat(self, node, a):
        self.cat(node, a["tensors"], a["dim"])

    def aten_slice(self, node, a):
        self.overloads(node, "Tensor")
        rank = len(self.value(node, a["self"])[1])
        index = (slice(None),) * (a["dim"] % rank) + (
            slice(a["start"], a["end"], a["step"]),)
        self.getitem(node, a["self"], index)

    def aten_select(self, node, a):
        self.overloads(node, "int")
        rank = len(self.value(node, a["self"])[1])
        self.getitem(node, a["self"], (slice(None),) * (a["dim"] % rank) + (a["index"],))

    def aten_scaled_dot_product_attention(self, node, a):
        if a.get("enable_gqa"):
            self.unsupported(node, f"{node.target} with enable_gqa")
        self.attention(node, {n: a.get(n) for n in ("query", "key", "value", "attn_mask",
                                                    "dropout_p", "is_causal", "scale")})
        self.outputs(node)

    aten__scaled_dot_product_flash_attention_for_cpu = aten_scaled_dot_product_attention

    def aten_where(self, node, a):
        self.overloads(node, "self")
        element = self.result_element(node)
        self.elementwise(node, [a["condition"], self.scalar(a["self"]),
                                self.scalar(a["other"])], element,
                         lambda n: [f"%r = arith.select {n[0]}, {n[1]}, {n[2]} : {element}",
                                    "%r"])

    def aten_masked_fill(self, node, a):
        element = self.result_element(node)
        self.float_only(node, element)
        self.elementwise(node, [a["mask"], self.scalar(a["value"]), a["self"]], element,
                         lambda n: [f"%r = arith.select {n[0]}, {n[1]}, {n[2]} : {element}",
                                    "%r"])

    def clamp(self, node, x, low, high):
        element = self.result_element(node)
        self.float_only(node, element)
        bounds = [v for v in (low, high) if v is not None]

        def body(n):
            lines, v = [], n[0]
            if low is not None:
                lines.append(f"%lo = arith.maximumf {v}, {n[1]} : {element}")
                v = "%lo"
            if high is not None:
                lines.append(f"%hi = arith.minimumf {v}, {n[-1]} : {element}")
                v = "%hi"
            return lines + [v]

        self.elementwise(node, [x] + bounds, element, body)

    def aten_clamp(self, node, a):
        self.overloads(node, "default")
        self.clamp(node, a["self"], a["min"], a["max"])

    def aten_hardtanh(self, node, a):
        self.clamp(node, a["self"], a["min_val"], a["max_val"])

    def aten_leaky_relu(self, node, a):
        element = self.result_element(node)
        self.float_only(node, element)
        self.elementwise(node, [a["self"], 0.0, a["negative_slope"]], element, lambda n: [
            f"%p = arith.cmpf ogt, {n[0]}, {n[1]} : {element}",
            f"%s = arith.mulf {n[0]}, {n[2]} : {element}",
            f"%r = arith.select %p, {n[0]}, %s : {element}", "%r"])

    def comparison(self, node, a):
        predicate = {"gt": "ogt", "lt": "olt", "ge": "oge", "le": "ole", "eq": "oeq",
                     "ne": "une"}[node.target.overloadpacket.__name__]
        self.overloads(node, "Tensor", "Scalar")
        x, y = a["self"], self.scalar(a["other"])
        element = self.value(node, x)[2]
        self.float_only(node, element)
        if isinstance(y, torch.fx.Node) and self.value(node, y)[2] != element:
            self.unsupported(node, f"{node.target} of {element} and "
                             f"{self.value(node, y)[2]} tensors")
        self.elementwise(node, [x, y], element, lambda n: [
            f"%r = arith.cmpf {predicate}, {n[0]}, {n[1]} : {element}", "%r"])

    aten_gt = aten_lt = aten_ge = aten_le = aten_eq = aten_ne = comparison

    def aten_bitwise_not(self, node, a):
        if self.value(node, a["self"])[2] != "i1":
            self.unsupported(node, f"{node.target} of a tensor other than bool")
        self.elementwise(node, [a["self"], True], "i1",
                         lambda n: [f"%r = arith.xori {n[0]}, {n[1]} : i1", "%r"])

    aten_logical_not = aten_bitwise_not

