#include "base/row.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace tandem {
namespace {

enum Tag : std::uint8_t {
  kNull = 0x01,
  kFalse = 0x02,
  kTrue = 0x03,
  kInt = 0x04,
  kFloat = 0x05,
  kString = 0x06,
};

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
constexpr std::uint64_t kCanonicalNan = 0x7ff8000000000000ULL;

int TypeRank(const Datum& d) { return static_cast<int>(d.index()); }

// Appends the tag and 8 bytes of v, most significant first, with one append.
void AppendTagged(Tag tag, std::uint64_t v, std::string* out) {
  char bytes[9];
  bytes[0] = static_cast<char>(tag);
  for (int i = 0; i < 8; ++i) bytes[1 + i] = static_cast<char>(v >> (56 - 8 * i));
  out->append(bytes, sizeof bytes);
}

std::uint64_t ReadBigEndian(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

std::uint64_t OrderedFloatBits(double d) {
  std::uint64_t bits;
  if (std::isnan(d)) {
    bits = kCanonicalNan;
  } else {
    if (d == 0.0) d = 0.0;  // -0.0 == 0.0
    bits = std::bit_cast<std::uint64_t>(d);
  }
  return (bits & kSignBit) ? ~bits : (bits ^ kSignBit);
}

double FloatFromOrderedBits(std::uint64_t v) {
  const std::uint64_t bits = (v & kSignBit) ? (v ^ kSignBit) : ~v;
  return std::bit_cast<double>(bits);
}

int CompareDouble(double a, double b) {
  const bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  return a < b ? -1 : (b < a ? 1 : 0);  // -0.0 == 0.0 here already
}

}  // namespace

std::array<char, 9> EncodedInt64(std::int64_t v) {
  const auto bits = static_cast<std::uint64_t>(v) ^ kSignBit;
  std::array<char, 9> bytes;
  bytes[0] = static_cast<char>(kInt);
  for (int i = 0; i < 8; ++i) bytes[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
  return bytes;
}

int CompareDatum(const Datum& a, const Datum& b) {
  const int ra = TypeRank(a), rb = TypeRank(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (a.index()) {
    case 0:
      return 0;
    case 1:
      return static_cast<int>(std::get<bool>(a)) - static_cast<int>(std::get<bool>(b));
    case 2: {
      const auto x = std::get<std::int64_t>(a), y = std::get<std::int64_t>(b);
      return x < y ? -1 : (y < x ? 1 : 0);
    }
    case 3:
      return CompareDouble(std::get<double>(a), std::get<double>(b));
    default: {
      const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
  }
}

int CompareRow(const Row& a, const Row& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (int c = CompareDatum(a[i], b[i]); c != 0) return c;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

void AppendEncodedDatum(const Datum& d, std::string* out) {
  switch (d.index()) {
    case 0:
      out->push_back(static_cast<char>(kNull));
      break;
    case 1:
      out->push_back(static_cast<char>(std::get<bool>(d) ? kTrue : kFalse));
      break;
    case 2:
      out->append(EncodedInt64(std::get<std::int64_t>(d)).data(), 9);
      break;
    case 3:
      AppendTagged(kFloat, OrderedFloatBits(std::get<double>(d)), out);
      break;
    default: {
      out->push_back(static_cast<char>(kString));
      for (char c : std::get<std::string>(d)) {
        out->push_back(c);
        if (c == '\0') out->push_back(static_cast<char>(0xFF));
      }
      out->push_back('\0');
      out->push_back(static_cast<char>(0x01));
      break;
    }
  }
}

void AppendEncodedRow(const Row& row, std::string* out) {
  for (const Datum& d : row) AppendEncodedDatum(d, out);
}

std::string EncodeRow(const Row& row) {
  std::string out;
  AppendEncodedRow(row, &out);
  return out;
}

Result<Row> DecodeRow(std::string_view bytes) {
  Row row;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto* end = p + bytes.size();
  while (p < end) {
    const std::uint8_t tag = *p++;
    switch (tag) {
      case kNull:
        row.emplace_back(Null{});
        break;
      case kFalse:
        row.emplace_back(false);
        break;
      case kTrue:
        row.emplace_back(true);
        break;
      case kInt:
      case kFloat: {
        if (end - p < 8) return Status::Corruption("row encoding: truncated 8-byte datum");
        const std::uint64_t v = ReadBigEndian(p);
        p += 8;
        if (tag == kInt) {
          row.emplace_back(static_cast<std::int64_t>(v ^ kSignBit));
        } else {
          row.emplace_back(FloatFromOrderedBits(v));
        }
        break;
      }
      case kString: {
        std::string s;
        for (;;) {
          if (p >= end) return Status::Corruption("row encoding: unterminated string");
          const unsigned char c = *p++;
          if (c != 0) {
            s.push_back(static_cast<char>(c));
            continue;
          }
          if (p >= end) return Status::Corruption("row encoding: truncated string escape");
          const unsigned char next = *p++;
          if (next == 0xFF) {
            s.push_back('\0');
          } else if (next == 0x01) {
            break;
          } else {
            return Status::Corruption("row encoding: bad string escape");
          }
        }
        row.emplace_back(std::move(s));
        break;
      }
      default:
        return Status::Corruption("row encoding: unknown datum tag " + std::to_string(tag));
    }
  }
  return row;
}

}  // namespace tandem
