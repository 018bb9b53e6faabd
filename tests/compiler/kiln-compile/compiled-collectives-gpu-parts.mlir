// REQUIRES: kiln-dump
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=cuda,rocm --cuda-chip=sm_90 --rocm-chip=gfx942 \
// RUN:   --collective-kernel-max-bytes=1048576 --collective-two-shot-min-bytes=65536 \
// RUN:   -o %t/m.vmfb --dump-intermediates=%t/dump
// RUN: FileCheck %s --check-prefix=TWOSHOT --implicit-check-not=fence < %t/dump/main_all_reduce_two_shot_0/main_all_reduce_two_shot_0.sm_90.ptx
// RUN: llvm-objdump -d --mcpu=gfx942 %t/dump/main_all_reduce_two_shot_0/main_all_reduce_two_shot_0.gfx942.hsaco | FileCheck %s --check-prefix=TWOSHOT942
// RUN: FileCheck %s --check-prefix=SCATTER < %t/dump/main_reduce_scatter_1/main_reduce_scatter_1.sm_90.ptx
// RUN: FileCheck %s --check-prefix=NOSCRATCH < %t/dump/main_all_reduce_two_shot_0/main_all_reduce_two_shot_0.gfx942.s
// RUN: FileCheck %s --check-prefix=NOSCRATCH < %t/dump/main_reduce_scatter_1/main_reduce_scatter_1.gfx942.s

// A two-shot all_reduce (256 KiB per rank over 4 ranks, above the 64 KiB
// threshold given): the copy of the workgroup's chunk of all 4 parts (128-bit
// accesses, parts 64 KiB apart), phase 1's signal and wait, the reduction of
// the own part from 4 peers into the own window, then phase 2's signal (its
// flags 8 slots = 2 KiB further: 64 workgroups x 4 ranks) and wait, and the
// gather. Both phases order the workgroup's writes before the signal (a
// barrier, then release stores) and the peers' data after the wait (acquire
// loads, then a barrier), without fences.
// TWOSHOT-COUNT-4: st.global.v4.b32
// TWOSHOT:         bar.sync 0;
// TWOSHOT:         st.release.sys.b64 [{{%rd[0-9]+}}], [[EPOCH:%rd[0-9]+]];
// TWOSHOT:         ld.acquire.sys.global.b64
// TWOSHOT:         bar.sync 0;
// TWOSHOT-COUNT-4: ld.v4.b32
// TWOSHOT:         st.global.v4.b32
// TWOSHOT:         bar.sync 0;
// TWOSHOT:         st.release.sys.b64 [{{%rd[0-9]+}}+2048], [[EPOCH]];
// TWOSHOT:         ld.acquire.sys.global.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}+2048];
// TWOSHOT:         bar.sync 0;
// TWOSHOT:         ld.v4.b32
// TWOSHOT:         st.global.v4.b32
// TWOSHOT-NOT:     .local
// TWOSHOT942-COUNT-4: global_store_dwordx4
// TWOSHOT942:         buffer_wbl2 sc0 sc1
// TWOSHOT942:         flat_store_dwordx2 {{.*}} sc0 sc1
// TWOSHOT942:         buffer_inv sc0 sc1
// TWOSHOT942-COUNT-4: flat_load_dwordx4
// TWOSHOT942:         global_store_dwordx4
// TWOSHOT942:         buffer_wbl2 sc0 sc1
// TWOSHOT942:         flat_store_dwordx2 {{.*}} sc0 sc1
// TWOSHOT942:         buffer_inv sc0 sc1
// TWOSHOT942:         flat_load_dwordx4
// TWOSHOT942:         global_store_dwordx4

// A reduce_scatter of f16 (4 parts of 1024): the workgroup copies its chunk
// of every part (2 KiB apart) and reduces only its own part, in f32.
// SCATTER:     ld.global.v4.b32 {{.*}}, [[[SEND:%rd[0-9]+]]];
// SCATTER:     ld.global.v4.b32 {{.*}}, [[[SEND]]+2048];
// SCATTER:     ld.global.v4.b32 {{.*}}, [[[SEND]]+4096];
// SCATTER:     ld.global.v4.b32 {{.*}}, [[[SEND]]+6144];
// SCATTER:     st.release.sys.b64
// SCATTER:     ld.acquire.sys.global.b64
// SCATTER-COUNT-4: ld.v4.b32
// SCATTER:     cvt.f32.f16
// SCATTER:     max.NaN.f32
// SCATTER:     cvt.rn.f16x2.f32
// SCATTER:     st.global.v4.b32
// SCATTER-NOT: st.release.sys.b64
// NOSCRATCH: .private_segment_fixed_size: 0
// NOSCRATCH: .vgpr_spill_count: 0

shard.grid @grid(shape = 4)
func.func @main(%x: tensor<65536xf32>, %y: tensor<4x1024xf16>) -> (tensor<65536xf32>, tensor<1x1024xf16>) {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = sum : tensor<65536xf32> -> tensor<65536xf32>
  %1 = shard.reduce_scatter %y on @grid grid_axes = [0] reduction = max scatter_axis = 0 : tensor<4x1024xf16> -> tensor<1x1024xf16>
  return %0, %1 : tensor<65536xf32>, tensor<1x1024xf16>
}
