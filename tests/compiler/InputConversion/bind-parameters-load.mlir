// kiln-bind-parameters with load-time=true: kiln.parameter arguments stay
// (kiln-move-constants-to-rodata makes them rodata that names them); an
// archive given at compile time is only checked against them, with the same
// located errors as compile-time binding.
// RUN: split-file %s %t
// RUN: python3 %S/../Inputs/make_safetensors.py %t/p.safetensors w:F32:2x3:1,2,3,4,5,6 n:I32:scalar:7
// RUN: kiln-opt --kiln-bind-parameters="load-time=true" %t/ok.mlir | FileCheck %s
// RUN: kiln-opt --kiln-bind-parameters="load-time=true parameters-file=%t/p.safetensors" %t/ok.mlir | FileCheck %s
// RUN: not kiln-opt --kiln-bind-parameters="load-time=true parameters-file=%t/p.safetensors" %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt --kiln-bind-parameters="load-time=true parameters-file=%t/missing.safetensors" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

//--- ok.mlir
func.func @main(%x: tensor<2x3xf32>,
                %w: tensor<2x3xf32> {kiln.parameter = "w"},
                %n: tensor<i32> {kiln.parameter = "n"}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.add ins(%x, %w : tensor<2x3xf32>, tensor<2x3xf32>)
                  outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// The arguments and their marks stay; nothing is bound.
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<2x3xf32> {kiln.parameter = "w"}, %{{.*}}: tensor<i32> {kiln.parameter = "n"})
// CHECK-NOT: arith.constant

//--- bad.mlir
func.func @absent(%a: tensor<2xf32> {kiln.parameter = "nope"}) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
func.func @dtype(%a: tensor<2x3xf16> {kiln.parameter = "w"}) -> tensor<2x3xf16> {
  return %a : tensor<2x3xf16>
}
func.func @shape(%a: tensor<3x2xf32> {kiln.parameter = "w"}) -> tensor<3x2xf32> {
  return %a : tensor<3x2xf32>
}
func.func @dynamic(%a: tensor<?xf32> {kiln.parameter = "w"}) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
// BAD: bad.mlir:1:19: error: argument 0 of @absent (parameter 'nope'): the archive '{{.*}}p.safetensors' has no tensor of that name
// BAD: bad.mlir:4:18: error: argument 0 of @dtype (parameter 'w'): the archive holds F32 data, the argument is f16
// BAD: bad.mlir:7:18: error: argument 0 of @shape (parameter 'w'): the archive's tensor has shape [2x3], the argument 3x2
// BAD: bad.mlir:10:20: error: argument 0 of @dynamic (parameter 'w'): a parameter must be a static-shape tensor
// MISSING: ok.mlir:2:17: error: argument 1 of @main (parameter 'w'): cannot read parameter archive '{{.*}}missing.safetensors': No such file or directory
