// JSON string escaping for the tools' --json output (RFC 8259: quote, backslash and control
// characters escaped; everything else, including UTF-8, passed through).
#pragma once

#include <string>
#include <string_view>

namespace tandem {

// The characters of `s` as they go between the quotes of a JSON string.
std::string JsonEscape(std::string_view s);
// `s` as a JSON string, quotes included.
inline std::string JsonQuote(std::string_view s) { return "\"" + JsonEscape(s) + "\""; }

}  // namespace tandem
