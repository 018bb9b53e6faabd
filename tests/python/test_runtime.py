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


def compile_program(text, folder, name, *flags):
    compiler = os.environ.get("KILN_COMPILE")
    if not compiler:
        raise unittest.SkipTest("$KILN_COMPILE (kiln-compile) is not set")
    source = os.path.join(folder, name + ".mlir")
    with open(source, "w") as f:
        f.write(text)
    output = os.path.join(folder, name + ".vmfb")
    subprocess.run([compiler, source, "--target=host", "-o", output, *flags],
                   check=True)
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

    def test_dlpack_inputs_are_used_in_place(self):
        main = self.device.load(self.add_path).main
        self.assertEqual(self.device.dlpack_device, (1, 0))  # kDLCPU
        a = np.zeros((2, 3), np.float32)
        shared = self.device.from_dlpack(a)
        self.assertEqual((shared.element_type, shared.shape), ("f32", (2, 3)))
        a[1, 2] = 7  # the same memory: the device array sees the write
        np.testing.assert_array_equal(shared.numpy()[1], [0, 0, 7])

        class Producer:
            """A DLPack producer that is not a numpy array (as a torch
            tensor is): calls take it in place."""
            def __init__(self, array):
                self.array, self.shape = array, array.shape
            def __dlpack__(self, stream=None):
                return self.array.__dlpack__()
            def __dlpack_device__(self):
                return self.array.__dlpack_device__()

        b = np.full((2, 3), 0.5, np.float32)
        (out,), done = main.call_async(Producer(a), Producer(b))
        done.wait(timeout=30)
        np.testing.assert_array_equal(out.numpy(), a + b)
        # Outputs go out in place too (numpy, torch, ... from_dlpack).
        exported = np.from_dlpack(out)
        np.testing.assert_array_equal(exported, a + b)
        self.assertEqual(exported.__array_interface__["data"][0] % 16, 0)
        # Views the runtime let go of on its own threads release their
        # producers' tensors (through the interpreter's pending calls).
        for _ in range(200):
            main.call_async(Producer(np.ones((2, 3), np.float32)),
                            Producer(b))[1].wait(timeout=30)
        np.testing.assert_array_equal(main(Producer(b), b), 2 * b)

    def test_dlpack_inputs_that_cannot_be_shared(self):
        main = self.device.load(self.add_path).main
        ones = np.ones((2, 3), np.float32)
        with self.assertRaisesRegex(TypeError, "got a f64 tensor, expected f32"):
            self.device.from_dlpack(np.ones((2, 3)), "f32")
        with self.assertRaisesRegex(ValueError, "not dense row-major"):
            self.device.from_dlpack(np.ones((3, 2), np.float32).T)
        with self.assertRaisesRegex(ValueError, "not 16-byte aligned"):
            self.device.from_dlpack(np.ones(7, np.float32)[1:])

        class OnGpu:
            shape = (2, 3)
            def __dlpack__(self, stream=None):
                raise AssertionError("must not be consumed")
            def __dlpack_device__(self):
                return (2, 0)  # kDLCUDA

        with self.assertRaisesRegex(ValueError, r"main input 0: the tensor is on "
                                    r"DLPack device \(2, 0\), but local computes on"):
            main(OnGpu(), ones)
        # A capsule is consumed once.
        capsule = ones.__dlpack__()
        self.device._native.import_dlpack(capsule, "")
        with self.assertRaisesRegex(ValueError, "consumed only once"):
            self.device._native.import_dlpack(capsule, "")

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


# x * w + b with w and b given when the module is loaded.
PARAMETERS = """
func.func @main(%x: tensor<2x3xf32>,
                %w: tensor<2x3xf32> {kiln.parameter = "w"},
                %b: tensor<3xi32> {kiln.parameter = "b"}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %m = linalg.mul ins(%x, %w : tensor<2x3xf32>, tensor<2x3xf32>)
                  outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %f = tensor.empty() : tensor<3xf32>
  %bf = arith.sitofp %b : tensor<3xi32> to tensor<3xf32>
  %bb = linalg.broadcast ins(%bf : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %r = linalg.add ins(%m, %bb : tensor<2x3xf32>, tensor<2x3xf32>)
                  outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
"""


class LoadTimeParametersTest(unittest.TestCase):
    """Device.load(module, parameters=...) of a module compiled with
    --parameter-mode=load: archives (paths, lists of them) and dicts of
    arrays, and the errors for what is missing or wrong."""

    W = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    B = np.array([10, 20, 30], np.int32)

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.path = compile_program(PARAMETERS, cls.folder.name, "parameters",
                                   "--parameter-mode=load")
        cls.device = rt.Device("local")
        cls.both = os.path.join(cls.folder.name, "both.npz")
        np.savez_compressed(cls.both, w=cls.W, b=cls.B)
        cls.w_only = os.path.join(cls.folder.name, "w.npz")
        np.savez(cls.w_only, w=cls.W)
        cls.x = np.full((2, 3), 2, np.float32)
        cls.expected = cls.x * cls.W + cls.B.astype(np.float32)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_archive_path(self):
        module = self.device.load(self.path, parameters=self.both)
        np.testing.assert_array_equal(module.main(self.x), self.expected)
        self.assertEqual(module.main.signature, "(2x3xf32) -> (2x3xf32)")

    def test_dict_and_list(self):
        module = self.device.load(self.path, parameters={"w": self.W, "b": self.B})
        np.testing.assert_array_equal(module.main(self.x), self.expected)
        # An archive and a dict together, from the module's bytes.
        with open(self.path, "rb") as f:
            module = self.device.load(f.read(),
                                      parameters=[self.w_only, {"b": self.B}])
        np.testing.assert_array_equal(module.main(self.x), self.expected)

    def test_compiled_in_process(self):
        import kiln.compiler
        data = kiln.compiler.compile_str(PARAMETERS, target="host",
                                         parameter_mode="load")
        module = self.device.load(data, parameters={"w": self.W, "b": self.B})
        np.testing.assert_array_equal(module.main(self.x), self.expected)
        with self.assertRaises(ValueError):
            kiln.compiler.compile_str(PARAMETERS, parameter_mode="later")

    def test_errors(self):
        def error(parameters):
            with self.assertRaises(kiln.KilnError) as caught:
                self.device.load(self.path, parameters=parameters)
            return caught.exception.code, str(caught.exception)

        code, message = error(None)
        self.assertEqual(code, "FAILED_PRECONDITION")
        self.assertIn("the first 'w' (2x3xf32), and none were given", message)
        code, message = error(self.w_only)
        self.assertEqual(code, "NOT_FOUND")
        self.assertIn("needs parameter 'b' (3xi32)", message)
        code, message = error({"w": self.W.astype(np.float64), "b": self.B})
        self.assertEqual(code, "INVALID_ARGUMENT")
        self.assertIn("expected 2x3xf32, found F64 [2, 3]", message)
        # A list becomes numpy's default int64, which i32 does not take.
        code, message = error({"w": self.W, "b": [10, 20, 30]})
        self.assertIn("expected 3xi32, found I64 [3]", message)
        code, message = error([self.both, {"w": self.W}])
        self.assertEqual(code, "ALREADY_EXISTS")
        code, message = error("/no/such/archive.npz")
        self.assertEqual(code, "NOT_FOUND")
        self.assertIn("/no/such/archive.npz", message)
        with self.assertRaises(TypeError):
            self.device.load(self.path, parameters=42)


if __name__ == "__main__":
    unittest.main()
