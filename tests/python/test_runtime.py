"""Tests of the kiln Python package (kiln.runtime) on the `local` device.

Run by ctest (tests/CMakeLists.txt) with PYTHONPATH=<build>/python and
$KILN_COMPILE naming kiln-compile, which compiles the test programs below
into a temporary folder, as a user would.
"""

import os
import subprocess
import tempfile
import unittest

import numpy as np

import kiln
import kiln.runtime as rt

ADD = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.add ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>)
                  outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
"""

# Two outputs of other element types: i32 doubled, and f16 negated.
TYPES = """
func.func @twice(%x: tensor<4xi32>, %h: tensor<3xf16>) -> (tensor<4xi32>, tensor<3xf16>) {
  %e = tensor.empty() : tensor<4xi32>
  %d = linalg.add ins(%x, %x : tensor<4xi32>, tensor<4xi32>)
                  outs(%e : tensor<4xi32>) -> tensor<4xi32>
  %f = tensor.empty() : tensor<3xf16>
  %n = linalg.negf ins(%h : tensor<3xf16>) outs(%f : tensor<3xf16>) -> tensor<3xf16>
  return %d, %n : tensor<4xi32>, tensor<3xf16>
}
func.func @to_bf16(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %e = tensor.empty() : tensor<4xbf16>
  %t = arith.truncf %x : tensor<4xf32> to tensor<4xbf16>
  return %t : tensor<4xbf16>
}
"""


def compile_program(text, folder, name):
    compiler = os.environ.get("KILN_COMPILE")
    if not compiler:
        raise unittest.SkipTest("$KILN_COMPILE (kiln-compile) is not set")
    source = os.path.join(folder, name + ".mlir")
    with open(source, "w") as f:
        f.write(text)
    output = os.path.join(folder, name + ".vmfb")
    subprocess.run([compiler, source, "--target=host", "-o", output], check=True)
    return output


class RuntimeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.add_path = compile_program(ADD, cls.folder.name, "add")
        cls.types_path = compile_program(TYPES, cls.folder.name, "types")
        cls.device = rt.Device("local")

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_devices(self):
        self.assertIn("local://0", rt.devices())
        self.assertEqual(self.device.uri, "local")
        self.assertEqual(rt.Device("local://1").uri, "local://1")

    def test_call_with_numpy(self):
        module = self.device.load(self.add_path)
        self.assertEqual(module.functions, ["main"])
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.full((2, 3), 0.5, np.float32)
        out = module.main(a, b)
        self.assertIsInstance(out, np.ndarray)
        self.assertEqual(out.dtype, np.float32)
        np.testing.assert_array_equal(out, a + b)
        # Python lists are converted to the input's type.
        np.testing.assert_array_equal(
            module["main"]([[1, 2, 3], [4, 5, 6]], b), np.array([[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]], np.float32))

    def test_load_from_bytes(self):
        with open(self.add_path, "rb") as f:
            module = self.device.load(f.read())
        out = module.main(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
        np.testing.assert_array_equal(out, np.full((2, 3), 2, np.float32))

    def test_reflection(self):
        function = self.device.load(self.add_path).main
        self.assertEqual(function.name, "main")
        self.assertEqual(function.signature, "(2x3xf32, 2x3xf32) -> (2x3xf32)")
        self.assertEqual(function.input_types, [("f32", (2, 3)), ("f32", (2, 3))])
        self.assertEqual(function.output_types, [("f32", (2, 3))])

    def test_element_types_and_several_outputs(self):
        module = self.device.load(self.types_path)
        x = np.array([1, -2, 3, 40000], np.int32)
        h = np.array([0.5, -1.25, 3.0], np.float16)
        doubled, negated = module.twice(x, h)
        self.assertEqual(doubled.dtype, np.int32)
        self.assertEqual(negated.dtype, np.float16)
        np.testing.assert_array_equal(doubled, 2 * x)
        np.testing.assert_array_equal(negated, -h)

    def test_bf16_output(self):
        out = self.device.load(self.types_path).to_bf16(
            np.array([1.0, -2.0, 0.5, 3.0], np.float32))
        self.assertEqual(out.dtype, rt.numpy_dtype("bf16"))
        # bfloat16 is the upper half of float32 (exact for these values).
        bits = out.view(np.uint16).astype(np.uint32) << 16
        np.testing.assert_array_equal(bits.view(np.float32), [1.0, -2.0, 0.5, 3.0])

    def test_device_arrays_chain_calls(self):
        main = self.device.load(self.add_path).main
        a = self.device.array(np.ones((2, 3), np.float32))
        self.assertEqual(a.shape, (2, 3))
        self.assertEqual(a.dtype, np.float32)
        once = main(a, a, outputs="device")
        self.assertIsInstance(once, rt.DeviceArray)
        twice = main(once, once, outputs="device")
        np.testing.assert_array_equal(twice.numpy(), np.full((2, 3), 4, np.float32))
        np.testing.assert_array_equal(np.asarray(twice), np.full((2, 3), 4, np.float32))

    def test_async_call_waits_for_its_fence(self):
        main = self.device.load(self.add_path).main
        gate = self.device.fence()
        ones = np.ones((2, 3), np.float32)
        (out,), done = main.call_async(ones, ones, wait=gate)
        self.assertFalse(done.signaled)
        gate.signal()
        done.wait(timeout=30)
        self.assertTrue(done.signaled)
        np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 2, np.float32))

    def test_wrong_inputs_raise(self):
        main = self.device.load(self.add_path).main
        ones = np.ones((2, 3), np.float32)
        with self.assertRaisesRegex(TypeError, r"main input 1: expected 2x3xf32 \(float32\), got a float64"):
            main(ones, np.ones((2, 3)))
        with self.assertRaisesRegex(ValueError, r"main input 0: expected shape \(2, 3\)"):
            main(np.ones((3, 2), np.float32), ones)
        with self.assertRaisesRegex(TypeError, "expected 2 inputs, got 1"):
            main(ones)
        # A device array of the wrong shape reaches the runtime's own check.
        wrong = self.device.array(np.ones((3, 2), np.float32))
        with self.assertRaises(kiln.KilnError) as caught:
            main(wrong, ones)
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")

    def test_runtime_errors_carry_their_code(self):
        with self.assertRaises(kiln.KilnError) as caught:
            rt.Device("nosuchdriver")
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        self.assertIsInstance(caught.exception, RuntimeError)
        with self.assertRaises(kiln.KilnError) as caught:
            self.device.load(b"not a module at all")
        self.assertIn(caught.exception.code, ("DATA_LOSS", "INVALID_ARGUMENT"))
        with self.assertRaises(kiln.KilnError) as caught:
            self.device.load(os.path.join(self.folder.name, "missing.vmfb"))
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        module = self.device.load(self.add_path)
        with self.assertRaises(AttributeError):
            module.nosuchfunction
        with self.assertRaises(kiln.KilnError) as caught:
            module["nosuchfunction"]
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        with self.assertRaises(kiln.KilnError):
            rt.Instance(plugins=["/nonexistent/libkiln_hal_nothing.so"])

    def test_truncated_module_is_refused(self):
        with open(self.add_path, "rb") as f:
            data = f.read()
        for length in (0, 16, len(data) // 2, len(data) - 1):
            with self.assertRaises(kiln.KilnError):
                self.device.load(data[:length])


if __name__ == "__main__":
    unittest.main()
