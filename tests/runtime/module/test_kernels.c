// Host kernels for the runtime tests, compiled into a real ELF shared object
// and embedded in test modules as the "host:x86_64" variant, exactly like
// kiln-compile's output (runtime/include/kiln/host_abi.h).
#include <stdint.h>

#include "kiln/host_abi.h"

// out = a + b over f32 bindings (a, b, out). Each workgroup x handles one
// contiguous chunk, so any workgroup count covers the tensor.
int32_t add_f32(const kiln_host_dispatch_state_t* state, uint32_t x,
                uint32_t y, uint32_t z) {
  (void)y;
  (void)z;
  if (state->binding_count != 3) return 1;
  const float* a = (const float*)state->bindings[0];
  const float* b = (const float*)state->bindings[1];
  float* out = (float*)state->bindings[2];
  uint64_t n = state->binding_lengths[2] / sizeof(float);
  if (state->binding_lengths[0] < n * sizeof(float) ||
      state->binding_lengths[1] < n * sizeof(float)) {
    return 2;
  }
  uint64_t groups = state->workgroup_count[0];
  uint64_t chunk = (n + groups - 1) / groups;
  uint64_t begin = x * chunk;
  uint64_t end = begin + chunk < n ? begin + chunk : n;
  for (uint64_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
  return 0;
}

// Always fails: lets tests check that kernel errors reach the caller.
int32_t fail_always(const kiln_host_dispatch_state_t* state, uint32_t x,
                    uint32_t y, uint32_t z) {
  (void)state;
  (void)x;
  (void)y;
  (void)z;
  return 42;
}
