// Command buffers of the sample driver: recording appends commands to an
// array (copying everything the caller may free or change after the call);
// execution replays them in order on the queue thread. Commands never
// overlap, so an execution barrier has nothing to wait for; it is still
// recorded so the command list mirrors what the caller asked for.
//
// A recorded command reaches buffers through refs: either a concrete buffer
// (retained until the command buffer dies) or a binding-table slot resolved
// at each submission. That is what makes a reusable command buffer replayable
// with different buffers (the module executor records each function once).
#include <stdlib.h>
#include <string.h>

#include "sample_driver.h"

typedef enum sample_command_kind_e {
  SAMPLE_COMMAND_BARRIER,
  SAMPLE_COMMAND_FILL,
  SAMPLE_COMMAND_UPDATE,
  SAMPLE_COMMAND_COPY,
  SAMPLE_COMMAND_DISPATCH,
} sample_command_kind_t;

// A recorded kiln_hal_buffer_ref_t: |buffer| (retained) or table |slot|.
// |length| is resolved for concrete buffers and may be WHOLE_BUFFER (the rest
// of the binding) for slots.
typedef struct sample_ref_t {
  bool used;  // false for the source/target a command does not have
  kiln_hal_buffer_t* buffer;
  uint32_t slot;
  kiln_device_size_t offset;
  kiln_device_size_t length;
} sample_ref_t;

typedef struct sample_command_t {
  sample_command_kind_t kind;
  sample_ref_t target;  // fill, update, copy
  sample_ref_t source;  // copy
  uint8_t* bytes;       // fill pattern or update data (owned)
  size_t byte_count;
  // Dispatch.
  kiln_hal_executable_t* executable;  // retained
  uint32_t export_ordinal;
  kiln_host_kernel_fn_t kernel;
  uint32_t workgroup_count[3];
  uint32_t* push_constants;  // owned
  uint32_t push_constant_count;
  sample_ref_t* bindings;  // owned
  uint32_t binding_count;
} sample_command_t;

typedef struct sample_command_buffer_t {
  kiln_hal_command_buffer_t base;
  sample_command_t* commands;
  size_t command_count;
  size_t command_capacity;
} sample_command_buffer_t;

static void command_buffer_destroy(kiln_hal_resource_t* resource);
static kiln_status_t command_buffer_begin(kiln_hal_command_buffer_t* base);
static kiln_status_t command_buffer_end(kiln_hal_command_buffer_t* base);
static kiln_status_t command_buffer_execution_barrier(
    kiln_hal_command_buffer_t* base);
static kiln_status_t command_buffer_fill_buffer(kiln_hal_command_buffer_t* base,
                                                kiln_hal_buffer_ref_t target,
                                                const void* pattern,
                                                size_t pattern_length);
static kiln_status_t command_buffer_update_buffer(
    kiln_hal_command_buffer_t* base, const void* source, size_t source_length,
    kiln_hal_buffer_ref_t target);
static kiln_status_t command_buffer_copy_buffer(kiln_hal_command_buffer_t* base,
                                                kiln_hal_buffer_ref_t source,
                                                kiln_hal_buffer_ref_t target);
static kiln_status_t command_buffer_dispatch(
    kiln_hal_command_buffer_t* base, kiln_hal_executable_t* executable,
    uint32_t export_ordinal, const uint32_t workgroup_count[3],
    uint32_t push_constant_count, const uint32_t* push_constants,
    uint32_t binding_count, const kiln_hal_buffer_ref_t* bindings);
static kiln_status_t command_buffer_collective(
    kiln_hal_command_buffer_t* base, kiln_hal_channel_t* channel,
    const kiln_hal_collective_op_t* op, kiln_hal_buffer_ref_t send,
    kiln_hal_buffer_ref_t recv);

static const kiln_hal_command_buffer_vtable_t command_buffer_vtable = {
    command_buffer_destroy,       command_buffer_begin,
    command_buffer_end,           command_buffer_execution_barrier,
    command_buffer_fill_buffer,   command_buffer_update_buffer,
    command_buffer_copy_buffer,   command_buffer_dispatch,
    command_buffer_collective,
};

static sample_command_buffer_t* command_buffer_cast(
    kiln_hal_command_buffer_t* base) {
  return (sample_command_buffer_t*)base;
}

//===----------------------------------------------------------------------===//
// Recording
//===----------------------------------------------------------------------===//

