#include "workers/peek.h"

#include <algorithm>
#include <map>

#include "workers/routing.h"

namespace tandem::workers {

namespace pb = ipc::pb;

std::optional<std::string> ReadPeekPart(const shm::Snapshot& snap, Time t, bool scan,
                                        const std::vector<std::string>& keys, const Mfp& mfp,
                                        PeekRows* out) {
  // Errors sort first (their keys start with kErrorKeyPrefix).
  std::optional<std::string> error;
  Status s = snap.Scan(t, [&](std::string_view k, std::string_view, std::int64_t count) {
    if (k.empty() || k[0] != kErrorKeyPrefix) return false;
    if (count != 0) {
      error = std::string(k.substr(1));
      return false;
    }
    return true;
  });
  if (!s.ok()) return s.message();
  if (error) return error;
  std::map<std::string, std::pair<Row, std::int64_t>> rows;
  std::string mfp_error;
  auto add = [&](std::string_view val, std::int64_t count) -> bool {
    auto decoded = DecodeRow(val);
    if (!decoded.ok()) {
      mfp_error = "corrupt row in the index: " + decoded.status().message();
      return false;
    }
    Row row = std::move(decoded).value();
    switch (mfp.Apply(&row, &mfp_error)) {
      case Mfp::Outcome::kDropped:
        return true;
      case Mfp::Outcome::kError:
        return false;
      case Mfp::Outcome::kKept:
        break;
    }
    std::string enc = EncodeRow(row);
    auto& slot = rows[enc];
    if (slot.first.empty()) slot.first = std::move(row);
    slot.second += count;
    return true;
  };
  if (scan) {
    s = snap.Scan(t, [&](std::string_view k, std::string_view v, std::int64_t count) {
      if (!k.empty() && k[0] == kErrorKeyPrefix) return true;
      return add(v, count);
    });
    if (!s.ok()) return s.message();
  } else {
    std::vector<shm::ValueCount> vals;
    for (const std::string& key : keys) {
      s = snap.Lookup(key, t, &vals);
      if (!s.ok()) return s.message();
      for (const auto& vc : vals) {
        if (!add(vc.val, vc.count)) break;
      }
      if (!mfp_error.empty()) break;
    }
  }
  if (!mfp_error.empty()) return mfp_error;
  for (auto& [enc, rc] : rows) {
    if (rc.second != 0) out->rows.push_back(std::move(rc));
  }
  return std::nullopt;
}

std::optional<std::string> Finish(const pb::Finishing& finishing,
                                  std::vector<std::pair<Row, std::int64_t>> rows, pb::Rows* out) {
  // Sum the same row from different workers (a projection can make rows collide).
  std::map<std::string, std::pair<Row, std::int64_t>> merged;
  for (auto& [row, count] : rows) {
    auto& slot = merged[EncodeRow(row)];
    if (slot.second == 0 && slot.first.empty()) slot.first = std::move(row);
    slot.second += count;
  }
  std::vector<std::pair<Row, std::int64_t>> sorted;
  for (auto& [enc, rc] : merged) {
    if (rc.second < 0)
      return "the result has a row with negative multiplicity " + std::to_string(rc.second);
    if (rc.second > 0) sorted.push_back(std::move(rc));
  }
  auto less = [&](const std::pair<Row, std::int64_t>& a, const std::pair<Row, std::int64_t>& b) {
    for (const auto& o : finishing.order_by()) {
      const Datum& x = a.first[o.column()];
      const Datum& y = b.first[o.column()];
      const bool xn = x.index() == 0, yn = y.index() == 0;
      if (xn != yn) return o.nulls_last() ? yn : xn;  // nulls first unless nulls_last
      int c = CompareDatum(x, y);
      if (o.desc()) c = -c;
      if (c != 0) return c < 0;
    }
    return CompareRow(a.first, b.first) < 0;
  };
  std::sort(sorted.begin(), sorted.end(), less);
  std::uint64_t skip = finishing.offset();
  std::uint64_t left = finishing.has_limit() ? finishing.limit() : UINT64_MAX;
  for (auto& [row, count] : sorted) {
    std::uint64_t n = static_cast<std::uint64_t>(count);
    const std::uint64_t skipped = std::min(skip, n);
    skip -= skipped;
    n -= skipped;
    n = std::min(n, left);
    left -= n;
    if (n == 0) {
      if (left == 0) break;
      continue;
    }
    auto* rc = out->add_rows();
    if (finishing.project().empty()) {
      for (const Datum& d : row) *rc->mutable_row()->add_datums() = ToProto(d);
    } else {
      for (std::uint32_t c : finishing.project())
        *rc->mutable_row()->add_datums() = ToProto(row[c]);
    }
    rc->set_count(n);
  }
  // A projection can make rows equal: list each distinct row once, where it first appears.
  if (!finishing.project().empty() && out->rows_size() > 1) {
    pb::Rows compact;
    std::map<std::string, int> first;
    for (const auto& rc : out->rows()) {
      const std::string enc = ipc::Encode(rc.row());
      auto [it, fresh] = first.emplace(enc, compact.rows_size());
      if (fresh) {
        *compact.add_rows() = rc;
      } else {
        compact.mutable_rows(it->second)->set_count(compact.rows(it->second).count() + rc.count());
      }
    }
    *out = std::move(compact);
  }
  return std::nullopt;
}

}  // namespace tandem::workers
