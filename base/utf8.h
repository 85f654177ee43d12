// UTF-8 validation as PostgreSQL's UTF8 encoding checks text (RFC 3629): no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing past U+10FFFF — and no NUL, which PostgreSQL refuses in
// any text. The one validator of the frontend: the wire protocol checks a Query's text with it,
// the SQL layer a statement's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tandem {

// The length (1 to 4) of the valid UTF-8 sequence that starts at text[at], or 0 when none does:
// a byte that cannot lead a sequence, a continuation byte out of range (an overlong form, a
// surrogate, past U+10FFFF), a sequence cut short by the end of `text`, or NUL.
// REQUIRES: at < text.size().
std::size_t Utf8SequenceLength(std::string_view text, std::size_t at);

// The offset of the first byte of `text` where no valid sequence starts, or std::nullopt when all
// of `text` is valid.
std::optional<std::size_t> FindInvalidUtf8(std::string_view text);

// PostgreSQL's words for the invalid sequence at text[at] (its report_invalid_encoding):
// `invalid byte sequence for encoding "UTF8": 0xc3 0x28` — as many bytes as the lead byte
// announces (1 to 4; 1 for a byte that cannot lead), no further than the end of `text`.
// REQUIRES: at < text.size().
std::string InvalidUtf8Message(std::string_view text, std::size_t at);

// Characters (code points) of valid UTF-8 `text`: the bytes that are not continuation bytes.
std::size_t Utf8CodePoints(std::string_view text);
// The byte offset where code point `n` (from 0) of valid UTF-8 `text` starts; text.size() when it
// has n or fewer.
std::size_t Utf8CodePointOffset(std::string_view text, std::size_t n);

}  // namespace tandem
