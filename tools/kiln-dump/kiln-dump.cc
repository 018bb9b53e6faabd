// kiln-dump: prints what a .vmfb module contains: header, functions with
// signatures and command programs, executables with their variants and
// exports, rodata. The module is fully verified first, so a corrupt file is
// reported, not dumped.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <string>

#include "kiln/version.h"
#include "kiln/schemas/module_generated.h"
#include "module/element_type.h"
#include "module/module_image.h"

namespace {

using namespace kiln::schema;  // NOLINT

const char kUsage[] =
    "usage: kiln-dump MODULE.vmfb [--commands] [--resources] [--json]\n"
    "\n"
    "Prints the contents of a compiled Kiln module.\n"
    "  --commands   list every command of every function with its buffers\n"
    "  --resources  print only the resource table: one line per kernel and\n"
    "               target chip with workgroup size and count, VGPRs, SGPRs,\n"
    "               AGPRs, LDS (shared memory) and scratch bytes\n"
    "  --json       print the module as one JSON object: name, version,\n"
    "               source digest, compile flags, size, functions (name,\n"
    "               inputs, outputs, transient bytes, command count),\n"
    "               executables (name, variants: target, format, binary\n"
    "               bytes, exports with launch and resource facts) and\n"
    "               rodata (name, bytes, alignment)\n"
    "  --help       show this help\n"
    "  --version    print Kiln's version and commit\n";

std::string TypeString(const TensorType* type) {
  std::string text;
  if (type->shape()) {
    for (int64_t dim : *type->shape()) text += std::to_string(dim) + "x";
  }
  return text + kiln::module::ElementTypeName(type->element_type());
}

std::string TypeList(
    const flatbuffers::Vector<flatbuffers::Offset<TensorType>>* types) {
  std::string text = "(";
  if (types) {
    for (uint32_t i = 0; i < types->size(); ++i) {
      if (i) text += ", ";
      text += TypeString(types->Get(i));
    }
  }
  return text + ")";
}

std::string RefString(const BufferRef* ref) {
  if (!ref) return "<none>";
  std::string space;
  switch (ref->space()) {
    case BufferSpace::Input: space = "input" + std::to_string(ref->index()); break;
    case BufferSpace::Output: space = "output" + std::to_string(ref->index()); break;
    case BufferSpace::Transient: space = "transient"; break;
    case BufferSpace::Rodata: space = "rodata" + std::to_string(ref->index()); break;
    case BufferSpace::WindowData:
      space = "window" + std::to_string(ref->index()) + ".data";
      break;
    case BufferSpace::WindowSignals:
      space = "window" + std::to_string(ref->index()) + ".signals";
      break;
    case BufferSpace::WindowPeers:
      space = "window" + std::to_string(ref->index()) + ".peers";
      break;
  }
  return space + "[" + std::to_string(ref->offset()) + ", +" +
         std::to_string(ref->length()) + ")";
}

std::string Triple(const flatbuffers::Vector<uint32_t>* v) {
  if (!v || v->size() != 3) return "?";
  return std::to_string(v->Get(0)) + "x" + std::to_string(v->Get(1)) + "x" +
         std::to_string(v->Get(2));
}

const char* CommandName(Command type) {
  switch (type) {
    case Command::DispatchCommand: return "dispatch";
    case Command::CopyCommand: return "copy";
    case Command::FillCommand: return "fill";
    case Command::BarrierCommand: return "barrier";
    case Command::CollectiveCommand: return "collective";
    default: return "unknown";
  }
}

void PrintCommand(const Module& module, uint32_t index,
                  const CommandEntry& entry) {
  std::printf("      %u: %s", index, CommandName(entry.command_type()));
  switch (entry.command_type()) {
    case Command::DispatchCommand: {
      const DispatchCommand* d = entry.command_as_DispatchCommand();
      const Executable* executable = module.executables()->Get(d->executable());
      const ExecutableExport* exp =
          executable->variants()->Get(0)->exports()->Get(d->export_());
      std::printf(" %s::%s workgroups %s\n        bindings:",
                  executable->name() ? executable->name()->c_str() : "?",
                  exp->name()->c_str(), Triple(exp->workgroup_count()).c_str());
      if (d->bindings()) {
        for (const BufferRef* ref : *d->bindings()) {
          std::printf(" %s", RefString(ref).c_str());
        }
      }
      if (d->push_constants() && d->push_constants()->size()) {
        std::printf("\n        push constants:");
        for (uint32_t value : *d->push_constants()) std::printf(" %u", value);
      }
      std::printf("\n");
      break;
    }
    case Command::CopyCommand: {
      const CopyCommand* c = entry.command_as_CopyCommand();
      std::printf(" %s -> %s\n", RefString(c->source()).c_str(),
                  RefString(c->target()).c_str());
      break;
    }
    case Command::FillCommand: {
      const FillCommand* f = entry.command_as_FillCommand();
      std::printf(" %s pattern 0x", RefString(f->target()).c_str());
      // Little-endian bytes, printed most significant first.
      for (uint32_t i = f->pattern()->size(); i-- > 0;) {
        std::printf("%02x", f->pattern()->Get(i));
      }
      std::printf("\n");
      break;
    }
    case Command::CollectiveCommand: {
      const CollectiveCommand* c = entry.command_as_CollectiveCommand();
      std::printf(" %s %s %s x%" PRIu64 " send %s recv %s root %d channel %u\n",
                  EnumNameCollectiveOp(c->op()),
                  EnumNameReductionOp(c->reduction()),
                  kiln::module::ElementTypeName(c->element_type()),
                  c->element_count(), RefString(c->send()).c_str(),
                  RefString(c->recv()).c_str(), c->root(), c->channel());
      break;
    }
    default:
      std::printf("\n");
      break;
  }
}

// One line per export per variant, aligned, for people and for scripts
// (e.g. a test that fails on "scratch <nonzero>").
void PrintResources(const Module& module) {
  std::printf("%-32s %-14s %-12s %-12s %5s %5s %5s %7s %8s\n", "kernel",
              "target", "workgroup", "count", "vgpr", "sgpr", "agpr", "lds",
              "scratch");
  if (!module.executables()) return;
  for (const Executable* executable : *module.executables()) {
    if (!executable->variants()) continue;
    for (const ExecutableVariant* variant : *executable->variants()) {
      if (!variant->exports()) continue;
      for (const ExecutableExport* exp : *variant->exports()) {
        std::printf("%-32s %-14s %-12s %-12s %5u %5u %5u %7u %8u\n",
                    exp->name()->c_str(), variant->target()->c_str(),
                    exp->workgroup_size()
                        ? Triple(exp->workgroup_size()).c_str()
                        : "1x1x1",
                    Triple(exp->workgroup_count()).c_str(), exp->vgpr_count(),
                    exp->sgpr_count(), exp->agpr_count(),
                    exp->shared_memory_bytes(), exp->scratch_bytes());
      }
    }
  }
}

// A JSON string literal of |text|.
std::string Json(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string Json(const flatbuffers::String* text) {
  return Json(text ? text->str() : std::string());
}

std::string JsonTriple(const flatbuffers::Vector<uint32_t>* v) {
  if (!v || v->size() != 3) return "[1, 1, 1]";
  return "[" + std::to_string(v->Get(0)) + ", " + std::to_string(v->Get(1)) +
         ", " + std::to_string(v->Get(2)) + "]";
}

std::string JsonTypes(
    const flatbuffers::Vector<flatbuffers::Offset<TensorType>>* types) {
  std::string out = "[";
  if (types) {
    for (uint32_t i = 0; i < types->size(); ++i)
      out += (i ? ", " : "") + Json(TypeString(types->Get(i)));
  }
  return out + "]";
}

// The module as one JSON object (--json).
void PrintJson(const Module& module, size_t size) {
  std::printf("{\"name\": %s, \"version\": %u, \"source_digest\": %s, "
              "\"compile_flags\": %s, \"size\": %zu,\n \"functions\": [",
              Json(module.name()).c_str(), module.version(),
              Json(module.source_digest()).c_str(),
              Json(module.compile_flags()).c_str(), size);
  if (const auto* functions = module.functions()) {
    for (uint32_t i = 0; i < functions->size(); ++i) {
      const Function* f = functions->Get(i);
      std::printf("%s\n  {\"name\": %s, \"inputs\": %s, \"outputs\": %s, "
                  "\"transient_bytes\": %" PRIu64 ", \"commands\": %u}",
                  i ? "," : "", Json(f->name()).c_str(),
                  JsonTypes(f->inputs()).c_str(),
                  JsonTypes(f->outputs()).c_str(), f->transient_size(),
                  f->commands() ? f->commands()->size() : 0);
    }
  }
  std::printf("],\n \"executables\": [");
  if (const auto* executables = module.executables()) {
    for (uint32_t e = 0; e < executables->size(); ++e) {
      const Executable* executable = executables->Get(e);
      std::printf("%s\n  {\"name\": %s, \"variants\": [", e ? "," : "",
                  Json(executable->name()).c_str());
      const auto* variants = executable->variants();
      for (uint32_t v = 0; variants && v < variants->size(); ++v) {
        const ExecutableVariant* variant = variants->Get(v);
        std::printf("%s\n    {\"target\": %s, \"format\": %s, "
                    "\"binary_bytes\": %u, \"exports\": [",
                    v ? "," : "", Json(variant->target()).c_str(),
                    Json(variant->format()).c_str(),
                    variant->binary() ? variant->binary()->size() : 0);
        const auto* exports = variant->exports();
        for (uint32_t x = 0; exports && x < exports->size(); ++x) {
          const ExecutableExport* exp = exports->Get(x);
          std::printf(
              "%s\n      {\"name\": %s, \"workgroup_count\": %s, "
              "\"workgroup_size\": %s, \"bindings\": %u, "
              "\"push_constants\": %u, \"shared_memory_bytes\": %u, "
              "\"vgpr\": %u, \"sgpr\": %u, \"agpr\": %u, "
              "\"scratch_bytes\": %u}",
              x ? "," : "", Json(exp->name()).c_str(),
              JsonTriple(exp->workgroup_count()).c_str(),
              JsonTriple(exp->workgroup_size()).c_str(), exp->binding_count(),
              exp->push_constant_count(), exp->shared_memory_bytes(),
              exp->vgpr_count(), exp->sgpr_count(), exp->agpr_count(),
              exp->scratch_bytes());
        }
        std::printf("]}");
      }
      std::printf("]}");
    }
  }
  std::printf("],\n \"rodata\": [");
  if (const auto* rodata = module.rodata()) {
    for (uint32_t r = 0; r < rodata->size(); ++r) {
      const Rodata* entry = rodata->Get(r);
      std::printf("%s\n  {\"name\": %s, \"bytes\": %u, \"alignment\": %u",
                  r ? "," : "", Json(entry->name()).c_str(),
                  entry->data() ? entry->data()->size() : 0,
                  entry->alignment());
      if (const ParameterRef* parameter = entry->parameter()) {
        std::printf(", \"parameter\": %s, \"type\": %s",
                    Json(parameter->name()).c_str(),
                    Json(TypeString(parameter->type())).c_str());
      }
      std::printf("}");
    }
  }
  std::printf("]}\n");
}

int Main(int argc, char** argv) {
  std::string path;
  bool commands = false;
  bool resources = false;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (arg == "--version") {
      std::printf("%s\n", KILN_VERSION_TEXT);
      return 0;
    } else if (arg == "--commands") {
      commands = true;
    } else if (arg == "--resources") {
      resources = true;
    } else if (arg == "--json") {
      json = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "error: unknown option '%s' (see --help)\n",
                   arg.c_str());
      return 1;
    } else if (path.empty()) {
      path = arg;
    } else {
      std::fprintf(stderr, "error: more than one module given\n");
      return 1;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "%serror: no module given\n", kUsage);
    return 1;
  }
  std::shared_ptr<const kiln::module::ModuleImage> image;
  kiln_status_t status =
      kiln::module::ModuleImage::CreateFromFile(path.c_str(), &image);
  if (!kiln_status_is_ok(status)) {
    std::fprintf(stderr, "error: %s\n", kiln_status_message(status));
    kiln_status_free(status);
    return 1;
  }
  const Module& module = image->module();
  if (resources) {
    PrintResources(module);
    return 0;
  }
  if (json) {
    PrintJson(module, image->size());
    return 0;
  }
  auto str = [](const flatbuffers::String* s) {
    return s ? s->str() : std::string();
  };
  std::printf("module: %s\n", str(module.name()).c_str());
  std::printf("  version: %u\n", module.version());
  std::printf("  source digest: %s\n", str(module.source_digest()).c_str());
  std::printf("  compile flags: %s\n", str(module.compile_flags()).c_str());
  std::printf("  size: %zu bytes\n", image->size());

