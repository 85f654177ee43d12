// Peeks: one worker's part (read its registry row at the peek's time, apply the peek's map/
// filter/project) and the process-wide finishing (order by, offset, limit, project) applied by
// the command thread once every worker's part is in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/count.h"
#include "base/error_order.h"
#include "base/row.h"
#include "base/time.h"
#include "ipc/codec.h"
#include "ipc/rows.h"
#include "shm/reader.h"
#include "workers/expr.h"

namespace tandem::workers {

// Rows with their exact counts (summed in 128 bits: one beyond int64 is an error only if the
// answer needs that row — see Finish).
using CountedRows = std::vector<std::pair<Row, Int128>>;

struct PeekRows {
  CountedRows rows;
};

// What bounds a worker's part while it is read, so that a scan of a large index never holds more
// than its answer can use: `finishing`'s limit + offset (rows that cannot be in the answer are
// dropped as the part grows, by KeepFirstForFinishing), and `max_bytes` (with no limit, the scan
// stops with ResultTooLarge once the rows read are surely larger: the later exact check would
// refuse them anyway). Both only while every count the scan reads is positive — then rows only
// gain counts, and a row dropped or counted stays so in the full result. An index with a negative
// count is read whole, as without a bound.
struct PartBound {
  const ipc::pb::Finishing* finishing = nullptr;
  std::size_t max_bytes = SIZE_MAX;
  std::uint32_t worker = 0;  // for the error's text
};

// Computes this worker's part of a peek from a snapshot already known readable at `t`: the error
// keys first (any error visible at t answers the peek with it), then the rows under `keys` (all
// rows when `scan`, within `bound`), each through `mfp`. Returns an error message or the rows.
std::optional<std::string> ReadPeekPart(const shm::Snapshot& snap, Time t, bool scan,
                                        const std::vector<std::string>& keys, const Mfp& mfp,
                                        const PartBound& bound, PeekRows* out);

// The order `finishing` puts rows in: by its order_by columns (datum order; desc reverses; nulls
// first unless nulls_last), then by the whole row. A total order on distinct rows.
bool FinishingLess(const ipc::pb::Finishing& finishing, const Row& a, const Row& b);

// One worker's share of `finishing` (applied before its part is sent, so that a scan with a limit
// never sends more than the limit needs): keeps the rows that come first in FinishingLess order
// until their counts reach offset + limit — the first row that reaches it included, with its
// whole count — and drops the rest. Finishing the merged parts of every worker then gives exactly
// what finishing all their rows would: a row the answer needs (or skips over by the offset) comes
// after fewer than offset + limit counted rows on every worker, so every worker keeps it with its
// full count, and so do the rows before it. Without a limit it keeps everything.
// REQUIRES: every count is positive (ReadPeekPart refuses a kept row with a negative count).
void KeepFirstForFinishing(const ipc::pb::Finishing& finishing, CountedRows* rows);

// A count as a part carries it (RowCount.count): exact up to int64; beyond it, UINT64_MAX stands
// for "beyond int64" (still beyond it after any sum with positive counts). And back.
std::uint64_t PartCount(Int128 count);
Int128 CountOfPart(std::uint64_t count);

// The parameter (UpdateConfiguration, --param) that bounds a peek's answer, in bytes: the
// protobuf size of its rows, and of each worker's part of them. Its default, and its largest
// value, leave room below the channel's ipc::kMaxMessageBytes for the rest of the message.
inline constexpr char kMaxResultSize[] = "max_result_size";
inline constexpr std::size_t kDefaultMaxResultSize = 8u << 20;
inline constexpr std::size_t kMaxMaxResultSize = ipc::kMaxMessageBytes - (1u << 20);

// The value of max_result_size when `name` is it and `value` a valid one (the supervisor checks
// UpdateConfiguration; a runtime ignores what it cannot use).
std::optional<std::size_t> ParseMaxResultSize(std::string_view name, std::string_view value);

// The Error of a peek whose answer, or one worker's part of it, is larger than `limit` bytes
// (the protobuf size of its rows): names the limit and the size.
std::string ResultTooLarge(std::string_view what, std::size_t size, std::size_t limit,
                           std::string_view limit_name);

// Applies `finishing` to the merged rows of every worker: sums duplicates, sorts, offsets, limits
// (counting multiplicities) and projects. Error for a negative multiplicity, and for a count
// beyond int64 of a row the answer needs (returns, or skips over by the offset) — rows after the
// limit are not looked at, so the answer does not depend on how rows are spread over workers.
std::optional<std::string> Finish(const ipc::pb::Finishing& finishing, CountedRows rows,
                                  ipc::pb::Rows* out);

using ipc::FromProto;
using ipc::ToProto;

}  // namespace tandem::workers
