"""Runs the Python examples of docs/python.md, as a reader would paste them,
from a scratch folder that sees the repository's samples/ (so that what the
guide shows keeps working)."""

import contextlib
import io
import os
import re
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import kiln.compiler  # noqa: F401
    import torch  # noqa: F401
except ImportError:
    kiln = None


@unittest.skipIf(kiln is None, "kiln.compiler or torch is not available")
class DocsTest(unittest.TestCase):
    def test_python_guide_examples_run(self):
        with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertGreaterEqual(len(blocks), 2)
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as folder:
            os.symlink(os.path.join(ROOT, "samples"), os.path.join(folder, "samples"))
            os.chdir(folder)
            try:
                for i, block in enumerate(blocks):
                    with self.subTest(block=i), contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(block, f"docs/python.md block {i}", "exec"), {})
            finally:
                os.chdir(cwd)


if __name__ == "__main__":
    unittest.main()
