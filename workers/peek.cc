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

}  // namespace tandem::workers
