"""Tests of kiln.compiler (the compiler library in-process), with the
modules it makes run by kiln.runtime on `local`."""

import os
import tempfile
import threading
import unittest

import numpy as np

import kiln.runtime as rt

try:
    import kiln.compiler as kc
except ImportError as e:  # a build without the compiler
    kc = None
    _missing = str(e)

SCALE = """
func.func @scale(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant dense<3.0> : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.mul ins(%x, %c : tensor<8xf32>, tensor<8xf32>)
                  outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""


@unittest.skipIf(kc is None, "kiln.compiler is not built")
class CompilerTest(unittest.TestCase):
    def run_scale(self, module_bytes):
        module = rt.Device("local").load(module_bytes)
        x = np.arange(8, dtype=np.float32)
        np.testing.assert_array_equal(module.scale(x), 3 * x)
        return module

    def test_compile_str_and_run(self):
        module = self.run_scale(kc.compile_str(SCALE, name="scale.mlir"))
        self.assertEqual(module.name, "scale")
        self.assertEqual(kc.version(), "0.1.0")

    def test_compile_file_and_options(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "prog.mlir")
            with open(path, "w") as f:
                f.write(SCALE)
            module = self.run_scale(kc.compile_file(
                path, target=["host"], host_opt_level=1, module_name="scaled"))
            self.assertEqual(module.name, "scaled")

    def test_npz_parameters(self):
        # Weights saved by numpy (np.savez_compressed) bind to the
        # kiln.parameter arguments; a wrong shape is a located error.
        text = """
func.func @affine(%x: tensor<2x3xf32>, %w: tensor<2x3xf32> {kiln.parameter = "w"},
                  %b: tensor<3xf32> {kiln.parameter = "b"}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %m = linalg.mul ins(%x, %w : tensor<2x3xf32>, tensor<2x3xf32>)
                  outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %r = linalg.add ins(%m, %bb : tensor<2x3xf32>, tensor<2x3xf32>)
                  outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
"""
        w = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.array([0.5, -1.0, 2.0], dtype=np.float32)
        x = np.full((2, 3), 2.0, dtype=np.float32)
        with tempfile.TemporaryDirectory() as folder:
            archive = os.path.join(folder, "weights.npz")
            np.savez_compressed(archive, w=w, b=b)
            module = rt.Device("local").load(
                kc.compile_str(text, name="affine.mlir", parameters=archive))
            np.testing.assert_array_equal(module.affine(x), x * w + b)
            np.savez(archive, w=w.T.copy(), b=b)
            with self.assertRaises(kc.CompileError) as caught:
                kc.compile_str(text, name="affine.mlir", parameters=archive)
            self.assertIn("affine.mlir:2:40: error: argument 1 of @affine "
                          "(parameter 'w'): the archive's tensor has shape "
                          "[3x2], the argument 2x3", str(caught.exception))

    def test_errors_are_located(self):
        text = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %b : tensor<4xf32>\n}\n"
        with self.assertRaises(kc.CompileError) as caught:
            kc.compile_str(text, name="bad.mlir")
        first = caught.exception.diagnostics[0]
        self.assertEqual((first.severity, first.file, first.line, first.column),
                         ("error", "bad.mlir", 2, 10))
        self.assertIn("bad.mlir:2:10: error: use of undeclared SSA value name",
                      str(caught.exception))

    def test_bad_options(self):
        with self.assertRaisesRegex(ValueError, "unsupported target 'vulkan'"):
            kc.compile_str(SCALE, target="vulkan")
        with self.assertRaisesRegex(ValueError, "unknown CUDA chip 'sm_91'"):
            kc.Session(target="cuda", cuda_chip="sm_91")
        with self.assertRaisesRegex(TypeError, "unknown compile option 'optimize'"):
            kc.compile_str(SCALE, optimize=True)

    def test_cuda_target_compiles_without_a_gpu(self):
        module_bytes = kc.compile_str(SCALE, target="cuda,host", cuda_chip=["sm_80", "sm_90"])
        # The host variant runs here; the PTX rides along for GPUs.
        self.run_scale(module_bytes)

    def test_one_session_on_several_threads(self):
        session = kc.Session(target="host")
        results, errors = [], []

        def work():
            try:
                results.append(session.compile_str(SCALE))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 4)
        for module_bytes in results:
            self.run_scale(module_bytes)


if __name__ == "__main__":
    unittest.main()
