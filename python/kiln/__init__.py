"""Kiln: run compiled tensor programs (.vmfb modules) from Python.

    import numpy as np
    import kiln.runtime as rt

    device = rt.Device("local")            # or "hip", "hip://1", ...
    module = device.load("model.vmfb")     # a path, or the module's bytes
    y = module.main(np.ones((2, 3), np.float32))

See kiln.runtime and docs/python.md.
"""

from kiln.runtime import KilnError  # noqa: F401

__all__ = ["KilnError", "runtime"]
