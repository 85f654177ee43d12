// Peeks: one worker's part (read its registry row at the peek's time, apply the peek's map/
// filter/project) and the process-wide finishing (order by, offset, limit, project) applied by
// the command thread once every worker's part is in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/row.h"
#include "base/time.h"
#include "ipc/codec.h"
#include "ipc/rows.h"
#include "shm/reader.h"
#include "workers/expr.h"

namespace tandem::workers {

struct PeekRows {
  std::vector<std::pair<Row, std::int64_t>> rows;
};

// Computes this worker's part of a peek from a snapshot already known readable at `t`: the error
// keys first (any error visible at t answers the peek with it), then the rows under `keys` (all
// rows when `scan`), each through `mfp`. Returns an error message or the rows.
std::optional<std::string> ReadPeekPart(const shm::Snapshot& snap, Time t, bool scan,
                                        const std::vector<std::string>& keys, const Mfp& mfp,
                                        PeekRows* out);

// The order in which a peek picks among several errors: byte order, except that runs of digits
// compare as numbers — so of "log line 7: …" and "log line 12: …" the earlier line is first.
bool ErrorLess(std::string_view a, std::string_view b);

// Applies `finishing` to the merged rows of every worker: sums duplicates, sorts, offsets, limits
// (counting multiplicities) and projects. Error for a negative multiplicity.
std::optional<std::string> Finish(const ipc::pb::Finishing& finishing,
                                  std::vector<std::pair<Row, std::int64_t>> rows,
                                  ipc::pb::Rows* out);

using ipc::FromProto;
using ipc::ToProto;

}  // namespace tandem::workers
