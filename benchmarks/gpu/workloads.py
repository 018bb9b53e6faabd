"""The GPU suite's workloads: each one's MLIR program, input and output
shapes, flop and byte counts, random inputs and a numpy float64 reference.

Imported by suite.py on the build machine (to write and compile the
programs) and on the GPU machine (to make the inputs); needs numpy only, so
it runs with Debian's numpy 1.24 and with numpy 2.x.

A workload is a dict, stored as such in the pack's manifest.json:
  name      file stem and --only key, e.g. "matmul_f16_4096"
  label     what the table shows, e.g. "matmul f16 4096^3"
  kind      which peer implementation and reference (peers.py, REFERENCES)
  params    the kind's shape parameters
  dtype     element type that sets the tolerance and the peak (f16, bf16, f32)
  inputs    [{"name", "shape", "dtype", "init", "scale"}], in argument order;
            init "normal" (standard normal * scale) or "uniform" ([0, scale))
  output    {"shape", "dtype"}
  flops     floating-point operations of one call (2*M*N*K per matmul)
  bytes     inputs read once + output written once
  bound     "compute", "memory" or "latency": which peak the row is held to
"""

import math
import re
import time

import numpy as np

# Relative L2 error allowed against the reference, per output element type.
# Integer results must be exact.
TOLERANCE = {"f32": 1e-4, "f16": 2e-2, "bf16": 2e-2, "i32": 0.0}
ITEM_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i8": 1, "i32": 4}
GELU_C = math.sqrt(2.0 / math.pi)
LAYERNORM_EPS = 1e-5
CHAIN_LAYERS = 50


# --- Element types and .npy files -------------------------------------------
# kiln-run reads and writes bf16 as the 2-byte void type (runtime/src/
# tooling/npy.cc accepts '<V2' and '|V2'); here a bf16 array is held as its
# uint16 bit patterns.

# Seconds of untimed calls before timing, for Kiln (kiln-benchmark
# --warmup-ms) and the peers (warm_up) alike: the GPU's clocks ramp up
# after idling, and short calls were measured up to 2.4x slower over their
# first few milliseconds.
WARMUP_S = 0.02


def warm_up(call):
    """Calls call() untimed for WARMUP_S, at least 3 times."""
    start, calls = time.perf_counter(), 0
    while calls < 3 or time.perf_counter() - start < WARMUP_S:
        call()
        calls += 1


def f32_to_bf16_bits(x):
    """Round-to-nearest-even f32 -> bf16 bit patterns (uint16)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))
    return (rounded >> np.uint32(16)).astype(np.uint16)


def bf16_bits_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32)
            << np.uint32(16)).view(np.float32)


def from_f32(x, dtype):
    """The stored form of f32 values x as dtype (uint16 bits for bf16)."""
    if dtype == "f32":
        return np.ascontiguousarray(x, dtype=np.float32)
    if dtype == "f16":
        return np.ascontiguousarray(x, dtype=np.float16)
    if dtype == "bf16":
        return f32_to_bf16_bits(x)
    raise ValueError(f"unsupported element type '{dtype}'")


def as_float(stored, dtype):
    """A stored array as f32 (f16/bf16 widened exactly); integers as f64,
    exact for the i32 results of the i8 matmuls."""
    if dtype == "bf16":
        return bf16_bits_to_f32(stored)
    if dtype in ("i8", "i32"):
        return np.asarray(stored, dtype=np.float64)
    return np.asarray(stored, dtype=np.float32)


def save_npy(path, stored, dtype):
    if dtype == "bf16":
        stored = np.ascontiguousarray(stored, dtype=np.uint16).view(np.dtype("V2"))
    np.save(path, stored, allow_pickle=False)


def load_npy(path, dtype):
    """An .npy file kiln-run wrote, in stored form."""
    array = np.load(path, allow_pickle=False)
    if dtype == "bf16":
        if array.dtype.itemsize != 2:
            raise ValueError(f"{path}: expected 2-byte bf16 data, found "
                             f"dtype {array.dtype}")
        return array.view(np.uint16)
    return array


def make_inputs(workload, seed):
    """Fresh random inputs of a workload, in stored form (never zeros)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in workload["inputs"]:
        shape = tuple(spec["shape"])
        if spec["dtype"] == "i8":
            # The whole signed range.
            arrays.append(rng.integers(-128, 128, size=shape).astype(np.int8))
            continue
        if spec["init"] == "normal":
            x = rng.standard_normal(shape, dtype=np.float32)
        elif spec["init"] == "uniform":
            x = rng.random(shape, dtype=np.float32)
        else:
            raise ValueError(f"unknown init '{spec['init']}'")
        if spec["scale"] != 1.0:
            x *= np.float32(spec["scale"])
        arrays.append(from_f32(x, spec["dtype"]))
    return arrays


