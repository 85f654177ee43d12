#include "frontend/server/binary_values.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "base/datum_text.h"
#include "base/utf8.h"
#include "frontend/pgwire/pg_type.h"
#include "frontend/server/sql_answers.h"
#include "frontend/sqlstate.h"
#include "ipc/rows.h"

namespace tandem::frontend {
namespace {

namespace pb = ipc::pb;

// PostgreSQL's epoch (2000-01-01) from the Unix epoch Tandem counts from.
constexpr std::int32_t kPostgresEpochDays = 10957;
constexpr std::int64_t kPostgresEpochMicros = std::int64_t{kPostgresEpochDays} * kMicrosPerDay;

// numeric's sign words and limits (PostgreSQL's numeric.c).
constexpr std::uint16_t kNumericPositive = 0x0000;
constexpr std::uint16_t kNumericNegative = 0x4000;
constexpr std::uint16_t kNumericNaN = 0xC000;
constexpr std::uint16_t kNumericPlusInfinity = 0xD000;
constexpr std::uint16_t kNumericMinusInfinity = 0xF000;
constexpr std::uint16_t kNumericDscaleMask = 0x3FFF;
constexpr int kNumericBase = 10000;
constexpr int kNumericBaseDigits = 4;  // decimal digits per base-10000 digit

// PostgreSQL's NAMEDATALEN: a name holds at most 63 bytes.
constexpr std::size_t kNameDataLength = 64;

template <typename T>
void AppendBigEndian(std::string& out, T value) {
  using U = std::make_unsigned_t<T>;
  const U u = static_cast<U>(value);
  for (int shift = static_cast<int>(sizeof(U)) * 8 - 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>(static_cast<unsigned char>(u >> shift)));
  }
}

std::string Float8Bytes(double v) {
  if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
  std::string out;
  AppendBigEndian(out, std::bit_cast<std::uint64_t>(v));
  return out;
}

std::string Float4Bytes(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) f = std::numeric_limits<float>::quiet_NaN();
  std::string out;
  AppendBigEndian(out, std::bit_cast<std::uint32_t>(f));
  return out;
}

