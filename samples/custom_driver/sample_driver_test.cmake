# kiln-run on the runtime test module with the sample driver plugin: every
# function must give exactly the output it gives on `local`, and errors
# (a failing kernel, a missing device) must be reported, not crash. Run by
# ctest as
#   cmake -DKILN_RUN=... -DPLUGIN=... -DMODULE=... -P sample_driver_test.cmake
set(failures 0)

# run(OUT_VAR RC_VAR COMMAND...): stdout+stderr and the exit code.
function(run out_var rc_var)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

# same_as_local(NAME REGEX ARGS...): kiln-run ARGS on sample and on local
# exits 0, matches REGEX, and prints the same thing on both.
function(same_as_local name regex)
  run(sample rc_sample ${KILN_RUN} ${MODULE} --plugin=${PLUGIN} --device=sample
      ${ARGN})
  run(local rc_local ${KILN_RUN} ${MODULE} --device=local ${ARGN})
  if(NOT rc_sample STREQUAL "0" OR NOT sample MATCHES "${regex}")
    message(SEND_ERROR "[${name}] sample: exit ${rc_sample}, expected 0 and "
                       "output matching '${regex}':\n${sample}")
  elseif(NOT sample STREQUAL local)
    message(SEND_ERROR "[${name}] sample and local differ:\nsample:\n${sample}"
                       "local (exit ${rc_local}):\n${local}")
  else()
    message(STATUS "[${name}] ok: ${sample}")
  endif()
endfunction()

# expect(NAME EXIT_CODE REGEX COMMAND...)
function(expect name code regex)
  run(all rc ${ARGN})
  if(NOT rc STREQUAL "${code}" OR NOT all MATCHES "${regex}")
    message(SEND_ERROR "[${name}] exit ${rc} (expected ${code}), output should "
                       "match '${regex}':\n${all}")
  else()
    message(STATUS "[${name}] ok")
  endif()
endfunction()

same_as_local(add "result\\[0\\]: 2x3xf32=\\[2 4 6\\]\\[8 10 12\\]"
  --function=add --input=2x3xf32=1,2,3,4,5,6 --input=2x3xf32=1,2,3,4,5,6)
# Read-only data, a transient buffer (queue_alloca) and a copy.
same_as_local(add_bias "result\\[0\\]: 2x3xf32=\\[11 22 33\\]\\[44 55 66\\]"
  --function=add_bias --input=2x3xf32=1,2,3,4,5,6)
same_as_local(fill "result\\[0\\]: 4xi32=7 7 7 7" --function=fill)
same_as_local(expected_output "all 1 outputs of 'add' matched"
  --function=add --input=2x3xf32=1 --input=2x3xf32=2
  --expected-output=2x3xf32=3)

# Discovery, loading through the environment, and errors.
expect(list_devices 0 "sample://0"
  ${KILN_RUN} --plugin=${PLUGIN} --list-devices)
expect(plugin_from_env 0 "result\\[0\\]: 4xi32=7 7 7 7"
  ${CMAKE_COMMAND} -E env KILN_HAL_DRIVER_PLUGINS=${PLUGIN}
  ${KILN_RUN} ${MODULE} --device=sample://0 --function=fill)
expect(kernel_failure 1 "error: .*fail_always.*42"
  ${KILN_RUN} ${MODULE} --plugin=${PLUGIN} --device=sample --function=fail
  --input=2x3xf32=1 --input=2x3xf32=1)
expect(missing_ordinal 1 "error: .*sample://1"
  ${KILN_RUN} ${MODULE} --plugin=${PLUGIN} --device=sample://1 --function=fill)