def rel_l2_error(out, ref):
    """||out - ref|| / ||ref|| in float64; inf when out has NaN or inf."""
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if out.shape != ref.shape:
        raise ValueError(f"output shape {out.shape} != reference {ref.shape}")
    if not np.all(np.isfinite(out)):
        return float("inf")
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


# --- MLIR text ---------------------------------------------------------------

def f32(x):
    """An MLIR float literal (always with a mantissa point and exponent)."""
    return f"{float(x):.9e}"


def tensor(shape, dtype):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


def identity_map(rank):
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({dims})>"


def row_map(rank):
    """(d0, .., dn) -> (d0, .., dn-1): broadcasts a per-row value."""
    dims = [f"d{i}" for i in range(rank)]
    return f"affine_map<({', '.join(dims)}) -> ({', '.join(dims[:-1])})>"


def iterators(*kinds):
    return "[" + ", ".join(f'"{k}"' for k in kinds) + "]"


def generic(result, ins, in_types, out, out_type, maps, iter_types, args,
            body, result_type=None):
    """A linalg.generic; body is the list of lines before linalg.yield,
    whose value is the last line's result name or given in body[-1]."""
    # Region values get the result's name as suffix (%v.h): MLIR forbids
    # reusing a name that an enclosing region defines.
    tag = result[1:]
    local = set(re.findall(r"%([\w$-]+):", args))
    local |= {m.group(1) for line in body
              for m in [re.match(r"\s*%([\w$-]+) =", line)] if m}
    rename = lambda text: re.sub(
        r"%([\w$.-]+)", lambda m: f"%{m.group(1)}.{tag}"
        if m.group(1) in local else m.group(0), text)
    args, body = rename(args), [rename(line) for line in body]
    ins_text = ", ".join(ins)
    types_text = ", ".join(in_types)
    lines = [
        f"  {result} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = {iter_types}}}",
        f"      ins({ins_text} : {types_text}) outs({out} : {out_type}) {{",
        f"  ^bb0({args}):",
    ]
    lines += ["    " + line for line in body]
    lines.append(f"  }} -> {result_type or out_type}")
    return lines


def truncate_lines(result, source, shape, to_dtype):
    """result = truncf(source f32) as to_dtype, elementwise."""
    rank = len(shape)
    out_t = tensor(shape, to_dtype)
    return [f"  %e_{result[1:]} = tensor.empty() : {out_t}"] + generic(
        result, [source], [tensor(shape, "f32")], f"%e_{result[1:]}", out_t,
        [identity_map(rank)] * 2, iterators(*["parallel"] * rank),
        f"%x: f32, %o: {to_dtype}",
        [f"%t = arith.truncf %x : f32 to {to_dtype}",
         f"linalg.yield %t : {to_dtype}"])


def gelu_tanh_lines(x):
    """Body lines computing %gelu = 0.5*x*(1+tanh(c*(x+0.044715*x^3))) in f32."""
    return [
        f"%c_half = arith.constant 0.5 : f32",
        f"%c_one = arith.constant 1.0 : f32",
        f"%c_k = arith.constant 0.044715 : f32",
        f"%c_s = arith.constant {f32(GELU_C)} : f32",
        f"%g_x2 = arith.mulf {x}, {x} : f32",
        f"%g_x3 = arith.mulf %g_x2, {x} : f32",
        f"%g_kx3 = arith.mulf %g_x3, %c_k : f32",
        f"%g_in = arith.addf {x}, %g_kx3 : f32",
        f"%g_arg = arith.mulf %g_in, %c_s : f32",
        f"%g_t = math.tanh %g_arg : f32",
        f"%g_1t = arith.addf %g_t, %c_one : f32",
        f"%g_hx = arith.mulf {x}, %c_half : f32",
        f"%gelu = arith.mulf %g_hx, %g_1t : f32",
    ]