// numeric_send of coefficient × 10^-scale: the decimal digits of |coefficient|, the fraction
// padded with zeros to whole base-10000 digits and the integer part to whole ones before it, then
// read four at a time. The first group is never zero (no leading zero decimal digit, fewer than
// four padding zeros); trailing zero groups are dropped.
std::string NumericBytes(const Numeric& n) {
  const Int128 c = n.coefficient();
  UInt128 m = c < 0 ? UInt128{0} - static_cast<UInt128>(c) : static_cast<UInt128>(c);
  std::string out;
  if (m == 0) {
    AppendBigEndian<std::int16_t>(out, 0);  // ndigits
    AppendBigEndian<std::int16_t>(out, 0);  // weight
    AppendBigEndian<std::uint16_t>(out, kNumericPositive);
    AppendBigEndian<std::uint16_t>(out, n.scale);
    return out;
  }
  std::string decimal;
  while (m != 0) {
    decimal.push_back(static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  const int scale = n.scale;
  const int fraction_pad = (kNumericBaseDigits - scale % kNumericBaseDigits) % kNumericBaseDigits;
  decimal.insert(0, static_cast<std::size_t>(fraction_pad), '0');  // reversed: these trail
  const int lead_pad =
      (kNumericBaseDigits - static_cast<int>(decimal.size()) % kNumericBaseDigits) %
      kNumericBaseDigits;
  decimal.append(static_cast<std::size_t>(lead_pad), '0');
  std::vector<std::int16_t> digits;
  for (int at = static_cast<int>(decimal.size()) - kNumericBaseDigits; at >= 0;
       at -= kNumericBaseDigits) {
    int d = 0;
    for (int k = kNumericBaseDigits - 1; k >= 0; --k) d = d * 10 + (decimal[at + k] - '0');
    digits.push_back(static_cast<std::int16_t>(d));
  }
  const int fraction_groups = (scale + fraction_pad) / kNumericBaseDigits;
  const int weight = static_cast<int>(digits.size()) - fraction_groups - 1;
  while (!digits.empty() && digits.back() == 0) digits.pop_back();
  AppendBigEndian(out, static_cast<std::int16_t>(digits.size()));
  AppendBigEndian(out, static_cast<std::int16_t>(weight));
  AppendBigEndian<std::uint16_t>(out, c < 0 ? kNumericNegative : kNumericPositive);
  AppendBigEndian<std::uint16_t>(out, n.scale);
  for (std::int16_t d : digits) AppendBigEndian(out, d);
  return out;
}

// Reads a Bind parameter's bytes as PostgreSQL's pq_getmsg* functions read a message: each read
// past the end is "insufficient data left in message".
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  bool Read(T* out) {
    if (bytes_.size() - at_ < sizeof(T)) return false;
    std::make_unsigned_t<T> u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      u = static_cast<std::make_unsigned_t<T>>((u << 8) |
                                               static_cast<unsigned char>(bytes_[at_ + i]));
    }
    at_ += sizeof(T);
    *out = static_cast<T>(u);
    return true;
  }
  bool ReadBytes(std::size_t n, std::string_view* out) {
    if (bytes_.size() - at_ < n) return false;
    *out = bytes_.substr(at_, n);
    at_ += n;
    return true;
  }
  std::string_view Rest() {
    std::string_view rest = bytes_.substr(at_);
    at_ = bytes_.size();
    return rest;
  }
  bool AtEnd() const { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

sql::SqlError Insufficient() {
  return sql::SqlError(sqlstate::kProtocolViolation, "insufficient data left in message");
}

sql::SqlError InvalidNumeric(const char* what) {
  return sql::SqlError(sqlstate::kInvalidBinaryRepresentation,
                       std::string("invalid ") + what + " in external \"numeric\" value");
}

// numeric_recv then numeric_out: the digits cut to dscale (trunc_var) and stripped of leading
// and trailing zeros (strip_var; a zero is positive), printed as get_str_from_var prints them.
sql::SqlResult<std::string> ReceiveNumeric(Reader& r) {
  std::uint16_t ndigits = 0, sign = 0, dscale = 0;
  std::int16_t weight16 = 0;
  if (!r.Read(&ndigits) || !r.Read(&weight16) || !r.Read(&sign)) return Insufficient();
  if (sign != kNumericPositive && sign != kNumericNegative && sign != kNumericNaN &&
      sign != kNumericPlusInfinity && sign != kNumericMinusInfinity) {
    return InvalidNumeric("sign");
  }
  if (!r.Read(&dscale)) return Insufficient();
  if ((dscale & kNumericDscaleMask) != dscale) return InvalidNumeric("scale");
  std::vector<int> digits(ndigits);
  for (int& d : digits) {
    std::int16_t d16 = 0;
    if (!r.Read(&d16)) return Insufficient();
    if (d16 < 0 || d16 >= kNumericBase) return InvalidNumeric("digit");
    d = d16;
  }
  if (sign == kNumericNaN) return std::string("NaN");
  if (sign == kNumericPlusInfinity) return std::string("Infinity");
  if (sign == kNumericMinusInfinity) return std::string("-Infinity");

  int weight = weight16;
  // trunc_var: keep (weight + 1) × 4 + dscale decimal digits.
  const int keep = (weight + 1) * kNumericBaseDigits + dscale;
  if (keep <= 0) {
    digits.clear();
  } else {
    const std::size_t groups =
        static_cast<std::size_t>((keep + kNumericBaseDigits - 1) / kNumericBaseDigits);
    if (groups <= digits.size()) {
      digits.resize(groups);
      static constexpr int kDropBelow[] = {0, 1000, 100, 10};  // PostgreSQL's round_powers
      const int within_last = keep % kNumericBaseDigits;
      if (within_last > 0) digits.back() -= digits.back() % kDropBelow[within_last];
    }
  }
  // strip_var.
  std::size_t first = 0;
  while (first < digits.size() && digits[first] == 0) ++first;
  weight -= static_cast<int>(first);
  digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(first));
  while (!digits.empty() && digits.back() == 0) digits.pop_back();
  const bool negative = !digits.empty() && sign == kNumericNegative;
  if (digits.empty()) weight = 0;
  // A weight below int16 would be make_result's "value overflows numeric format"; it cannot
  // occur: a digit that survives trunc_var has a weight of at least -(0x3FFF + 3) / 4.

  auto digit_at = [&](int i) {
    return i >= 0 && static_cast<std::size_t>(i) < digits.size()
               ? digits[static_cast<std::size_t>(i)]
               : 0;
  };
  std::string out;
  if (negative) out.push_back('-');
  int d = 0;  // index of the next base-10000 digit to print
  if (weight < 0) {
    d = weight + 1;
    out.push_back('0');
  } else {
    for (d = 0; d <= weight; ++d) {
      const int dig = digit_at(d);
      char group[5];
      std::snprintf(group, sizeof group, "%04d", dig);
      if (d == 0) {
        out += std::to_string(dig);  // no leading zeros in the first digit
      } else {
        out.append(group, kNumericBaseDigits);
      }
    }
  }
  if (dscale > 0) {
    out.push_back('.');
    std::string fraction;
    for (; static_cast<int>(fraction.size()) < dscale; ++d) {
      char group[5];
      std::snprintf(group, sizeof group, "%04d", digit_at(d));
      fraction.append(group, kNumericBaseDigits);
    }
    fraction.resize(dscale);
    out += fraction;
  }
  return out;
}

// textrecv (and varcharrecv, bpcharrecv, unknownrecv, namerecv): the bytes in the database's
// encoding, UTF-8, checked as pg_verify_mbstr checks them.
sql::SqlResult<std::string> ReceiveText(std::string_view bytes) {
  if (const std::optional<std::size_t> invalid = FindInvalidUtf8(bytes)) {
    return sql::SqlError(sqlstate::kCharacterNotInRepertoire, InvalidUtf8Message(bytes, *invalid));
  }
  return std::string(bytes);
}

sql::SqlError OutOfRange(const char* type) {
  return sql::SqlError(sqlstate::kDatetimeFieldOverflow, std::string(type) + " out of range");
}

// timestamp_recv: infinities, else within PostgreSQL's range and (narrower at the end) Tandem's.
sql::SqlResult<std::string> ReceiveTimestamp(Reader& r, bool with_zone) {
  std::int64_t t = 0;
  if (!r.Read(&t)) return Insufficient();
  if (t == std::numeric_limits<std::int64_t>::max()) return std::string("infinity");
  if (t == std::numeric_limits<std::int64_t>::min()) return std::string("-infinity");
  if (t < kFirstTimestampMicros - kPostgresEpochMicros ||
      t > std::numeric_limits<std::int64_t>::max() - kPostgresEpochMicros) {
    return OutOfRange("timestamp");
  }
  const std::int64_t micros = t + kPostgresEpochMicros;
  return with_zone ? TimestampTzText(TimestampTz{micros}) : TimestampText(Timestamp{micros});
}

sql::SqlResult<std::string> Receive(Reader& r, std::uint32_t oid) {
  switch (oid) {
    case pgwire::kBool.oid: {
      std::uint8_t b = 0;  // pq_getmsgbyte, which words a missing byte its own way
      if (!r.Read(&b)) {
        return sql::SqlError(sqlstate::kProtocolViolation, "no data left in message");
      }
      return std::string(b != 0 ? "t" : "f");
    }
    case pgwire::kInt2.oid: {
      std::int16_t v = 0;
      if (!r.Read(&v)) return Insufficient();
      return std::to_string(v);
    }
    case pgwire::kInt4.oid: {
      std::int32_t v = 0;
      if (!r.Read(&v)) return Insufficient();
      return std::to_string(v);
    }
    case pgwire::kInt8.oid: {
      std::int64_t v = 0;
      if (!r.Read(&v)) return Insufficient();
      return std::to_string(v);
    }
    case pgwire::kFloat4.oid: {
      std::uint32_t bits = 0;
      if (!r.Read(&bits)) return Insufficient();
      return PostgresFloat4Output(static_cast<double>(std::bit_cast<float>(bits)));
    }
    case pgwire::kFloat8.oid: {
      std::uint64_t bits = 0;
      if (!r.Read(&bits)) return Insufficient();
      return PostgresOutput(Datum(std::bit_cast<double>(bits)));
    }
    case pgwire::kNumeric.oid:
      return ReceiveNumeric(r);
    case pgwire::kText.oid:
    case pgwire::kVarchar.oid:
    case pgwire::kBpchar.oid:
    case pgwire::kUnknown.oid:
      return ReceiveText(r.Rest());
    case pgwire::kName.oid: {
      const std::string_view bytes = r.Rest();
      sql::SqlResult<std::string> text = ReceiveText(bytes);
      if (text.ok() && bytes.size() >= kNameDataLength) {
        sql::SqlError e(sqlstate::kNameTooLong, "identifier too long");
        e.detail =
            "Identifier must be less than " + std::to_string(kNameDataLength) + " characters.";
        return e;
      }
      return text;
    }
    case pgwire::kBytea.oid:
      return ByteaText(r.Rest());
    case pgwire::kDate.oid: {
      std::int32_t days = 0;
      if (!r.Read(&days)) return Insufficient();
      if (days == std::numeric_limits<std::int32_t>::max()) return std::string("infinity");
      if (days == std::numeric_limits<std::int32_t>::min()) return std::string("-infinity");
      if (days < kFirstDateDays - kPostgresEpochDays || days > kLastDateDays - kPostgresEpochDays) {
        return OutOfRange("date");
      }
      return DateText(Date{days + kPostgresEpochDays});
    }
    case pgwire::kTime.oid: {
      std::int64_t micros = 0;
      if (!r.Read(&micros)) return Insufficient();
      if (micros < 0 || micros > kMicrosPerDay) return OutOfRange("time");
      return TimeText(TimeOfDay{micros});
    }
    case pgwire::kTimestamp.oid:
      return ReceiveTimestamp(r, false);
    case pgwire::kTimestamptz.oid:
      return ReceiveTimestamp(r, true);
    case pgwire::kInterval.oid: {
      Interval i;
      if (!r.Read(&i.micros) || !r.Read(&i.days) || !r.Read(&i.months)) return Insufficient();
      return IntervalText(i);
    }
    case pgwire::kUuid.oid: {
      std::string_view bytes;
      if (!r.ReadBytes(16, &bytes)) return Insufficient();
      Uuid u;
      std::memcpy(u.bytes.data(), bytes.data(), u.bytes.size());
      return UuidText(u);
    }
    default:
      return sql::SqlError(
          sqlstate::kFeatureNotSupported,
          "binary format is not supported for parameters of type OID " + std::to_string(oid));
  }
}

}  // namespace