// Releases what a command owns. Used both by destroy and to drop a command
// whose recording failed half way, so a rejected command leaves the command
// buffer as it was (the HAL promises it stays usable).
static void release_buffer(kiln_hal_buffer_t* buffer) {
  if (buffer) kiln_hal_resource_release(&buffer->resource);
}

static void command_release(sample_command_t* command) {
  release_buffer(command->target.buffer);
  release_buffer(command->source.buffer);
  for (uint32_t i = 0; i < command->binding_count; ++i)
    release_buffer(command->bindings[i].buffer);
  if (command->executable)
    kiln_hal_resource_release(&command->executable->resource);
  free(command->bytes);
  free(command->push_constants);
  free(command->bindings);
}

static void command_buffer_destroy(kiln_hal_resource_t* resource) {
  kiln_hal_command_buffer_t* base = (kiln_hal_command_buffer_t*)resource;
  sample_command_buffer_t* command_buffer = command_buffer_cast(base);
  for (size_t i = 0; i < command_buffer->command_count; ++i)
    command_release(&command_buffer->commands[i]);
  free(command_buffer->commands);
  free(command_buffer);
}

// The core tracks the recording states (begin once, end once); nothing to
// prepare or finalize for a list of host commands. A GPU driver would open
// and close its native command list or graph capture here.
static kiln_status_t command_buffer_begin(kiln_hal_command_buffer_t* base) {
  (void)base;
  return NULL;
}

static kiln_status_t command_buffer_end(kiln_hal_command_buffer_t* base) {
  (void)base;
  return NULL;
}

// Appends |command| (taking ownership of what it holds, also on failure).
static kiln_status_t append(sample_command_buffer_t* command_buffer,
                            sample_command_t* command) {
  if (command_buffer->command_count == command_buffer->command_capacity) {
    size_t capacity = command_buffer->command_capacity
                          ? command_buffer->command_capacity * 2
                          : 8;
    sample_command_t* commands = (sample_command_t*)realloc(
        command_buffer->commands, capacity * sizeof(*commands));
    if (!commands) {
      command_release(command);
      return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                           "out of memory recording a command");
    }
    command_buffer->commands = commands;
    command_buffer->command_capacity = capacity;
  }
  command_buffer->commands[command_buffer->command_count++] = *command;
  return NULL;
}

// Records |ref| into |out|, retaining a concrete buffer. A buffer of another
// driver is refused: we could not find its storage at execution.
static kiln_status_t capture_ref(kiln_hal_buffer_ref_t ref, sample_ref_t* out) {
  if (ref.buffer && !sample_buffer_isa(ref.buffer))
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "buffer was not created by the sample driver");
  out->used = true;
  out->buffer = ref.buffer;
  out->slot = ref.slot;
  out->offset = ref.offset;
  out->length = ref.length;
  if (ref.buffer) kiln_hal_resource_retain(&ref.buffer->resource);
  return NULL;
}

// Copies |length| bytes the caller owns into the command.
static kiln_status_t capture_bytes(const void* data, size_t length,
                                   sample_command_t* command) {
  if (length == 0) return NULL;
  command->bytes = (uint8_t*)malloc(length);
  if (!command->bytes)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory capturing %zu bytes of a command",
                         length);
  memcpy(command->bytes, data, length);
  command->byte_count = length;
  return NULL;
}

// Records a command built by |command| (already zero-initialized with its
// kind): on any failure its partial contents are released.
static kiln_status_t finish(sample_command_buffer_t* command_buffer,
                            sample_command_t* command, kiln_status_t status) {
  if (status) {
    command_release(command);
    return status;
  }
  return append(command_buffer, command);
}

static kiln_status_t command_buffer_execution_barrier(
    kiln_hal_command_buffer_t* base) {
  sample_command_t command = {.kind = SAMPLE_COMMAND_BARRIER};
  return append(command_buffer_cast(base), &command);
}

// The core checked the pattern width (1, 2, 4, 8) and that a concrete
// target's offset and length are multiples of it.
static kiln_status_t command_buffer_fill_buffer(kiln_hal_command_buffer_t* base,
                                                kiln_hal_buffer_ref_t target,
                                                const void* pattern,
                                                size_t pattern_length) {
  sample_command_t command = {.kind = SAMPLE_COMMAND_FILL};
  kiln_status_t status = capture_ref(target, &command.target);
  if (!status) status = capture_bytes(pattern, pattern_length, &command);
  return finish(command_buffer_cast(base), &command, status);
}