def matmul_lines(result, a, b, m, k, n, dtype, batch=None, transpose_b=False):
    """result (f32 MxN, or BxMxN) = a @ b with an f32 accumulator; a and b
    are dtype (f16/bf16/f32, or [a's, b's]). transpose_b reads b as NxK (a
    linalg.generic contraction, which Kiln classifies as a matmul too)."""
    a_dtype, b_dtype = dtype if isinstance(dtype, list) else (dtype, dtype)
    lead = [batch] if batch else []
    out_t = tensor(lead + [m, n], "f32")
    a_t = tensor(lead + [m, k], a_dtype)
    b_t = tensor(lead + ([n, k] if transpose_b else [k, n]), b_dtype)
    tag = result[1:]
    lines = [f"  %e_{tag} = tensor.empty() : {out_t}",
             f"  %f_{tag} = linalg.fill ins(%zero : f32) outs(%e_{tag} : {out_t}) -> {out_t}"]
    if not transpose_b:
        op = "linalg.batch_matmul" if batch else "linalg.matmul"
        lines.append(f"  {result} = {op} ins({a}, {b} : {a_t}, {b_t}) "
                     f"outs(%f_{tag} : {out_t}) -> {out_t}")
        return lines
    # (b, m, n, k): out[b,m,n] += a[b,m,k] * b[b,n,k]
    prefix = "d0, " if batch else ""
    off = 1 if batch else 0
    dm, dn, dk = (f"d{off}", f"d{off + 1}", f"d{off + 2}")
    dims = f"({prefix}{dm}, {dn}, {dk})"
    maps = [f"affine_map<{dims} -> ({prefix}{dm}, {dk})>",
            f"affine_map<{dims} -> ({prefix}{dn}, {dk})>",
            f"affine_map<{dims} -> ({prefix}{dm}, {dn})>"]
    iters = ["parallel"] * (off + 2) + ["reduction"]
    body = []
    operands = []
    for name, operand_dtype in (("x", a_dtype), ("y", b_dtype)):
        if operand_dtype == "f32":
            operands.append(f"%{name}")
        else:
            body.append(f"%{name}f = arith.extf %{name} : {operand_dtype} to f32")
            operands.append(f"%{name}f")
    body += [f"%p = arith.mulf {operands[0]}, {operands[1]} : f32",
             "%s = arith.addf %acc, %p : f32", "linalg.yield %s : f32"]
    lines += generic(result, [a, b], [a_t, b_t], f"%f_{tag}", out_t, maps,
                     iterators(*iters), f"%x: {a_dtype}, %y: {b_dtype}, %acc: f32",
                     body)
    return lines


def function(args, result_type, body, result):
    arg_text = ", ".join(f"%{name}: {t}" for name, t in args)
    return "\n".join(
        [f"func.func @main({arg_text}) -> {result_type} {{",
         "  %zero = arith.constant 0.0 : f32"] + body +
        [f"  return {result} : {result_type}", "}", ""])


def matmul_i8_program(w):
    """i8 x i8 -> i32 (signed), exact."""
    p = w["params"]
    m, k, n = p["m"], p["k"], p["n"]
    a, b, c = tensor([m, k], "i8"), tensor([k, n], "i8"), tensor([m, n], "i32")
    return "\n".join([
        f"func.func @main(%a: {a}, %b: {b}) -> {c} {{",
        "  %zero = arith.constant 0 : i32",
        f"  %e = tensor.empty() : {c}",
        f"  %f = linalg.fill ins(%zero : i32) outs(%e : {c}) -> {c}",
        f"  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs(%f : {c}) -> {c}",
        f"  return %r : {c}", "}", ""])


def matmul_program(w):
    p, dt = w["params"], w["dtype"]
    if dt == "i8":
        return matmul_i8_program(w)
    m, k, n, batch = p["m"], p["k"], p["n"], p.get("batch")
    lead = [batch] if batch else []
    args = [("a", tensor(lead + [m, k], dt)), ("b", tensor(lead + [k, n], dt))]
    body = matmul_lines("%acc", "%a", "%b", m, k, n, dt, batch=batch)
    if dt == "f32":
        return function(args, tensor(lead + [m, n], dt), body, "%acc")
    body += truncate_lines("%r", "%acc", lead + [m, n], dt)
    return function(args, tensor(lead + [m, n], dt), body, "%r")


def mlp_program(w):
    """y = gelu_tanh(x @ w1) @ w2: f32 accumulators, GELU on the f32
    accumulator, the hidden activation and the result rounded to f16."""
    p, dt = w["params"], w["dtype"]
    t, d, h = p["tokens"], p["dim"], p["hidden"]
    args = [("x", tensor([t, d], dt)), ("w1", tensor([d, h], dt)),
            ("w2", tensor([h, d], dt))]
    body = matmul_lines("%h32", "%x", "%w1", t, d, h, dt)
    body.append(f"  %e_h = tensor.empty() : {tensor([t, h], dt)}")
    body += generic("%h", ["%h32"], [tensor([t, h], "f32")], "%e_h",
                    tensor([t, h], dt), [identity_map(2)] * 2,
                    iterators("parallel", "parallel"), f"%v: f32, %o: {dt}",
                    gelu_tanh_lines("%v") +
                    [f"%t = arith.truncf %gelu : f32 to {dt}",
                     f"linalg.yield %t : {dt}"])
    body += matmul_lines("%y32", "%h", "%w2", t, h, d, dt)
    body += truncate_lines("%y", "%y32", [t, d], dt)
    return function(args, tensor([t, d], dt), body, "%y")


