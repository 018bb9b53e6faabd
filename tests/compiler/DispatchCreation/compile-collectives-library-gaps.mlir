// RUN: kiln-opt %s --kiln-compile-collectives="gpu-libraries=true library-gaps=true" | FileCheck %s
// RUN: kiln-opt %s --kiln-compile-collectives="gpu-libraries=true" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --kiln-compile-collectives="library-gaps=true" | FileCheck %s --check-prefix=HOST

// The GPU targets' default (max-bytes 0, library-gaps): only the reductions
// no library runs get a kernel, at any size: a 1 MB i16 sum (NCCL/RCCL have
// no 16-bit integers) and a bitwise or; a small f32 sum stays a library
// collective. Without library-gaps nothing is compiled; on the host (no GPU
// libraries) the i16 sum is a library collective too.
// CHECK-LABEL: kiln.executable @step_all_reduce_0 {
// CHECK:         kiln.window_collective all_reduce reduction = sum ranks(2) workgroups(64)
// CHECK-LABEL: kiln.executable @step_all_reduce_1 {
// CHECK:         kiln.window_collective all_reduce reduction = or ranks(2) workgroups(1)
// CHECK-LABEL: func.func @step(
// CHECK:         kiln.collective all_reduce reduction = sum {{.*}} kernel @step_all_reduce_0::@step_all_reduce_0 : tensor<500000xi16>
// CHECK:         kiln.collective all_reduce reduction = or {{.*}} kernel @step_all_reduce_1::@step_all_reduce_1 : tensor<8xi32>
// CHECK:         kiln.collective all_reduce reduction = sum {{.*}} : tensor<4xf32>
// CHECK-NOT:     kernel
// OFF-NOT: kiln.executable
// OFF-NOT: kernel
// HOST-LABEL: func.func @step(
// HOST:         kiln.collective all_reduce reduction = sum {{.*}} : tensor<500000xi16>
// HOST-NOT:     kernel @step_all_reduce_0
// HOST:         kiln.collective all_reduce reduction = or {{.*}} kernel @step_all_reduce_0::@step_all_reduce_0 : tensor<8xi32>
func.func @step(%h: tensor<500000xi16>, %b: tensor<8xi32>, %f: tensor<4xf32>) -> (tensor<500000xi16>, tensor<8xi32>, tensor<4xf32>) {
  %0 = kiln.collective all_reduce reduction = sum %h over <@grid, axes = [0], shape = [2]> : tensor<500000xi16> -> tensor<500000xi16>
  %1 = kiln.collective all_reduce reduction = or %b over <@grid, axes = [0], shape = [2]> : tensor<8xi32> -> tensor<8xi32>
  %2 = kiln.collective all_reduce reduction = sum %f over <@grid, axes = [0], shape = [2]> : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<500000xi16>, tensor<8xi32>, tensor<4xf32>
}
