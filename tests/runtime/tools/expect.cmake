# expect(NAME EXIT_CODE REGEX COMMAND...): runs COMMAND; its exit code must be
# EXIT_CODE and REGEX must match stdout+stderr. A mismatch is a SEND_ERROR,
# which fails the `cmake -P` script after the remaining cases ran. Included
# by the CLI test scripts of this folder.
function(expect name code regex)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(all "${out}${err}")
  if(NOT rc STREQUAL "${code}")
    message(SEND_ERROR "[${name}] exit code ${rc}, expected ${code}\n${all}")
    return()
  endif()
  if(NOT all MATCHES "${regex}")
    message(SEND_ERROR "[${name}] output does not match '${regex}':\n${all}")
    return()
  endif()
  message(STATUS "[${name}] ok")
endfunction()