def softmax_program(w):
    """linalg.softmax over rows; f16 rows are widened to f32 first and the
    result rounded back once (as torch computes f16 softmax), which row
    fusion keeps in the one kernel."""
    shape = [w["params"]["rows"], w["params"]["cols"]]
    dt = w["dtype"]
    t, tf = tensor(shape, dt), tensor(shape, "f32")
    if dt == "f32":
        body = [f"  %e = tensor.empty() : {t}",
                f"  %r = linalg.softmax dimension(1) ins(%x : {t}) outs(%e : {t}) -> {t}"]
        return function([("x", t)], t, body, "%r")
    ident = "affine_map<(i, j) -> (i, j)>"
    body = [f"  %ew = tensor.empty() : {tf}",
            f"  %w = linalg.generic {{indexing_maps = [{ident}, {ident}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%x : {t}) outs(%ew : {tf}) {{",
            f"  ^bb0(%a: {dt}, %o: f32):",
            f"    %v = arith.extf %a : {dt} to f32",
            "    linalg.yield %v : f32",
            f"  }} -> {tf}",
            f"  %es = tensor.empty() : {tf}",
            f"  %s = linalg.softmax dimension(1) ins(%w : {tf}) outs(%es : {tf}) -> {tf}",
            f"  %er = tensor.empty() : {t}",
            f"  %r = linalg.generic {{indexing_maps = [{ident}, {ident}], "
            f"iterator_types = [\"parallel\", \"parallel\"]}} ins(%s : {tf}) outs(%er : {t}) {{",
            f"  ^bb0(%a: f32, %o: {dt}):",
            f"    %v = arith.truncf %a : f32 to {dt}",
            f"    linalg.yield %v : {dt}",
            f"  }} -> {t}"]
    return function([("x", t)], t, body, "%r")


def row_sum_lines(result, source, shape, square_of_centered=None):
    """result[rows] = sum over the last dim of source (or, given a per-row
    mean tensor, of (source - mean)^2)."""
    rows_t = tensor(shape[:-1], "f32")
    tag = result[1:]
    lines = [f"  %e_{tag} = tensor.empty() : {rows_t}",
             f"  %f_{tag} = linalg.fill ins(%zero : f32) outs(%e_{tag} : {rows_t}) -> {rows_t}"]
    rank = len(shape)
    iters = iterators(*(["parallel"] * (rank - 1) + ["reduction"]))
    if square_of_centered is None:
        lines += generic(result, [source], [tensor(shape, "f32")], f"%f_{tag}",
                         rows_t, [identity_map(rank), row_map(rank)], iters,
                         "%v: f32, %acc: f32",
                         ["%s = arith.addf %v, %acc : f32", "linalg.yield %s : f32"])
    else:
        lines += generic(result, [source, square_of_centered],
                         [tensor(shape, "f32"), rows_t], f"%f_{tag}", rows_t,
                         [identity_map(rank), row_map(rank), row_map(rank)], iters,
                         "%v: f32, %m: f32, %acc: f32",
                         ["%c = arith.subf %v, %m : f32",
                          "%c2 = arith.mulf %c, %c : f32",
                          "%s = arith.addf %c2, %acc : f32", "linalg.yield %s : f32"])
    return lines


def layernorm_program(w):
    """y = (x - mean) / sqrt(var + eps) * gamma + beta over rows, two passes
    (mean, then the centered variance), all f32."""
    rows, cols = w["params"]["rows"], w["params"]["cols"]
    shape = [rows, cols]
    t, r_t, c_t = tensor(shape, "f32"), tensor([rows], "f32"), tensor([cols], "f32")
    col_map = "affine_map<(d0, d1) -> (d1)>"
    inv_n = f32(1.0 / cols)
    body = row_sum_lines("%sum", "%x", shape)
    body.append(f"  %e_mean = tensor.empty() : {r_t}")
    body += generic("%mean", ["%sum"], [r_t], "%e_mean", r_t,
                    [identity_map(1)] * 2, iterators("parallel"), "%s: f32, %o: f32",
                    [f"%n = arith.constant {inv_n} : f32",
                     "%m = arith.mulf %s, %n : f32", "linalg.yield %m : f32"])
    body += row_sum_lines("%ssq", "%x", shape, square_of_centered="%mean")
    body.append(f"  %e_rstd = tensor.empty() : {r_t}")
    body += generic("%rstd", ["%ssq"], [r_t], "%e_rstd", r_t,
                    [identity_map(1)] * 2, iterators("parallel"), "%s: f32, %o: f32",
                    [f"%n = arith.constant {inv_n} : f32",
                     f"%eps = arith.constant {f32(LAYERNORM_EPS)} : f32",
                     "%one = arith.constant 1.0 : f32",
                     "%var = arith.mulf %s, %n : f32",
                     "%ve = arith.addf %var, %eps : f32",
                     "%sd = math.sqrt %ve : f32",
                     "%r = arith.divf %one, %sd : f32", "linalg.yield %r : f32"])
    body.append(f"  %e_y = tensor.empty() : {t}")
    body += generic("%y", ["%x", "%mean", "%rstd", "%gamma", "%beta"],
                    [t, r_t, r_t, c_t, c_t], "%e_y", t,
                    [identity_map(2), row_map(2), row_map(2), col_map, col_map,
                     identity_map(2)], iterators("parallel", "parallel"),
                    "%v: f32, %m: f32, %rs: f32, %g: f32, %b: f32, %o: f32",
                    ["%c = arith.subf %v, %m : f32", "%n = arith.mulf %c, %rs : f32",
                     "%s = arith.mulf %n, %g : f32", "%r = arith.addf %s, %b : f32",
                     "linalg.yield %r : f32"])
    return function([("x", t), ("gamma", c_t), ("beta", c_t)], t, body, "%y")


