// kiln-bind-parameters: arguments marked kiln.parameter become constants
// from a safetensors archive; every problem is a located error.
// RUN: split-file %s %t
// RUN: python3 %S/../Inputs/make_safetensors.py %t/p.safetensors w:F32:2x3:1,2,3,4,5,6 b:F16:3:0.5,1,2 n:I32:scalar:7
// RUN: kiln-opt --kiln-bind-parameters="parameters-file=%t/p.safetensors" %t/ok.mlir | FileCheck %s
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/p.safetensors" %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt --kiln-bind-parameters %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/missing.safetensors" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: python3 %S/../Inputs/make_safetensors.py %t/cut.safetensors w:F32:2x3:1,2,3,4,5,6 --truncate=40
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/cut.safetensors" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=CUT
// RUN: printf 'garbage!' > %t/garbage.safetensors
// RUN: not kiln-opt --kiln-bind-parameters="parameters-file=%t/garbage.safetensors" %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// End to end: the module computes x + w with w from the archive.
// RUN: kiln-compile %t/ok.mlir --target=host --parameters=%t/p.safetensors -o %t/ok.vmfb
// RUN: kiln-run %t/ok.vmfb --function=main --input=2x3xf32=10,20,30,40,50,60 | FileCheck %s --check-prefix=RESULT
// REQUIRES: host-target, kiln-run

//--- ok.mlir
func.func @main(%x: tensor<2x3xf32>,
                %w: tensor<2x3xf32> {kiln.parameter = "w"},
                %b: tensor<3xf16> {kiln.parameter = "b"},
                %n: tensor<i32> {kiln.parameter = "n"}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.add ins(%x, %w : tensor<2x3xf32>, tensor<2x3xf32>)
                  outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-DAG: arith.constant dense<7> : tensor<i32>
// CHECK-DAG: arith.constant dense<[5.000000e-01, 1.000000e+00, 2.000000e+00]> : tensor<3xf16>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK: linalg.add ins(%{{.*}}, %[[W]] :
// RESULT: 2x3xf32=[11 22 33][44 55 66]

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
func.func @bool(%a: tensor<2xi1> {kiln.parameter = "w"}) -> tensor<2xi1> {
  return %a : tensor<2xi1>
}
// BAD: bad.mlir:1:19: error: argument 0 of @absent (parameter 'nope'): the archive '{{.*}}p.safetensors' has no tensor of that name
// BAD: bad.mlir:4:18: error: argument 0 of @dtype (parameter 'w'): the archive holds F32 data, the argument is f16
// BAD: bad.mlir:7:18: error: argument 0 of @shape (parameter 'w'): the archive's tensor has shape [2x3], the argument 3x2
// BAD: bad.mlir:10:17: error: argument 0 of @bool (parameter 'w'): the archive holds F32 data, the argument is i1 (no safetensors dtype)
// NOFILE: error: argument 1 of @main (parameter 'w'): no parameter archive was given (kiln-compile --parameters=FILE.safetensors or FILE.npz, or --parameter-mode=load to give it when the module is loaded)
// MISSING: error: argument 1 of @main (parameter 'w'): cannot read parameter archive '{{.*}}missing.safetensors': No such file or directory
// CUT: error: argument 1 of @main (parameter 'w'): parameter archive '{{.*}}cut.safetensors' is not a valid safetensors file: its header length ({{[0-9]+}}) runs past the end of the file
// GARBAGE: error: argument 1 of @main (parameter 'w'): parameter archive '{{.*}}garbage.safetensors' is not a valid safetensors file: its header length ({{[0-9]+}}) runs past the end of the file