// The data is captured now: the HAL says later changes to |source| must not
// show up in the command buffer.
static kiln_status_t command_buffer_update_buffer(
    kiln_hal_command_buffer_t* base, const void* source, size_t source_length,
    kiln_hal_buffer_ref_t target) {
  sample_command_t command = {.kind = SAMPLE_COMMAND_UPDATE};
  kiln_status_t status = capture_ref(target, &command.target);
  if (!status) status = capture_bytes(source, source_length, &command);
  return finish(command_buffer_cast(base), &command, status);
}

static kiln_status_t command_buffer_copy_buffer(kiln_hal_command_buffer_t* base,
                                                kiln_hal_buffer_ref_t source,
                                                kiln_hal_buffer_ref_t target) {
  sample_command_t command = {.kind = SAMPLE_COMMAND_COPY};
  kiln_status_t status = capture_ref(source, &command.source);
  if (!status) status = capture_ref(target, &command.target);
  return finish(command_buffer_cast(base), &command, status);
}

// The core validated the export ordinal, the counts and the grid size; we
// look the kernel up now so execution is a plain function call.
static kiln_status_t command_buffer_dispatch(
    kiln_hal_command_buffer_t* base, kiln_hal_executable_t* executable,
    uint32_t export_ordinal, const uint32_t workgroup_count[3],
    uint32_t push_constant_count, const uint32_t* push_constants,
    uint32_t binding_count, const kiln_hal_buffer_ref_t* bindings) {
  kiln_host_kernel_fn_t kernel =
      sample_executable_kernel(executable, export_ordinal);
  if (!kernel)
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "dispatch: executable was not prepared by the sample "
                         "driver");
  sample_command_t command = {.kind = SAMPLE_COMMAND_DISPATCH};
  command.kernel = kernel;
  command.export_ordinal = export_ordinal;
  memcpy(command.workgroup_count, workgroup_count,
         sizeof(command.workgroup_count));
  kiln_status_t status = NULL;
  if (push_constant_count) {
    command.push_constants =
        (uint32_t*)malloc(push_constant_count * sizeof(uint32_t));
    if (!command.push_constants)
      return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                           "out of memory recording a dispatch");
    memcpy(command.push_constants, push_constants,
           push_constant_count * sizeof(uint32_t));
    command.push_constant_count = push_constant_count;
  }
  if (binding_count) {
    command.bindings = (sample_ref_t*)calloc(binding_count, sizeof(sample_ref_t));
    if (!command.bindings)
      status = sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory recording a dispatch");
  }
  for (uint32_t i = 0; i < binding_count && !status; ++i) {
    status = capture_ref(bindings[i], &command.bindings[i]);
    if (status) {
      status = sample_annotate(status, "dispatch binding %u", i);
    } else {
      command.binding_count = i + 1;  // so command_release drops it
    }
  }
  if (!status) {
    kiln_hal_resource_retain(&executable->resource);
    command.executable = executable;
  }
  return finish(command_buffer_cast(base), &command, status);
}

// The sample device has no peers to talk to, so it cannot create channels;
// a channel from another driver cannot be driven from here either. Saying
// UNIMPLEMENTED (rather than silently doing nothing) lets callers and the
// CTS tell "no collectives" from a wrong result.
static kiln_status_t command_buffer_collective(
    kiln_hal_command_buffer_t* base, kiln_hal_channel_t* channel,
    const kiln_hal_collective_op_t* op, kiln_hal_buffer_ref_t send,
    kiln_hal_buffer_ref_t recv) {
  (void)base;
  (void)channel;
  (void)send;
  (void)recv;
  return sample_status(KILN_STATUS_UNIMPLEMENTED,
                       "the sample driver has no collectives (collective kind "
                       "%d)",
                       (int)op->kind);
}

kiln_status_t sample_command_buffer_create(
    kiln_hal_command_buffer_mode_t mode, uint32_t binding_capacity,
    kiln_hal_command_buffer_t** out_command_buffer) {
  sample_command_buffer_t* command_buffer =
      (sample_command_buffer_t*)calloc(1, sizeof(*command_buffer));
  if (!command_buffer)
    return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory creating a sample command buffer");
  kiln_hal_command_buffer_initialize(&command_buffer_vtable, mode,
                                     binding_capacity, &command_buffer->base);
  *out_command_buffer = &command_buffer->base;
  return NULL;
}

