"""kiln.torch's torch.export front end (tracer="aten" on torch 2), checked in
two steps, since the machine with torch 2 (the GPU machine) has no compiler
library and the build machine has torch 1.13:

    export (torch 2 machine: torch, numpy, and this repository; no kiln build)
        python3 benchmarks/gpu/torch_export_models.py export DIR
    check (build machine: kiln.compiler and kiln.runtime)
        PYTHONPATH=build/python python3 benchmarks/gpu/torch_export_models.py check DIR

export traces tests/python/test_torch.py's models with torch.export and
writes, per model, NAME.mlir (parameters as {kiln.parameter} arguments),
NAME.safetensors (the parameters), NAME_in<i>.npy (the inputs) and
NAME_out<i>.npy (torch's outputs on the CPU), and manifest.json (torch's
version, tolerances, and each model's decomposed ATen ops, which show
whether aten.scaled_dot_product_attention stayed whole). A model kiln.torch
refuses is recorded with its error and skipped. check compiles each
NAME.mlir for the host (kiln.compiler), runs it on `local` and compares it with torch's outputs;
`--target cuda` compiles for cuda (sm_90a) instead, and `--write-modules`
writes each NAME.vmfb with its weights left to load time (kiln-compile
--parameter-mode=load), to run on the GPU machine:

    run (GPU machine: kiln.runtime built for its python, e.g. by torch_models.sh)
        python3 benchmarks/gpu/torch_export_models.py run DIR
"""
import json
import os
import sys
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name: (model expression, input expressions, atol) over test_torch's models.
MODELS = {
    "mlp": ("torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), "
            "torch.nn.Linear(128, 10), torch.nn.Softmax(dim=-1))",
            ["torch.randn(8, 64)"], 1e-5),
    "cnn": ("T.SmallCNN()", ["torch.randn(2, 3, 16, 16)"], 2e-5),
    "attention": ("T.Attention()", ["torch.randn(2, 16, 32)"], 2e-5),
    "encoder": ("T.Encoder()", ["torch.randn(2, 16, 32)"], 5e-5),
    "rms_norm": ("T.RMSNorm()", ["torch.randn(4, 8, 32)"], 2e-5),
    "embed": ("T.Embed()", ["torch.tensor([[1, 4, 19, 0, 7], [3, 3, 12, 5, 8]])",
                            "torch.randn(2, 5, 4)"], 2e-5),
    "mixed": ("T.Mixed()", ["torch.randn(12, 12)", "torch.randn(12)"], 1e-5),
    "sdpa": ("T.SdpaAttention()", ["torch.randn(2, 64, 32)"], 1e-5),
    "sdpa_causal": ("T.SdpaAttention(is_causal=True)", ["torch.randn(2, 64, 32)"], 1e-5),
    "sdpa_masked": ("T.WindowedSdpa()", ["torch.randn(2, 64, 32)"], 2e-5),
    "aten_ops": ("T.AtenOps()", ["torch.randn(6, 8)", "torch.randn(6, 8)"], 1e-5),
    "grouped_conv": ("torch.nn.Sequential(torch.nn.Conv2d(8, 12, 3, padding=1, groups=4), "
                     "torch.nn.ReLU(), torch.nn.Conv2d(12, 12, 3, stride=2, groups=12))",
                     ["torch.randn(2, 8, 9, 9)"], 2e-5),
    "conv_f16": ("torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, padding=1), "
                 "torch.nn.ReLU()).half()", ["torch.randn(2, 8, 12, 12).half()"], 2e-2),
}


def _kiln_torch():
    """kiln.torch from this repository's python/ when no kiln build is
    importable: kiln/__init__.py imports kiln.runtime (a native module),
    which export() does not need."""
    try:
        import kiln.torch
        return kiln.torch
    except ImportError:
        pass
    for name in [m for m in sys.modules if m == "kiln" or m.startswith("kiln.")]:
        del sys.modules[name]
    package = types.ModuleType("kiln")
    package.__path__ = [os.path.join(ROOT, "python", "kiln")]
    sys.modules["kiln"] = package
    import kiln.torch
    return kiln.torch


