// REQUIRES: host-target
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb --dump-intermediates=%t/dump -v 2>&1 | FileCheck %s --check-prefix=PROGRESS
// RUN: test -s %t/m.vmfb
// RUN: FileCheck %s --check-prefix=INPUT < %t/dump/01-input.mlir
// RUN: FileCheck %s --check-prefix=DISPATCH < %t/dump/02-dispatch-creation.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t/dump/03-host-lowering.mlir
// RUN: test -d %t/dump/main_dispatch_0
// RUN: ls %t/dump/main_dispatch_0 | FileCheck %s --check-prefix=CODEGEN
// Without -v, kiln-compile prints nothing on success.
// RUN: kiln-compile %s -o %t/quiet.vmfb 2>&1 | count 0
// Reading from stdin works; the module is the same (same digest of the text).
// RUN: kiln-compile - -o %t/stdin.vmfb < %s
// RUN: test -s %t/stdin.vmfb

// PROGRESS: kiln-compile: phase input
// PROGRESS: kiln-compile: phase dispatch-creation
// PROGRESS: kiln-compile: phase host-lowering
// PROGRESS: kiln-compile: codegen main_dispatch_0 for host
// PROGRESS: kiln-compile: wrote {{.*}}m.vmfb

// INPUT: linalg.generic
// DISPATCH: kiln.executable @main_dispatch_0
// DISPATCH: kiln.dispatch @main_dispatch_0::@main_dispatch_0
// HOST: kiln.program @main
// HOST: kiln.cmd.dispatch @main_dispatch_0::@main_dispatch_0
// CODEGEN: main_dispatch_0.{{.*}}.so

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  %1 = math.exp %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
