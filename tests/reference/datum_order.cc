#include "reference/datum_order.h"

#include <cmath>
#include <cstring>
#include <string>

namespace tandem::reference {

namespace {

// The documented type order, spelled out here rather than taken from the variant's index.
int TypeOrder(const Datum& d) {
  if (std::holds_alternative<Null>(d)) return 0;
  if (std::holds_alternative<bool>(d)) return 1;
  if (std::holds_alternative<std::int64_t>(d)) return 2;
  if (std::holds_alternative<double>(d)) return 3;
  return 4;
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
  return 0;  // null = null
}

int OrderRows(const Row& a, const Row& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (const int c = OrderDatums(a[i], b[i]); c != 0) return c;
  }
  return Sign(a.size() < b.size(), b.size() < a.size());
}

}  // namespace tandem::reference
