// Command-line conventions: --version on every tool (Kiln's version and git
// commit; LLVM's version for the compiler tools), IREE's --module= accepted
// by kiln-run, and IREE flags given to kiln-compile answered with Kiln's.
// RUN: kiln-compile --version | FileCheck %s --check-prefix=COMPILE
// RUN: kiln-opt --version | FileCheck %s --check-prefix=OPT
// RUN: kiln-run --version | FileCheck %s --check-prefix=KILN
// RUN: kiln-dump --version | FileCheck %s --check-prefix=KILN
// RUN: not kiln-compile %s --iree-hal-target-backends=rocm -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=IREE
// RUN: kiln-compile %s --target=host -o %t.vmfb
// RUN: kiln-run --module=%t.vmfb --function=main --input=2xf32=1.5,2 | FileCheck %s --check-prefix=MODULE
// RUN: not kiln-run --module=%t.vmfb %t.vmfb --function=main 2>&1 | FileCheck %s --check-prefix=TWICE
// REQUIRES: host-target, kiln-run, kiln-dump
// COMPILE: Kiln {{[0-9]+\.[0-9]+\.[0-9]+}} (git {{[0-9a-f]+|unknown}}
// COMPILE-NEXT: LLVM 22.
// OPT: LLVM version 22.
// OPT: Kiln {{[0-9]+\.[0-9]+\.[0-9]+}} (git
// KILN: Kiln {{[0-9]+\.[0-9]+\.[0-9]+}} (git
// IREE: kiln-compile: error: '--iree-hal-target-backends=rocm' is an IREE flag; kiln-compile's own: --target=rocm,cuda,host
// MODULE: result[0]: 2xf32=3 4
// TWICE: error: more than one module given

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.add ins(%x, %x : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
