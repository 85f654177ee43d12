#include "frontend/sql/sql_error.h"

namespace tandem::sql {

std::string SqlError::ToString() const {
  std::string out = sqlstate + ": " + message;
  if (position > 0) out += " (position " + std::to_string(position) + ")";
  return out;
}

int CursorPosition(std::string_view sql, std::size_t offset) {
  return CursorCounter(sql).At(offset);
}

int CursorCounter::At(std::size_t offset) {
  assert(offset <= sql_.size() && offset >= offset_);
  // A character starts at every byte that is not a UTF-8 continuation byte (10xxxxxx).
  for (; offset_ < offset; ++offset_) {
    if ((static_cast<unsigned char>(sql_[offset_]) & 0xC0) != 0x80) ++characters_;
  }
  return characters_ + 1;
}

}  // namespace tandem::sql
