// REQUIRES: kiln-dump
// Every program of the e2e corpus compiles for every ROCm chip Kiln supports
// and for CUDA, and no HSACO kernel uses scratch (register spills or stack),
// as read back from the code objects by kiln-dump --resources. Programs the
// GPU pipeline cannot compile yet are listed, with the reason, in
// Inputs/gpu-corpus-known-failures.txt. Programs with kiln.parameter
// arguments compile with load-time parameters (the corpus holds no archives).
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/compile_corpus_for_gpu.py %S/../../e2e %t --known-failures %S/Inputs/gpu-corpus-known-failures.txt -- --target=rocm,cuda --rocm-chip=gfx90a,gfx942,gfx950,gfx1100,gfx1201 --cuda-chip=sm_80,sm_90 --parameter-mode=load | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: compiled {{[0-9]+}} programs, 0 failed
