// Attention written in linalg (Inputs/attention_f16.mlir: 2 batches of 128
// query rows, 192 keys, head dim 64, f16) is one fused kernel when every
// target has one (cuda on sm_90: 2 workgroups of 128 threads, one per 128
// query rows of a batch, 36864 bytes of
// shared memory), and six kernels when a target has none (host).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %S/Inputs/attention_f16.mlir --target=cuda -o %t/cuda.vmfb --dump-intermediates=%t/dump
// RUN: kiln-dump %t/cuda.vmfb | FileCheck %s --check-prefix=CUDA
// RUN: FileCheck %s --check-prefix=PTX < %t/dump/main_dispatch_0/main_dispatch_0.sm_90.ptx
// RUN: kiln-compile %S/Inputs/attention_f16.mlir --target=cuda,host -o %t/mixed.vmfb
// RUN: kiln-dump %t/mixed.vmfb | FileCheck %s --check-prefix=MIXED
// The same with a causal mask on the scores (Inputs/attention_causal_f16.mlir):
// one kernel; the 128 query rows of a workgroup need 2 of the 3 key blocks,
// and keys after a query are -inf.
// RUN: kiln-compile %S/Inputs/attention_causal_f16.mlir --target=cuda -o %t/causal.vmfb --dump-intermediates=%t/causal
// RUN: kiln-dump %t/causal.vmfb | FileCheck %s --check-prefix=CAUSAL
// RUN: FileCheck %s --check-prefix=CAUSAL-LOOP < %t/causal/main_dispatch_0/main_dispatch_0.sm_90.03-distribute.mlir

// CUDA: executables (1):
// CUDA: export 0: main_dispatch_0 workgroup count 2x1x1, workgroup size 128x1x1, bindings 4, push constants 0, shared memory 36864,

// The kernel's instructions: cp.async copies of Q, K and V, ldmatrix (with
// .trans for V), mma.sync m16n8k16 for both products, butterfly shuffles
// for the row max and sum, no local memory (spills).
// PTX-NOT: .local
// PTX: cp.async.cg.shared.global
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: shfl.sync.bfly.b32
// PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: bar.sync

// MIXED: executables (6):

// CAUSAL: executables (1):
// CAUSAL-LOOP: scf.for %{{.*}} = %c0{{.*}} to %c2 step
// CAUSAL-LOOP: arith.cmpi ugt
// CAUSAL-LOOP: arith.select
