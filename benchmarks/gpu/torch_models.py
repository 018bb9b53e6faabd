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
Kiln from numpy to numpy, Kiln on device arrays, Kiln from CUDA tensors to
CUDA tensors in place (DLPack), PyTorch from numpy to numpy, PyTorch eager
on CUDA tensors, a CUDA-graph replay and torch.compile. Before the models,
check_dlpack runs torch -> Kiln -> torch exchanges and checks their stream
ordering.
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
    # The DLPack check's program: a + b over 4 MiB of f32.
    module = kiln.compiler.compile_str(ADD, name="add.mlir", target="cuda",
                                       cuda_chip="sm_90a")
    with open(os.path.join(out, "add.vmfb"), "wb") as f:
        f.write(module)


ADD = """
func.func @main(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.add ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>)
                  outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
"""


def check_dlpack(device, folder):
    """torch CUDA tensors in and out of Kiln without copies (DLPack), with
    the streams ordered: Kiln reads what torch's queued kernels write, and
    torch's queued reads of a Kiln output finish before Kiln reuses its
    memory. Raises AssertionError on a wrong value."""
    import torch
    fn = device.load(os.path.join(folder, "add.vmfb")).main
    b = torch.ones(1024, 1024, device="cuda")
    for trial in range(20):
        # 100 queued kernels write x; Kiln gets x at once, unsynchronized.
        x = torch.zeros(1024, 1024, device="cuda")
        for _ in range(100):
            x = x * 1.0001 + 1
        out = fn(x, b, outputs="device")
        got = torch.from_dlpack(out)
        again = torch.from_dlpack(out)
        assert got.data_ptr() == again.data_ptr(), "export copied"
        torch.cuda.synchronize()
        assert torch.equal(got, x + b), f"trial {trial}: Kiln read x early"
        # torch queues reads of the output, lets it go, Kiln reuses the
        # memory at once: the queued reads must see the old values.
        sums = []
        for _ in range(50):
            sums.append(got * 2)
        del got, again, out
        for _ in range(5):
            fn(b, b, outputs="device")
        torch.cuda.synchronize()
        for s in sums:
            assert torch.equal(s, 2 * (x + b)), f"trial {trial}: memory reused early"
    # Wrong dtype: a clear error; host tensors: copied.
    try:
        fn(b.double(), b)
        raise AssertionError("an f64 tensor was accepted for an f32 input")
    except TypeError as e:
        assert "expected 1024x1024xf32" in str(e), e
    assert np.array_equal(fn(b.cpu(), b.cpu()), np.full((1024, 1024), 2, np.float32))
    print("dlpack: 20 trials of torch -> Kiln -> torch on CUDA tensors passed "
          "(stream order both ways, in place)")


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
    check_dlpack(device, folder)
    print("| model | max abs error vs torch | Kiln numpy->numpy us | torch numpy->numpy us "
          "| Kiln device arrays us | Kiln torch->torch (DLPack) us | torch eager us "
          "| torch graph replay us | torch.compile us |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
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
        with torch.no_grad():
            shared = torch.from_dlpack(fn(xt, outputs="device"))
            error = max(error, float((shared.double() - model(xt).double()).abs().max()))

        def dlpack():
            out = torch.from_dlpack(fn(xt, outputs="device"))
            torch.cuda.synchronize()
            return out

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
               median_us(lambda: fn(xd, outputs="device")), median_us(dlpack),
               median_us(eager),
               median_us(replay), median_us(compiled_call)]
        print(f"| {name} | {error:.1e} | " + " | ".join(f"{v:.1f}" for v in row) + " |",
              flush=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) != 3 or sys.argv[1] not in ("pack", "run"):
        sys.exit(__doc__)
    (pack if sys.argv[1] == "pack" else run)(sys.argv[2])
