"""Tests of kiln.torch: PyTorch modules traced with torch.fx (TorchTest)
and to ATen ops (AtenTest: make_fx on torch 1.13, torch.export on torch 2),
compiled by Kiln and run on `local`, against PyTorch's own results."""

import unittest

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # python3-torch missing
    torch = None
try:
    import kiln.torch
except ImportError:  # no torch, or a build without kiln.compiler
    kiln = None


if torch is not None:
    def _sdpa_reference(query, key, value, attn_mask=None, dropout_p=0.0,
                        is_causal=False, scale=None):
        """scaled_dot_product_attention as torch 2 defines it (no dropout),
        for torch 1.13, which lacks it; computed in f32 (1.13 has no f16
        matmul on the CPU)."""
        scale = query.shape[-1] ** -0.5 if scale is None else scale
        q, k, v = (t.float() for t in (query, key, value))
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        if is_causal:
            L, S = scores.shape[-2:]
            after = torch.ones(L, S, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(after, float("-inf"))
        if attn_mask is not None and attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        elif attn_mask is not None:
            scores = scores + attn_mask.float()
        return torch.matmul(torch.softmax(scores, dim=-1), v).to(query.dtype)

    # torch 2's function where it exists; on 1.13 the reference above, made
    # torch.nn.functional's so that kiln.torch takes it for the real one.
    # fx records calls to this global as one op either way.
    if not hasattr(F, "scaled_dot_product_attention"):
        F.scaled_dot_product_attention = _sdpa_reference
    scaled_dot_product_attention = F.scaled_dot_product_attention
    torch.fx.wrap("scaled_dot_product_attention")

    class SdpaAttention(torch.nn.Module):
        """Attention through scaled_dot_product_attention: q/k/v
        projections, heads by reshape + permute, sdpa, output projection."""

        def __init__(self, dim=32, heads=4, **options):
            super().__init__()
            self.heads, self.options = heads, options
            self.qkv = torch.nn.Linear(dim, 3 * dim)
            self.out = torch.nn.Linear(dim, dim)

        def forward(self, x):
            b, s, d = 2, 64, 32
            qkv = self.qkv(x).reshape(b, s, 3, self.heads, d // self.heads)
            qkv = qkv.permute(2, 0, 3, 1, 4)
            y = scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], **self.options)
            return self.out(y.permute(0, 2, 1, 3).reshape(b, s, d))

    class WindowedSdpa(SdpaAttention):
        """SdpaAttention with a float attn_mask (a buffer, so it travels in
        the parameter archive): each query sees the keys within `window` of
        it."""

        def __init__(self, dim=32, heads=4, window=16, length=64):
            super().__init__(dim, heads)
            i = torch.arange(length)
            far = (i[:, None] - i[None, :]).abs() > window
            self.register_buffer("window", torch.zeros(1, 1, length, length)
                                 .masked_fill(far, float("-inf")))

        def forward(self, x):
            # The buffer read here, so that .to(device) moves it along.
            self.options = {"attn_mask": self.window}
            return super().forward(x)

    class Attention(torch.nn.Module):
        """A pre-norm attention block: layer_norm, q/k/v projections, heads
        by reshape + permute, softmax(q k^T / sqrt(d)) v, residual."""

        def __init__(self, dim=32, heads=4):
            super().__init__()
            self.heads = heads
            self.norm = torch.nn.LayerNorm(dim)
            self.qkv = torch.nn.Linear(dim, 3 * dim)
            self.out = torch.nn.Linear(dim, dim, bias=False)

        def forward(self, x):
            b, s, d = 2, 16, 32
            h = self.norm(x)
            qkv = self.qkv(h).reshape(b, s, 3, self.heads, d // self.heads)
            qkv = qkv.permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = torch.matmul(q, k.transpose(-2, -1)) / (d // self.heads) ** 0.5
            attn = torch.softmax(scores, dim=-1)
            y = torch.matmul(attn, v).permute(0, 2, 1, 3).reshape(b, s, d)
            return x + self.out(y)

    class EncoderLayer(torch.nn.Module):
        """Pre-norm transformer encoder layer: attention, then a GELU MLP,
        each with a residual."""

        def __init__(self, dim=32, heads=4):
            super().__init__()
            self.attention = Attention(dim, heads)
            self.norm = torch.nn.LayerNorm(dim)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                           torch.nn.Linear(4 * dim, dim))

        def forward(self, x):
            x = self.attention(x)
            return x + self.mlp(self.norm(x))

    class Encoder(torch.nn.Module):
        """Two encoder layers and a final layer norm."""

        def __init__(self):
            super().__init__()
            self.layers = torch.nn.Sequential(EncoderLayer(), EncoderLayer())
            self.norm = torch.nn.LayerNorm(32)

        def forward(self, x):
            return self.norm(self.layers(x))

    class RMSNorm(torch.nn.Module):
        """Root-mean-square norm as models write it by hand (torch 1.13 has
        no nn.RMSNorm), then a SiLU-gated projection."""

        def __init__(self, dim=32, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, dim))
            self.gate = torch.nn.Linear(dim, dim)

        def forward(self, x):
            norm = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
            y = norm * self.weight
            return F.silu(self.gate(y)) * y + torch.sqrt(x.abs() + 1.0) ** 0.5

    class Mixed(torch.nn.Module):
        """Elementwise ops in several spellings, broadcasting, two outputs."""

        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.linspace(0.5, 1.5, 12))

        def forward(self, x, y):
            a = F.silu(x) * self.scale + torch.sigmoid(y) - 0.25
            b = F.gelu(a, approximate="tanh") / 2.0 + torch.tanh(x).neg()
            c = F.log_softmax(b.relu() + x.exp() * 0.01, dim=0)
            return c, torch.flatten(a.view(3, 4, 12), 1)

    class SmallCNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                torch.nn.Conv2d(8, 16, 3, stride=2, bias=False),
                torch.nn.AvgPool2d(1), torch.nn.AdaptiveAvgPool2d(1))
            self.head = torch.nn.Linear(16, 10)

        def forward(self, x):
            return self.head(torch.flatten(self.features(x), 1))

    class Embed(torch.nn.Module):
        """Embedding, concatenation and reductions."""

        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(20, 6)

        def forward(self, tokens, extra):
            e = self.embedding(tokens)                      # 2x5x6
            both = torch.cat([e, extra], dim=-1)            # 2x5x10
            return both.mean(dim=1), torch.sum(both), both.sum(dim=(0, 2))

    class AtenOps(torch.nn.Module):
        """Ops only tracer="aten" takes: clamp / hardtanh / leaky_relu,
        comparisons and where, masked_fill, casts, var (decomposed),
        x - alpha * y, 1 - x, slicing by aten.slice / select."""

        def forward(self, x, y):
            a = F.hardtanh(x, -0.5, 0.5) + F.leaky_relu(y, 0.2)
            b = torch.where(x > y, a, torch.clamp(y, min=0.1))
            c = b.masked_fill(x < -1.0, 3.0) - (x.var(-1, unbiased=False, keepdim=True))
            d = torch.sub(c, y, alpha=2.0) + (1 - x)
            e = (x > 0).float() * 2.0 + x.double().sum(0).float() + x.var(0)
            return d[:, 1:5], e[2], x.unsqueeze(0).squeeze(0).t()