//===----------------------------------------------------------------------===//
// Submission checks
//===----------------------------------------------------------------------===//

// Checks one slot ref against the submission's table. Only the driver can do
// this: the core does not know which slots a command buffer uses.
static kiln_status_t validate_slot_ref(const sample_ref_t* ref,
                                       const kiln_hal_binding_table_t* table) {
  if (!ref->used || ref->buffer) return NULL;
  const kiln_hal_binding_t* binding = &table->bindings[ref->slot];
  if (!binding->buffer)
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "binding table slot %u is used by the command buffer "
                         "but not bound",
                         ref->slot);
  if (!sample_buffer_isa(binding->buffer))
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "binding table slot %u: buffer was not created by the "
                         "sample driver",
                         ref->slot);
  bool fits = ref->offset <= binding->length &&
              (ref->length == KILN_HAL_WHOLE_BUFFER ||
               ref->length <= binding->length - ref->offset);
  if (!fits)
    return sample_status(KILN_STATUS_OUT_OF_RANGE,
                         "binding table slot %u binds %llu bytes but the "
                         "command buffer uses %llu bytes at offset %llu of it",
                         ref->slot, (unsigned long long)binding->length,
                         (unsigned long long)(ref->length ==
                                                      KILN_HAL_WHOLE_BUFFER
                                                  ? 0
                                                  : ref->length),
                         (unsigned long long)ref->offset);
  return NULL;
}

kiln_status_t sample_command_buffer_validate(
    kiln_hal_command_buffer_t* base, const kiln_hal_binding_table_t* table) {
  if (base->resource.vtable != &command_buffer_vtable)
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "command buffer was not created by the sample "
                         "driver");
  sample_command_buffer_t* command_buffer = command_buffer_cast(base);
  for (size_t i = 0; i < command_buffer->command_count; ++i) {
    const sample_command_t* command = &command_buffer->commands[i];
    kiln_status_t status = validate_slot_ref(&command->target, table);
    if (!status) status = validate_slot_ref(&command->source, table);
    for (uint32_t b = 0; b < command->binding_count && !status; ++b)
      status = validate_slot_ref(&command->bindings[b], table);
    if (status) return sample_annotate(status, "command %zu", i);
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

typedef struct sample_span_t {
  uint8_t* data;
  kiln_device_size_t length;
} sample_span_t;

// Resolves a used |ref| to host memory for this submission (slots were
// checked by sample_command_buffer_validate at submit).
static kiln_status_t resolve(const sample_ref_t* ref,
                             const kiln_hal_binding_table_t* table,
                             sample_span_t* out) {
  kiln_hal_buffer_t* buffer = ref->buffer;
  kiln_device_size_t offset = ref->offset;
  kiln_device_size_t length = ref->length;
  if (!buffer) {
    const kiln_hal_binding_t* binding = &table->bindings[ref->slot];
    buffer = binding->buffer;
    offset += binding->offset;
    if (length == KILN_HAL_WHOLE_BUFFER) length = binding->length - ref->offset;
  }
  uint8_t* storage = sample_buffer_storage(buffer);
  if (!storage)
    return sample_status(KILN_STATUS_FAILED_PRECONDITION,
                         "a command uses a buffer without storage (used before "
                         "its queue_alloca or after its queue_dealloca)");
  out->data = storage + offset;
  out->length = length;
  return NULL;
}

static kiln_status_t run_fill(const sample_command_t* command,
                              const kiln_hal_binding_table_t* table) {
  sample_span_t target = {NULL, 0};
  kiln_status_t status = resolve(&command->target, table, &target);
  if (status) return status;
  // A slot ref's length is only known now, so its pattern fit is checked
  // here rather than at record time.
  if (target.length % command->byte_count != 0)
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "fill of %llu bytes is not a multiple of its %zu-byte "
                         "pattern",
                         (unsigned long long)target.length, command->byte_count);
  if (command->byte_count == 1) {
    memset(target.data, command->bytes[0], (size_t)target.length);
    return NULL;
  }
  for (kiln_device_size_t i = 0; i < target.length; i += command->byte_count)
    memcpy(target.data + i, command->bytes, command->byte_count);
  return NULL;
}

