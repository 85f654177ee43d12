#include "frontend/sql/sql_error.h"

namespace tandem::sql {

std::string SqlError::ToString() const {
  std::string out = sqlstate + ": " + message;
  if (position > 0) out += " (position " + std::to_string(position) + ")";
  return out;
}

int CursorPosition(std::string_view sql, std::size_t offset) {
  assert(offset <= sql.size());
  // A character starts at every byte that is not a UTF-8 continuation byte (10xxxxxx).
  int characters = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if ((static_cast<unsigned char>(sql[i]) & 0xC0) != 0x80) ++characters;
  }
  return characters + 1;
}

}  // namespace tandem::sql
