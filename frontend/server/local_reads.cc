#include "frontend/server/local_reads.h"

#include <spdlog/spdlog.h>

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "base/error_order.h"
#include "base/global_id.h"
#include "client/local_reader.h"
#include "frontend/server/sql_answers.h"
#include "ipc/rows.h"
#include "shm/routing.h"
#include "workers/expr.h"
#include "workers/finishing.h"
#include "workers/peek.h"

namespace tandem::frontend {

namespace {

namespace pb = ipc::pb;

// This thread's reader of the local replica's segment (LocalReader is one per thread). Only
// LocalReads touches it; a process has one LocalReads, so one reader per SQL thread.
struct ThreadReader {
  std::unique_ptr<LocalReader> reader;
  bool needs_reattach = false;
};
thread_local ThreadReader this_thread_reader;

// The reader, attached (again) when needed; null when the segment cannot be read now.
LocalReader* Reader(const std::string& segment) {
  ThreadReader& r = this_thread_reader;
  if (r.reader == nullptr) {
    auto attached = LocalReader::Attach(segment);
    if (!attached.ok()) return nullptr;  // not started yet, or not readable by us: the network
    r.reader = std::move(*attached);
    r.needs_reattach = false;
  } else if (r.needs_reattach) {
    if (!r.reader->Reattach().ok()) return nullptr;
    r.needs_reattach = false;
  }
  return r.reader.get();
}

}  // namespace

std::optional<sql::SqlResult<ReadResult>> LocalReads::TryRead(const plan::PeekPlan& peek,
                                                              const pb::Schema& schema,
                                                              const ReadTime& time) {
  if (peek.keys.empty()) return std::nullopt;  // a scan: bounded and merged by the replica
  auto answer = Read(peek, schema, time);
  (answer ? answered_ : fell_back_).fetch_add(1, std::memory_order_relaxed);
  return answer;
}

std::optional<sql::SqlResult<ReadResult>> LocalReads::Read(const plan::PeekPlan& peek,
                                                           const pb::Schema& schema,
                                                           const ReadTime& time) {
  const std::optional<GlobalId> index = GlobalId::Parse(peek.index_id);
  if (!index) return std::nullopt;
  LocalReader* reader = Reader(segment_);
  if (reader == nullptr) return std::nullopt;
  // Unavailable: the replica is gone or restarted — the next read attaches anew.
  auto fall_back = [&](const Status& s) -> std::optional<sql::SqlResult<ReadResult>> {
    if (s.code() == StatusCode::kUnavailable) this_thread_reader.needs_reattach = true;
    return std::nullopt;
  };

  // The read time: AS OF's, or the latest every part can answer — not before the session's
  // floor (its own writes), else the network peek waits for it.
  Time t = time.at;
  if (time.kind == ReadTime::Kind::kLatest) {
    auto latest = reader->LatestReadable(*index);
    if (!latest.ok()) return fall_back(latest.status());
    if (*latest < time.floor) return std::nullopt;
    t = *latest;
  }

  // As the interactive runtime reads a keyed peek: each key (once) on the worker its encoding
  // routes to, each worker's keys in encoded order; a worker's part stops at its first row the
  // map/filter/project fails on; of several workers' errors, the first in ErrorLess order.
  std::vector<std::map<std::string, Row>> by_worker(reader->workers());
  for (const auto& k : peek.keys) {
    Row key = ipc::FromProto(k);
    std::string encoded = EncodeKey(key);
    const std::uint32_t w = shm::WorkerOf(encoded, reader->workers());
    by_worker[w].emplace(std::move(encoded), std::move(key));
  }
  const workers::Mfp mfp(peek.mfp, schema);
  std::map<std::string, std::pair<Row, Int128>> rows;
  std::size_t bytes = 0;  // of the distinct rows kept, encoded: about their answer's size
  std::optional<std::string> error;
  for (const auto& keys : by_worker) {
    std::string part_error;
    for (const auto& [encoded, key] : keys) {
      const auto read = reader->Lookup(*index, key, t, [&](const RowView& view) {
        auto decoded = view.ToRow();
        if (!decoded.ok()) {
          part_error = "corrupt row in the index: " + decoded.status().message();
          return false;
        }
        Row row = std::move(decoded).value();
        switch (mfp.Apply(&row, &part_error)) {
          case workers::Mfp::Outcome::kDropped:
            return true;
          case workers::Mfp::Outcome::kError:
            return false;
          case workers::Mfp::Outcome::kKept:
            break;
        }
        std::string enc = EncodeRow(row);
        auto [it, fresh] = rows.try_emplace(std::move(enc));
        if (fresh) {
          bytes += it->first.size();
          it->second.first = std::move(row);
        }
        it->second.second += view.count();
        return true;
      });
      if (bytes > workers::kDefaultMaxResultSize) return std::nullopt;  // the replica's bound
      if (!read.ok()) {
        if (read.status().code() != StatusCode::kDataError) return fall_back(read.status());
        // The index's error at t answers the read.
        return sql::SqlResult<ReadResult>(ReadError(read.status().message()));
      }
      if (!part_error.empty()) break;
    }
    if (!part_error.empty() && (!error || ErrorLess(part_error, *error))) error = part_error;
  }
  if (error) return sql::SqlResult<ReadResult>(ReadError(*error));

  workers::CountedRows counted;
  for (auto& [enc, rc] : rows) {
    if (rc.second != 0) counted.emplace_back(std::move(rc.first), rc.second);
  }
  ReadResult out;
  if (auto finish_error = workers::Finish(peek.finishing, std::move(counted), &out.rows)) {
    return sql::SqlResult<ReadResult>(ReadError(*finish_error));
  }
  out.timestamp = t;
  out.peek = true;
  out.in_place = true;
  return sql::SqlResult<ReadResult>(std::move(out));
}

}  // namespace tandem::frontend
