// Host kernels (kiln/host_abi.h) used by the HAL conformance suite. Built as
// a shared object whose bytes the tests feed to the executable cache, just as
// the module loader does with a .vmfb's "elf-so-v1" variant.
#include <stdint.h>

#include "kiln/host_abi.h"

#define KILN_CTS_EXPORT __attribute__((visibility("default")))

// out[i] = a[i] + b[i] for i < push_constants[0]; 64 elements per workgroup x.
KILN_CTS_EXPORT int32_t cts_add_f32(const kiln_host_dispatch_state_t* state,
                                    uint32_t x, uint32_t y, uint32_t z) {
  (void)y;
  (void)z;
  if (state->binding_count != 3 || state->push_constant_count != 1) return 1;
  const float* a = (const float*)state->bindings[0];
  const float* b = (const float*)state->bindings[1];
  float* out = (float*)state->bindings[2];
  uint32_t n = state->push_constants[0];
  if ((uint64_t)n * sizeof(float) > state->binding_lengths[2]) return 2;
  uint32_t begin = x * 64;
  uint32_t end = begin + 64 < n ? begin + 64 : n;
  for (uint32_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
  return 0;
}

// Increments counters[linear workgroup id] (uint32) so a test can check that
// each workgroup of a 3D grid ran exactly once.
KILN_CTS_EXPORT int32_t cts_mark_grid(const kiln_host_dispatch_state_t* state,
                                      uint32_t x, uint32_t y, uint32_t z) {
  uint32_t* counters = (uint32_t*)state->bindings[0];
  const uint32_t* count = state->workgroup_count;
  uint64_t index = ((uint64_t)z * count[1] + y) * count[0] + x;
  if ((index + 1) * sizeof(uint32_t) > state->binding_lengths[0]) return 3;
  __atomic_fetch_add(&counters[index], 1u, __ATOMIC_RELAXED);
  return 0;
}

// Fails (returns push_constants[1]) in workgroup x == push_constants[0].
KILN_CTS_EXPORT int32_t cts_fail_at(const kiln_host_dispatch_state_t* state,
                                    uint32_t x, uint32_t y, uint32_t z) {
  (void)y;
  (void)z;
  return x == state->push_constants[0] ? (int32_t)state->push_constants[1] : 0;
}

// Symmetric-window put (kiln_hal_window_*): binding 0 is the peer table (2 x
// count 64-bit addresses: every rank's data, then every rank's signals);
// push constants are this rank and the rank count. Writes 100 + rank into
// 32-bit word |rank| of every rank's data, then stores 1 into 64-bit
// signal slot |rank| of every rank (release: the data is visible to a
// reader that sees the signal). One workgroup.
KILN_CTS_EXPORT int32_t cts_window_put(const kiln_host_dispatch_state_t* state,
                                       uint32_t x, uint32_t y, uint32_t z) {
  (void)x;
  (void)y;
  (void)z;
  if (state->binding_count != 1 || state->push_constant_count != 2) return 1;
  uint32_t rank = state->push_constants[0];
  uint32_t count = state->push_constants[1];
  if ((uint64_t)2 * count * sizeof(uint64_t) > state->binding_lengths[0])
    return 2;
  const uint64_t* table = (const uint64_t*)state->bindings[0];
  for (uint32_t peer = 0; peer < count; ++peer) {
    uint32_t* data = (uint32_t*)(uintptr_t)table[peer];
    uint64_t* signals = (uint64_t*)(uintptr_t)table[count + peer];
    __atomic_store_n(&data[rank], 100u + rank, __ATOMIC_RELAXED);
    __atomic_store_n(&signals[rank], (uint64_t)1, __ATOMIC_RELEASE);
  }
  return 0;
}

// Copies the group's abort word (the peer table's last entry points at it)
// into binding 1. Bindings: the peer table, an 8-byte result. Push
// constants: the group size.
KILN_CTS_EXPORT int32_t
cts_window_abort_word(const kiln_host_dispatch_state_t* state, uint32_t x,
                      uint32_t y, uint32_t z) {
  (void)x;
  (void)y;
  (void)z;
  if (state->binding_count != 2 || state->push_constant_count != 1) return 1;
  uint32_t count = state->push_constants[0];
  if (((uint64_t)2 * count + 1) * sizeof(uint64_t) >
          state->binding_lengths[0] ||
      state->binding_lengths[1] < sizeof(uint64_t))
    return 2;
  const uint64_t* table = (const uint64_t*)state->bindings[0];
  const uint64_t* word = (const uint64_t*)(uintptr_t)table[2 * count];
  *(uint64_t*)state->bindings[1] = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  return 0;
}
