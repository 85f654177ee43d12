#include "base/row.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "base/check.h"
#include "base/count.h"

namespace tandem {
namespace {

enum Tag : std::uint8_t {
  kNull = 0x01,
  kFalse = 0x02,
  kTrue = 0x03,
  kInt = 0x04,
  kFloat = 0x05,
  kString = 0x06,
  kNumeric = 0x07,
  kBytes = 0x08,
  kDate = 0x09,
  kTime = 0x0A,
  kTimestamp = 0x0B,
  kTimestampTz = 0x0C,
  kInterval = 0x0D,
  kUuid = 0x0E,
  // Key encoding only (row.h "Keys"): a numeric's value without its scale, an interval's span.
  kNumericKey = 0x0F,
  kIntervalKey = 0x10,
};

// The numeric encoding's sign classes and exponent bias (row.h).
constexpr std::uint8_t kNumericNegative = 0x01;
constexpr std::uint8_t kNumericZero = 0x02;
constexpr std::uint8_t kNumericPositive = 0x03;
constexpr int kNumericExponentBias = 64;
constexpr int kNumericMaxPairs = 20;  // 38 digits, misaligned by one, in base-100 pairs

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
constexpr std::uint64_t kCanonicalNan = 0x7ff8000000000000ULL;

// Kinds order by their index in the variant; the switches below name every index.
static_assert(std::variant_size_v<Datum> == 13, "a new datum kind needs its order and encoding");
int TypeRank(const Datum& d) { return static_cast<int>(d.index()); }

// Appends the tag and 8 bytes of v, most significant first, with one append.
void AppendTagged(Tag tag, std::uint64_t v, std::string* out) {
  char bytes[9];
  bytes[0] = static_cast<char>(tag);
  for (int i = 0; i < 8; ++i) bytes[1 + i] = static_cast<char>(v >> (56 - 8 * i));
  out->append(bytes, sizeof bytes);
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

template <typename T>
int Three(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

void AppendBigEndian(std::uint64_t v, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}

std::uint64_t Biased64(std::int64_t v) { return static_cast<std::uint64_t>(v) ^ kSignBit; }
std::int64_t Unbiased64(std::uint64_t v) { return static_cast<std::int64_t>(v ^ kSignBit); }
std::uint32_t Biased32(std::int32_t v) { return static_cast<std::uint32_t>(v) ^ 0x80000000u; }
std::int32_t Unbiased32(std::uint32_t v) { return static_cast<std::int32_t>(v ^ 0x80000000u); }

// 00 escaped as 00 FF, then the terminator 00 01: strings and bytea.
void AppendEscaped(std::string_view bytes, std::string* out) {
  for (char c : bytes) {
    out->push_back(c);
    if (c == '\0') out->push_back(static_cast<char>(0xFF));
  }
  out->push_back('\0');
  out->push_back(static_cast<char>(0x01));
}

// The value of a numeric (row.h): sign class, then for a non-zero value the exponent and the
// base-100 digits of its magnitude, complemented when negative.
void AppendNumericValue(const Numeric& n, std::string* out) {
  const Int128 c = n.coefficient();
  if (c == 0) {
    out->push_back(static_cast<char>(kNumericZero));
    return;
  }
  // |c| < 10^38 < 2^127: its magnitude fits, and so does its decimal text.
  UInt128 magnitude = c < 0 ? UInt128{0} - static_cast<UInt128>(c) : static_cast<UInt128>(c);
  int shift = -static_cast<int>(n.scale);  // value = magnitude × 10^shift
  while (magnitude % 10 == 0) {
    magnitude /= 10;
    ++shift;
  }
  char digits[48];
  int count = 0;
  for (UInt128 m = magnitude; m != 0; m /= 10) {
    digits[count++] = static_cast<char>('0' + static_cast<int>(m % 10));
  }
  std::reverse(digits, digits + count);
  // value = 0.digits × 10^point; in base 100 the point must fall between pairs.
  int point = count + shift;
  char pairs_text[48];  // the digits, a leading zero and a trailing zero at most
  std::size_t length = 0;
  if (point % 2 != 0) {  // odd (either sign): one leading zero digit moves the point by one
    pairs_text[length++] = '0';
    ++point;
  }
  std::memcpy(pairs_text + length, digits, static_cast<std::size_t>(count));
  length += static_cast<std::size_t>(count);
  if (length % 2 != 0) pairs_text[length++] = '0';
  const bool negative = c < 0;
  auto put = [&](std::uint8_t b) {
    out->push_back(static_cast<char>(negative ? static_cast<std::uint8_t>(255 - b) : b));
  };
  out->push_back(static_cast<char>(negative ? kNumericNegative : kNumericPositive));
  put(static_cast<std::uint8_t>(point / 2 + kNumericExponentBias));
  for (std::size_t k = 0; k < length; k += 2) {
    put(static_cast<std::uint8_t>((pairs_text[k] - '0') * 10 + (pairs_text[k + 1] - '0') + 1));
  }
  put(0);
}

void AppendSpan(const Interval& i, std::string* out) {
  const auto span = static_cast<UInt128>(IntervalSpan(i)) ^ (static_cast<UInt128>(1) << 127);
  AppendBigEndian(static_cast<std::uint64_t>(span >> 64), 8, out);
  AppendBigEndian(static_cast<std::uint64_t>(span), 8, out);
}

void AppendInterval(const Interval& i, std::string* out) {
  AppendSpan(i, out);
  AppendBigEndian(Biased32(i.months), 4, out);
  AppendBigEndian(Biased32(i.days), 4, out);
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
    case 4: {
      const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 5:
      return CompareNumeric(std::get<Numeric>(a), std::get<Numeric>(b));
    case 6: {
      const int c = std::get<Bytes>(a).bytes.compare(std::get<Bytes>(b).bytes);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 7:
      return Three(std::get<Date>(a), std::get<Date>(b));
    case 8:
      return Three(std::get<TimeOfDay>(a), std::get<TimeOfDay>(b));
    case 9:
      return Three(std::get<Timestamp>(a), std::get<Timestamp>(b));
    case 10:
      return Three(std::get<TimestampTz>(a), std::get<TimestampTz>(b));
    case 11:
      return CompareInterval(std::get<Interval>(a), std::get<Interval>(b));
    case 12:
      return Three(std::get<Uuid>(a), std::get<Uuid>(b));
  }
  TANDEM_CHECK(false, "a datum of an unknown kind");
  return 0;
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
    case 4:
      out->push_back(static_cast<char>(kString));
      AppendEscaped(std::get<std::string>(d), out);
      break;
    case 5: {
      const Numeric& n = std::get<Numeric>(d);
      out->push_back(static_cast<char>(kNumeric));
      AppendNumericValue(n, out);
      out->push_back(static_cast<char>(n.scale));
      break;
    }
    case 6:
      out->push_back(static_cast<char>(kBytes));
      AppendEscaped(std::get<Bytes>(d).bytes, out);
      break;
    case 7:
      out->push_back(static_cast<char>(kDate));
      AppendBigEndian(Biased32(std::get<Date>(d).days), 4, out);
      break;
    case 8:
      AppendTagged(kTime, Biased64(std::get<TimeOfDay>(d).micros), out);
      break;
    case 9:
      AppendTagged(kTimestamp, Biased64(std::get<Timestamp>(d).micros), out);
      break;
    case 10:
      AppendTagged(kTimestampTz, Biased64(std::get<TimestampTz>(d).micros), out);
      break;
    case 11:
      out->push_back(static_cast<char>(kInterval));
      AppendInterval(std::get<Interval>(d), out);
      break;
    case 12: {
      const auto& bytes = std::get<Uuid>(d).bytes;
      out->push_back(static_cast<char>(kUuid));
      out->append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      break;
    }
    default:
      TANDEM_CHECK(false, "a datum of an unknown kind");
  }
}

void AppendKeyDatum(const Datum& d, std::string* out) {
  if (const auto* n = std::get_if<Numeric>(&d)) {
    out->push_back(static_cast<char>(kNumericKey));
    AppendNumericValue(*n, out);
  } else if (const auto* i = std::get_if<Interval>(&d)) {
    out->push_back(static_cast<char>(kIntervalKey));
    AppendSpan(*i, out);
  } else {
    AppendEncodedDatum(d, out);
  }
}

void AppendKeyColumns(const Row& row, const std::vector<std::uint32_t>& columns, std::string* out) {
  for (std::uint32_t c : columns) AppendKeyDatum(row[c], out);
}

void AppendKey(const Row& row, std::string* out) {
  for (const Datum& d : row) AppendKeyDatum(d, out);
}

std::string EncodeKey(const Row& key) {
  std::string out;
  AppendKey(key, &out);
  return out;
}

void AppendEncodedRow(const Row& row, std::string* out) {
  for (const Datum& d : row) AppendEncodedDatum(d, out);
}

std::string EncodeRow(const Row& row) {
  std::string out;
  AppendEncodedRow(row, &out);
  return out;
}

namespace {

// Reads the datums of an encoded row; every malformed byte sequence is Corruption.
class RowDecoder {
 public:
  // `key`: the bytes are a key's (AppendKeyDatum), not a row's.
  RowDecoder(std::string_view bytes, bool key)
      : p_(reinterpret_cast<const unsigned char*>(bytes.data())),
        end_(p_ + bytes.size()),
        key_(key) {}

  Result<Row> Decode() {
    while (p_ < end_) {
      const unsigned char* start = p_;
      const std::uint8_t tag = *p_++;
      if (Status s = DecodeDatum(tag, start); !s.ok()) return s;
    }
    return std::move(row_);
  }

 private:
  static Status Bad(const std::string& why) { return Status::Corruption("row encoding: " + why); }

  template <typename T>
  Status Put(T&& value) {
    row_.emplace_back(std::forward<T>(value));
    return Status::Ok();
  }

  bool Has(std::ptrdiff_t n) const { return end_ - p_ >= n; }
  std::uint64_t Take(int n) {  // REQUIRES: Has(n)
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | *p_++;
    return v;
  }

  Status DecodeDatum(std::uint8_t tag, const unsigned char* start) {
    switch (tag) {
      case kNull:
        return Put(Null{});
      case kFalse:
        return Put(false);
      case kTrue:
        return Put(true);
      case kInt:
      case kFloat:
      case kTime:
      case kTimestamp:
      case kTimestampTz: {
        if (!Has(8)) return Bad("truncated 8-byte datum");
        const std::uint64_t v = Take(8);
        if (tag == kInt) return Put(Unbiased64(v));
        if (tag == kFloat) return Put(FloatFromOrderedBits(v));
        const std::int64_t micros = Unbiased64(v);
        if (tag == kTimestamp || tag == kTimestampTz) {
          if (micros < kFirstTimestampMicros) return Bad("timestamp before 4714-11-24 BC");
          if (tag == kTimestamp) return Put(Timestamp{micros});
          return Put(TimestampTz{micros});
        }
        if (micros < 0 || micros > kMicrosPerDay) return Bad("time outside [00:00, 24:00]");
        return Put(TimeOfDay{micros});
      }
      case kString:
      case kBytes: {
        std::string s;
        if (Status st = ReadEscaped(&s); !st.ok()) return st;
        if (tag == kString) return Put(std::move(s));
        return Put(Bytes{std::move(s)});
      }
      case kNumeric:
      case kNumericKey:
        if ((tag == kNumericKey) != key_)
          return Bad(key_ ? "a row's numeric in a key" : "a key's numeric in a row");
        return DecodeNumeric(start);
      case kDate:
        if (!Has(4)) return Bad("truncated date");
        {
          const std::int32_t days = Unbiased32(static_cast<std::uint32_t>(Take(4)));
          if (days < kFirstDateDays || days > kLastDateDays) return Bad("date out of range");
          return Put(Date{days});
        }
      case kInterval:
        if (key_) return Bad("a row's interval in a key");
        return DecodeInterval();
      case kIntervalKey:
        if (!key_) return Bad("a key's interval in a row");
        return DecodeIntervalKey();
      case kUuid: {
        if (!Has(16)) return Bad("truncated uuid");
        Uuid u;
        std::memcpy(u.bytes.data(), p_, 16);
        p_ += 16;
        return Put(u);
      }
      default:
        return Bad("unknown datum tag " + std::to_string(tag));
    }
  }

  Status ReadEscaped(std::string* s) {
    for (;;) {
      if (p_ >= end_) return Bad("unterminated string");
      const unsigned char c = *p_++;
      if (c != 0) {
        s->push_back(static_cast<char>(c));
        continue;
      }
      if (p_ >= end_) return Bad("truncated string escape");
      const unsigned char next = *p_++;
      if (next == 0xFF) {
        s->push_back('\0');
      } else if (next == 0x01) {
        return Status::Ok();
      } else {
        return Bad("bad string escape");
      }
    }
  }

  // The value and scale of row.h's numeric encoding, accepted only in its canonical form (the
  // datum is re-encoded and must give the same bytes).
  Status DecodeNumeric(const unsigned char* start) {
    if (!Has(1)) return Bad("truncated numeric");
    const std::uint8_t sign = *p_++;
    constexpr UInt128 kLimit =
        static_cast<UInt128>(10'000'000'000'000'000'000u) * 10'000'000'000'000'000'000u;  // 10^38
    UInt128 magnitude = 0;
    int exponent = 0;  // of 10, after the scale is applied: coefficient = magnitude × 10^exponent
    std::string digits;
    if (sign == kNumericPositive || sign == kNumericNegative) {
      const bool negative = sign == kNumericNegative;
      auto next = [&]() -> std::uint8_t {
        const std::uint8_t b = *p_++;
        return negative ? static_cast<std::uint8_t>(255 - b) : b;
      };
      if (!Has(1)) return Bad("truncated numeric");
      const int e = next() - kNumericExponentBias;
      for (;;) {
        if (!Has(1)) return Bad("unterminated numeric");
        const std::uint8_t b = next();
        if (b == 0) break;
        if (b > 100 || digits.size() >= 2 * kNumericMaxPairs) return Bad("bad numeric digits");
        digits.push_back(static_cast<char>('0' + (b - 1) / 10));
        digits.push_back(static_cast<char>('0' + (b - 1) % 10));
      }
      if (digits.empty()) return Bad("numeric without digits");
      exponent = 2 * e - static_cast<int>(digits.size());
    } else if (sign != kNumericZero) {
      return Bad("bad numeric sign");
    }
    int scale = 0;
    if (key_) {  // a key's numeric has the smallest scale that holds its value
      while (exponent < 0 && !digits.empty() && digits.back() == '0') {
        digits.pop_back();
        ++exponent;
      }
      scale = exponent < 0 ? -exponent : 0;
    } else {
      if (!Has(1)) return Bad("truncated numeric scale");
      scale = *p_++;
    }
    if (scale > kNumericMaxDigits) return Bad("numeric scale above 38");
    exponent += scale;
    while (exponent < 0) {  // fractional digits beyond the scale must be zeros
      if (digits.empty() || digits.back() != '0') return Bad("numeric digits beyond its scale");
      digits.pop_back();
      ++exponent;
    }
    for (char c : digits) {
      if (magnitude >= kLimit / 10) return Bad("numeric coefficient of more than 38 digits");
      magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
    }
    for (; exponent > 0 && magnitude != 0; --exponent) {
      if (magnitude >= kLimit / 10) return Bad("numeric coefficient of more than 38 digits");
      magnitude *= 10;
    }
    const auto coefficient =
        sign == kNumericNegative ? -static_cast<Int128>(magnitude) : static_cast<Int128>(magnitude);
    const auto bits = static_cast<UInt128>(coefficient);
    Numeric n;
    n.lo = static_cast<std::uint64_t>(bits);
    n.hi = static_cast<std::int64_t>(static_cast<std::uint64_t>(bits >> 64));
    n.scale = static_cast<std::uint8_t>(scale);
    std::string again;
    again.push_back(static_cast<char>(key_ ? kNumericKey : kNumeric));
    AppendNumericValue(n, &again);
    if (!key_) again.push_back(static_cast<char>(n.scale));
    if (std::string_view(reinterpret_cast<const char*>(start),
                         static_cast<std::size_t>(p_ - start)) != again) {
      return Bad("numeric not in its canonical form");
    }
    return Put(n);
  }

  // Every interval's span is below 2^96 in magnitude; refusing larger ones first keeps the
  // arithmetic on a span in range for any bytes.
  static constexpr Int128 kSpanLimit = static_cast<Int128>(1) << 100;

  Int128 TakeSpan() {  // REQUIRES: Has(16)
    const std::uint64_t high = Take(8), low = Take(8);
    return static_cast<Int128>(((static_cast<UInt128>(high) << 64) | low) ^
                               (static_cast<UInt128>(1) << 127));
  }

  Status DecodeInterval() {
    if (!Has(24)) return Bad("truncated interval");
    const Int128 span = TakeSpan();
    Interval i;
    i.months = Unbiased32(static_cast<std::uint32_t>(Take(4)));
    i.days = Unbiased32(static_cast<std::uint32_t>(Take(4)));
    // The microseconds are what the months (of 30 days) and the days leave of the span.
    if (span >= kSpanLimit || span <= -kSpanLimit) return Bad("interval span out of range");
    const Int128 rest = span - (static_cast<Int128>(i.months) * 30 + i.days) * kMicrosPerDay;
    if (rest < std::numeric_limits<std::int64_t>::min() ||
        rest > std::numeric_limits<std::int64_t>::max()) {
      return Bad("interval microseconds out of range");
    }
    i.micros = static_cast<std::int64_t>(rest);
    return Put(i);
  }

  // A key's interval: its span, as the interval of that span with as many whole months (of 30
  // days) and then whole days as fit their fields, the rest in microseconds.
  Status DecodeIntervalKey() {
    if (!Has(16)) return Bad("truncated interval");
    const Int128 span = TakeSpan();
    if (span >= kSpanLimit || span <= -kSpanLimit) return Bad("interval span out of range");
    auto whole = [](Int128 rest, Int128 unit) {
      const Int128 n = rest / unit;  // toward zero: every part keeps the span's sign
      return static_cast<std::int32_t>(std::clamp<Int128>(
          n, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
    };
    Interval i;
    i.months = whole(span, Int128{30} * kMicrosPerDay);
    Int128 rest = span - Int128{i.months} * 30 * kMicrosPerDay;
    i.days = whole(rest, kMicrosPerDay);
    rest -= Int128{i.days} * kMicrosPerDay;
    if (rest < std::numeric_limits<std::int64_t>::min() ||
        rest > std::numeric_limits<std::int64_t>::max()) {
      return Bad("interval microseconds out of range");
    }
    i.micros = static_cast<std::int64_t>(rest);
    return Put(i);
  }

  const unsigned char* p_;
  const unsigned char* end_;
  const bool key_;
  Row row_;
};

}  // namespace

Result<Row> DecodeRow(std::string_view bytes) { return RowDecoder(bytes, false).Decode(); }

Result<Row> DecodeKey(std::string_view bytes) { return RowDecoder(bytes, true).Decode(); }

}  // namespace tandem
