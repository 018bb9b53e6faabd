// Timeline semaphores of the sample driver: a 64-bit payload that only moves
// forward, a sticky failure status, and a condition variable for waiters.
// Waits come from host threads, from our queue thread and from other
// drivers' queues, all through the vtable, so everything is guarded by one
// mutex and waits honour absolute CLOCK_MONOTONIC deadlines.
#define _POSIX_C_SOURCE 200809L  // pthread_condattr_setclock

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "sample_driver.h"

typedef struct sample_semaphore_t {
  kiln_hal_semaphore_t base;
  pthread_mutex_t mutex;
  pthread_cond_t changed;  // on CLOCK_MONOTONIC, the clock of HAL deadlines
  uint64_t value;
  kiln_status_t failure;  // owned; once set, never replaced
} sample_semaphore_t;

static sample_semaphore_t* semaphore_cast(kiln_hal_semaphore_t* semaphore) {
  return (sample_semaphore_t*)semaphore;
}

static void semaphore_destroy(kiln_hal_resource_t* resource) {
  kiln_hal_semaphore_t* base = (kiln_hal_semaphore_t*)resource;
  sample_semaphore_t* semaphore = semaphore_cast(base);
  sample_status_free(semaphore->failure);
  pthread_cond_destroy(&semaphore->changed);
  pthread_mutex_destroy(&semaphore->mutex);
  free(semaphore);
}

// A failed semaphore answers every query with its failure (a clone: each
// caller owns what it receives) and the FAILURE_VALUE payload.
static kiln_status_t semaphore_query(kiln_hal_semaphore_t* base,
                                     uint64_t* out_value) {
  sample_semaphore_t* semaphore = semaphore_cast(base);
  kiln_status_t status = NULL;
  pthread_mutex_lock(&semaphore->mutex);
  if (semaphore->failure) {
    *out_value = KILN_HAL_SEMAPHORE_FAILURE_VALUE;
    status = sample_status_clone(semaphore->failure);
  } else {
    *out_value = semaphore->value;
  }
  pthread_mutex_unlock(&semaphore->mutex);
  return status;
}

static kiln_status_t semaphore_signal(kiln_hal_semaphore_t* base,
                                      uint64_t value) {
  sample_semaphore_t* semaphore = semaphore_cast(base);
  kiln_status_t status = NULL;
  pthread_mutex_lock(&semaphore->mutex);
  if (semaphore->failure) {
    status = sample_status_clone(semaphore->failure);
  } else if (value <= semaphore->value) {
    status = sample_status(KILN_STATUS_OUT_OF_RANGE,
                           "semaphore signalled to %llu but its payload is "
                           "already %llu (timelines only move forward)",
                           (unsigned long long)value,
                           (unsigned long long)semaphore->value);
  } else {
    semaphore->value = value;
    pthread_cond_broadcast(&semaphore->changed);
  }
  pthread_mutex_unlock(&semaphore->mutex);
  return status;
}

// Failure is how asynchronous errors reach waiters: the first one wins so
// that the root cause is what everybody sees.
static void semaphore_fail(kiln_hal_semaphore_t* base, kiln_status_t status) {
  sample_semaphore_t* semaphore = semaphore_cast(base);
  pthread_mutex_lock(&semaphore->mutex);
  if (semaphore->failure) {
    sample_status_free(status);
  } else {
    semaphore->failure = status;
    pthread_cond_broadcast(&semaphore->changed);
  }
  pthread_mutex_unlock(&semaphore->mutex);
}

static kiln_status_t semaphore_wait(kiln_hal_semaphore_t* base, uint64_t value,
                                    kiln_time_t deadline) {
  sample_semaphore_t* semaphore = semaphore_cast(base);
  struct timespec until = {(time_t)(deadline / 1000000000),
                           (long)(deadline % 1000000000)};
  kiln_status_t status = NULL;
  pthread_mutex_lock(&semaphore->mutex);
  while (true) {
    if (semaphore->failure) {
      status = sample_status_clone(semaphore->failure);
      break;
    }
    if (semaphore->value >= value) break;
    int error = deadline == KILN_TIME_INFINITE_FUTURE
                    ? pthread_cond_wait(&semaphore->changed, &semaphore->mutex)
                    : pthread_cond_timedwait(&semaphore->changed,
                                             &semaphore->mutex, &until);
    // Re-check the payload before giving up: a signal may have raced the
    // timeout.
    if (error == ETIMEDOUT && semaphore->value < value && !semaphore->failure) {
      status = sample_status(KILN_STATUS_DEADLINE_EXCEEDED,
                             "semaphore wait for value %llu timed out "
                             "(payload is %llu)",
                             (unsigned long long)value,
                             (unsigned long long)semaphore->value);
      break;
    }
  }
  pthread_mutex_unlock(&semaphore->mutex);
  return status;
}

static const kiln_hal_semaphore_vtable_t semaphore_vtable = {
    semaphore_destroy, semaphore_query, semaphore_signal,
    semaphore_fail,    semaphore_wait,
};

kiln_status_t sample_semaphore_create(uint64_t initial_value,
                                      kiln_hal_semaphore_t** out_semaphore) {
  sample_semaphore_t* semaphore =
      (sample_semaphore_t*)calloc(1, sizeof(*semaphore));
  if (!semaphore)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory creating a sample semaphore");
  pthread_condattr_t attributes;
  pthread_condattr_init(&attributes);
  pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
  int error = pthread_cond_init(&semaphore->changed, &attributes);
  pthread_condattr_destroy(&attributes);
  if (error || pthread_mutex_init(&semaphore->mutex, NULL)) {
    if (!error) pthread_cond_destroy(&semaphore->changed);
    free(semaphore);
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "cannot initialize a sample semaphore's condition "
                         "variable or mutex");
  }
  kiln_hal_resource_initialize(&semaphore_vtable, &semaphore->base.resource);
  semaphore->value = initial_value;
  *out_semaphore = &semaphore->base;
  return NULL;
}