# The models above need torch only (the GPU machine's run imports them).
@unittest.skipIf(torch is None or kiln is None,
                 "torch or kiln.compiler is not available")
class TorchTest(unittest.TestCase):
    def check(self, model, inputs, atol=1e-5, tracer=None):
        model = model.eval()
        compiled = kiln.torch.compile(model, inputs, tracer=tracer)
        with torch.no_grad():
            expected = model(*inputs)
        got = compiled(*inputs)
        if isinstance(expected, tuple):
            self.assertIsInstance(got, tuple)
            for g, e in zip(got, expected):
                self.assertEqual(g.shape, e.shape)
                torch.testing.assert_close(g, e, atol=atol, rtol=1e-4)
        else:
            self.assertEqual(got.shape, expected.shape)
            torch.testing.assert_close(got, expected, atol=atol, rtol=1e-4)
        return compiled

    def test_mlp(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                    torch.nn.Dropout(0.1), torch.nn.Linear(128, 10),
                                    torch.nn.Softmax(dim=-1))
        compiled = self.check(model, (torch.randn(8, 64),))
        # compile() passes parameters in an archive, not as program text.
        self.assertIn('func.func @main(%arg0: tensor<8x64xf32>, %p0: tensor<128x64xf32> '
                      '{kiln.parameter = "0.weight"}', compiled.mlir)
        self.assertEqual(compiled.function.signature, "(8x64xf32) -> (8x10xf32)")
        # The same compiled module, called again with new inputs.
        x = torch.randn(8, 64)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), atol=1e-5, rtol=1e-4)

    def test_tensors_in_place(self):
        class Scale(torch.nn.Module):
            def forward(self, x, flags):
                return x * 2, torch.logical_not(flags)

        # The aten front end has logical_not (make_fx here, torch.export on 2.x).
        compiled = kiln.torch.compile(Scale(), (torch.randn(4, 8),
                                                torch.zeros(4, 8, dtype=torch.bool)),
                                      tracer="aten")
        # Outputs are torch tensors over the Kiln device's memory (DLPack):
        # two calls give two live results.
        x = torch.randn(8, 4).t()  # strided: copied into a dense tensor first
        flags = torch.rand(4, 8) > 0.5
        y, not_flags = compiled(x, flags)
        y2, _ = compiled(x + 1, flags)
        torch.testing.assert_close(y, x * 2)
        torch.testing.assert_close(y2, (x + 1) * 2)
        self.assertTrue(torch.equal(not_flags, ~flags))
        self.assertEqual(y.device.type, "cpu")
        # The output's memory is Kiln's: the DeviceArray underneath exports
        # the same address.
        out = compiled.function.call(x.contiguous(), flags, outputs="device")[0]
        self.assertEqual(torch.from_dlpack(out).data_ptr(),
                         torch.from_dlpack(out).data_ptr())

    def test_parameters_in_an_archive(self):
        import os
        import tempfile
        import kiln.compiler
        import kiln.runtime
        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU()).eval()
        x = torch.randn(4, 16)
        with tempfile.TemporaryDirectory() as folder:
            archive = os.path.join(folder, "weights.safetensors")
            text = kiln.torch.export(model, (x,), parameters_file=archive)
            self.assertIn('{kiln.parameter = "0.weight"}', text)
            self.assertIn('{kiln.parameter = "0.bias"}', text)
            self.assertNotIn("dense<", text)
            module_bytes = kiln.compiler.compile_str(text, parameters=archive)
            with self.assertRaises(kiln.compiler.CompileError) as caught:
                kiln.compiler.compile_str(text)
            self.assertIn("no parameter archive was given", str(caught.exception))
        module = kiln.runtime.Device("local").load(module_bytes)
        self.assertEqual(module.main.signature, "(4x16xf32) -> (4x8xf32)")
        with torch.no_grad():
            torch.testing.assert_close(torch.from_numpy(module.main(x.numpy())), model(x),
                                       atol=1e-5, rtol=1e-4)

    def test_attention_block(self):
        torch.manual_seed(1)
        self.check(Attention(), (torch.randn(2, 16, 32),), atol=2e-5)

    def test_scaled_dot_product_attention(self):
        # The attention chain Kiln fuses on GPUs (q k^T, max, exp, sum, P v,
        # division), here on the host in f32.
        torch.manual_seed(0)
        compiled = self.check(SdpaAttention(), (torch.randn(2, 64, 32),))
        self.assertEqual(compiled.mlir.count("math.exp"), 1)
        self.assertIn("arith.maximumf", compiled.mlir)
        # An explicit scale.
        self.check(SdpaAttention(scale=0.5), (torch.randn(2, 64, 32),))
        # f16 heads as the chain the fused GPU kernel takes: one dispatch
        # for cuda, and on the host (unfused) within f16 rounding of torch.
        import os
        import tempfile
        import kiln.compiler

        class Heads(torch.nn.Module):
            def forward(self, q, k, v):
                return scaled_dot_product_attention(q, k, v)

        class CausalHeads(torch.nn.Module):
            def forward(self, q, k, v):
                return scaled_dot_product_attention(q, k, v, is_causal=True)

        heads = tuple(torch.randn(2, 4, 128, 64).half() for _ in range(3))
        for model in (Heads(), CausalHeads()):
            text = kiln.torch.export(model, heads)
            with tempfile.TemporaryDirectory() as dump:
                kiln.compiler.compile_str(text, target="cuda", dump_intermediates=dump)
                kernels = [d for d in os.listdir(dump) if "_dispatch_" in d]
            self.assertEqual(len(kernels), 1, kernels)
        got = kiln.torch.compile(Heads(), heads)(*heads)
        torch.testing.assert_close(got.float(), Heads()(*heads).float(),
                                   atol=2e-3, rtol=1e-2)
        # Causal attention; dropout is refused by name.
        self.check(SdpaAttention(is_causal=True), (torch.randn(2, 64, 32),))
        with self.assertRaisesRegex(kiln.torch.UnsupportedOpError,
                                    "scaled_dot_product_attention with dropout_p"):
            kiln.torch.export(SdpaAttention(dropout_p=0.1), (torch.randn(2, 64, 32),))

    def test_attention_masks(self):
        # attn_mask: bool (True takes part) broadcast over batch and heads,
        # and float (added to the scaled scores) per batch, broadcast over
        # heads; both with is_causal is refused, as torch does.
        class Masked(torch.nn.Module):
            def forward(self, q, k, v, mask):
                return scaled_dot_product_attention(q, k, v, attn_mask=mask)

        torch.manual_seed(5)
        q, k, v = (torch.randn(2, 3, 8, 16) for _ in range(3))
        keep = torch.rand(8, 8) > 0.3
        keep[:, 0] = True  # no row entirely masked
        self.check(Masked(), (q, k, v, keep), atol=2e-5)
        bias = torch.randn(2, 1, 8, 8)
        self.check(Masked(), (q, k, v, bias), atol=2e-5)
        # A mask held by the model (in the parameter archive).
        self.check(WindowedSdpa(), (torch.randn(2, 64, 32),), atol=2e-5)

        class Both(torch.nn.Module):
            def forward(self, q, k, v, mask):
                return scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                    is_causal=True)
        with self.assertRaisesRegex(kiln.torch.UnsupportedOpError,
                                    "both attn_mask and is_causal"):
            kiln.torch.export(Both(), (q, k, v, bias))

    def test_grouped_and_depthwise_conv2d(self):
        # linalg.conv_2d_ngchw_gfchw on the channels split into groups.
        torch.manual_seed(11)
        grouped = torch.nn.Sequential(
            torch.nn.Conv2d(8, 12, 3, padding=1, groups=4), torch.nn.ReLU(),
            torch.nn.Conv2d(12, 12, 3, stride=2, groups=12, bias=False))  # depthwise
        self.check(grouped, (torch.randn(2, 8, 9, 9),), atol=2e-5)

    def test_conv2d_padding_modes(self):
        # reflect, replicate and circular padding gather the border's values.
        torch.manual_seed(12)
        for mode in ("reflect", "replicate", "circular"):
            with self.subTest(mode=mode):
                model = torch.nn.Sequential(
                    torch.nn.Conv2d(3, 4, 3, padding=(2, 1), padding_mode=mode),
                    torch.nn.ReLU(),
                    torch.nn.Conv2d(4, 2, 3, padding=1, padding_mode=mode,
                                    groups=2))
                self.check(model, (torch.randn(2, 3, 6, 5),), atol=2e-5)
        # padding="same" (even kernels pad one more after) and "valid".
        for mode in ("zeros", "reflect"):
            with self.subTest(same=mode):
                model = torch.nn.Sequential(
                    torch.nn.Conv2d(3, 4, (4, 3), padding="same", padding_mode=mode,
                                    dilation=(1, 2)),
                    torch.nn.Conv2d(4, 2, 2, padding="valid"))
                self.check(model, (torch.randn(2, 3, 7, 9),), atol=2e-5)

    def test_strided_slicing(self):
        class Slices(torch.nn.Module):
            def forward(self, x):
                return x[:, 1:7:2] * 2.0, x[1, ::3], x[-1, 2:-1]
        self.check(Slices(), (torch.randn(3, 8),))
        # Steps must be positive integers; torch itself refuses negative
        # ones, and Ellipsis is not taken.
        class EllipsisIndex(torch.nn.Module):
            def forward(self, x):
                return x[..., 1]
        with self.assertRaisesRegex(kiln.torch.UnsupportedOpError, "indexing with"):
            kiln.torch.export(EllipsisIndex(), (torch.randn(3, 8),))

    def test_conv2d_f16_runs_as_a_matmul(self):
        # An f16 nn.Conv2d (NCHW) becomes an im2col gather and a matmul with
        # an f32 accumulator (kiln-convolutions-to-matmuls), on every target.
        # torch 1.13 has no f16 convolution on the CPU: the reference is the
        # same module in f32 on the same f16 values.
        import copy
        import os
        import tempfile
        import kiln.compiler
        model = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, padding=1),
                                    torch.nn.ReLU()).half()
        x = torch.randn(2, 8, 12, 12).half()
        text = kiln.torch.export(model, (x,))
        with tempfile.TemporaryDirectory() as dump:
            kiln.compiler.compile_str(text, target="host", dump_intermediates=dump)
            with open(os.path.join(dump, "02-dispatch-creation.mlir")) as f:
                program = f.read()
        self.assertRegex(program, r"linalg\.(batch_)?matmul")
        self.assertNotIn("linalg.conv_2d", program)
        got = kiln.torch.compile(model, (x,))(x)
        ref = copy.deepcopy(model).float()(x.float())
        torch.testing.assert_close(got.float(), ref, atol=2e-2, rtol=1e-2)

    def test_rms_norm(self):
        torch.manual_seed(8)
        self.check(RMSNorm(), (torch.randn(4, 8, 32),), atol=2e-5)

    def test_two_layer_transformer_encoder(self):
        torch.manual_seed(6)
        self.check(Encoder(), (torch.randn(2, 16, 32),), atol=5e-5)

    def test_elementwise_broadcasting_and_two_outputs(self):
        torch.manual_seed(2)
        self.check(Mixed(), (torch.randn(12, 12), torch.randn(12)))

    def test_cnn(self):
        torch.manual_seed(4)
        model = SmallCNN()
        bn = model.features[1]
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        self.check(model, (torch.randn(2, 3, 16, 16),), atol=2e-5)

    def test_embedding_cat_and_reductions(self):
        torch.manual_seed(5)
        tokens = torch.tensor([[1, 4, 19, 0, 7], [3, 3, 12, 5, 8]])
        self.check(Embed(), (tokens, torch.randn(2, 5, 4)), atol=2e-5)

    def test_unsupported_op_names_op_and_line(self):
        lazy = torch.nn.Sequential(torch.nn.Upsample(scale_factor=2))
        with self.assertRaises(kiln.torch.UnsupportedOpError) as caught:
            kiln.torch.export(lazy, (torch.randn(1, 4, 8, 8),))
        self.assertIn("Upsample", str(caught.exception))

        class Cumsum(torch.nn.Module):
            def forward(self, x):
                return torch.cumsum(x, 0)
        with self.assertRaises(kiln.torch.UnsupportedOpError) as caught:
            kiln.torch.export(Cumsum(), (torch.randn(4),))
        self.assertIn("cumsum", str(caught.exception))
        self.assertIn("test_torch.py", str(caught.exception))

    def test_wrong_number_of_example_inputs(self):
        with self.assertRaisesRegex(kiln.torch.UnsupportedOpError, "takes 2 inputs"):
            kiln.torch.export(Mixed(), (torch.randn(12, 12),))


