// JSON string escaping (RFC 8259): quote, backslash, the control characters and DEL escaped; every
// other byte, UTF-8 included, passed through. The one escaping of every JSON Tandem writes: the
// tools' --json output and the JSON log lines (base/log.h).
#pragma once

#include <string>
#include <string_view>

namespace tandem {

// The characters of `s` as they go between the quotes of a JSON string.
std::string JsonEscape(std::string_view s);
// `s` as a JSON string, quotes included.
inline std::string JsonQuote(std::string_view s) { return "\"" + JsonEscape(s) + "\""; }

}  // namespace tandem
