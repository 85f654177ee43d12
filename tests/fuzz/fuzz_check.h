// The fuzz targets' property check: a violated property prints what and aborts, which libFuzzer
// (and the seed-corpus runner) reports as a finding.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, what)                                                                     \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "fuzz property violated: %s (%s)\n", #cond, std::string(what).c_str()); \
      std::abort();                                                                                \
    }                                                                                              \
  } while (0)