def export(folder):
    import torch
    kiln_torch = _kiln_torch()
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    import test_torch as T
    from kiln import _torch_aten
    os.makedirs(folder, exist_ok=True)
    manifest = {"torch": torch.__version__, "tracer": "aten",
                "torch_export": _torch_aten.has_export(), "models": {}}
    for name, (model_expression, input_expressions, atol) in MODELS.items():
        torch.manual_seed(7)
        scope = {"torch": torch, "T": T}
        model = eval(model_expression, scope).eval()
        inputs = tuple(eval(e, scope) for e in input_expressions)
        entry = {"atol": atol, "rtol": 1e-4, "inputs": len(inputs)}
        try:
            text = kiln_torch.export(model, inputs, parameters_file=os.path.join(
                folder, name + ".safetensors"), tracer="aten")
        except kiln_torch.UnsupportedOpError as e:
            entry["error"] = str(e)
            manifest["models"][name] = entry
            print(f"{name}: {e}")
            continue
        outputs = _reference(model, inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        with open(os.path.join(folder, name + ".mlir"), "w") as f:
            f.write(text)
        for i, x in enumerate(inputs):
            np.save(os.path.join(folder, f"{name}_in{i}.npy"), x.numpy())
        for i, y in enumerate(outputs):
            np.save(os.path.join(folder, f"{name}_out{i}.npy"), y.numpy())
        entry["outputs"] = len(outputs)
        entry["aten_ops"] = _aten_ops(model, inputs)
        manifest["models"][name] = entry
        print(f"{name}: {len(text)} characters, {len(entry['aten_ops'])} ATen ops", flush=True)
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def _reference(model, inputs):
    """torch's outputs; an op with no CPU kernel for the dtype (f16
    convolutions on torch 1.13) runs in f32 on the same values."""
    import copy
    import torch
    with torch.no_grad():
        try:
            return model(*inputs)
        except RuntimeError as e:
            if "not implemented for" not in str(e):
                raise
            dtype = inputs[0].dtype
            outputs = copy.deepcopy(model).float()(*(x.float() for x in inputs))
            return tuple(y.to(dtype) for y in outputs) if isinstance(outputs, tuple) \
                else outputs.to(dtype)


def _aten_ops(model, inputs):
    """The ATen ops of the model's decomposed graph, as export() traced them."""
    import torch
    from kiln import _torch_aten
    if not _torch_aten.has_export():
        return []
    ep = torch.export.export(model, inputs).run_decompositions(
        _torch_aten._export_decompositions())
    return sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})


def check(folder, target="host", write_modules=False):
    import kiln.compiler
    import kiln.runtime
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    print(f"exported with torch {manifest['torch']} (torch.export: {manifest['torch_export']})")
    device = kiln.runtime.Device("local")
    failures = 0
    for name, entry in manifest["models"].items():
        if "error" in entry:
            print(f"{name}: not exported: {entry['error']}")
            failures += 1
            continue
        source = os.path.join(folder, name + ".mlir")
        archive = os.path.join(folder, name + ".safetensors")
        options = {"cuda_chip": "sm_90a"} if "cuda" in target else {}
        if write_modules:
            # Weights stay in the archive: `run` binds them at load time.
            options["parameter_mode"] = "load"
        module = kiln.compiler.compile_file(source, target=target, parameters=archive,
                                            **options)
        if write_modules:
            with open(os.path.join(folder, name + ".vmfb"), "wb") as f:
                f.write(module)
        if target != "host":
            print(f"{name}: compiled for {target}")
            continue
        failures += not _compare(device.load(module, parameters=archive)
                                 if write_modules else device.load(module),
                                 folder, name, entry)
    return failures


def _compare(module, folder, name, entry):
    """Runs module's main on the model's inputs and compares its outputs with
    torch's; prints and returns whether they match."""
    inputs = [np.load(os.path.join(folder, f"{name}_in{i}.npy"))
              for i in range(entry["inputs"])]
    expected = [np.load(os.path.join(folder, f"{name}_out{i}.npy"))
                for i in range(entry["outputs"])]
    got = module.main(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    error = max(float(np.abs(g.astype(np.float64) - e.astype(np.float64)).max())
                for g, e in zip(got, expected))
    fine = all(g.shape == e.shape and np.allclose(g, e, atol=entry["atol"],
                                                  rtol=entry["rtol"])
               for g, e in zip(got, expected))
    print(f"{name}: {'ok' if fine else 'MISMATCH'} (max abs error {error:.1e})", flush=True)
    return fine


def run(folder, uri="hip"):
    """The modules check --write-modules wrote, on the GPU machine (kiln.runtime
    built there), with their weights bound at load time from the archives."""
    import kiln.runtime
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    device = kiln.runtime.Device(uri)
    failures = 0
    for name, entry in manifest["models"].items():
        path = os.path.join(folder, name + ".vmfb")
        if "error" in entry or not os.path.exists(path):
            print(f"{name}: no module")
            failures += 1
            continue
        module = device.load(path, parameters=os.path.join(folder, name + ".safetensors"))
        failures += not _compare(module, folder, name, entry)
    print(f"torch.export models on {uri}: {len(manifest['models']) - failures} of "
          f"{len(manifest['models'])} match torch {manifest['torch']}")
    return failures


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if len(arguments) < 2 or arguments[0] not in ("export", "check", "run"):
        sys.exit(__doc__)
    if arguments[0] == "export":
        export(arguments[1])
    elif arguments[0] == "run":
        sys.exit(1 if run(arguments[1]) else 0)
    else:
        target = arguments[arguments.index("--target") + 1] if "--target" in arguments \
            else "host"
        sys.exit(1 if check(arguments[1], target, "--write-modules" in arguments) else 0)
