# CLI tests of kiln-run and kiln-dump: each case runs a tool and checks its
# exit code and output. Run by ctest as
#   cmake -DKILN_RUN=... -DKILN_DUMP=... -DMODULE=... -DWORK_DIR=... -P cli_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)

set(RUN ${KILN_RUN} ${MODULE})

expect(help 0 "usage: kiln-run.*--expected-output" ${KILN_RUN} --help)
expect(list_functions 0 "add\\(2x3xf32, 2x3xf32\\) -> \\(2x3xf32\\).*fill\\(\\) -> \\(4xi32\\)"
  ${RUN} --list-functions)
expect(list_devices 0 "^local://0\nlocal://1\n" ${KILN_RUN} --list-devices)
expect(add 0 "result\\[0\\]: 2x3xf32=\\[2 4 6\\]\\[8 10 12\\]"
  ${RUN} --function=add --device=local --input=2x3xf32=1,2,3,4,5,6
  --input=2x3xf32=1,2,3,4,5,6)
expect(splat_and_brackets 0 "result\\[0\\]: 2x3xf32=\\[2.5 3.5 4.5\\]\\[5.5 6.5 7.5\\]"
  ${RUN} --function=add "--input=2x3xf32=[1 2 3][4 5 6]" --input=2x3xf32=1.5)
expect(rodata_transient 0 "result\\[0\\]: 2x3xf32=\\[11 22 33\\]\\[44 55 66\\]"
  ${RUN} --function=add_bias --input=2x3xf32=1,2,3,4,5,6)
