// Monotonic time for deadlines (declared in kiln/hal/hal.h).

#include <time.h>

#include "kiln/hal/hal.h"

extern "C" {

kiln_time_t kiln_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return kiln_time_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

kiln_time_t kiln_deadline_from_timeout(kiln_duration_t timeout_ns) {
  if (timeout_ns == KILN_DURATION_INFINITE) return KILN_TIME_INFINITE_FUTURE;
  kiln_time_t now = kiln_time_now();
  if (timeout_ns <= 0) return now;
  if (timeout_ns > KILN_TIME_INFINITE_FUTURE - now)
    return KILN_TIME_INFINITE_FUTURE;
  return now + timeout_ns;
}

}  // extern "C"
