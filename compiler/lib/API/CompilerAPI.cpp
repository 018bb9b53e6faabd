//===- CompilerAPI.cpp - The compiler's C API (kiln/compiler.h) -----------===//
#include "kiln/compiler.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kiln/Driver/Compile.h"
#include "kiln/Pipelines/Frontend.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

struct kiln_compiler_session_t {
  kiln::CompileOptions options;
};

struct kiln_compiler_output_t {
  bool ok = false;
  std::string module;
  // Strings the diagnostics point into (a deque: stable addresses).
  std::deque<std::string> strings;
  std::vector<kiln_compiler_diagnostic_t> diagnostics;

  void add(kiln_compiler_severity_t severity, Location loc,
           const std::string &message) {
    kiln_compiler_diagnostic_t diagnostic = {};
    diagnostic.severity = severity;
    diagnostic.file = "";
    if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>()) {
      strings.push_back(fileLoc.getFilename().str());
      diagnostic.file = strings.back().c_str();
      diagnostic.line = fileLoc.getLine();
      diagnostic.column = fileLoc.getColumn();
    }
    strings.push_back(message);
    diagnostic.message = strings.back().c_str();
    diagnostics.push_back(diagnostic);
  }
};

namespace {

kiln_compiler_severity_t toSeverity(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return KILN_COMPILER_SEVERITY_ERROR;
  case DiagnosticSeverity::Warning:
    return KILN_COMPILER_SEVERITY_WARNING;
  case DiagnosticSeverity::Note:
    return KILN_COMPILER_SEVERITY_NOTE;
  case DiagnosticSeverity::Remark:
    return KILN_COMPILER_SEVERITY_REMARK;
  }
  return KILN_COMPILER_SEVERITY_ERROR;
}

const DialectRegistry &compilerRegistry() {
  static const DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    kiln::registerKilnCompilerDialects(*r);
    return r;
  }();
  return *registry;
}

void compileInto(const kiln_compiler_session_t &session, llvm::StringRef text,
                 llvm::StringRef bufferName, kiln_compiler_output_t &output) {
  MLIRContext context(compilerRegistry());
  // Diagnostics read against the user's source, without the failing op's
  // generic form (as kiln-compile prints them).
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diagnostic) {
    output.add(toSeverity(diagnostic.getSeverity()), diagnostic.getLocation(),
               diagnostic.str());
    for (Diagnostic &note : diagnostic.getNotes())
      output.add(KILN_COMPILER_SEVERITY_NOTE, note.getLocation(), note.str());
    return success();
  });

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  size_t malformed = kiln::findMalformedIndexList(text);
  if (malformed != llvm::StringRef::npos) {
    // Parsing it would crash in LLVM 22's parser; say where instead.
    auto [line, column] =
        sourceMgr.getLineAndColumn(llvm::SMLoc::getFromPointer(
            sourceMgr.getMemoryBuffer(1)->getBufferStart() + malformed));
    emitError(FileLineColLoc::get(&context, bufferName, line, column))
        << "malformed index list: expected `= [` integers `]` after this "
           "keyword";
    return;
  }
  OwningOpRef<ModuleOp> module = kiln::parseKilnProgram(sourceMgr, context);
  if (!module)
    return;
  kiln::CompileOptions options = session.options;
  options.writer.sourceDigest = kiln::computeSourceDigest(text);
  if (options.writer.name.empty())
    options.writer.name = bufferName == "<input>"
                              ? std::string("module")
                              : llvm::sys::path::stem(bufferName).str();
  llvm::raw_string_ostream stream(output.module);
  if (failed(kiln::compileProgram(*module, options, kiln::CompileHooks(),
                                  stream))) {
    output.module.clear();
    return;
  }
  stream.flush();
  output.ok = true;
}

} // namespace

extern "C" {

const char *kiln_compiler_version(void) { return "0.1.0"; }

kiln_compiler_session_t *kiln_compiler_session_create(const char *const *flags,
                                                      size_t flag_count,
                                                      char *error,
                                                      size_t error_capacity) {
  if (error_capacity > 0)
    error[0] = '\0';
  std::vector<std::string> list;
  for (size_t i = 0; i < flag_count; ++i) {
    if (!flags[i]) {
      if (error_capacity > 0)
        std::snprintf(error, error_capacity, "flag %zu is NULL", i);
      return nullptr;
    }
    list.push_back(flags[i]);
  }
  auto session = std::unique_ptr<kiln_compiler_session_t>(
      new (std::nothrow) kiln_compiler_session_t());
  if (!session) {
    if (error_capacity > 0)
      std::snprintf(error, error_capacity, "out of memory");
    return nullptr;
  }
  std::string message;
  if (failed(kiln::parseCompileFlags(list, session->options, message))) {
    if (error_capacity > 0)
      std::snprintf(error, error_capacity, "%s", message.c_str());
    return nullptr;
  }
  return session.release();
}

void kiln_compiler_session_destroy(kiln_compiler_session_t *session) {
  delete session;
}

kiln_compiler_output_t *
kiln_compiler_compile(const kiln_compiler_session_t *session,
                      const char *source, size_t length,
                      const char *buffer_name) {
  auto *output = new (std::nothrow) kiln_compiler_output_t();
  if (!output)
    return nullptr;
  llvm::StringRef name = buffer_name && *buffer_name ? buffer_name : "<input>";
  if (!session || (!source && length > 0)) {
    MLIRContext context;
    output->add(KILN_COMPILER_SEVERITY_ERROR, UnknownLoc::get(&context),
                !session ? "kiln_compiler_compile: the session is NULL"
                         : "kiln_compiler_compile: the source is NULL");
    return output;
  }
  compileInto(*session, llvm::StringRef(source ? source : "", length), name,
              *output);
  return output;
}

bool kiln_compiler_output_ok(const kiln_compiler_output_t *output) {
  return output && output->ok;
}

const void *kiln_compiler_output_module(const kiln_compiler_output_t *output,
                                        size_t *out_length) {
  bool ok = kiln_compiler_output_ok(output);
  if (out_length)
    *out_length = ok ? output->module.size() : 0;
  return ok ? output->module.data() : nullptr;
}

size_t
kiln_compiler_output_diagnostic_count(const kiln_compiler_output_t *output) {
  return output ? output->diagnostics.size() : 0;
}

const kiln_compiler_diagnostic_t *
kiln_compiler_output_diagnostic(const kiln_compiler_output_t *output,
                                size_t index) {
  if (!output || index >= output->diagnostics.size())
    return nullptr;
  return &output->diagnostics[index];
}

void kiln_compiler_output_destroy(kiln_compiler_output_t *output) {
  delete output;
}

} // extern "C"