static kiln_status_t run_update(const sample_command_t* command,
                                const kiln_hal_binding_table_t* table) {
  sample_span_t target = {NULL, 0};
  kiln_status_t status = resolve(&command->target, table, &target);
  if (status) return status;
  if (target.length < command->byte_count)
    return sample_status(KILN_STATUS_OUT_OF_RANGE,
                         "update of %zu bytes into a %llu-byte binding range",
                         command->byte_count,
                         (unsigned long long)target.length);
  if (command->byte_count)
    memcpy(target.data, command->bytes, command->byte_count);
  return NULL;
}

static kiln_status_t run_copy(const sample_command_t* command,
                              const kiln_hal_binding_table_t* table) {
  sample_span_t source = {NULL, 0}, target = {NULL, 0};
  kiln_status_t status = resolve(&command->source, table, &source);
  if (!status) status = resolve(&command->target, table, &target);
  if (status) return status;
  if (source.length != target.length)
    return sample_status(KILN_STATUS_INVALID_ARGUMENT,
                         "copy source has %llu bytes but its target %llu",
                         (unsigned long long)source.length,
                         (unsigned long long)target.length);
  // memmove: two slots may bind overlapping ranges of one buffer.
  memmove(target.data, source.data, (size_t)source.length);
  return NULL;
}

// Calls the kernel once per workgroup, x fastest, on this thread. The host
// ABI allows any order and any parallelism; serial is the simplest correct
// choice (the `local` driver spreads workgroups over a thread pool).
static kiln_status_t run_dispatch(const sample_command_t* command,
                                  const kiln_hal_binding_table_t* table) {
  uint32_t count = command->binding_count;
  // One allocation for the pointer and length arrays the kernel reads.
  void** pointers = NULL;
  uint64_t* lengths = NULL;
  if (count) {
    pointers = (void**)calloc(count, sizeof(void*) + sizeof(uint64_t));
    if (!pointers)
      return sample_status(KILN_STATUS_RESOURCE_EXHAUSTED,
                           "out of memory running a dispatch");
    lengths = (uint64_t*)(pointers + count);
  }
  for (uint32_t i = 0; i < count; ++i) {
    sample_span_t span = {NULL, 0};
    kiln_status_t status = resolve(&command->bindings[i], table, &span);
    if (status) {
      free(pointers);
      return sample_annotate(status, "dispatch binding %u", i);
    }
    pointers[i] = span.data;
    lengths[i] = span.length;
  }
  kiln_host_dispatch_state_t state;
  state.bindings = pointers;
  state.binding_lengths = lengths;
  state.push_constants = command->push_constants;
  state.binding_count = count;
  state.push_constant_count = command->push_constant_count;
  memcpy(state.workgroup_count, command->workgroup_count,
         sizeof(state.workgroup_count));
  kiln_status_t status = NULL;
  for (uint32_t z = 0; z < state.workgroup_count[2] && !status; ++z) {
    for (uint32_t y = 0; y < state.workgroup_count[1] && !status; ++y) {
      for (uint32_t x = 0; x < state.workgroup_count[0] && !status; ++x) {
        int32_t result = command->kernel(&state, x, y, z);
        // A non-zero return is the kernel reporting an error: stop and fail
        // the submission with it (its signal semaphores carry the message).
        if (result != 0) {
          const kiln_hal_executable_export_t* export_info =
              &command->executable->exports[command->export_ordinal];
          status = sample_status(KILN_STATUS_ABORTED,
                                 "kernel '%s' failed with code %d in "
                                 "workgroup (%u, %u, %u)",
                                 export_info->name, result, x, y, z);
        }
      }
    }
  }
  free(pointers);
  return status;
}

kiln_status_t sample_command_buffer_execute(
    kiln_hal_command_buffer_t* base, const kiln_hal_binding_table_t* table) {
  sample_command_buffer_t* command_buffer = command_buffer_cast(base);
  for (size_t i = 0; i < command_buffer->command_count; ++i) {
    const sample_command_t* command = &command_buffer->commands[i];
    kiln_status_t status = NULL;
    switch (command->kind) {
      case SAMPLE_COMMAND_BARRIER:
        break;  // commands run one at a time: already ordered
      case SAMPLE_COMMAND_FILL:
        status = run_fill(command, table);
        break;
      case SAMPLE_COMMAND_UPDATE:
        status = run_update(command, table);
        break;
      case SAMPLE_COMMAND_COPY:
        status = run_copy(command, table);
        break;
      case SAMPLE_COMMAND_DISPATCH:
        status = run_dispatch(command, table);
        break;
    }
    if (status) return sample_annotate(status, "command %zu", i);
  }
  return NULL;
}
