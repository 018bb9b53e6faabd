// REQUIRES: host-target, kiln-dump
// One module for every target: each executable has one variant per target
// chip, all with the same exports in the same order, each with its own
// workgroup count and the pipeline's workgroup size; HSACO variants carry the
// register counts read back from the code object.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=rocm,cuda,host --rocm-chip=gfx942,gfx1100 --cuda-chip=sm_80,sm_90 -o %t/m.vmfb --dump-intermediates=%t/dump
// RUN: kiln-dump %t/m.vmfb | FileCheck %s --check-prefix=DUMP
// RUN: kiln-dump %t/m.vmfb --resources | FileCheck %s --check-prefix=RESOURCES
// RUN: llvm-readobj --notes %t/dump/main_dispatch_0/main_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=NOTES942
// RUN: llvm-readobj --notes %t/dump/main_dispatch_0/main_dispatch_0.gfx1100.hsaco | FileCheck %s --check-prefix=NOTES1100
// RUN: llvm-objdump -d --mcpu=gfx942 %t/dump/main_dispatch_0/main_dispatch_0.gfx942.hsaco | FileCheck %s --check-prefix=ISA
// RUN: FileCheck %s --check-prefix=PTX < %t/dump/main_dispatch_0/main_dispatch_0.sm_90.ptx
// The default target is host alone; --target=rocm alone defaults to gfx942.
// RUN: kiln-compile %s -o %t/host.vmfb
// RUN: kiln-dump %t/host.vmfb | FileCheck %s --check-prefix=HOSTONLY
// RUN: kiln-compile %s --target=rocm,cuda -o %t/gpu.vmfb
// RUN: kiln-dump %t/gpu.vmfb | FileCheck %s --check-prefix=DEFAULTS

// DUMP: executables (1):
// DUMP-NEXT: 0: main_dispatch_0
// DUMP-NEXT: variant rocm:gfx942: format hsaco
// DUMP-NEXT: export 0: main_dispatch_0 workgroup count {{[0-9]+x[0-9]+x[0-9]+}}, workgroup size {{[0-9]+x[0-9]+x[0-9]+}}, bindings 3, push constants 0
// DUMP-NEXT: variant rocm:gfx1100: format hsaco
// DUMP-NEXT: export 0: main_dispatch_0
// DUMP-NEXT: variant cuda:sm_80: format ptx
// DUMP-NEXT: export 0: main_dispatch_0
// DUMP-NEXT: variant cuda:sm_90: format ptx
// DUMP-NEXT: export 0: main_dispatch_0
// DUMP-NEXT: variant host:x86_64: format elf-so-v1
// DUMP-NEXT: export 0: main_dispatch_0 {{.*}} workgroup size 1x1x1, bindings 3

// RESOURCES: kernel target workgroup count vgpr sgpr agpr lds scratch
// RESOURCES-NEXT: main_dispatch_0 rocm:gfx942 {{[0-9x]+}} {{[0-9x]+}} {{[1-9][0-9]*}} {{[1-9][0-9]*}} {{[0-9]+}} {{[0-9]+}} 0
// RESOURCES-NEXT: main_dispatch_0 rocm:gfx1100 {{[0-9x]+}} {{[0-9x]+}} {{[1-9][0-9]*}} {{[1-9][0-9]*}} 0 {{[0-9]+}} 0
// RESOURCES-NEXT: main_dispatch_0 cuda:sm_80
// RESOURCES-NEXT: main_dispatch_0 cuda:sm_90
// RESOURCES-NEXT: main_dispatch_0 host:x86_64 1x1x1

// NOTES942: .kernarg_segment_size:
// NOTES942: .name: main_dispatch_0
// NOTES942: .wavefront_size: 64
// NOTES1100: .name: main_dispatch_0
// NOTES1100: .wavefront_size: 32

// ISA-LABEL: <main_dispatch_0>:
// ISA: global_load
// ISA: v_exp_f32
// ISA: global_store
// ISA: s_endpgm

// PTX: .target sm_90
// PTX: .entry main_dispatch_0(

// HOSTONLY: variant host:x86_64
// HOSTONLY-NOT: variant
// DEFAULTS: variant rocm:gfx942: format hsaco
// DEFAULTS-NEXT: export 0
// DEFAULTS-NEXT: variant cuda:sm_90: format ptx
// DEFAULTS-NOT: variant

func.func @main(%a: tensor<4x256xf32>, %b: tensor<4x256xf32>) -> tensor<4x256xf32> {
  %0 = arith.addf %a, %b : tensor<4x256xf32>
  %1 = math.exp %0 : tensor<4x256xf32>
  return %1 : tensor<4x256xf32>
}