@unittest.skipIf(torch is None or kiln is None,
                 "torch or kiln.compiler is not available")
class AtenTest(unittest.TestCase):
    """tracer="aten": the models above as ATen graphs, written with the fx
    front end's helpers."""

    check = TorchTest.check

    def aten(self, model, inputs, atol=1e-5):
        return self.check(model, inputs, atol, tracer="aten")

    def test_mlp_is_the_fx_program(self):
        # t + addmm on a weight is the fx front end's linear: the same
        # program, parameter arguments named by the state_dict.
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                    torch.nn.Dropout(0.1), torch.nn.Linear(128, 10),
                                    torch.nn.Softmax(dim=-1))
        compiled = self.aten(model, (torch.randn(8, 64),))
        self.assertIn('func.func @main(%arg0: tensor<8x64xf32>, %p0: tensor<128x64xf32> '
                      '{kiln.parameter = "0.weight"}', compiled.mlir)
        self.assertNotIn("linalg.transpose", compiled.mlir)
        self.assertEqual(compiled.mlir, kiln.torch.compile(model, (torch.randn(8, 64),),
                                                           tracer="fx").mlir)

    def test_cnn(self):
        # Batch norm from its running statistics (state_dict names, not the
        # fx front end's folded scale and shift); num_batches_tracked, unused,
        # is no argument.
        torch.manual_seed(4)
        model = SmallCNN()
        bn = model.features[1]
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        compiled = self.aten(model, (torch.randn(2, 3, 16, 16),), atol=2e-5)
        self.assertIn('{kiln.parameter = "features.1.running_var"}', compiled.mlir)
        self.assertNotIn("num_batches_tracked", compiled.mlir)
        self.assertIn("linalg.pooling_nchw_max", compiled.mlir)
        torch.manual_seed(11)
        grouped = torch.nn.Sequential(
            torch.nn.Conv2d(8, 12, 3, padding=1, groups=4), torch.nn.ReLU(),
            torch.nn.Conv2d(12, 12, 3, stride=2, groups=12, bias=False))
        self.aten(grouped, (torch.randn(2, 8, 9, 9),), atol=2e-5)

    def test_conv2d_f16(self):
        # torch 1.13 has no f16 convolution on the CPU: make_fx traces on
        # fake tensors instead.
        import copy
        model = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, padding=1),
                                    torch.nn.ReLU()).half()
        x = torch.randn(2, 8, 12, 12).half()
        got = kiln.torch.compile(model, (x,), tracer="aten")(x)
        ref = copy.deepcopy(model).float()(x.float())
        torch.testing.assert_close(got.float(), ref, atol=2e-2, rtol=1e-2)

    def test_attention_block(self):
        torch.manual_seed(1)
        self.aten(Attention(), (torch.randn(2, 16, 32),), atol=2e-5)

    def test_two_layer_transformer_encoder(self):
        torch.manual_seed(6)
        self.aten(Encoder(), (torch.randn(2, 16, 32),), atol=5e-5)

    def test_scaled_dot_product_attention(self):
        # torch 2: aten.scaled_dot_product_attention kept whole, the fused
        # chain; torch 1.13: the stand-in's ATen ops (a causal mask by
        # ones + triu, evaluated at trace time into a constant).
        torch.manual_seed(0)
        for options in ({}, {"is_causal": True}, {"scale": 0.5}):
            with self.subTest(**options):
                compiled = self.aten(SdpaAttention(**options), (torch.randn(2, 64, 32),))
                self.assertEqual(compiled.mlir.count("math.exp"), 1)
        self.aten(WindowedSdpa(), (torch.randn(2, 64, 32),), atol=2e-5)

        class Masked(torch.nn.Module):
            def forward(self, q, k, v, mask):
                return scaled_dot_product_attention(q, k, v, attn_mask=mask)

        torch.manual_seed(5)
        q, k, v = (torch.randn(2, 3, 8, 16) for _ in range(3))
        keep = torch.rand(8, 8) > 0.3
        keep[:, 0] = True
        self.aten(Masked(), (q, k, v, keep), atol=2e-5)

    def test_rms_norm(self):
        torch.manual_seed(8)
        self.aten(RMSNorm(), (torch.randn(4, 8, 32),), atol=2e-5)

    def test_elementwise_broadcasting_and_two_outputs(self):
        torch.manual_seed(2)
        self.aten(Mixed(), (torch.randn(12, 12), torch.randn(12)))

    def test_embedding_cat_and_reductions(self):
        torch.manual_seed(5)
        tokens = torch.tensor([[1, 4, 19, 0, 7], [3, 3, 12, 5, 8]])
        self.aten(Embed(), (tokens, torch.randn(2, 5, 4)), atol=2e-5)

    def test_activations_casts_and_selects(self):
        torch.manual_seed(9)
        self.aten(AtenOps(), (torch.randn(6, 8), torch.randn(6, 8)))

    def test_unsupported_op_names_aten_op_and_line(self):
        class Cumsum(torch.nn.Module):
            def forward(self, x):
                return torch.cumsum(x, 0)
        with self.assertRaises(kiln.torch.UnsupportedOpError) as caught:
            kiln.torch.export(Cumsum(), (torch.randn(4),), tracer="aten")
        self.assertRegex(str(caught.exception),
                         r"unsupported op aten\.cumsum\.default at File .*test_torch\.py.*"
                         r"return torch\.cumsum\(x, 0\)")
        # An nn.Module's op: the line in torch that called it.
        upsample = torch.nn.Sequential(torch.nn.Upsample(scale_factor=2))
        with self.assertRaisesRegex(kiln.torch.UnsupportedOpError,
                                    r"unsupported op aten\.upsample_nearest2d"):
            kiln.torch.export(upsample, (torch.randn(1, 4, 8, 8),), tracer="aten")
        with self.assertRaisesRegex(kiln.torch.UnsupportedOpError, "takes 2 inputs"):
            kiln.torch.export(Mixed(), (torch.randn(12, 12),), tracer="aten")
        with self.assertRaisesRegex(ValueError, "tracer must be"):
            kiln.torch.export(Mixed(), (torch.randn(12, 12),), tracer="jit")


if __name__ == "__main__":
    unittest.main()
