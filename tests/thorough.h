// How far a randomized suite goes. Each runs its default depth in every tree's run; the slow
// label runs the same binary again with TANDEM_TEST_THOROUGH=1 (its tests are registered twice,
// the second time as Slow.<suite>.<test>: tests/CMakeLists.txt), where it runs many more cases of
// larger shapes: one binary serves both depths.
#pragma once

#include <cstdlib>
#include <string_view>

namespace tandem::testing {

inline bool Thorough() {
  const char* v = std::getenv("TANDEM_TEST_THOROUGH");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

}  // namespace tandem::testing
