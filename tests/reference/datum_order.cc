#include "reference/datum_order.h"

#include <cmath>
#include <cstring>
#include <string>

#include "reference/reference_values.h"

namespace tandem::reference {

namespace {

// The documented kind order, spelled out here rather than taken from the variant's index.
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

template <typename T>
int Three(const T& x, const T& y) {
  return x < y ? -1 : (y < x ? 1 : 0);
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
  if (const auto* x = std::get_if<Numeric>(&a)) {
    // By value (exact), then by scale: 1.5 < 1.50 < 1.6.
    const Numeric& y = std::get<Numeric>(b);
    const int c = cmp(NumericToRational(*x), NumericToRational(y));
    if (c != 0) return c < 0 ? -1 : 1;
    return Three(x->scale, y.scale);
  }
  if (const auto* x = std::get_if<Bytes>(&a))
    return OrderStrings(x->bytes, std::get<Bytes>(b).bytes);
  if (const auto* x = std::get_if<Date>(&a)) return Three(x->days, std::get<Date>(b).days);
  if (const auto* x = std::get_if<TimeOfDay>(&a)) {
    return Three(x->micros, std::get<TimeOfDay>(b).micros);
  }
  if (const auto* x = std::get_if<Timestamp>(&a)) {
    return Three(x->micros, std::get<Timestamp>(b).micros);
  }
  if (const auto* x = std::get_if<TimestampTz>(&a)) {
    return Three(x->micros, std::get<TimestampTz>(b).micros);
  }
  if (const auto* x = std::get_if<Interval>(&a)) {
    // By span (30-day months, 24-hour days), then months, then days.
    const Interval& y = std::get<Interval>(b);
    if (const int c = Three(IntervalSpanMicros(*x), IntervalSpanMicros(y)); c != 0) return c;
    if (const int c = Three(x->months, y.months); c != 0) return c;
    return Three(x->days, y.days);
  }
  if (const auto* x = std::get_if<Uuid>(&a)) return Three(x->bytes, std::get<Uuid>(b).bytes);
  return 0;  // null = null
}

int OrderRows(const Row& a, const Row& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (const int c = OrderDatums(a[i], b[i]); c != 0) return c;
  }
  return Sign(a.size() < b.size(), b.size() < a.size());
}

}  // namespace tandem::reference
