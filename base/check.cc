#include "base/check.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace tandem::internal {

[[noreturn]] void CheckFailed(const char* file, int line, const char* expr, const char* message) {
  // stderr is unbuffered; one fprintf keeps the line whole when threads race to fail.
  std::fprintf(stderr, "tandem[%d]: check failed at %s:%d: %s — %s\n", static_cast<int>(getpid()),
               file, line, expr, message);
  std::abort();
}

}  // namespace tandem::internal
