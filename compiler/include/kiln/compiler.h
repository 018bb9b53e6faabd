// Kiln compiler C API: compile MLIR tensor programs to modules (.vmfb) from
// any language, in-process. Installed with the runtime's headers; link
// libkiln_compiler.so (find_package(Kiln): Kiln::compiler).
//
//   const char* flags[] = {"--target=cuda,host", "--cuda-chip=sm_90"};
//   char error[512];
//   kiln_compiler_session_t* session =
//       kiln_compiler_session_create(flags, 2, error, sizeof(error));
//   kiln_compiler_output_t* out =
//       kiln_compiler_compile(session, text, strlen(text), "model.mlir");
//   if (kiln_compiler_output_ok(out)) {
//     size_t size; const void* module = kiln_compiler_output_module(out,
//     &size);
//     ... kiln_module_load_memory(device, module, size, &m) ...
//   } else {
//     for (size_t i = 0; i < kiln_compiler_output_diagnostic_count(out); ++i)
//       ... kiln_compiler_output_diagnostic(out, i) ...
//   }
//   kiln_compiler_output_destroy(out);
//   kiln_compiler_session_destroy(session);
//
// A session holds a compile's options (kiln-compile's flags) and is
// immutable: sessions may be created, used and destroyed from any thread,
// and one session may compile on many threads at once. Each compile is
// independent (its own MLIR context). Nothing here exits, prints or installs
// signal handlers: every problem with a program or an option comes back as
// a diagnostic or an error message.
#ifndef KILN_COMPILER_H_
#define KILN_COMPILER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_compiler_session_t kiln_compiler_session_t;
typedef struct kiln_compiler_output_t kiln_compiler_output_t;

typedef enum kiln_compiler_severity_e {
  KILN_COMPILER_SEVERITY_ERROR = 0,
  KILN_COMPILER_SEVERITY_WARNING = 1,
  KILN_COMPILER_SEVERITY_NOTE = 2, // attached to the diagnostic before it
  KILN_COMPILER_SEVERITY_REMARK = 3,
} kiln_compiler_severity_t;

// One diagnostic; strings are borrowed from the output that holds it.
typedef struct kiln_compiler_diagnostic_t {
  kiln_compiler_severity_t severity;
  const char *file; // the buffer name given to the compile, or ""
  uint32_t line;    // 1-based; 0 when the diagnostic has no location
  uint32_t column;  // 1-based; 0 when unknown
  const char *message;
} kiln_compiler_diagnostic_t;

// "0.1.0": the compiler's version (static string).
const char *kiln_compiler_version(void);

// Creates a session from kiln-compile flags ("--target=rocm,cuda,host",
// "--rocm-chip=gfx942,gfx1100", "--cuda-chip=sm_90", "--rocm-device-libs=DIR",
// "--rocm-matrix-cores=false", "--gpu-opt-level=N",
// "--gpu-stage-rows=auto|always|never", "--host-cpu=CPU",
// "--host-features=F", "--host-opt-level=N", "--module-name=NAME",
// "--dump-intermediates=DIR", "--parameters=FILE.safetensors"; none:
// --target=host). NULL on a bad flag or an
// unknown chip, with the reason written to |error| like snprintf (when
// |error_capacity| > 0).
kiln_compiler_session_t *kiln_compiler_session_create(const char *const *flags,
                                                      size_t flag_count,
                                                      char *error,
                                                      size_t error_capacity);
void kiln_compiler_session_destroy(kiln_compiler_session_t *session);

// Compiles MLIR text (|length| bytes at |source|, need not be
// NUL-terminated) into a module. |buffer_name| names the source in
// diagnostics and gives the module its default name (its stem; NULL:
// "module"). Returns an output (NULL only when out of memory) holding the
// module if the compile succeeded, and the diagnostics either way.
kiln_compiler_output_t *
kiln_compiler_compile(const kiln_compiler_session_t *session,
                      const char *source, size_t length,
                      const char *buffer_name);

// Whether the compile produced a module.
bool kiln_compiler_output_ok(const kiln_compiler_output_t *output);
// The module's bytes (borrowed; valid until the output is destroyed) and
// their count in *out_length; NULL (and 0) if the compile failed.
const void *kiln_compiler_output_module(const kiln_compiler_output_t *output,
                                        size_t *out_length);
size_t
kiln_compiler_output_diagnostic_count(const kiln_compiler_output_t *output);
// Diagnostic |index| (borrowed), in the order they were reported; NULL for a
// bad index.
const kiln_compiler_diagnostic_t *
kiln_compiler_output_diagnostic(const kiln_compiler_output_t *output,
                                size_t index);
void kiln_compiler_output_destroy(kiln_compiler_output_t *output);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // KILN_COMPILER_H_
