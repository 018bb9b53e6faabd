// REQUIRES: host-target, kiln-dump, kiln-run
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=host -o %t/m.vmfb
// RUN: kiln-dump %t/m.vmfb | FileCheck %s --check-prefix=DUMP
// RUN: kiln-run %t/m.vmfb --function=mlp --device=local --input=2x4xf32=1,2,3,4,5,6,7,8 | FileCheck %s --check-prefix=MLP
// RUN: kiln-run %t/m.vmfb --function=identity --device=local --input=3xi32=7,8,9 | FileCheck %s --check-prefix=IDENTITY

// Two functions; the MLP's two layers are two executables, its weight is
// rodata, and the identity function is a single copy (no executable).
// DUMP: functions (2):
// DUMP-DAG: mlp(2x4xf32) -> (2x2xf32)
// DUMP-DAG: identity(3xi32) -> (3xi32)
// DUMP: executables (2):
// DUMP: mlp_dispatch_0
// DUMP: variant host:x86_64: format elf-so-v1
// DUMP: mlp_dispatch_1
// DUMP: rodata (1):

// x * W = [[1,2,3,4],[5,6,7,8]] * diag(1,2,3,4) = [[1,4,9,16],[5,12,21,32]],
// relu(x - 10) = [[0,0,0,6],[0,2,11,22]], then summed in pairs.
// MLP: 2x2xf32=[0 6][2 33]
// IDENTITY: 3xi32=7 8 9

func.func @mlp(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 4.0]]> : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %ten = arith.constant dense<10.0> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = arith.subf %h, %ten : tensor<2x4xf32>
  %r = linalg.max ins(%s, %f : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p = tensor.expand_shape %r [[0], [1, 2]] output_shape [2, 2, 2] : tensor<2x4xf32> into tensor<2x2x2xf32>
  %e2 = tensor.empty() : tensor<2x2xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %sum = linalg.reduce ins(%p : tensor<2x2x2xf32>) outs(%f2 : tensor<2x2xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %sum : tensor<2x2xf32>
}

func.func @identity(%x: tensor<3xi32>) -> tensor<3xi32> {
  return %x : tensor<3xi32>
}
