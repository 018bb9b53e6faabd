# lit configuration of the Kiln compiler tests (tests/compiler).
#
# Tools: kiln-opt, kiln-compile (and kiln-run, kiln-dump when the runtime is
# built in the same build directory) from <build>/bin; FileCheck, not, count
# and split-file from LLVM 22. Features: `host-target` when kiln-compile can
# emit host executables, `kiln-run` / `kiln-dump` when those tools exist.
# %python is the Python that runs lit (Debian's, with numpy, for the
# scripts that write numpy archives).
import os
import sys

import lit.formats

config.name = "Kiln compiler"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "tests", "compiler")
# Inputs/ holds files that RUN lines use; unit/ holds gtests run by ctest.
config.excludes = ["Inputs", "unit", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]

path = [config.kiln_tools_dir, config.llvm_tools_dir,
        config.environment.get("PATH", os.environ.get("PATH", ""))]
config.environment["PATH"] = os.pathsep.join(path)
config.substitutions.append(("%python", sys.executable))

for tool in ["kiln-opt", "kiln-compile", "kiln-run", "kiln-dump"]:
    if os.path.exists(os.path.join(config.kiln_tools_dir, tool)):
        config.available_features.add(tool)
if config.kiln_have_host_target:
    config.available_features.add("host-target")
