// TANDEM_CHECK: our own invariants. A failed check logs where and why, then abort()s.
// Never use it for input from outside the process (that is a Status); shared fate (DESIGN §5)
// makes aborting safe: the supervisor takes the whole replica down.
#pragma once

namespace tandem::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* expr, const char* message);
}  // namespace tandem::internal

#define TANDEM_CHECK(cond, message)                                          \
  do {                                                                       \
    if (__builtin_expect(!(cond), 0)) {                                      \
      ::tandem::internal::CheckFailed(__FILE__, __LINE__, #cond, (message)); \
    }                                                                        \
  } while (0)
