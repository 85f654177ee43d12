#include "ipc/formats/format_values.h"

#include <utility>

#include "base/datum_text.h"
#include "ipc/rows.h"

namespace tandem::ipc {

bool ValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (end - p <= n) return false;
    for (int i = 1; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += n + 1;
  }
  return true;
}

std::string_view WithoutByteOrderMark(std::string_view first_line) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (first_line.substr(0, kBom.size()) == kBom) first_line.remove_prefix(kBom.size());
  return first_line;
}

bool ParseBoolText(std::string_view s, bool* out) {
  auto is = [&](std::string_view word) {
    if (s.size() != word.size()) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i] >= 'A' && s[i] <= 'Z' ? static_cast<char>(s[i] - 'A' + 'a') : s[i];
      if (c != word[i]) return false;
    }
    return true;
  };
  if (is("true")) return *out = true, true;
  if (is("false")) return *out = false, true;
  return false;
}

std::string ReadPostgresText(std::string_view text, const pb::Column& column, Datum* out) {
  auto d = ParsePostgresText(text, ColumnTypeOf(column));
  if (!d.ok()) return d.status().message() + " (column " + column.name() + ")";
  *out = std::move(*d);
  return "";
}

std::string FitDatumToColumn(const pb::Column& column, Datum* datum) {
  auto d = FitToColumn(std::move(*datum), ColumnTypeOf(column));
  if (!d.ok()) return d.status().message() + " (column " + column.name() + ")";
  *datum = std::move(*d);
  return "";
}

std::vector<int> KeyPositions(const pb::Schema& schema,
                              const std::vector<std::uint32_t>& upsert_key) {
  std::vector<int> pos(static_cast<std::size_t>(schema.columns_size()), -1);
  for (std::size_t i = 0; i < upsert_key.size(); ++i) {
    if (upsert_key[i] < pos.size()) pos[upsert_key[i]] = static_cast<int>(i);
  }
  return pos;
}

}  // namespace tandem::ipc
