# CLI tests of `kiln-benchmark collective` on local devices with tiny sizes:
# each case runs the tool and checks its exit code and output. Run by ctest as
#   cmake -DKILN_BENCHMARK=... -P kiln_benchmark_collective_test.cmake

include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)

set(B ${KILN_BENCHMARK} collective)
set(TINY --min-bytes=8 --max-bytes=4K --step-factor=8 --iters=3 --warmup=1)
# A row: size, count, type, time, algbw, busbw, then #wrong = 0.
set(ROW "[0-9]+ +[0-9]+ +[a-z0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0")

expect(help 0 "usage: kiln-benchmark collective.*busbw = algbw \\* factor"
  ${B} --help)
expect(all_reduce 0 "all_reduce f32 sum on 4 ranks \\(local://0 local://1 local://2 local://3\\).*\n +8 +2 +f32 [^\n]* 0\n +64 +16 +f32 .*\n +4096 +1024 +f32 [^\n]* 0\n# Avg bus bandwidth"
  ${B} --device=local --ranks=4 ${TINY} --check)
expect(all_gather_devices 0 "all_gather i32  on 2 ranks \\(local://1 local://3\\).*\n +8 +1 +i32 [^\n]* 0\n"
  ${B} --device=local://1 --device=local://3 --op=all_gather --dtype=i32 ${TINY} --check)
expect(reduce_scatter 0 "reduce_scatter bf16 max on 3 ranks.*\n +6 +3 +bf16 [^\n]* 0\n"
  ${B} --device=local --ranks=3 --op=reduce_scatter --dtype=bf16 --reduction=max ${TINY} --check)
expect(all_to_all 0 "all_to_all u8 .*${ROW}"
  ${B} --device=local --ranks=2 --op=all_to_all --dtype=u8 ${TINY} --check)
expect(broadcast 0 "broadcast f64 .*${ROW}"
  ${B} --device=local --ranks=3 --op=broadcast --root=2 --dtype=f64 ${TINY} --check)
expect(avg_i16 0 "all_reduce i16 avg.*${ROW}"
  ${B} --device=local --ranks=4 --dtype=i16 --reduction=avg ${TINY} --check)
expect(memcpy_reference 0 "memcpy\n.*\\(GB/s\\)\n +8 +2 +f32 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n"
  ${B} --device=local --ranks=2 ${TINY} --reference=memcpy)
expect(suffixes 0 "\n +1024 +256 +f32 .*\n +2048 +512 +f32 [^\n]*\n# Avg"
  ${B} --device=local --ranks=2 --min-bytes=1K --max-bytes=2K --iters=1 --warmup=0)
expect(repeat 0 "warmup 1, median of 4\n.*\n +8 +2 +f32 [^\n]* 0\n"
  ${B} --device=local --ranks=2 ${TINY} --repeat=4 --check)

# Errors: "error:" and a non-zero exit.
expect(no_device 1 "error: no --device given" ${B} --ranks=2)
expect(unknown_op 1 "error: unknown --op 'all_sum' \\(expected one of all_reduce, all_gather"
  ${B} --device=local --op=all_sum)
expect(unknown_dtype 1 "error: unknown --dtype 'i1'" ${B} --device=local --dtype=i1)
expect(bad_bytes 1 "error: invalid --max-bytes '1T'" ${B} --device=local --max-bytes=1T)
expect(min_over_max 1 "error: --min-bytes \\(2048\\) is larger than --max-bytes \\(1024\\)"
  ${B} --device=local --min-bytes=2K --max-bytes=1K)
expect(bad_step 1 "error: invalid --step-factor '1'" ${B} --device=local --step-factor=1)
expect(bad_iters 1 "error: invalid --iters '0'" ${B} --device=local --iters=0)
expect(bad_repeat 1 "error: invalid --repeat '0'" ${B} --device=local --repeat=0)
# Multi-process mode (one process per rank): what it needs, and the local
# driver, whose channels do not cross processes, refused.
expect(mp_incomplete 1 "error: a multi-process run needs --rank, --world-size and --rendezvous together"
  ${B} --device=local://0 --rank=0)
expect(mp_rank_range 1 "error: --rank=2 is not a rank of --world-size=2"
  ${B} --device=local://0 --rank=2 --world-size=2 --rendezvous=file:${CMAKE_CURRENT_BINARY_DIR}/rdv)
expect(mp_one_device 1 "error: a multi-process run takes one --device=URI naming this rank's device"
  ${B} --device=local --rank=0 --world-size=2 --rendezvous=file:${CMAKE_CURRENT_BINARY_DIR}/rdv)
expect(mp_local 1 "error: --device=local://1: the local driver's channels only connect devices of one process"
  ${B} --device=local://1 --rank=1 --world-size=2 --rendezvous=file:${CMAKE_CURRENT_BINARY_DIR}/rdv)
expect(mp_world_size 1 "error: invalid --world-size '1'" ${B} --device=local --world-size=1)
expect(one_rank 1 "error: a collective benchmark needs at least 2 ranks"
  ${B} --device=local --ranks=1)
expect(uri_with_ranks 1 "error: --device=local://1 names one device but --ranks=2"
  ${B} --device=local://1 --ranks=2)
expect(ranks_mismatch 1 "error: --ranks=3 but 2 --device flags"
  ${B} --device=local://0 --device=local://1 --ranks=3)
expect(too_many_ranks 1 "error: .*local://4.*has 4 device.*rank 4 \\(--device=local://4\\)"
  ${B} --device=local --ranks=5 ${TINY})
expect(bad_root 1 "error: --root=3 is not a rank of 2"
  ${B} --device=local --op=broadcast --root=3)
expect(unknown_flag 1 "error: unknown or incomplete option '--bogus'"
  ${B} --device=local --bogus)
expect(no_whole_size 1 "error: no size in \\[--min-bytes, --max-bytes\\] holds a whole all_gather of f64 over 4 ranks"
  ${B} --device=local --ranks=4 --op=all_gather --dtype=f64 --min-bytes=8 --max-bytes=16)
