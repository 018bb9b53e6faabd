"""Shared helpers for the Kiln e2e test generator.

A test case is an MLIR program plus one or more runs (function, inputs, expected
outputs, tolerances). Expected outputs are computed here with numpy, never by Kiln.
`gen_e2e.py` turns each case into a lit test whose RUN lines call kiln-compile and
kiln-run; `crosscheck.py` runs the same programs through upstream MLIR on the CPU
and compares with the numpy values, so expectations do not depend on Kiln.
"""

import dataclasses
from typing import List, Optional

import numpy as np

# Element types accepted by Kiln and the numpy dtype that holds their values.
# bf16 values are held as float32 arrays whose values are exactly representable
# in bf16 (see `bf16`).
NP_DTYPE = {
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "f16": np.float16,
    "bf16": np.float32,
    "f32": np.float32,
    "f64": np.float64,
}

# Default tolerances per element type: (atol, rtol). Integers and i1 compare
# exactly, so no flag is passed for them.
TOLERANCE = {
    "f16": (1e-2, 1e-2),
    "bf16": (3e-2, 2e-2),
    "f32": (1e-5, 1e-5),
    "f64": (1e-12, 1e-12),
}


def is_float(ty: str) -> bool:
    return ty in ("f16", "bf16", "f32", "f64")


def bf16(x) -> np.ndarray:
    """Rounds float32 values to the nearest bf16 (ties to even), kept as float32."""
    a = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32).reshape(a.shape)


@dataclasses.dataclass
class T:
    """A tensor value: numpy array + MLIR element type."""

    value: np.ndarray
    ty: str
    splat: bool = False  # print as IREE splat syntax (one value fills the tensor)

    def __post_init__(self):
        if self.ty == "bf16":
            self.value = bf16(self.value)
        else:
            self.value = np.asarray(self.value).astype(NP_DTYPE[self.ty])

    @property
    def shape(self):
        return tuple(self.value.shape)

    def tensor_type(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.ty}>"


def fmt_scalar(v, ty: str) -> str:
    if ty == "i1":
        return "1" if bool(v) else "0"
    if not is_float(ty):
        return str(int(v))
    dt = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64}[ty]
    v = dt(v)
    if not np.isfinite(v):
        raise ValueError("non-finite values are not used in the e2e corpus")
    s = np.format_float_positional(v, unique=True, trim="-")
    if len(s) > 12:
        s = np.format_float_scientific(v, unique=True, trim="-")
    return s


def fmt_value(t: T) -> str:
    """IREE-style value syntax: `2x3xf32=1,2,3,4,5,6`, `f32=2`, splat `4xf32=1.5`."""
    prefix = "".join(f"{d}x" for d in t.shape) + t.ty
    flat = t.value.reshape(-1)
    if t.splat:
        assert np.all(flat == flat[0]), "splat value must be uniform"
        return f"{prefix}={fmt_scalar(flat[0], t.ty)}"
    return prefix + "=" + ",".join(fmt_scalar(v, t.ty) for v in flat)


@dataclasses.dataclass
class Run:
    function: str
    inputs: List[T]
    outputs: List[T]
    atol: Optional[float] = None  # None: type default
    rtol: Optional[float] = None
    # Replaces the inline --input values (e.g. "@%kiln_src_root/x.npy"); `inputs`
    # must still hold the same values for crosscheck.py.
    input_args: Optional[List[str]] = None

    def tolerances(self):
        """(atol, rtol) to pass, or None when every output is an integer."""
        float_outs = [o.ty for o in self.outputs if is_float(o.ty)]
        if not float_outs:
            return None
        # The loosest type default among the outputs, unless the case overrides.
        atol = max(TOLERANCE[t][0] for t in float_outs)
        rtol = max(TOLERANCE[t][1] for t in float_outs)
        return (self.atol if self.atol is not None else atol,
                self.rtol if self.rtol is not None else rtol)


@dataclasses.dataclass
class Case:
    path: str  # relative to tests/e2e, e.g. "elementwise/add_f32.mlir"
    summary: str  # one line saying what the test covers
    mlir: str  # the program (module body); empty when `source` is set
    runs: List[Run]
    # A program kept elsewhere in the repository (e.g. "samples/mlp/mlp.mlir"):
    # the test compiles %kiln_src_root/<source> and holds RUN lines only.
    source: Optional[str] = None

    def program(self, repo_root) -> str:
        if self.source:
            return (repo_root / self.source).read_text()
        return self.mlir


