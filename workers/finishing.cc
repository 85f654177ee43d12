#include "workers/finishing.h"

#include <algorithm>
#include <map>

#include "ipc/rows.h"

namespace tandem::workers {

namespace pb = ipc::pb;
using ipc::FromProto;
using ipc::ToProto;

bool FinishingLess(const pb::Finishing& finishing, const Row& a, const Row& b) {
  for (const auto& o : finishing.order_by()) {
    const Datum& x = a[o.column()];
    const Datum& y = b[o.column()];
    const bool xn = x.index() == 0, yn = y.index() == 0;
    if (xn != yn) return o.nulls_last() ? yn : xn;  // nulls first unless nulls_last
    int c = CompareDatum(x, y);
    if (o.desc()) c = -c;
    if (c != 0) return c < 0;
  }
  return CompareRow(a, b) < 0;
}

std::uint64_t PartCount(Int128 count) {
  return FitsInt64(count) ? static_cast<std::uint64_t>(count) : UINT64_MAX;
}

Int128 CountOfPart(std::uint64_t count) {
  return count > static_cast<std::uint64_t>(INT64_MAX) ? Int128{UINT64_MAX} : Int128{count};
}

void KeepFirstForFinishing(const pb::Finishing& finishing, CountedRows* rows) {
  if (!finishing.has_limit()) return;
  std::uint64_t k;  // offset + limit counted rows, saturating
  if (__builtin_add_overflow(finishing.offset(), finishing.limit(), &k)) k = UINT64_MAX;
  std::uint64_t total = 0;
  auto counted = [](Int128 count) {  // saturating
    return count > Int128{UINT64_MAX} ? UINT64_MAX : static_cast<std::uint64_t>(count);
  };
  for (const auto& [row, count] : *rows) {
    if (count <= 0) return;  // not ours to judge (see REQUIRES): keep everything
    if (__builtin_add_overflow(total, counted(count), &total)) total = UINT64_MAX;
  }
  if (total <= k) return;  // every row is needed
  auto less = [&](const std::pair<Row, Int128>& a, const std::pair<Row, Int128>& b) {
    return FinishingLess(finishing, a.first, b.first);
  };
  // Every count is at least 1, so the first k rows already reach k counted rows: select them,
  // then sort only those.
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(k, rows->size()));
  if (n < rows->size()) std::nth_element(rows->begin(), rows->begin() + n, rows->end(), less);
  std::sort(rows->begin(), rows->begin() + n, less);
  std::size_t keep = 0;
  for (std::uint64_t before = 0; keep < n && before < k; ++keep) {
    if (__builtin_add_overflow(before, counted((*rows)[keep].second), &before)) before = UINT64_MAX;
  }
  rows->erase(rows->begin() + keep, rows->end());
}

std::optional<std::string> Finish(const pb::Finishing& finishing, CountedRows rows, pb::Rows* out) {
  // Sum the same row from different workers (a projection can make rows collide), exactly.
  std::map<std::string, std::pair<Row, Int128>> merged;
  for (auto& [row, count] : rows) {
    auto& slot = merged[EncodeRow(row)];
    if (slot.second == 0 && slot.first.empty()) slot.first = std::move(row);
    slot.second += count;
  }
  CountedRows sorted;
  for (auto& [enc, rc] : merged) {
    if (rc.second < 0) {
      if (!FitsInt64(rc.second)) return std::string(kMultiplicityOverflow);
      return "the result has a row with negative multiplicity " +
             std::to_string(static_cast<std::int64_t>(rc.second));
    }
    if (rc.second > 0) sorted.emplace_back(std::move(rc.first), rc.second);
  }
  auto less = [&](const std::pair<Row, Int128>& a, const std::pair<Row, Int128>& b) {
    return FinishingLess(finishing, a.first, b.first);
  };
  std::sort(sorted.begin(), sorted.end(), less);
  std::uint64_t skip = finishing.offset();
  std::uint64_t left = finishing.has_limit() ? finishing.limit() : UINT64_MAX;
  for (auto& [row, count] : sorted) {
    if (skip == 0 && left == 0) break;  // the rest is not needed: not looked at
    // A row the answer needs (returned, or skipped over): its count must fit int64.
    if (!FitsInt64(count)) return std::string(kMultiplicityOverflow);
    std::uint64_t n = static_cast<std::uint64_t>(count);
    const std::uint64_t skipped = std::min(skip, n);
    skip -= skipped;
    n -= skipped;
    n = std::min(n, left);
    left -= n;
    // Nothing of this row is returned; a row after it may still be skipped over by the offset
    // (and must fit int64, whatever the limit): the loop's head decides when to stop.
    if (n == 0) continue;
    auto* rc = out->add_rows();
    if (finishing.project().empty()) {
      for (const Datum& d : row) *rc->mutable_row()->add_datums() = ToProto(d);
    } else {
      for (std::uint32_t c : finishing.project())
        *rc->mutable_row()->add_datums() = ToProto(row[c]);
    }
    rc->set_count(n);
  }
  // A projection can make rows equal: list each distinct row once, where it first appears. Equal
  // as datums (the row encoding: -0.0 is 0.0), not as protobuf bytes.
  if (!finishing.project().empty() && out->rows_size() > 1) {
    pb::Rows compact;
    std::map<std::string, int> first;
    for (const auto& rc : out->rows()) {
      const std::string enc = EncodeRow(FromProto(rc.row()));
      auto [it, fresh] = first.emplace(enc, compact.rows_size());
      if (fresh) {
        *compact.add_rows() = rc;
      } else {
        // Counts are parts of int64 multiplicities whose exact sums fit int64 (checked above),
        // but several rows projected together may not.
        std::uint64_t sum;
        if (__builtin_add_overflow(compact.rows(it->second).count(), rc.count(), &sum) ||
            sum > static_cast<std::uint64_t>(INT64_MAX)) {
          return std::string(kMultiplicityOverflow);
        }
        compact.mutable_rows(it->second)->set_count(sum);
      }
    }
    *out = std::move(compact);
  }
  return std::nullopt;
}

}  // namespace tandem::workers
