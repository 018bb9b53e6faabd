// REQUIRES: host-target, kiln-run
// The local driver picks the host variant of a module that also holds GPU
// variants (rocm before it in each executable) and runs it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=rocm,cuda,host -o %t/m.vmfb
// RUN: kiln-run %t/m.vmfb --function=main --device=local --input=4x256xf32=1 --input=4x256xf32=2 | FileCheck %s

// exp(1 + 2) = 20.0855
// CHECK: 4x256xf32=[20.0855

func.func @main(%a: tensor<4x256xf32>, %b: tensor<4x256xf32>) -> tensor<4x256xf32> {
  %0 = arith.addf %a, %b : tensor<4x256xf32>
  %1 = math.exp %0 : tensor<4x256xf32>
  return %1 : tensor<4x256xf32>
}
