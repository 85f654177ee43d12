#include "base/global_id.h"

#include <charconv>

namespace tandem {

std::optional<GlobalId> GlobalId::Parse(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  Kind kind;
  switch (text[0]) {
    case 'u':
      kind = Kind::kUser;
      break;
    case 's':
      kind = Kind::kSystem;
      break;
    case 't':
      kind = Kind::kTransient;
      break;
    default:
      return std::nullopt;
  }
  std::uint64_t n = 0;
  const char* begin = text.data() + 1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || ptr != end || n > kMaxNumber) return std::nullopt;
  return GlobalId(kind, n);
}

std::optional<GlobalId> GlobalId::Unpack(std::uint64_t packed) {
  const auto kind = static_cast<char>(packed >> 56);
  if (kind != 'u' && kind != 's' && kind != 't') return std::nullopt;
  return GlobalId(static_cast<Kind>(kind), packed & kMaxNumber);
}

std::string GlobalId::ToString() const {
  std::string s(1, static_cast<char>(kind_));
  s += std::to_string(number_);
  return s;
}

}  // namespace tandem