expect(device_ordinal 0 "result\\[0\\]: 4xi32=7 7 7 7"
  ${RUN} --function=fill --device=local://1)

# npy in and out: save the result, feed it back as an input.
expect(output_npy 0 "^$"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=2 --output=@${WORK_DIR}/y.npy)
expect(input_npy 0 "result\\[0\\]: 2x3xf32=\\[4 4 4\\]\\[4 4 4\\]"
  ${RUN} --function=add --input=@${WORK_DIR}/y.npy --input=2x3xf32=1)

# --expected-output with default and explicit tolerances.
expect(expected_match 0 "result\\[0\\]: matched.*all 1 outputs of 'add' matched"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=2
  --expected-output=2x3xf32=3,3,3,3,3,3.00001)
expect(expected_mismatch 1 "MISMATCH: 2 of 6 elements differ.*at \\[0, 1\\]: expected 4, got 3.*at \\[1, 2\\]: expected 3.1, got 3"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=2
  --expected-output=2x3xf32=3,4,3,3,3,3.1)
expect(expected_atol 0 "all 1 outputs of 'add' matched"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=2
  --expected-output=2x3xf32=3,3,3,3,3,3.1 --atol=0.2)
expect(expected_rtol 1 "MISMATCH"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=2
  --expected-output=2x3xf32=3,3,3,3,3,3.1 --rtol=0.001 --atol=0)
expect(expected_int_exact 1 "at \\[2\\]: expected 8, got 7"
  ${RUN} --function=fill --expected-output=4xi32=7,7,8,7)
# Expected outputs are checked against the signature before the call.
expect(expected_type 1 "error: --expected-output 0: expected 4xi32 for output 0 of function 'fill', got 4xi64"
  ${RUN} --function=fill --expected-output=4xi64=7)

# Errors: "error:" and a non-zero exit.
expect(missing_module 1 "error: cannot open module file '/no/such.vmfb'"
  ${KILN_RUN} /no/such.vmfb --function=add)
# A truncated copy of the module.
execute_process(COMMAND head -c 200 ${MODULE} OUTPUT_FILE ${WORK_DIR}/truncated.vmfb)
expect(corrupt_module 1 "error: module '.*truncated.vmfb' is truncated"
  ${KILN_RUN} ${WORK_DIR}/truncated.vmfb --function=add)
file(WRITE ${WORK_DIR}/foreign.vmfb "definitely not a flatbuffer module")
expect(foreign_module 1 "error: .*is not a Kiln module"
  ${KILN_RUN} ${WORK_DIR}/foreign.vmfb --function=add)
# Only regular files are read: /dev/zero, a directory or a FIFO is refused at
# once (no unbounded read, no open blocked on a FIFO without a writer).
execute_process(COMMAND mkfifo ${WORK_DIR}/fifo)
foreach(tool run dump)
  if(tool STREQUAL "run")
    set(tool_command ${KILN_RUN})
  else()
    set(tool_command ${KILN_DUMP})
  endif()
  expect(${tool}_dev_zero 1 "error: cannot read module file '/dev/zero': it is a character device, not a regular file"
    ${tool_command} /dev/zero)
  expect(${tool}_directory 1 "error: cannot read module file '.*work': it is a directory, not a regular file"
    ${tool_command} ${WORK_DIR})
  expect(${tool}_fifo 1 "error: cannot read module file '.*fifo': it is a FIFO, not a regular file"
    ${tool_command} ${WORK_DIR}/fifo)
endforeach()
expect(input_dev_zero 1 "error: --input 0: cannot read .npy file '/dev/zero': it is a character device"
  ${RUN} --function=add --input=@/dev/zero --input=2x3xf32=1)
expect(input_fifo 1 "error: --input 0: cannot read .npy file '.*fifo': it is a FIFO"
  ${RUN} --function=add --input=@${WORK_DIR}/fifo --input=2x3xf32=1)
expect(unknown_function 1 "error: function 'mul' not found.*add, add_bias, fill, fail"
  ${RUN} --function=mul)
expect(unknown_device 1 "error: .*'cuda'.*available devices: local://0"
  ${RUN} --function=add --device=cuda)
expect(wrong_input_count 1 "error: function 'add' expects 2 inputs \\(2x3xf32, 2x3xf32\\).*got 1"
  ${RUN} --function=add --input=2x3xf32=1)
expect(wrong_input_shape 1 "error: --input 1: expected 2x3xf32 for input 1 of function 'add', got 3x2xf32"
  ${RUN} --function=add --input=2x3xf32=1 --input=3x2xf32=1)
expect(wrong_input_type 1 "error: --input 0: expected 2x3xf32 for input 0 of function 'add', got 2x3xi32"
  ${RUN} --function=add --input=2x3xi32=1 --input=2x3xf32=1)
# Values are checked against the signature before anything is allocated: a
# 40 GB input or expected output for a 2x3 signature is a clear error, not an
# abort (std::bad_alloc) or an exhausted host.
expect(huge_input 1 "error: --input 0: expected 2x3xf32 for input 0 of function 'add', got 100000x100000xf32"
  ${RUN} --function=add --input=100000x100000xf32=0 --input=2x3xf32=1)
expect(huge_expected_output 1 "error: --expected-output 0: expected 2x3xf32 for output 0 of function 'add', got 100000x100000xf32"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=1 --expected-output=100000x100000xf32=0)
# Numbers: no hexadecimal, nothing beyond the type's range.
expect(hex_value 1 "error: --input 0: invalid f32 value '0x10' \\(expected a decimal number"
  ${RUN} --function=add --input=2x3xf32=0x10 --input=2x3xf32=1)
expect(overflowing_value 1 "error: --input 1: invalid f32 value '1e999' \\(out of the type's range\\)"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=1e999)
expect(print_max_elements 0 "result\\[0\\]: 2x3xf32=\\[2 2\\.\\.\\.
"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=1 --print-max-elements=2)
expect(print_max_elements_overflow 1 "error: invalid --print-max-elements '99999999999999999999' \\(expected an integer 0..18446744073709551615\\)"
  ${RUN} --function=add --print-max-elements=99999999999999999999)
expect(print_max_elements_fraction 1 "error: invalid --print-max-elements '1e3'"
  ${RUN} --function=add --print-max-elements=1e3)
expect(bad_value 1 "error: --input 1: invalid f32 value 'abc'"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=abc)
expect(bad_type 1 "error: --input 0: invalid tensor type '2x3xq7'"
  ${RUN} --function=add --input=2x3xq7=1 --input=2x3xf32=1)
expect(kernel_failure 1 "error: .*fail_always.*42"
  ${RUN} --function=fail --input=2x3xf32=1 --input=2x3xf32=1)
expect(expected_count 1 "error: function 'add' has 1 outputs but 2 --expected-output"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=1
  --expected-output=2x3xf32=2 --expected-output=2x3xf32=2)
expect(unknown_flag 1 "error: unknown option '--bogus'" ${RUN} --bogus)

# kiln-dump
expect(dump 0 "module: kiln_test.*version: 4.*add\\(2x3xf32, 2x3xf32\\) -> \\(2x3xf32\\).*transient: 64 bytes.*variant rocm:gfx942: format hsaco, binary 4 bytes.*variant host:x86_64: format elf-so-v1.*export 0: add_f32 workgroup count 4x1x1.*rodata \\(1\\).*bias 24 bytes"
  ${KILN_DUMP} ${MODULE})
expect(dump_commands 0 "copy input0\\[0, \\+24\\) -> transient\\[32, \\+24\\).*barrier.*bindings: transient\\[32, \\+24\\) rodata0\\[0, \\+24\\) output0\\[0, \\+24\\).*fill output0\\[0, \\+16\\) pattern 0x00000007"
  ${KILN_DUMP} ${MODULE} --commands)
expect(dump_corrupt 1 "error: module .* is truncated"
  ${KILN_DUMP} ${WORK_DIR}/truncated.vmfb)
expect(dump_missing 1 "error: cannot open module file" ${KILN_DUMP} /no/such.vmfb)

# SPMD functions: one thread per rank on local devices.
set(SPMD2 ${KILN_RUN} ${SPMD2_MODULE})
expect(spmd_all_reduce 0 "rank 0: result\\[0\\]: 4xf32=2 4 6 8\nrank 1: result\\[0\\]: 4xf32=2 4 6 8"
  ${SPMD2} --function=all_reduce --input=4xf32=1,2,3,4)
# --time: each rank reports the host time of its calls after the first.
expect(spmd_time 0 "rank 0: time per call: median=[0-9.]+ us mean=[0-9.]+ us min=[0-9.]+ us \\(4 calls after the first\\)\nrank 0: result.*rank 1: time per call: median=[0-9.]+ us"
  ${SPMD2} --function=all_reduce --input=4xf32=1,2,3,4 --repeat=5 --time)
expect(time_needs_repeat 1 "error: --time times the calls after the first: give --repeat=N with N >= 2"
  ${RUN} --function=add --input=2x3xf32=1 --input=2x3xf32=2 --time)
expect(spmd_local_n 0 "rank 1: result\\[0\\]: 4xf32=2 4 6 8"
  ${SPMD2} --function=all_reduce --device=local://2 --input=4xf32=1,2,3,4)
expect(spmd_device_per_rank 0 "rank 0: result\\[0\\]: 4xf32=2 4 6 8"
  ${SPMD2} --function=all_reduce --device=local://3 --device=local://1 --input=4xf32=1,2,3,4)
expect(spmd_wrong_rank_count 1 "error: function 'all_reduce' is an SPMD program for 2 ranks, but --device=local://3 asks for 3 ranks"
  ${SPMD2} --function=all_reduce --device=local://3 --input=4xf32=1)
expect(spmd_device_count 1 "error: function 'all_reduce' is an SPMD program for 2 ranks: give --device once per rank \\(got 3\\)"
  ${SPMD2} --function=all_reduce --device=local://0 --device=local://1 --device=local://2 --input=4xf32=1)
# Non-SPMD functions of the same module keep local://N = device ordinal N.
expect(spmd_module_plain_function 0 "^result\\[0\\]: 2x3xf32=\\[3 3 3\\]\\[3 3 3\\]"
  ${SPMD2} --function=add --device=local://3 --input=2x3xf32=1 --input=2x3xf32=2)
# Per-rank files: %r is the rank.
expect(spmd_write_per_rank 0 "^$"
  ${SPMD2} --function=all_gather --input=2xf32=1,2 --output=@${WORK_DIR}/g%r.npy)
# An .npy input of another type is refused from its header.
expect(npy_input_type 1 "error: --input 1: expected 2x3xf32 for input 1 of function 'add', got 4xf32; in '.*g0.npy'"
  ${RUN} --function=add --input=2x3xf32=1 --input=@${WORK_DIR}/g0.npy)
expect(spmd_read_per_rank 0 "rank 0: result\\[0\\]: 4xf32=2 4 2 4\nrank 1: result\\[0\\]: 4xf32=2 4 2 4"
  ${SPMD2} --function=all_reduce --input=@${WORK_DIR}/g%r.npy)
expect(spmd_expected_per_rank 0 "rank 0: result\\[0\\]: matched.*rank 1: all 1 outputs of 'all_reduce' matched"
  ${SPMD2} --function=all_reduce --input=4xf32=0.5,1,0.5,1 --expected-output=@${WORK_DIR}/g%r.npy)
expect(spmd_expected_mismatch 1 "rank 1: result\\[0\\]: MISMATCH.*error: rank 0: function 'all_reduce': outputs do not match"
  ${SPMD2} --function=all_reduce --input=4xf32=1 --expected-output=4xf32=3)
# Rank 1's input file is missing: reported with its rank, rank 0 does not
# run (it would wait for rank 1 in the collective), exit 1, no hang.
file(COPY_FILE ${WORK_DIR}/g0.npy ${WORK_DIR}/only0.npy)
expect(spmd_rank_failure 1 "error: rank 0: not run: another rank failed.*error: rank 1: --input 0: cannot open .npy file '.*only1.npy'"
  ${SPMD2} --function=all_reduce --input=@${WORK_DIR}/only%r.npy)
# A 2x3 grid: more ranks than the default 4 local devices, and sub-grid
# channels (rows of 3 ranks).
expect(spmd_six_ranks 0 "rank 5: result\\[0\\]: 4xf32=3 3 3 3"
  ${KILN_RUN} ${SPMD6_MODULE} --function=row_sum --input=4xf32=1)
# Multi-process: the local driver cannot, and the flags are checked.
expect(spmd_multiprocess_local 1 "error: .*across processes, but the local driver's collectives only connect devices of one process"
  ${SPMD2} --function=all_reduce --rank=1 --world-size=2 --rendezvous=file:${WORK_DIR} --input=4xf32=1)
expect(spmd_world_size_mismatch 1 "error: .*SPMD program for 2 ranks, but --world-size \\(or the launcher\\) says 3"
  ${SPMD2} --function=all_reduce --rank=1 --world-size=3 --input=4xf32=1)
expect(spmd_rank_without_size 1 "error: --rank and --world-size go together"
  ${SPMD2} --function=all_reduce --rank=1 --input=4xf32=1)
expect(spmd_launcher_env 1 "error: .*2 ranks, but --world-size \\(or the launcher\\) says 4"
  ${CMAKE_COMMAND} -E env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4
  ${SPMD2} --function=all_reduce --input=4xf32=1)
expect(spmd_help 0 "%r.*--rendezvous=URI.*OMPI_COMM_WORLD_RANK.*MASTER_ADDR" ${KILN_RUN} --help)
