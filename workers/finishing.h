// A read's finishing (ipc/tandem.proto's Finishing: order by, offset, limit, project) over rows
// with exact counts: what a peek's command thread applies once every worker's part is in
// (peek.h), and what a reader of an index in place applies to what it read (the frontend's
// in-place reads) — one definition, so both answer the same rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/count.h"
#include "base/row.h"
#include "ipc/codec.h"

namespace tandem::workers {

// Rows with their exact counts (summed in 128 bits: one beyond int64 is an error only if the
// answer needs that row — see Finish).
using CountedRows = std::vector<std::pair<Row, Int128>>;

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

// Applies `finishing` to the merged rows of every worker: sums duplicates, sorts, offsets, limits
// (counting multiplicities) and projects. Error for a negative multiplicity, and for a count
// beyond int64 of a row the answer needs (returns, or skips over by the offset) — rows after the
// limit are not looked at, so the answer does not depend on how rows are spread over workers.
std::optional<std::string> Finish(const ipc::pb::Finishing& finishing, CountedRows rows,
                                  ipc::pb::Rows* out);

}  // namespace tandem::workers
