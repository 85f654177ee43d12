#include "workers/peek.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "base/count.h"
#include "shm/routing.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

// No more than the bytes `row` takes in a part (as a RowCount in Rows, framed): exact but for its
// count, of which only the least (a tag and one byte) is counted. `scratch` is reused.
std::size_t RowBytesAtLeast(const Row& row, pb::RowCount* scratch) {
  scratch->Clear();
  for (const Datum& d : row) *scratch->mutable_row()->add_datums() = ToProto(d);
  const std::size_t bytes = scratch->ByteSizeLong() + 2;
  return 1 + google::protobuf::io::CodedOutputStream::VarintSize64(bytes) + bytes;
}

// True when every count the scan of `snap` at `t` would read is positive (see PartBound).
bool EveryCountPositive(const shm::Snapshot& snap, Time t) {
  bool positive = true;
  const Status s = snap.Scan(t, [&](std::string_view, std::string_view, std::int64_t count) {
    positive = count > 0;
    return positive;
  });
  return s.ok() && positive;
}

}  // namespace

std::optional<std::string> ReadPeekPart(const shm::Snapshot& snap, Time t, bool scan,
                                        const std::vector<std::string>& keys, const Mfp& mfp,
                                        const PartBound& bound, PeekRows* out) {
  // Errors sort first (their keys start with shm::kErrorKeyPrefix). Of several, the answer is the
  // first in ErrorLess order, so that the same peek answers the same error every time.
  std::optional<std::string> error;
  Status s = snap.FirstError(t, &error);
  if (!s.ok()) return s.message();
  if (error) return error;
  // Counts are summed exactly; one that does not fit int64 is an error (base/count.h).
  std::map<std::string, std::pair<Row, Int128>> rows;
  std::string mfp_error;
  // The bound applies to scans (a lookup reads only its keys' rows), and only when every count is
  // positive — asked (one more pass over the snapshot) the first time the bound would act, so a
  // part that stays small never pays for it.
  const bool bounded = scan && (bound.max_bytes != SIZE_MAX || bound.finishing);
  const bool limited = bounded && bound.finishing && bound.finishing->has_limit();
  std::optional<bool> positive;
  auto may_bound = [&] {
    if (!positive) positive = EveryCountPositive(snap, t);
    return *positive;
  };
  std::size_t bytes_at_least = 0;  // of the rows kept, when not `limited`
  pb::RowCount scratch;
  std::size_t prune_at = 0;  // when `limited`: prune once the part has this many rows
  if (limited) {
    std::uint64_t k;
    if (__builtin_add_overflow(bound.finishing->offset(), bound.finishing->limit(), &k)) {
      k = UINT64_MAX;
    }
    prune_at = static_cast<std::size_t>(std::min<std::uint64_t>(k, SIZE_MAX / 4) * 2 + 1024);
  }
  auto prune = [&] {
    CountedRows part;
    part.reserve(rows.size());
    for (auto& [enc, rc] : rows) part.emplace_back(std::move(rc));
    KeepFirstForFinishing(*bound.finishing, &part);
    rows.clear();
    for (auto& rc : part) rows.emplace(EncodeRow(rc.first), std::move(rc));
  };
  std::string too_large;
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
    if (count < 0) {  // judged per indexed row, so the answer does not depend on where rows live
      mfp_error = "the result has a row with negative multiplicity";
      return false;
    }
    std::string enc = EncodeRow(row);
    auto [it, fresh] = rows.try_emplace(std::move(enc));
    auto& slot = it->second;
    if (fresh) {
      if (bounded && !limited) bytes_at_least += RowBytesAtLeast(row, &scratch);
      slot.first = std::move(row);
    }
    slot.second += count;
    if (limited && rows.size() >= prune_at) {
      if (may_bound()) {
        prune();
      } else {
        prune_at = SIZE_MAX;  // a negative count: read it whole
      }
    }
    if (bounded && !limited && bytes_at_least > bound.max_bytes && may_bound()) {
      too_large =
          ResultTooLarge("worker " + std::to_string(bound.worker) + "'s part alone, read so far,",
                         bytes_at_least, bound.max_bytes, kMaxResultSize);
      return false;
    }
    return true;
  };
  if (scan) {
    s = snap.Scan(t, [&](std::string_view k, std::string_view v, std::int64_t count) {
      if (!k.empty() && k[0] == shm::kErrorKeyPrefix) return true;
      return add(v, count);
    });
    if (!too_large.empty()) return too_large;
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
    if (rc.second != 0) out->rows.emplace_back(std::move(rc.first), rc.second);
  }
  return std::nullopt;
}

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

std::optional<std::size_t> ParseMaxResultSize(std::string_view name, std::string_view value) {
  if (name != kMaxResultSize) return std::nullopt;
  std::size_t bytes = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  if (ec != std::errc() || ptr != value.data() + value.size() || bytes == 0 ||
      bytes > kMaxMaxResultSize)
    return std::nullopt;
  return bytes;
}

std::string ResultTooLarge(std::string_view what, std::size_t size, std::size_t limit,
                           std::string_view limit_name) {
  std::string why = "the result exceeds " + std::string(limit_name) + " (" + std::to_string(limit) +
                    " bytes): " + std::string(what) + " is " + std::to_string(size) + " bytes";
  if (limit_name == kMaxResultSize) why += "; add a limit, keys or a filter, or raise it";
  return why;
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