def sum_program(w, dim):
    """x[rows, cols] summed over `dim` (1: row sums, 0: column sums)."""
    rows, cols = w["params"]["rows"], w["params"]["cols"]
    t, r_t = tensor([rows, cols], "f32"), tensor([[rows, cols][1 - dim]], "f32")
    body = [f"  %e = tensor.empty() : {r_t}",
            f"  %f = linalg.fill ins(%zero : f32) outs(%e : {r_t}) -> {r_t}",
            f"  %r = linalg.reduce ins(%x : {t}) outs(%f : {r_t}) dimensions = [{dim}]",
            "    (%v: f32, %acc: f32) {",
            "      %s = arith.addf %v, %acc : f32",
            "      linalg.yield %s : f32",
            "    }"]
    return function([("x", t)], r_t, body, "%r")


def rowsum_program(w):
    return sum_program(w, 1)


def colsum_program(w):
    return sum_program(w, 0)


def elementwise_program(w, body_lines):
    n = w["params"]["n"]
    t = tensor([n], "f32")
    body = [f"  %e = tensor.empty() : {t}"]
    body += generic("%r", ["%x"], [t], "%e", t, [identity_map(1)] * 2,
                    iterators("parallel"), "%v: f32, %o: f32", body_lines)
    return function([("x", t)], t, body, "%r")


def scale2_program(w):
    return elementwise_program(w, ["%two = arith.constant 2.0 : f32",
                                   "%y = arith.mulf %v, %two : f32",
                                   "linalg.yield %y : f32"])


def gelu_program(w):
    a, b = w["params"]["a"], w["params"]["b"]
    return elementwise_program(w, [f"%a = arith.constant {f32(a)} : f32",
                                   f"%b = arith.constant {f32(b)} : f32",
                                   "%ax = arith.mulf %v, %a : f32",
                                   "%z = arith.addf %ax, %b : f32"] +
                               gelu_tanh_lines("%z") + ["linalg.yield %gelu : f32"])


def attention_program(w):
    """o = softmax(q k^T / sqrt(d)) v per batch*head: q k^T as a contraction
    over k's last dim (f32 accumulator), softmax in f32 (row max, exp,
    row sum), the unnormalized probabilities rounded to f16 for p @ v (f32
    accumulator), then divided by the row sum and rounded to f16 (the
    order flash attention uses).

    p_dtype "f32" (decode rows) keeps the probabilities f32 in p @ v: with
    the rounding to f16 fused into the p @ v kernel, Kiln stages a
    workgroup's whole 8x1x4096 f16 probability tile in shared memory (64
    KiB, above the 48 KiB limit) and refuses the kernel."""
    p, dt = w["params"], w["dtype"]
    b, sq, sk, d = p["batch"], p["q_len"], p["kv_len"], p["head_dim"]
    s_shape = [b, sq, sk]
    s_t, r_t = tensor(s_shape, "f32"), tensor([b, sq], "f32")
    args = [("q", tensor([b, sq, d], dt)), ("k", tensor([b, sk, d], dt)),
            ("v", tensor([b, sk, d], dt))]
    body = matmul_lines("%s", "%q", "%k", sq, d, sk, dt, batch=b, transpose_b=True)
    body += [f"  %ninf = arith.constant 0xFF800000 : f32",
             f"  %e_mx = tensor.empty() : {r_t}",
             f"  %f_mx = linalg.fill ins(%ninf : f32) outs(%e_mx : {r_t}) -> {r_t}"]
    body += generic("%mx", ["%s"], [s_t], "%f_mx", r_t, [identity_map(3), row_map(3)],
                    iterators("parallel", "parallel", "reduction"), "%v: f32, %acc: f32",
                    ["%m = arith.maximumf %v, %acc : f32", "linalg.yield %m : f32"])
    scale = f32(1.0 / math.sqrt(d))
    body.append(f"  %e_p = tensor.empty() : {tensor(s_shape, 'f32')}")
    body += generic("%p", ["%s", "%mx"], [s_t, r_t], "%e_p", s_t,
                    [identity_map(3), row_map(3), identity_map(3)],
                    iterators("parallel", "parallel", "parallel"),
                    "%v: f32, %m: f32, %o: f32",
                    [f"%sc = arith.constant {scale} : f32",
                     "%c = arith.subf %v, %m : f32", "%z = arith.mulf %c, %sc : f32",
                     "%x = math.exp %z : f32", "linalg.yield %x : f32"])
    body += row_sum_lines("%l", "%p", s_shape)
    if p["p_dtype"] == "f32":
        body += matmul_lines("%o32", "%p", "%v", sq, sk, d, ["f32", dt], batch=b)
    else:
        body += truncate_lines("%p16", "%p", s_shape, dt)
        body += matmul_lines("%o32", "%p16", "%v", sq, sk, d, dt, batch=b)
    o_t = tensor([b, sq, d], dt)
    body.append(f"  %e_o = tensor.empty() : {o_t}")
    body += generic("%o", ["%o32", "%l"], [tensor([b, sq, d], "f32"), r_t], "%e_o",
                    o_t, [identity_map(3), row_map(3), identity_map(3)],
                    iterators("parallel", "parallel", "parallel"),
                    f"%v: f32, %l: f32, %out: {dt}",
                    ["%n = arith.divf %v, %l : f32", f"%t = arith.truncf %n : f32 to {dt}",
                     f"linalg.yield %t : {dt}"])
    return function(args, o_t, body, "%o")