  const auto* functions = module.functions();
  std::printf("\nfunctions (%u):\n", functions ? functions->size() : 0);
  if (functions) {
    for (const Function* function : *functions) {
      std::printf("  %s%s -> %s\n", function->name()->c_str(),
                  TypeList(function->inputs()).c_str(),
                  TypeList(function->outputs()).c_str());
      std::map<std::string, int> kinds;
      uint32_t count = function->commands() ? function->commands()->size() : 0;
      if (function->commands()) {
        for (const CommandEntry* entry : *function->commands()) {
          ++kinds[CommandName(entry->command_type())];
        }
      }
      std::string breakdown;
      for (const auto& kind : kinds) {
        if (!breakdown.empty()) breakdown += ", ";
        breakdown += std::to_string(kind.second) + " " + kind.first;
      }
      std::printf("    transient: %" PRIu64 " bytes (alignment %u), commands: "
                  "%u%s%s%s, channels: %u\n",
                  function->transient_size(), function->transient_alignment(),
                  count, breakdown.empty() ? "" : " (", breakdown.c_str(),
                  breakdown.empty() ? "" : ")",
                  function->channels() ? function->channels()->size() : 0);
      if (commands && function->channels()) {
        uint32_t index = 0;
        for (const Channel* channel : *function->channels()) {
          std::printf("      channel %u: grid %s axes [", index++,
                      channel->grid() ? channel->grid()->c_str() : "?");
          if (channel->axes()) {
            for (uint32_t i = 0; i < channel->axes()->size(); ++i) {
              std::printf("%s%d", i ? ", " : "", channel->axes()->Get(i));
            }
          }
          std::printf("] shape [");
          if (channel->grid_shape()) {
            for (uint32_t i = 0; i < channel->grid_shape()->size(); ++i) {
              std::printf("%s%" PRId64, i ? ", " : "",
                          channel->grid_shape()->Get(i));
            }
          }
          std::printf("]\n");
        }
      }
      if (commands && function->windows()) {
        uint32_t index = 0;
        for (const Window* window : *function->windows()) {
          std::printf("      window %u: channel %u, %" PRIu64
                      " bytes, %u "
                      "signal slots (compiled collectives)\n",
                      index++, window->channel(), window->size(),
                      window->signal_count());
        }
      }
      if (commands && function->commands()) {
        uint32_t index = 0;
        for (const CommandEntry* entry : *function->commands()) {
          PrintCommand(module, index++, *entry);
        }
      }
    }
  }

