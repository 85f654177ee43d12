// Character scanning shared by the datetime text forms (datetime_text.cc, interval_text.cc):
// PostgreSQL's ASCII character classes, its number, fraction and clock readers, and the clock
// printer. Only those two files include this.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tandem::datetime_scan {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
inline bool IsPunct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}
inline char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// Reads up to 18 digits; more is a field overflow. Returns false if no digit.
inline bool ReadNumber(std::string_view s, std::size_t& i, std::int64_t& value, int* digits,
                       bool& overflow) {
  const std::size_t start = i;
  value = 0;
  while (i < s.size() && IsDigit(s[i])) {
    if (i - start >= 18) overflow = true;
    if (!overflow) value = value * 10 + (s[i] - '0');
    ++i;
  }
  if (digits != nullptr) *digits = static_cast<int>(i - start);
  return i > start;
}

// ".digits" rounded to microseconds, ties to even (PostgreSQL's rint(strtod(...) * 1e6)); `i`
// is at the '.'. An empty fraction is zero, as PostgreSQL takes "12:00:00.".
inline std::int64_t ReadFractionMicros(std::string_view s, std::size_t& i) {
  ++i;                     // '.'
  std::int64_t seven = 0;  // the first seven digits
  int n = 0;
  bool sticky = false;  // a nonzero digit after the seventh
  while (i < s.size() && IsDigit(s[i])) {
    if (n < 7) {
      seven = seven * 10 + (s[i] - '0');
      ++n;
    } else if (s[i] != '0') {
      sticky = true;
    }
    ++i;
  }
  for (; n < 7; ++n) seven *= 10;
  std::int64_t micros = seven / 10;
  const std::int64_t last = seven % 10;
  if (last > 5 || (last == 5 && (sticky || micros % 2 != 0))) ++micros;
  return micros;
}

// PostgreSQL's DecodeTimeCommon: "h:m", "h:m:s[.f]", and "m:s.f" (a fraction after two fields
// means minutes and seconds). Leaves the range checks to the caller. False: not a time.
inline bool ReadClock(std::string_view s, std::size_t& i, std::int64_t& hour, std::int64_t& minute,
                      std::int64_t& second, std::int64_t& fraction, bool& overflow) {
  // The fields after the first may be empty ("1:" is 01:00:00): PostgreSQL's strtoint reads 0.
  std::int64_t a = 0, b = 0, c = 0;
  if (!ReadNumber(s, i, a, nullptr, overflow)) return false;
  if (i >= s.size() || s[i] != ':') return false;
  ++i;
  ReadNumber(s, i, b, nullptr, overflow);
  fraction = 0;
  if (i < s.size() && s[i] == '.') {
    fraction = ReadFractionMicros(s, i);
    hour = 0;
    minute = a;
    second = b;
    return true;
  }
  if (i < s.size() && s[i] == ':') {
    ++i;
    ReadNumber(s, i, c, nullptr, overflow);
    if (i < s.size() && s[i] == '.') fraction = ReadFractionMicros(s, i);
  }
  hour = a;
  minute = b;
  second = c;
  return true;
}

// "HH:MM:SS[.ffffff with trailing zeros dropped]" of a non-negative span (hours may exceed 24).
inline void AppendClock(std::string& out, std::int64_t hours, std::int64_t minutes,
                        std::int64_t seconds, std::int64_t fraction_micros) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(hours),
                static_cast<long long>(minutes), static_cast<long long>(seconds));
  out += buf;
  if (fraction_micros != 0) {
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(fraction_micros));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
}

}  // namespace tandem::datetime_scan
