// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-compile %s --target=cuda,rocm --cuda-chip=sm_90 --rocm-chip=gfx942,gfx1100 \
// RUN:   --collective-kernel-max-bytes=65536 -o %t/m.vmfb --dump-intermediates=%t/dump
// RUN: FileCheck %s --check-prefix=PTX < %t/dump/main_all_reduce_0/main_all_reduce_0.sm_90.ptx
// RUN: llvm-objdump -d --mcpu=gfx942 %t/dump/main_all_reduce_0/main_all_reduce_0.gfx942.hsaco | FileCheck %s --check-prefix=GFX942
// RUN: llvm-objdump -d --mcpu=gfx1100 %t/dump/main_all_reduce_0/main_all_reduce_0.gfx1100.hsaco | FileCheck %s --check-prefix=GFX1100

// A compiled all_reduce whose chunks split into 16-byte vectors: the copy
// into the own window and the reduction of the peers' data move 128 bits
// per access (compiled-collectives-gpu.mlir has the scalar form and the
// memory orderings).
// The copy: send (a binding) into the own window.
// PTX:        ld.global.v4.b32
// PTX-NEXT:   st.global.v4.b32
// PTX:        st.release.sys.b64
// PTX:        ld.acquire.sys.global.b64
// The peers' data (generic addresses from the peer table), then recv.
// PTX:        ld.v4.b32
// PTX-NEXT:   ld.v4.b32
// PTX:        add.rn.f32
// PTX:        st.global.v4.b32
// PTX-NOT:    ld.f32
// GFX942:      global_load_dwordx4
// GFX942:      global_store_dwordx4
// GFX942:      flat_load_dwordx4
// GFX942:      flat_load_dwordx4
// GFX942:      global_store_dwordx4
// GFX1100:     global_load_b128
// GFX1100:     global_store_b128
// GFX1100:     flat_load_b128
// GFX1100:     flat_load_b128
// GFX1100:     global_store_b128

shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [0] reduction = sum : tensor<4096xf32> -> tensor<4096xf32>
  return %0 : tensor<4096xf32>
}
