"""Kiln: compile tensor programs and run them from Python.

    import numpy as np
    import kiln.compiler, kiln.runtime as rt

    module_bytes = kiln.compiler.compile_str(mlir_text, target="host,cuda")
    device = rt.Device("local")            # or "hip", "hip://1", ...
    module = device.load(module_bytes)     # or a .vmfb path
    y = module.main(np.ones((2, 3), np.float32))

See kiln.compiler, kiln.runtime and docs/python.md.
"""

__all__ = ["KilnError", "compiler", "runtime"]


def __getattr__(name):
    # Lazy: kiln.torch.export needs neither native module (it runs where
    # only torch is, e.g. on a torch 2 machine without Kiln's build).
    if name == "KilnError":
        from kiln.runtime import KilnError
        return KilnError
    raise AttributeError(f"module 'kiln' has no attribute '{name}'")
