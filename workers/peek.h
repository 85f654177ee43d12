// Peeks: one worker's part (read its registry row at the peek's time, apply the peek's map/
// filter/project); the process-wide finishing (order by, offset, limit, project) the command
// thread applies once every worker's part is in is finishing.h's.
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
#include "workers/finishing.h"

namespace tandem::workers {

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

using ipc::FromProto;
using ipc::ToProto;

}  // namespace tandem::workers