def run_lines(case: Case) -> List[str]:
    src = f"%kiln_src_root/{case.source}" if case.source else "%s"
    # rm first: a compile that exits 0 without writing must not reuse a stale module.
    lines = ["// RUN: rm -f %t.vmfb", f"// RUN: kiln-compile {src} --target=host -o %t.vmfb"]
    for run in case.runs:
        args = [f"--function={run.function}"]
        if run.input_args is not None:
            args += [f"--input={a}" for a in run.input_args]
        else:
            args += [f"--input={fmt_value(t)}" for t in run.inputs]
        args += [f"--expected-output={fmt_value(t)}" for t in run.outputs]
        tol = run.tolerances()
        if tol is not None:
            args.append(f"--atol={tol[0]:g} --rtol={tol[1]:g}")
        lines.append("// RUN: kiln-run %t.vmfb --device=local \\")
        for i, a in enumerate(args):
            cont = " \\" if i + 1 < len(args) else ""
            lines.append(f"// RUN:   {a}{cont}")
    return lines


HEADER = "// Generated by tests/e2e/gen/gen_e2e.py from {src}; edit the generator, not this file."


def render(case: Case, src: str) -> str:
    out = [HEADER.format(src=src), f"// {case.summary}"]
    out += run_lines(case)
    if case.source:
        out.append(f"// The program is %kiln_src_root/{case.source}.")
        return "\n".join(out) + "\n"
    out.append("")
    out.append(case.mlir.strip("\n"))
    return "\n".join(out) + "\n"


def ident_map(rank: int) -> str:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({dims})>"


def tensor_type(shape, ty: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + ty + ">"


def elementwise_func(name, shape, in_tys, out_ty, body, indent="    "):
    """A public function applying `body` elementwise with linalg.generic.

    `body` sees block arguments %x0, %x1, ... (one per input) and must end with
    `linalg.yield`.
    """
    rank = len(shape)
    m = ident_map(rank)
    it = ", ".join(['"parallel"'] * rank)
    tin = [tensor_type(shape, t) for t in in_tys]
    tout = tensor_type(shape, out_ty)
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(tin))
    ins = ", ".join(f"%a{i}" for i in range(len(tin)))
    bbargs = ", ".join([f"%x{i}: {t}" for i, t in enumerate(in_tys)] + [f"%out: {out_ty}"])
    maps = ", ".join([m] * (len(tin) + 1))
    body = "\n".join(indent + l.strip() for l in body.strip().splitlines())
    return f"""func.func @{name}({args}) -> {tout} {{
  %init = tensor.empty() : {tout}
  %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{it}]}}
      ins({ins} : {", ".join(tin)}) outs(%init : {tout}) {{
  ^bb0({bbargs}):
{body}
  }} -> {tout}
  return %r : {tout}
}}"""


def modular_matrix(name, rows, cols, ty, row_mul, col_mul, mod, offset,
                   scale=None):
    """A rows x cols matrix of type `ty` made in the program (so that no input
    travels): element (r, c) is ((row_mul r + col_mul c) mod `mod` - `offset`),
    times `scale` if given, small integers or multiples of a power of two that
    every float type holds exactly. Returns the MLIR lines defining %`name`
    (they use the map `#k` = (i, j) -> (i, j), which the program defines) and
    the numpy float64 value."""
    r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
    value = ((row_mul * r + col_mul * c) % mod - offset).astype(np.float64)
    if scale is not None:
        value = value * scale
    shape = f"tensor<{rows}x{cols}x{ty}>"
    value_lines = ("%v = arith.subf %mf, %off : f32" if scale is None else
                   f"""%d = arith.subf %mf, %off : f32
    %q = arith.constant {scale} : f32
    %v = arith.mulf %d, %q : f32""")
    narrow = ("linalg.yield %v : f32" if ty == "f32" else
              f"%h = arith.truncf %v : f32 to {ty}\n    linalg.yield %h : {ty}")
    mlir = f"""  %e{name} = tensor.empty() : {shape}
  %{name} = linalg.generic {{indexing_maps = [#k], iterator_types = ["parallel", "parallel"]}} outs(%e{name} : {shape}) {{
  ^bb0(%o: {ty}):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    %rm = arith.constant {row_mul} : index
    %cm = arith.constant {col_mul} : index
    %md = arith.constant {mod} : index
    %r1 = arith.muli %r, %rm : index
    %c1 = arith.muli %c, %cm : index
    %t = arith.addi %r1, %c1 : index
    %m = arith.remui %t, %md : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %off = arith.constant {float(offset)} : f32
    {value_lines}
    {narrow}
  }} -> {shape}
"""
    return mlir, value
