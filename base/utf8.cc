#include "base/utf8.h"

#include <algorithm>

#include "base/check.h"

namespace tandem {

std::size_t Utf8SequenceLength(std::string_view text, std::size_t at) {
  TANDEM_CHECK(at < text.size(), "Utf8SequenceLength past the end of its text");
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  // Whether text[at + k] exists and lies in low..high.
  const auto continuation = [&](std::size_t k, unsigned char low, unsigned char high) {
    return text.size() - at > k && byte(k) >= low && byte(k) <= high;
  };
  const unsigned char lead = byte(0);
  if (lead == 0) return 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return continuation(1, 0x80, 0xbf) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    const unsigned char low = lead == 0xe0 ? 0xa0 : 0x80;   // 0xe0 0x80..0x9f: overlong
    const unsigned char high = lead == 0xed ? 0x9f : 0xbf;  // 0xed 0xa0..0xbf: surrogates
    return continuation(1, low, high) && continuation(2, 0x80, 0xbf) ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const unsigned char low = lead == 0xf0 ? 0x90 : 0x80;   // 0xf0 0x80..0x8f: overlong
    const unsigned char high = lead == 0xf4 ? 0x8f : 0xbf;  // 0xf4 0x90..: past U+10FFFF
    return continuation(1, low, high) && continuation(2, 0x80, 0xbf) && continuation(3, 0x80, 0xbf)
               ? 4
               : 0;
  }
  return 0;  // a continuation byte, 0xc0/0xc1 (overlong), 0xf5..0xff (past U+10FFFF)
}

std::optional<std::size_t> FindInvalidUtf8(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t length = Utf8SequenceLength(text, at);
    if (length == 0) return at;
    at += length;
  }
  return std::nullopt;
}

std::string InvalidUtf8Message(std::string_view text, std::size_t at) {
  TANDEM_CHECK(at < text.size(), "InvalidUtf8Message past the end of its text");
  // PostgreSQL's pg_utf_mblen: the length the lead byte's high bits announce.
  const auto lead = static_cast<unsigned char>(text[at]);
  std::size_t announced = 1;
  if ((lead & 0xe0) == 0xc0) {
    announced = 2;
  } else if ((lead & 0xf0) == 0xe0) {
    announced = 3;
  } else if ((lead & 0xf8) == 0xf0) {
    announced = 4;
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string message = "invalid byte sequence for encoding \"UTF8\": ";
  const std::size_t shown = std::min(announced, text.size() - at);
  for (std::size_t k = 0; k < shown; ++k) {
    const auto b = static_cast<unsigned char>(text[at + k]);
    if (k > 0) message += ' ';
    message += "0x";
    message += kDigits[b >> 4];
    message += kDigits[b & 0xf];
  }
  return message;
}

std::size_t Utf8CodePoints(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::size_t Utf8CodePointOffset(std::string_view text, std::size_t n) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == n) return i;
  }
  return text.size();
}

}  // namespace tandem
