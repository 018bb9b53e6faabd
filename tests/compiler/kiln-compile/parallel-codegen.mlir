// Executables compile in parallel on the context's threads: everything the
// compile writes (each phase, each kernel's stages, LLVM IR, PTX, ISA, host
// objects, HSACOs) is byte for byte what a single-threaded compile writes.
// RUN: rm -rf %t.par %t.ser
// RUN: kiln-compile %s --target=host,rocm,cuda -o %t.par.vmfb --dump-intermediates=%t.par
// RUN: kiln-compile %s --target=host,rocm,cuda -o %t.ser.vmfb --dump-intermediates=%t.ser --mlir-disable-threading
// RUN: diff -r %t.par %t.ser
// RUN: kiln-compile %s --target=host,rocm,cuda -o %t.v.vmfb -v 2>&1 | FileCheck %s
// REQUIRES: host-target
// Progress lines stay whole with several threads writing them.
// CHECK-DAG: kiln-compile: codegen main_dispatch_0 for host took {{[0-9.]+}} s
// CHECK-DAG: kiln-compile: codegen main_dispatch_1 for rocm:gfx942 took {{[0-9.]+}} s
// CHECK-DAG: kiln-compile: codegen main_dispatch_2 for cuda:sm_90 took {{[0-9.]+}} s

func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.max ins(%m, %f : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %n = linalg.matmul ins(%w, %r : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ei = tensor.empty() : tensor<64xf32>
  %fi = linalg.fill ins(%zero : f32) outs(%ei : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.reduce { arith.addf } ins(%n : tensor<64x64xf32>) outs(%fi : tensor<64xf32>) dimensions = [1]
  return %s : tensor<64xf32>
}
