// Load-time parameters (--parameter-mode=load): the module names its
// weights instead of holding them, for every target and with parallel
// codegen; kiln-run --parameters supplies them (safetensors and .npz,
// repeatable), and the result equals the compile-time-bound module's.
// REQUIRES: host-target, kiln-dump, kiln-run
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/../Inputs/make_safetensors.py %t/w.safetensors w:F32:4x4:1,0,0,0,0,2,0,0,0,0,3,0,0,0,0,4
// RUN: python3 %S/../Inputs/make_safetensors.py %t/b.safetensors b:F32:4:0.5,0.5,0.5,0.5
// RUN: python3 %S/../Inputs/make_safetensors.py %t/all.safetensors w:F32:4x4:1,0,0,0,0,2,0,0,0,0,3,0,0,0,0,4 b:F32:4:0.5,0.5,0.5,0.5
// RUN: python3 %S/../Inputs/make_safetensors.py %t/half.safetensors w:F16:4x4:1,0,0,0,0,2,0,0,0,0,3,0,0,0,0,4 b:F32:4:0.5,0.5,0.5,0.5
// RUN: kiln-compile %s --target=host,rocm,cuda --parameter-mode=load -o %t/load.vmfb --dump-intermediates=%t/par
// RUN: kiln-compile %s --target=host,rocm,cuda --parameter-mode=load -o %t/serial.vmfb --dump-intermediates=%t/ser --mlir-disable-threading
// RUN: diff -r %t/par %t/ser
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/par/03-host-lowering.mlir
// RUN: kiln-compile %s --target=host --parameters=%t/all.safetensors -o %t/bound.vmfb
// RUN: kiln-dump %t/load.vmfb | FileCheck %s --check-prefix=DUMP
// RUN: kiln-dump %t/load.vmfb --json | FileCheck %s --check-prefix=JSON
// RUN: kiln-run %t/load.vmfb --input=2x4xf32=1,1,1,1,2,2,2,2 --parameters=%t/w.safetensors --parameters=%t/b.safetensors | FileCheck %s --check-prefix=RESULT
// RUN: kiln-run %t/bound.vmfb --input=2x4xf32=1,1,1,1,2,2,2,2 | FileCheck %s --check-prefix=RESULT
// RUN: not kiln-run %t/load.vmfb --input=2x4xf32=1,1,1,1,2,2,2,2 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not kiln-run %t/load.vmfb --input=2x4xf32=1,1,1,1,2,2,2,2 --parameters=%t/w.safetensors 2>&1 | FileCheck %s --check-prefix=ABSENT
// RUN: not kiln-run %t/load.vmfb --input=2x4xf32=1,1,1,1,2,2,2,2 --parameters=%t/half.safetensors 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not kiln-run %t/load.vmfb --input=2x4xf32=1,1,1,1,2,2,2,2 --parameters=%t/all.safetensors --parameters=%t/w.safetensors 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not kiln-run %t/load.vmfb --parameters=%t/missing.safetensors 2>&1 | FileCheck %s --check-prefix=MISSING
// An archive given with --parameter-mode=load is checked, not embedded.
// RUN: kiln-compile %s --target=host --parameter-mode=load --parameters=%t/all.safetensors -o %t/checked.vmfb
// RUN: kiln-dump %t/checked.vmfb | FileCheck %s --check-prefix=DUMP
// RUN: not kiln-compile %s --target=host --parameter-mode=load --parameters=%t/half.safetensors -o %t/x.vmfb 2>&1 | FileCheck %s --check-prefix=CHECKED
// RUN: not kiln-compile %s --target=host --parameter-mode=eventually -o %t/x.vmfb 2>&1 | FileCheck %s --check-prefix=FLAG

// After host lowering the parameters are rodata that names them.
// IR: kiln.rodata @main_parameter_0 parameter "w" : tensor<4x4xf32> {alignment = 64 : i64}
// IR: kiln.rodata @main_parameter_1 parameter "b" : tensor<4xf32> {alignment = 64 : i64}
// IR: kiln.program @main : (tensor<2x4xf32>) -> tensor<2x4xf32>
// The module holds no weight bytes: two parameter segments.
// DUMP: main(2x4xf32) -> (2x4xf32)
// DUMP: rodata (2):
// DUMP-NEXT: 0: main_parameter_0 load-time parameter 'w' 4x4xf32, alignment 64
// DUMP-NEXT: 1: main_parameter_1 load-time parameter 'b' 4xf32, alignment 64
// DUMP-NEXT: total: 0 bytes (in the module)
// JSON: "rodata": [
// JSON-NEXT: {"name": "main_parameter_0", "bytes": 0, "alignment": 64, "parameter": "w", "type": "4x4xf32"},
// JSON-NEXT: {"name": "main_parameter_1", "bytes": 0, "alignment": 64, "parameter": "b", "type": "4xf32"}]}
// RESULT: result[0]: 2x4xf32=[1.5 2.5 3.5 4.5][2.5 4.5 6.5 8.5]
// NONE: error: module '{{.*}}load.vmfb' needs 2 load-time parameters, the first 'w' (4x4xf32), and none were given
// ABSENT: error: module '{{.*}}load.vmfb' needs parameter 'b' (4xf32), which no parameter given has; the parameters given have: 'w'
// TYPE: error: parameter 'w' of module '{{.*}}load.vmfb': expected 4x4xf32, found F16 [4, 4] in archive '{{.*}}half.safetensors'
// TWICE: error: parameter 'w' of archive '{{.*}}w.safetensors' is also in archive '{{.*}}all.safetensors'
// MISSING: error: cannot open parameter archive '{{.*}}missing.safetensors': No such file or directory
// CHECKED: load-time-parameters.mlir:[[@LINE+3]]:17: error: argument 1 of @main (parameter 'w'): the archive holds F16 data, the argument is f32
// FLAG: --parameter-mode must be 'compile' or 'load', not 'eventually'
func.func @main(%x: tensor<2x4xf32>,
                %w: tensor<4x4xf32> {kiln.parameter = "w"},
                %b: tensor<4xf32> {kiln.parameter = "b"}) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>)
                     outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %bb = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<2x4xf32>) dimensions = [0]
  %r = linalg.add ins(%m, %bb : tensor<2x4xf32>, tensor<2x4xf32>)
                  outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
