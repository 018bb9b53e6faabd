"""Small PyTorch models through kiln.torch on the GPU, next to PyTorch.

    pack (build machine, needs kiln.compiler and torch 1.13):
        torch_models.py pack OUT        compile the models for cuda (sm_90a: H100/H200)
    run (GPU machine, needs kiln.runtime built for its python, torch 2.x):
        torch_models.py run PACK

The models are tests/python/test_torch.py's (an MLP, an attention block, a
2-layer transformer encoder, a small CNN, attention through
scaled_dot_product_attention). pack exports each with
kiln.torch (parameters in a safetensors archive), compiles it and saves its
state_dict and input; run loads the same weights into PyTorch on CUDA,
checks Kiln's output against it and prints the median per-call time of:
Kiln from numpy to numpy, Kiln on device arrays, PyTorch from numpy to
numpy, PyTorch eager on CUDA tensors, a CUDA-graph replay and torch.compile.
benchmarks/gpu/torch_models.sh packs and runs it (building kiln._runtime on
the GPU machine for its python).
"""
import os
import statistics
import sys
import time

import numpy as np

MODELS = {
    "mlp": ([(8, 64)], "lambda: torch.nn.Sequential(torch.nn.Linear(64, 128), "
            "torch.nn.GELU(), torch.nn.Linear(128, 10), torch.nn.Softmax(dim=-1))"),
    "attention": ([(2, 16, 32)], "test_torch.Attention"),
    "encoder": ([(2, 16, 32)], "test_torch.Encoder"),
    "cnn": ([(2, 3, 16, 16)], "test_torch.SmallCNN"),
    # torch 2's scaled_dot_product_attention on the GPU machine (packed on
    # torch 1.13 through test_torch's stand-in).
    "sdpa": ([(2, 64, 32)], "test_torch.SdpaAttention"),
    # ... with a float attn_mask (a sliding window, a model buffer).
    "sdpa_masked": ([(2, 64, 32)], "test_torch.WindowedSdpa"),
    # f16 convolutions (im2col + matmul on mma.sync in Kiln; cuDNN in torch).
    "conv_f16": ([(8, 16, 32, 32)],
                 "lambda: torch.nn.Sequential(torch.nn.Conv2d(16, 64, 3, padding=1), "
                 "torch.nn.ReLU(), torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU())",
                 "f16"),
}


def entry(name):
    """(input shapes, model expression, dtype) of a model."""
    shapes, expression, *rest = MODELS[name]
    return shapes, expression, (rest[0] if rest else "f32")


def maker(expression):
    import torch
    import test_torch
    return eval(expression, {"torch": torch, "test_torch": test_torch})


def pack(out):
    import torch
    import kiln.compiler
    import kiln.torch
    os.makedirs(out, exist_ok=True)
    for name in MODELS:
        shapes, expression, dtype = entry(name)
        torch.manual_seed(7)
        model = maker(expression)().eval()
        inputs = tuple(torch.randn(*s) for s in shapes)
        if dtype == "f16":
            model, inputs = model.half(), tuple(x.half() for x in inputs)
        archive = os.path.join(out, name + ".safetensors")
        text = kiln.torch.export(model, inputs, parameters_file=archive)
        module = kiln.compiler.compile_str(text, name=name + ".mlir", target="cuda",
                                           cuda_chip="sm_90a", parameters=archive)
        os.remove(archive)
        with open(os.path.join(out, name + ".vmfb"), "wb") as f:
            f.write(module)
        torch.save(model.state_dict(), os.path.join(out, name + ".pt"))
        for i, x in enumerate(inputs):
            np.save(os.path.join(out, f"{name}_in{i}.npy"), x.numpy())
        print(f"packed {name} ({len(module)} bytes)")


def median_us(call, n=200):
    for _ in range(20):
        call()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def run(folder):
    import torch
    import kiln.runtime as rt
    print("devices:", rt.devices())
    device = rt.Device("hip")
    print("| model | max abs error vs torch | Kiln numpy->numpy us | torch numpy->numpy us "
          "| Kiln device arrays us | torch eager us | torch graph replay us | torch.compile us |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in MODELS:
        shapes, expression, dtype = entry(name)
        model = maker(expression)().eval()
        if dtype == "f16":
            model = model.half()
        model.load_state_dict(torch.load(os.path.join(folder, name + ".pt")))
        model = model.cuda()
        x = np.load(os.path.join(folder, name + "_in0.npy"))
        fn = device.load(os.path.join(folder, name + ".vmfb")).main
        xt = torch.from_numpy(x).cuda()
        with torch.no_grad():
            error = float(np.abs(fn(x).astype(np.float64) -
                                 model(xt).cpu().numpy().astype(np.float64)).max())
        xd = device.array(x)

        def eager():
            with torch.no_grad():
                model(xt)
            torch.cuda.synchronize()

        def eager_numpy():
            with torch.no_grad():
                model(torch.from_numpy(x).cuda()).cpu().numpy()

        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream), torch.no_grad():
            for _ in range(3):
                model(xt)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph), torch.no_grad():
            model(xt)

        def replay():
            graph.replay()
            torch.cuda.synchronize()

        compiled = torch.compile(model)

        def compiled_call():
            with torch.no_grad():
                compiled(xt)
            torch.cuda.synchronize()

        row = [median_us(lambda: fn(x)), median_us(eager_numpy),
               median_us(lambda: fn(xd, outputs="device")), median_us(eager),
               median_us(replay), median_us(compiled_call)]
        print(f"| {name} | {error:.1e} | " + " | ".join(f"{v:.1f}" for v in row) + " |",
              flush=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) != 3 or sys.argv[1] not in ("pack", "run"):
        sys.exit(__doc__)
    (pack if sys.argv[1] == "pack" else run)(sys.argv[2])
