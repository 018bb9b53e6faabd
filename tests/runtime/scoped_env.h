// ScopedEnv: sets (or, with a null value, unsets) an environment variable for
// a scope and restores the old value afterwards. Not thread-safe: tests that
// use it run one at a time. Header-only; tests include it as "scoped_env.h"
// (tests/runtime is on their include path).
#ifndef KILN_TESTS_RUNTIME_SCOPED_ENV_H_
#define KILN_TESTS_RUNTIME_SCOPED_ENV_H_

#include <cstdlib>
#include <string>

namespace kiln::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name(name) {
    const char* old = std::getenv(name);
    hadOld = old != nullptr;
    if (old) oldValue = old;
    if (value) setenv(name, value, 1); else unsetenv(name);
  }
  ~ScopedEnv() {
    if (hadOld) setenv(name, oldValue.c_str(), 1); else unsetenv(name);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name;
  bool hadOld = false;
  std::string oldValue;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_RUNTIME_SCOPED_ENV_H_
