// Bad inputs give a located error and a non-zero exit, never a crash.
// RUN: split-file %s %t
// RUN: not kiln-compile %t/dynamic.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: not kiln-compile %t/control-flow.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=CF
// RUN: not kiln-compile %t/unknown-op.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not kiln-compile %t/bad-type.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not kiln-compile %t/malformed.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not kiln-compile %t/unsupported-op.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=BADOP
// RUN: not kiln-compile %t/dynamic.mlir --target=vulkan -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not kiln-compile %t/dynamic.mlir --target=rocm,hots -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TGTTYPO
// RUN: not kiln-compile %t/dynamic.mlir --target=rocm,,host -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TGTEMPTY
// RUN: not kiln-compile %t/dynamic.mlir --target=host,host -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=TGTTWICE
// RUN: not kiln-compile %t/dynamic.mlir --target=rocm --rocm-chip=gfx941 -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not kiln-compile %t/dynamic.mlir --target=host --rocm-chip=gfx942 -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=CHIPTGT
// RUN: not kiln-compile %t/dynamic.mlir --compile-mode=executable -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not kiln-compile %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln-compile %t/add.mlir --target=host --host-cpu=foo -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=HOSTCPU
// RUN: not kiln-compile %t/grid0.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=GRID0
// A crash inside upstream MLIR (the dense-array parser on an index element
// type, LLVM 22) ends with Kiln's internal-compiler-error report first.
// RUN: not --crash kiln-compile %t/crash.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=ICE
// RUN: not test -e %t/out.vmfb
// Upstream's linalg.reduce parser dereferences a null attribute after
// reporting a malformed `dimensions =` (found by tests/fuzz compile_fuzzer):
// kiln-compile ends at the first parse error, so the user sees it and exit
// status 1, not a crash.
// RUN: not kiln-compile %t/reduce-dims.mlir -o %t/out.vmfb 2>&1 | FileCheck %s --check-prefix=REDUCEDIMS
// A crash inside a pass names the pass and the op it ran on, for a phase of
// kiln-compile, a host codegen stage (on a function, in parallel) and a GPU
// codegen stage.
// RUN: not --crash kiln-compile %t/add.mlir --target=host -o %t/out.vmfb --kiln-debug-crash-before-pass=kiln-partition-shards 2>&1 | FileCheck %s --check-prefix=ICEPHASE
// RUN: not --crash kiln-compile %t/add.mlir --target=host -o %t/out.vmfb --kiln-debug-crash-before-pass=kiln-host-vectorize 2>&1 | FileCheck %s --check-prefix=ICEHOST
// RUN: not --crash kiln-compile %t/add.mlir --target=cuda -o %t/out.vmfb --kiln-debug-crash-before-pass=kiln-gpu-bufferize 2>&1 | FileCheck %s --check-prefix=ICEGPU

// DYNAMIC: dynamic.mlir:1:17: error: argument #0 of function 'main' has type 'tensor<?xf32>': dynamic shapes are not supported
// CF: control-flow.mlir:5:8: error: control flow is not supported: 'scf.for'
// UNKNOWN: unknown-op.mlir:2:8: error: Dialect `foo' not found for custom op 'foo.bar'
// TYPE: bad-type.mlir:1:17: error: argument #0 of function 'main' has type 'tensor<4xi4>': element type is not supported; supported: i1, i8, i16, i32, i64, f16, bf16, f32, f64
// MALFORMED: malformed.mlir:2:{{[0-9]+}}: error:
// BADOP: unsupported-op.mlir:2:8: error: operation 'memref.alloc' is not supported; Kiln accepts ops of func (without func.call), arith, math, linalg, tensor and tosa
// TARGET: kiln-compile: error: unsupported target 'vulkan'; supported targets: cuda, host, rocm
// TGTTYPO: kiln-compile: error: unsupported target 'hots'; supported targets: cuda, host, rocm
// TGTEMPTY: kiln-compile: error: --target='rocm,,host' has an empty item
// TGTTWICE: kiln-compile: error: --target lists 'host' twice
// CHIP: kiln-compile: error: --rocm-chip: unknown ROCm chip 'gfx941'; known chips: gfx908, gfx90a, gfx942, gfx950, gfx1030, gfx1100, gfx1101, gfx1102, gfx1151, gfx1200, gfx1201
// CHIPTGT: kiln-compile: error: --rocm-chip needs --target=rocm
// REDUCEDIMS: reduce-dims.mlir:5:{{[0-9]+}}: error: expected '['
// REDUCEDIMS-NOT: internal compiler error
// GRID0: grid0.mlir:1:1: error: shard.grid 'grid' axis 0 has extent 0: every axis needs at least one device
// ICE: kiln-compile: internal compiler error (a crash in Kiln or in MLIR/LLVM code it called), not a problem with your program's syntax. Please report it with the input file and the command line below.
// ICE-NEXT: Stack dump:
// ICEPHASE: kiln-compile: internal compiler error
// ICEPHASE: running pass 'kiln-partition-shards' on 'builtin.module'
// ICEHOST: kiln-compile: internal compiler error
// ICEHOST: running pass 'kiln-host-vectorize' on 'func.func @{{.*}}'
// ICEGPU: kiln-compile: internal compiler error
// ICEGPU: running pass 'kiln-gpu-bufferize' on 'builtin.module @main_dispatch_0'
// HOSTCPU-NOT: is not a recognized processor
// HOSTCPU: add.mlir:{{[0-9]+}}:{{[0-9]+}}: error: host target: unknown CPU 'foo' (--host-cpu); use 'native' for this machine or one of: {{.*}}skylake{{.*}}znver4
// MODE: dynamic.mlir:1:1: error: --compile-mode=executable expects only kiln.executable ops, found 'func.func'
// MISSING: kiln-compile: error: {{.*}}missing.mlir

//--- dynamic.mlir
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
//--- control-flow.mlir
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> tensor<4xf32> {
    scf.yield %acc : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
//--- unknown-op.mlir
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = foo.bar %a : tensor<4xf32>
  return %r : tensor<4xf32>
}
//--- bad-type.mlir
func.func @main(%a: tensor<4xi4>) -> tensor<4xi4> {
  return %a : tensor<4xi4>
}
//--- malformed.mlir
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, : tensor<4xf32>
  return %r : tensor<4xf32>
}
//--- unsupported-op.mlir
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  return %a : tensor<4xf32>
}

//--- add.mlir
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}

//--- grid0.mlir
shard.grid @grid(shape = 0)
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = shard.reduce_scatter %a on @grid grid_axes = [0] scatter_axis = 0 : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

//--- crash.mlir
module attributes {x = array<index: 1>} {}
//--- reduce-dims.mlir
func.func @main(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%x : tensor<4x6xf32>) outs(%init : tensor<4xf32>) dimensions =}
  return %r : tensor<4xf32>
}
