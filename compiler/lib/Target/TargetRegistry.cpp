//===- TargetRegistry.cpp - The code generation targets by name -----------===//
#include "kiln/Target/TargetRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::kiln;

const TargetOptionValue &TargetOptionValues::get(StringRef name) const {
  auto it = values.find(name);
  if (it == values.end())
    llvm::report_fatal_error("no value of target option --" + name);
  return it->second;
}

const std::vector<std::string> &
TargetOptionValues::getList(StringRef name) const {
  return std::get<std::vector<std::string>>(get(name));
}

const std::string &TargetOptionValues::getString(StringRef name) const {
  return std::get<std::string>(get(name));
}

bool TargetOptionValues::getBool(StringRef name) const {
  return std::get<bool>(get(name));
}

unsigned TargetOptionValues::getLevel(StringRef name) const {
  return std::get<unsigned>(get(name));
}

// Whether `value` holds the type of `kind`.
static bool hasKind(const TargetOptionValue &value, TargetOption::Kind kind) {
  switch (kind) {
  case TargetOption::Kind::StringList:
    return std::holds_alternative<std::vector<std::string>>(value);
  case TargetOption::Kind::String:
    return std::holds_alternative<std::string>(value);
  case TargetOption::Kind::Bool:
    return std::holds_alternative<bool>(value);
  case TargetOption::Kind::Level:
    return std::holds_alternative<unsigned>(value) &&
           std::get<unsigned>(value) <= 3;
  }
  llvm_unreachable("unknown option kind");
}

void TargetRegistry::add(TargetInfo target) {
  if (target.name.empty() || lookup(target.name))
    llvm::report_fatal_error("target '" + Twine(target.name) +
                             "' registered twice or without a name");
  if (!target.create)
    llvm::report_fatal_error("target '" + Twine(target.name) +
                             "' has no backend factory");
  if (target.isDefault && llvm::any_of(targets, [](const TargetInfo &other) {
        return other.isDefault;
      }))
    llvm::report_fatal_error("target '" + Twine(target.name) +
                             "' is a second default target");
  for (const TargetOption &option : target.options) {
    const TargetInfo *owner = lookupOption(option.name);
    bool repeated = llvm::count_if(target.options, [&](const auto &other) {
                      return other.name == option.name;
                    }) > 1;
    if (owner || repeated)
      llvm::report_fatal_error("option --" + Twine(option.name) +
                               " of target '" + target.name +
                               "' is already registered");
    if (!hasKind(option.defaultValue, option.kind))
      llvm::report_fatal_error("option --" + Twine(option.name) +
                               " has a default of another kind");
  }
  targets.push_back(std::move(target));
}

const TargetInfo *TargetRegistry::lookup(StringRef name) const {
  auto it = llvm::find_if(
      targets, [&](const TargetInfo &target) { return target.name == name; });
  return it == targets.end() ? nullptr : &*it;
}

const TargetInfo *
TargetRegistry::lookupOption(StringRef name,
                             const TargetOption **option) const {
  for (const TargetInfo &target : targets)
    for (const TargetOption &candidate : target.options)
      if (candidate.name == name) {
        if (option)
          *option = &candidate;
        return &target;
      }
  return nullptr;
}

std::string TargetRegistry::getTargetNames() const {
  return llvm::join(llvm::map_range(targets,
                                    [](const TargetInfo &target) {
                                      return StringRef(target.name);
                                    }),
                    ", ");
}

StringRef TargetRegistry::getDefaultTarget() const {
  auto it = llvm::find_if(
      targets, [](const TargetInfo &target) { return target.isDefault; });
  if (it != targets.end())
    return it->name;
  return targets.empty() ? StringRef() : StringRef(targets.front().name);
}

TargetOptionValues
TargetRegistry::getOptionValues(const TargetInfo &target,
                                const TargetOptionValues &given) const {
  TargetOptionValues values;
  for (const TargetOption &option : target.options)
    values.set(option.name, given.contains(option.name)
                                ? given.get(option.name)
                                : option.defaultValue);
  return values;
}