pgwire::Value PostgresBinary(const pb::Datum& datum, std::uint32_t oid) {
  std::string out;
  switch (datum.kind_case()) {
    case pb::Datum::kNull:
    case pb::Datum::KIND_NOT_SET:
      return std::nullopt;
    case pb::Datum::kBool:
      if (oid != pgwire::kBool.oid) break;
      return std::string(1, datum.bool_() ? '\1' : '\0');
    case pb::Datum::kInt64:
      if (oid == pgwire::kInt2.oid) {
        AppendBigEndian(out, static_cast<std::int16_t>(datum.int64()));
      } else if (oid == pgwire::kInt4.oid) {
        AppendBigEndian(out, static_cast<std::int32_t>(datum.int64()));
      } else if (oid == pgwire::kInt8.oid) {
        AppendBigEndian(out, static_cast<std::int64_t>(datum.int64()));
      } else {
        break;
      }
      return out;
    case pb::Datum::kFloat64:
      if (oid == pgwire::kFloat4.oid) return Float4Bytes(datum.float64());
      if (oid == pgwire::kFloat8.oid) return Float8Bytes(datum.float64());
      break;
    case pb::Datum::kString:
      return datum.string();
    case pb::Datum::kNumeric:
      if (oid != pgwire::kNumeric.oid) break;
      // A replica's answer: ToProto of datums, so FromProto's precondition holds.
      return NumericBytes(std::get<Numeric>(ipc::FromProto(datum)));
    case pb::Datum::kBytea:
      if (oid != pgwire::kBytea.oid) break;
      return datum.bytea();
    case pb::Datum::kDate:
      if (oid != pgwire::kDate.oid) break;
      AppendBigEndian(out, datum.date() - kPostgresEpochDays);
      return out;
    case pb::Datum::kTime:
      if (oid != pgwire::kTime.oid) break;
      AppendBigEndian(out, static_cast<std::int64_t>(datum.time()));
      return out;
    case pb::Datum::kTimestamp:
      if (oid != pgwire::kTimestamp.oid) break;
      AppendBigEndian(out, static_cast<std::int64_t>(datum.timestamp()) - kPostgresEpochMicros);
      return out;
    case pb::Datum::kTimestamptz:
      if (oid != pgwire::kTimestamptz.oid) break;
      AppendBigEndian(out, static_cast<std::int64_t>(datum.timestamptz()) - kPostgresEpochMicros);
      return out;
    case pb::Datum::kInterval:
      if (oid != pgwire::kInterval.oid) break;
      AppendBigEndian(out, static_cast<std::int64_t>(datum.interval().micros()));
      AppendBigEndian(out, static_cast<std::int32_t>(datum.interval().days()));
      AppendBigEndian(out, static_cast<std::int32_t>(datum.interval().months()));
      return out;
    case pb::Datum::kUuid:
      if (oid != pgwire::kUuid.oid) break;
      return datum.uuid();
  }
  return PostgresText(datum, oid == pgwire::kFloat4.oid);
}

sql::SqlResult<std::string> BinaryParameterText(std::string_view bytes, std::uint32_t oid,
                                                int parameter_number) {
  Reader r(bytes);
  sql::SqlResult<std::string> text = Receive(r, oid);
  if (text.ok() && !r.AtEnd()) {
    return sql::SqlError(
        sqlstate::kInvalidBinaryRepresentation,
        "incorrect binary data format in bind parameter " + std::to_string(parameter_number));
  }
  return text;
}

}  // namespace tandem::frontend