  const auto* executables = module.executables();
  std::printf("\nexecutables (%u):\n", executables ? executables->size() : 0);
  if (executables) {
    uint32_t e = 0;
    for (const Executable* executable : *executables) {
      std::printf("  %u: %s\n", e++, str(executable->name()).c_str());
      for (const ExecutableVariant* variant : *executable->variants()) {
        std::printf("    variant %s: format %s, binary %u bytes\n",
                    variant->target()->c_str(), variant->format()->c_str(),
                    variant->binary() ? variant->binary()->size() : 0);
        if (!variant->exports()) continue;
        uint32_t x = 0;
        for (const ExecutableExport* exp : *variant->exports()) {
          std::printf("      export %u: %s workgroup count %s, workgroup size "
                      "%s, bindings %u, push constants %u, shared memory %u, "
                      "vgpr %u, sgpr %u, agpr %u, scratch %u\n",
                      x++, exp->name()->c_str(),
                      Triple(exp->workgroup_count()).c_str(),
                      exp->workgroup_size() ? Triple(exp->workgroup_size()).c_str()
                                            : "1x1x1",
                      exp->binding_count(), exp->push_constant_count(),
                      exp->shared_memory_bytes(), exp->vgpr_count(),
                      exp->sgpr_count(), exp->agpr_count(),
                      exp->scratch_bytes());
        }
      }
    }
  }

  const auto* rodata = module.rodata();
  uint64_t total = 0;
  std::printf("\nrodata (%u):\n", rodata ? rodata->size() : 0);
  if (rodata) {
    uint32_t r = 0;
    for (const Rodata* entry : *rodata) {
      if (const ParameterRef* parameter = entry->parameter()) {
        std::printf("  %u: %s load-time parameter '%s' %s, alignment %u\n", r++,
                    str(entry->name()).c_str(), parameter->name()->c_str(),
                    TypeString(parameter->type()).c_str(), entry->alignment());
        continue;
      }
      uint64_t size = entry->data() ? entry->data()->size() : 0;
      total += size;
      std::printf("  %u: %s %" PRIu64 " bytes, alignment %u\n", r++,
                  str(entry->name()).c_str(), size, entry->alignment());
    }
  }
  std::printf("  total: %" PRIu64 " bytes (in the module)\n", total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The module is read and verified without exceptions; this is the last
  // resort for the printing.
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: kiln-dump ran out of host memory\n");
    return 1;
  }
}
