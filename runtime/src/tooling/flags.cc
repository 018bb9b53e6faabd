#include "tooling/flags.h"

#include <cstring>

namespace kiln {
namespace tooling {

bool MatchFlagValue(int argc, char** argv, int* index, const char* flag,
                    std::string* value) {
  const std::string arg = argv[*index];
  const size_t length = std::strlen(flag);
  if (arg.compare(0, length, flag) != 0) return false;
  if (arg.size() > length && arg[length] == '=') {
    *value = arg.substr(length + 1);
    return true;
  }
  if (arg.size() == length && *index + 1 < argc) {
    *value = argv[++*index];
    return true;
  }
  return false;
}

}  // namespace tooling
}  // namespace kiln
