#include "reference/datum_order.h"

#include <cmath>
#include <cstring>
#include <string>

#include "base/count.h"

namespace tandem::reference {

namespace {

// The documented type order, spelled out here rather than taken from the variant's index.
int TypeOrder(const Datum& d) {
  if (std::holds_alternative<Null>(d)) return 0;
  if (std::holds_alternative<bool>(d)) return 1;
  if (std::holds_alternative<std::int64_t>(d)) return 2;
  if (std::holds_alternative<double>(d)) return 3;
  if (std::holds_alternative<std::string>(d)) return 4;
  if (std::holds_alternative<Numeric>(d)) return 5;
  if (std::holds_alternative<Bytes>(d)) return 6;
  if (std::holds_alternative<Date>(d)) return 7;
  if (std::holds_alternative<TimeOfDay>(d)) return 8;
  if (std::holds_alternative<Timestamp>(d)) return 9;
  if (std::holds_alternative<TimestampTz>(d)) return 10;
  if (std::holds_alternative<Interval>(d)) return 11;
  return 12;  // uuid
}

int Sign(bool less, bool greater) { return less ? -1 : (greater ? 1 : 0); }

int OrderDoubles(double x, double y) {
  const bool xnan = std::isnan(x), ynan = std::isnan(y);
  if (xnan || ynan) return Sign(!xnan, !ynan);  // NaN above everything, NaNs equal
  return Sign(x < y, y < x);                    // -0.0 < 0.0 is false both ways: equal
}

int OrderStrings(const std::string& x, const std::string& y) {
  const std::size_t n = x.size() < y.size() ? x.size() : y.size();
  const int c = n == 0 ? 0 : std::memcmp(x.data(), y.data(), n);  // unsigned bytes
  if (c != 0) return c < 0 ? -1 : 1;
  return Sign(x.size() < y.size(), y.size() < x.size());
}

// Numerics by value alone, as decimal digits (|coefficient| < 10^38, so its digits are exact):
// 1.5 = 1.50 < 1.6.
int OrderNumericValues(const Numeric& x, const Numeric& y) {
  // sign, integer digits without leading zeros, fraction digits without trailing zeros.
  struct Parts {
    int sign;
    std::string integer, fraction;
  };
  auto parts = [](const Numeric& n) {
    const Int128 c = n.coefficient();
    UInt128 m = c < 0 ? -static_cast<UInt128>(c) : static_cast<UInt128>(c);
    std::string digits;
    for (; m != 0; m /= 10) digits.insert(digits.begin(), static_cast<char>('0' + m % 10));
    while (digits.size() <= n.scale) digits.insert(digits.begin(), '0');
    Parts p{c < 0 ? -1 : (c > 0 ? 1 : 0), digits.substr(0, digits.size() - n.scale),
            digits.substr(digits.size() - n.scale)};
    while (p.integer.size() > 1 && p.integer[0] == '0') p.integer.erase(0, 1);
    while (!p.fraction.empty() && p.fraction.back() == '0') p.fraction.pop_back();
    return p;
  };
  const Parts a = parts(x), b = parts(y);
  int c = Sign(a.sign < b.sign, b.sign < a.sign);
  if (c == 0 && a.sign != 0) {
    c = Sign(a.integer.size() < b.integer.size(), b.integer.size() < a.integer.size());
    if (c == 0) c = OrderStrings(a.integer, b.integer);
    if (c == 0) c = OrderStrings(a.fraction, b.fraction);
    c *= a.sign;
  }
  return c;
}

// Numerics by value, then by scale: 1.5 < 1.50 < 1.6.
int OrderNumerics(const Numeric& x, const Numeric& y) {
  const int c = OrderNumericValues(x, y);
  return c != 0 ? c : Sign(x.scale < y.scale, y.scale < x.scale);
}

// An interval's span in microseconds: a month of 30 days, a day of 24 hours. 128 bits hold it
// exactly for every int32 months and days and int64 micros.
Int128 SpanMicros(const Interval& i) {
  return (static_cast<Int128>(i.months) * 30 + i.days) * Int128{86'400'000'000} + i.micros;
}

// Intervals by their span alone: '1 mon' = '30 days' = '720:00:00'.
int OrderIntervalSpans(const Interval& x, const Interval& y) {
  const Int128 sx = SpanMicros(x), sy = SpanMicros(y);
  return Sign(sx < sy, sy < sx);
}

// Intervals by their span, then months, then days.
int OrderIntervals(const Interval& x, const Interval& y) {
  if (const int c = OrderIntervalSpans(x, y); c != 0) return c;
  if (x.months != y.months) return Sign(x.months < y.months, y.months < x.months);
  return Sign(x.days < y.days, y.days < x.days);
}

template <typename T>
int OrderCounts(const T& x, const T& y) {
  return Sign(x < y, y < x);
}

}  // namespace

int OrderDatums(const Datum& a, const Datum& b) {
  const int ta = TypeOrder(a), tb = TypeOrder(b);
  if (ta != tb) return Sign(ta < tb, tb < ta);
  if (const auto* x = std::get_if<bool>(&a)) {
    const bool y = std::get<bool>(b);
    return Sign(!*x && y, *x && !y);
  }
  if (const auto* x = std::get_if<std::int64_t>(&a)) {
    const std::int64_t y = std::get<std::int64_t>(b);
    return Sign(*x < y, y < *x);
  }
  if (const auto* x = std::get_if<double>(&a)) return OrderDoubles(*x, std::get<double>(b));
  if (const auto* x = std::get_if<std::string>(&a))
    return OrderStrings(*x, std::get<std::string>(b));
  if (const auto* x = std::get_if<Numeric>(&a)) return OrderNumerics(*x, std::get<Numeric>(b));
  if (const auto* x = std::get_if<Bytes>(&a))
    return OrderStrings(x->bytes, std::get<Bytes>(b).bytes);
  if (const auto* x = std::get_if<Date>(&a)) return OrderCounts(x->days, std::get<Date>(b).days);
  if (const auto* x = std::get_if<TimeOfDay>(&a)) {
    return OrderCounts(x->micros, std::get<TimeOfDay>(b).micros);
  }
  if (const auto* x = std::get_if<Timestamp>(&a)) {
    return OrderCounts(x->micros, std::get<Timestamp>(b).micros);
  }
  if (const auto* x = std::get_if<TimestampTz>(&a)) {
    return OrderCounts(x->micros, std::get<TimestampTz>(b).micros);
  }
  if (const auto* x = std::get_if<Interval>(&a)) return OrderIntervals(*x, std::get<Interval>(b));
  if (const auto* x = std::get_if<Uuid>(&a)) {
    const auto& y = std::get<Uuid>(b);
    const int c = std::memcmp(x->bytes.data(), y.bytes.data(), x->bytes.size());
    return Sign(c<0, c> 0);
  }
  return 0;  // null = null
}

int OrderRows(const Row& a, const Row& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (const int c = OrderDatums(a[i], b[i]); c != 0) return c;
  }
  return Sign(a.size() < b.size(), b.size() < a.size());
}

int OrderKeyDatums(const Datum& a, const Datum& b) {
  const auto* xn = std::get_if<Numeric>(&a);
  const auto* yn = std::get_if<Numeric>(&b);
  if (xn != nullptr && yn != nullptr) return OrderNumericValues(*xn, *yn);
  const auto* xi = std::get_if<Interval>(&a);
  const auto* yi = std::get_if<Interval>(&b);
  if (xi != nullptr && yi != nullptr) return OrderIntervalSpans(*xi, *yi);
  return OrderDatums(a, b);
}

int OrderKeys(const Row& a, const Row& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (const int c = OrderKeyDatums(a[i], b[i]); c != 0) return c;
  }
  return Sign(a.size() < b.size(), b.size() < a.size());
}

}  // namespace tandem::reference
