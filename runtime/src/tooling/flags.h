// Command-line flag matching shared by the runtime tools (kiln-run,
// kiln-benchmark). Pure; thread-safe.
#ifndef KILN_RUNTIME_SRC_TOOLING_FLAGS_H_
#define KILN_RUNTIME_SRC_TOOLING_FLAGS_H_

#include <string>

namespace kiln {
namespace tooling {

// Matches argv[*index] against `flag` written as "--flag=value" or as
// "--flag value" (then *index advances past the value). Returns false, with
// *index unchanged, when argv[*index] is another flag or the value is missing.
bool MatchFlagValue(int argc, char** argv, int* index, const char* flag,
                    std::string* value);

}  // namespace tooling
}  // namespace kiln

#endif  // KILN_RUNTIME_SRC_TOOLING_FLAGS_H_
