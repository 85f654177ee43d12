// Which of several errors a read answers (DESIGN §3.2: a peek that sees an error answers Error):
// the first in ErrorLess order, so that the same read answers the same error every time, in
// every process that reads it (the runtime's peeks, local readers).
#pragma once

#include <string_view>

namespace tandem {

// Byte order, except that runs of digits compare as numbers — so of "log line 7: …" and
// "log line 12: …" the earlier line is first.
bool ErrorLess(std::string_view a, std::string_view b);

}  // namespace tandem
