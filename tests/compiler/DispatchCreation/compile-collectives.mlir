// RUN: kiln-opt %s --kiln-compile-collectives=max-bytes=65536 | FileCheck %s
// RUN: kiln-opt %s --kiln-compile-collectives | FileCheck %s --check-prefix=OFF

// all_reduce and all_gather of at most max-bytes per rank get an executable
// of their own whose kernel takes send, recv and the window's data (two
// halves of the send), signals (a flag per rank and an epoch counter per
// workgroup) and peer table (2 x ranks addresses and the abort word's), and holds one
// kiln.window_collective; the collective names it. 20000 f32 (80000 bytes)
// is over the limit; broadcast keeps the library path at any size; so does
// everything with max-bytes=0 (the default of the pass).
// CHECK-LABEL: kiln.executable @step_all_reduce_0 {
// CHECK-NEXT:    func.func @step_all_reduce_0(%[[S:.*]]: memref<12xf32>, %[[R:.*]]: memref<12xf32>, %[[D:.*]]: memref<24xf32>, %[[F:.*]]: memref<3xi64>, %[[P:.*]]: memref<5xi64>) {
// CHECK-NEXT:      kiln.window_collective all_reduce reduction = avg ranks(2) workgroups(1) send(%[[S]]) recv(%[[R]]) window(%[[D]], %[[F]], %[[P]]) : memref<12xf32>, memref<12xf32>, memref<24xf32>, memref<3xi64>, memref<5xi64>
// CHECK-NEXT:      return
// A gather of 4000 i64 (32000 bytes) per rank: 8 workgroups of 4 KiB.
// CHECK-LABEL: kiln.executable @step_all_gather_1 {
// CHECK-NEXT:    func.func @step_all_gather_1(%{{.*}}: memref<4000xi64>, %{{.*}}: memref<16000xi64>, %{{.*}}: memref<8000xi64>, %{{.*}}: memref<40xi64>, %{{.*}}: memref<9xi64>) {
// CHECK-NEXT:      kiln.window_collective all_gather ranks(4) workgroups(8)
// CHECK-LABEL: func.func @step(
// CHECK:         kiln.collective all_reduce reduction = avg %{{.*}} over <@grid, axes = [0], shape = [2, 4]> kernel @step_all_reduce_0::@step_all_reduce_0 : tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK:         kiln.collective all_gather %{{.*}} over <@grid, axes = [1], shape = [2, 4]> kernel @step_all_gather_1::@step_all_gather_1 : tensor<4000xi64> -> tensor<4x4000xi64>
// CHECK:         kiln.collective all_reduce reduction = sum %{{.*}} over <@grid, axes = [0], shape = [2, 4]> : tensor<20000xf32>
// CHECK:         kiln.collective broadcast root = 1 %{{.*}} over <@grid, axes = [0], shape = [2, 4]> : tensor<4xf32>
// OFF-NOT: kiln.executable
// OFF-NOT: kernel
func.func @step(%x: tensor<3x4xf32>, %i: tensor<4000xi64>, %big: tensor<20000xf32>, %b: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<4x4000xi64>, tensor<20000xf32>, tensor<4xf32>) {
  %0 = kiln.collective all_reduce reduction = avg %x over <@grid, axes = [0], shape = [2, 4]> : tensor<3x4xf32> -> tensor<3x4xf32>
  %1 = kiln.collective all_gather %i over <@grid, axes = [1], shape = [2, 4]> : tensor<4000xi64> -> tensor<4x4000xi64>
  %2 = kiln.collective all_reduce reduction = sum %big over <@grid, axes = [0], shape = [2, 4]> : tensor<20000xf32> -> tensor<20000xf32>
  %3 = kiln.collective broadcast root = 1 %b over <@grid, axes = [0], shape = [2, 4]> : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<3x4xf32>, tensor<4x4000xi64>, tensor<20000xf32>, tensor<4xf32>
}