def conv_program(w):
    """A 3x3 'valid' f16 NHWC convolution with an f16 result, as torch runs
    it (dispatch creation makes it im2col + a matmul with an f32 accumulator
    on the contraction recipe, rounded once in its epilogue)."""
    p, dt = w["params"], w["dtype"]
    n, h, wd, c, f, k = p["n"], p["h"], p["w"], p["c"], p["f"], p["k"]
    oh, ow = h - k + 1, wd - k + 1
    args = [("x", tensor([n, h, wd, c], dt)), ("w", tensor([k, k, c, f], dt))]
    out = tensor([n, oh, ow, f], dt)
    body = [f"  %zero16 = arith.constant 0.0 : {dt}",
            f"  %e = tensor.empty() : {out}",
            f"  %acc0 = linalg.fill ins(%zero16 : {dt}) outs(%e : {out}) -> {out}",
            "  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, "
            "strides = dense<1> : tensor<2xi64>} "
            f"ins(%x, %w : {tensor([n, h, wd, c], dt)}, {tensor([k, k, c, f], dt)}) "
            f"outs(%acc0 : {out}) -> {out}"]
    return function(args, out, body, "%r")


def chain_program(w):
    import gen_chain  # benchmarks/gpu/gen_chain.py, next to this file
    return gen_chain.chain_mlir(w["params"]["layers"]) + "\n"


PROGRAMS = {
    "matmul": matmul_program, "mlp": mlp_program, "softmax": softmax_program,
    "layernorm": layernorm_program, "rowsum": rowsum_program,
    "colsum": colsum_program,
    "scale2": scale2_program, "gelu": gelu_program,
    "attention": attention_program, "chain": chain_program,
    "conv": conv_program,
}


def program(workload):
    return PROGRAMS[workload["kind"]](workload)


# --- numpy float64 references (run-local) ------------------------------------

def np_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x ** 3)))


def np_attention(q, k, v):
    s = np.einsum("bqd,bkd->bqk", q, k) / math.sqrt(q.shape[-1])
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("bqk,bkd->bqd", p / p.sum(axis=-1, keepdims=True), v)


def np_layernorm(x, gamma, beta):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYERNORM_EPS) * gamma + beta


def np_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_conv(x, w):
    """'valid' NHWC x HWCF convolution, stride 1."""
    k = w.shape[0]
    n, h, wd, _ = x.shape
    out = np.zeros((n, h - k + 1, wd - k + 1, w.shape[3]))
    for i in range(k):
        for j in range(k):
            out += np.einsum("nhwc,cf->nhwf",
                             x[:, i:i + h - k + 1, j:j + wd - k + 1, :], w[i, j])
    return out


def np_chain(x, w, layers):
    for _ in range(layers):
        x = np.maximum(x @ w, 0.0)
    return x


