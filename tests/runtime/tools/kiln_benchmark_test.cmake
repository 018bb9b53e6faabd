# CLI tests of kiln-benchmark's function timing on the runtime test module
# (local device): text output, --profile and --json, and argument errors.
# Run by ctest as
#   cmake -DKILN_BENCHMARK=... -DMODULE=... -P kiln_benchmark_test.cmake

include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)

set(B ${KILN_BENCHMARK} ${MODULE} --function=add_bias --input=2x3xf32=1.5
      --warmup=1 --iterations=3)

expect(latency 0 "function: add_bias on local\nlatency_ms: mean=[0-9.]+ median=[0-9.]+ min=[0-9.]+ iterations=3\n"
  ${B})
expect(profile_text 0 "profile \\(median of 2 profiled calls\\):\n +index +kind +device_ms +name\n +[0-9]+ +(dispatch|copy) +[0-9.]+ +[a-z_0-9]+\n.*profile_ms: call=[0-9.]+ device=[0-9.]+ kernels=[0-9.]+ overhead=-?[0-9.]+\noverhead_us: median=-?[0-9.]+ max=-?[0-9.]+ calls=2\n"
  ${B} --profile=2)
expect(flops 0 "gflops: [0-9.]+" ${B} --flops=6)

# JSON: one object with the documented keys.
execute_process(COMMAND ${B} --profile --flops=6 --json
  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(SEND_ERROR "[json] exit code ${rc}: ${err}")
else()
  string(JSON function GET "${json}" function)
  string(JSON device GET "${json}" device)
  string(JSON iterations GET "${json}" iterations)
  string(JSON median GET "${json}" latency_ms median)
  string(JSON gflops GET "${json}" gflops)
  string(JSON profiled GET "${json}" profile iterations)
  string(JSON device_ms GET "${json}" profile device_ms)
  string(JSON kernels_ms GET "${json}" profile kernels_ms)
  string(JSON call_ms GET "${json}" profile call_ms)
  string(JSON commands LENGTH "${json}" profile commands)
  string(JSON kind GET "${json}" profile commands 0 kind)
  string(JSON name GET "${json}" profile commands 0 name)
  string(JSON command_ms GET "${json}" profile commands 0 device_ms)
  string(JSON timed_call GET "${json}" profile timed call_ms)
  string(JSON timed_device GET "${json}" profile timed device_ms)
  string(JSON overhead_median GET "${json}" profile timed overhead_us median)
  string(JSON overhead_max GET "${json}" profile timed overhead_us max)
  if(NOT function STREQUAL "add_bias" OR NOT device STREQUAL "local" OR
     NOT iterations EQUAL 3 OR NOT profiled EQUAL 10 OR commands LESS 1 OR
     name STREQUAL "" OR NOT kind MATCHES "^(dispatch|copy|fill|update)$" OR
     NOT median GREATER 0 OR NOT call_ms GREATER 0 OR NOT device_ms GREATER 0 OR
     NOT timed_call GREATER 0 OR NOT timed_device GREATER 0 OR
     overhead_max LESS overhead_median OR
     NOT overhead_median GREATER_EQUAL 0)
    message(SEND_ERROR "[json] unexpected values in:\n${json}")
  else()
    message(STATUS "[json] ok")
  endif()
endif()

# --warmup-ms keeps warming up past --warmup=1 for 30 ms; "warmup" in the
# JSON counts every warmup call.
execute_process(COMMAND ${B} --warmup-ms=30 --json
  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(SEND_ERROR "[warmup_ms] exit code ${rc}: ${err}")
else()
  string(JSON warmed GET "${json}" warmup)
  if(NOT warmed GREATER 1)
    message(SEND_ERROR "[warmup_ms] expected more than 1 warmup call in:\n${json}")
  else()
    message(STATUS "[warmup_ms] ok (${warmed} calls)")
  endif()
endif()

# Errors: "error:" and a non-zero exit.
expect(bad_warmup_ms 1 "error: invalid --warmup-ms 'x'" ${B} --warmup-ms=x)
expect(bad_profile 1 "error: invalid --profile '0'" ${B} --profile=0)
expect(bad_profile_text 1 "error: invalid --profile 'x'" ${B} --profile=x)
expect(no_module 1 "error: no module given" ${KILN_BENCHMARK} --profile)