def reference(workload, inputs):
    """float64 result of the workload on stored inputs."""
    xs = [as_float(a, spec["dtype"]).astype(np.float64)
          for a, spec in zip(inputs, workload["inputs"])]
    kind, p = workload["kind"], workload["params"]
    if kind == "matmul":
        return xs[0] @ xs[1]
    if kind == "mlp":
        return np_gelu(xs[0] @ xs[1]) @ xs[2]
    if kind == "softmax":
        return np_softmax(xs[0])
    if kind == "layernorm":
        return np_layernorm(*xs)
    if kind == "rowsum":
        return xs[0].sum(axis=1)
    if kind == "colsum":
        return xs[0].sum(axis=0)
    if kind == "scale2":
        return xs[0] * 2.0
    if kind == "gelu":
        return np_gelu(xs[0] * p["a"] + p["b"])
    if kind == "attention":
        return np_attention(*xs)
    if kind == "chain":
        return np_chain(xs[0], xs[1], p["layers"])
    if kind == "conv":
        return np_conv(*xs)
    raise ValueError(f"no reference for kind '{kind}'")


# --- The workload list ---------------------------------------------------------

def _input(name, shape, dtype, init="normal", scale=1.0):
    return {"name": name, "shape": list(shape), "dtype": dtype, "init": init,
            "scale": scale}


def _workload(name, label, kind, params, dtype, inputs, out_shape, flops, bound):
    out_dtype = "i32" if dtype == "i8" else dtype
    nbytes = sum(math.prod(i["shape"]) * ITEM_BYTES[i["dtype"]] for i in inputs)
    nbytes += math.prod(out_shape) * ITEM_BYTES[out_dtype]
    return {"name": name, "label": label, "kind": kind, "params": params,
            "dtype": dtype, "inputs": inputs,
            "output": {"shape": list(out_shape), "dtype": out_dtype},
            "flops": float(flops), "bytes": float(nbytes), "bound": bound}


def matmul_workload(dtype, n):
    return _workload(
        f"matmul_{dtype}_{n}", f"matmul {dtype} {n}^3", "matmul",
        {"m": n, "k": n, "n": n}, dtype,
        [_input("a", [n, n], dtype), _input("b", [n, n], dtype)], [n, n],
        2 * n ** 3, "compute")


def matmul_shape_workload(dtype, m, k, n, batch=None):
    """Shapes that are not square powers of two (issue 12's odd shapes):
    M x K times K x N, or a batch of them."""
    lead = [batch] if batch else []
    name = f"matmul_{dtype}_{m}x{k}x{n}" + (f"_b{batch}" if batch else "")
    label = (f"batch {batch} " if batch else "") + f"matmul {dtype} {m}x{k}x{n}"
    return _workload(
        name, label, "matmul", {"m": m, "k": k, "n": n, "batch": batch}, dtype,
        [_input("a", lead + [m, k], dtype), _input("b", lead + [k, n], dtype)],
        lead + [m, n], 2 * (batch or 1) * m * n * k, "compute")


def mlp_workload(tokens, dim, hidden):
    # Weights scaled by 1/sqrt(fan-in) so activations stay O(1) in f16.
    return _workload(
        f"mlp_f16_{tokens}x{dim}x{hidden}", f"MLP f16 {tokens}x{dim}->{hidden}->{dim}",
        "mlp", {"tokens": tokens, "dim": dim, "hidden": hidden}, "f16",
        [_input("x", [tokens, dim], "f16"),
         _input("w1", [dim, hidden], "f16", scale=dim ** -0.5),
         _input("w2", [hidden, dim], "f16", scale=hidden ** -0.5)],
        [tokens, dim], 2 * 2 * tokens * dim * hidden, "compute")


def rows_workload(kind, label, rows, cols, dtype="f32"):
    inputs = [_input("x", [rows, cols], dtype)]
    out_shape = [rows, cols]
    if kind == "layernorm":
        inputs += [_input("gamma", [cols], "f32"), _input("beta", [cols], "f32")]
    if kind == "rowsum":
        out_shape = [rows]
    if kind == "colsum":
        out_shape = [cols]
    # Flops are nominal (elements touched); the row is memory bound.
    return _workload(f"{kind}_{dtype}_{rows}x{cols}", f"{label} {dtype} {rows}x{cols}",
                     kind, {"rows": rows, "cols": cols}, dtype, inputs, out_shape,
                     rows * cols, "memory")


def _count(n):
    return f"{n >> 20}M" if n >= 1 << 20 and n % (1 << 20) == 0 else str(n)


def elementwise_workload(kind, n):
    label = {"scale2": "x*2", "gelu": "gelu_tanh(1.5x-0.25)"}[kind]
    params = {"n": n}
    if kind == "gelu":
        params.update(a=1.5, b=-0.25)
    return _workload(f"{kind}_f32_{_count(n)}", f"{label} f32 {_count(n)}", kind,
                     params, "f32", [_input("x", [n], "f32")], [n], n, "memory")


def attention_workload(batch, q_len, kv_len, head_dim):
    decode = q_len == 1
    name = (f"attention_decode_f16_b{batch}_kv{kv_len}_d{head_dim}" if decode else
            f"attention_f16_b{batch}_s{q_len}_d{head_dim}")
    label = (f"attention decode f16 b{batch} kv{kv_len} d{head_dim}" if decode else
             f"attention f16 b{batch} s{q_len} d{head_dim}")
    return _workload(
        name, label, "attention",
        {"batch": batch, "q_len": q_len, "kv_len": kv_len, "head_dim": head_dim,
         "p_dtype": "f32" if decode else "f16"}, "f16",
        [_input("q", [batch, q_len, head_dim], "f16"),
         _input("k", [batch, kv_len, head_dim], "f16"),
         _input("v", [batch, kv_len, head_dim], "f16")],
        [batch, q_len, head_dim], 4 * batch * q_len * kv_len * head_dim,
        "memory" if decode else "compute")


def conv_workload(n, h, c, f, k=3):
    """A ResNet-style 3x3 f16 convolution, NHWC, 'valid' padding."""
    o = h - k + 1
    return _workload(
        f"conv_f16_n{n}_{h}x{h}x{c}_k{k}_f{f}",
        f"conv f16 {n}x{h}x{h}x{c} * {k}x{k}x{c}x{f}", "conv",
        {"n": n, "h": h, "w": h, "c": c, "f": f, "k": k}, "f16",
        [_input("x", [n, h, h, c], "f16"),
         _input("w", [k, k, c, f], "f16", scale=(k * k * c) ** -0.5)],
        [n, o, o, f], 2 * n * o * o * f * k * k * c, "compute")


def chain_workload():
    # x in [0, 1), w in [0, 1/32): x @ w keeps the mean of x, so 50 layers
    # neither vanish nor blow up.
    n = 64
    return _workload(
        f"chain{CHAIN_LAYERS}_f32_{n}x{n}", f"{CHAIN_LAYERS}-dispatch chain relu(x@w) 64x64",
        "chain", {"layers": CHAIN_LAYERS, "n": n}, "f32",
        [_input("x", [n, n], "f32", init="uniform"),
         _input("w", [n, n], "f32", init="uniform", scale=1.0 / 32)],
        [n, n], 2 * n ** 3 * CHAIN_LAYERS, "latency")


def workloads(small=False):
    """All workloads in run order (cheap rows first, the 8192^3 matmuls
    last, so that a run cut short by its time budget loses the costliest)."""
    if small:
        sizes, mlp, rows, elems = (64, 128, 256), (128, 64, 256), (128, 256), 1 << 14
        attention = [(4, 64, 64, 32), (4, 128, 128, 16), (4, 1, 256, 32)]
        long_rows = [(256, 128), (64, 1024)]
        vocab_rows = (64, 2048)
        whole = 1 << 14
        odd = [(100, 72, 40), (64, 32, 64, 2)]
        convs = [(1, 10, 32, 64)]
    else:
        sizes, mlp, rows, elems = (1024, 4096, 8192), (4096, 1024, 4096), (4096, 4096), 1 << 26
        attention = [(32, 1024, 1024, 128), (32, 2048, 2048, 64), (32, 1, 4096, 128)]
        # Many short rows and few long ones (issue 13's shapes).
        long_rows = [(32768, 1024), (1024, 32768)]
        # Logits of 4096 tokens over a 32k vocabulary (many long rows).
        vocab_rows = (4096, 32768)
        # Few results over many elements (split reductions, issue 13).
        whole = 1 << 24
        odd = [(1000, 1000, 1000), (3456, 1024, 2048), (512, 64, 512, 8)]
        # ResNet-50 stage-2 and stage-3 3x3 convolutions, batch 32.
        convs = [(32, 58, 64, 64), (32, 30, 128, 128)]
    result = [chain_workload(),
              elementwise_workload("scale2", elems), elementwise_workload("gelu", elems),
              rows_workload("softmax", "softmax", *rows),
              rows_workload("layernorm", "layernorm", *rows),
              rows_workload("rowsum", "row sum", *rows),
              rows_workload("colsum", "column sum", *rows),
              rows_workload("rowsum", "row sum", 1, whole)]
    result += [rows_workload("softmax", "softmax", r, c, dt)
               for r, c in long_rows for dt in ("f32", "f16")]
    result.append(rows_workload("softmax", "softmax", *vocab_rows, "f16"))
    result += [matmul_workload(dt, sizes[0]) for dt in ("f16", "bf16", "f32", "i8")]
    result += [matmul_shape_workload("f16", *shape) for shape in odd]
    result.append(mlp_workload(*mlp))
    result += [attention_workload(*shape) for shape in attention]
    result += [conv_workload(*shape) for shape in convs]
    for n in sizes[1:]:
        result += [matmul_workload(dt, n) for dt in ("f16", "bf16", "f32", "i8")]
    return result
