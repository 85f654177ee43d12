#include "workers/sources/log.h"

#include <spdlog/spdlog.h>

namespace tandem::workers {

void LogSource::Advance(AdvanceCtx& ctx) {
  Envelope& env = envelope_.Ensure(ctx.workers);
  // A step reads at most this many lines (the step budget, like a generator's ticks).
  const std::size_t budget = static_cast<std::size_t>(ctx.max_ticks) * kLogLinesPerTick;
  // An error arises at the upper when its line is read (so at the same time however the step
  // budget splits the file).
  auto at = [&] { return upper.empty() ? kMaxTime : upper.time(); };
  auto error = [&](const ipc::LogRecord& r, const std::string& why) {
    env.AddError({"log line " + std::to_string(r.line) + ": " + why, at(), 1});
  };
  const std::size_t bytes = static_cast<std::size_t>(ctx.max_ticks) * kLogBytesPerTick;
  for (ipc::LogRecord& r : tailer_->ReadNew(budget, bytes)) {
    switch (r.kind) {
      case ipc::LogRecord::Kind::kUpdate:
      case ipc::LogRecord::Kind::kUpsert:
      case ipc::LogRecord::Kind::kDelete: {
        const char* what = r.kind == ipc::LogRecord::Kind::kUpdate   ? "update"
                           : r.kind == ipc::LogRecord::Kind::kUpsert ? "upsert"
                                                                     : "delete";
        if (!upper.LessEqual(r.time)) {
          error(r, std::string(what) + " at time " + std::to_string(r.time) +
                       (upper.empty()
                            ? " after the close mark C"
                            : " is below the progress mark " + std::to_string(upper.time())));
          break;
        }
        SourceRecord rec;
        rec.kind = r.kind == ipc::LogRecord::Kind::kUpdate   ? SourceRecord::Kind::kUpdate
                   : r.kind == ipc::LogRecord::Kind::kUpsert ? SourceRecord::Kind::kUpsert
                                                             : SourceRecord::Kind::kDelete;
        rec.row = std::move(r.row);
        rec.time = r.time;
        rec.diff = r.diff;
        env.Add(std::move(rec));
        break;
      }
      case ipc::LogRecord::Kind::kProgress:
        if (upper.empty()) {
          error(r, "progress mark P " + std::to_string(r.time) + " after the close mark C");
        } else if (r.time < upper.time()) {
          error(r, "progress mark P " + std::to_string(r.time) + " is below the earlier mark " +
                       std::to_string(upper.time()));
        } else {
          upper = Frontier::At(r.time);
        }
        break;
      case ipc::LogRecord::Kind::kClose:
        upper = Frontier::Empty();
        break;
      case ipc::LogRecord::Kind::kError:
        env.AddError({r.error, at(), 1});
        break;
    }
  }
  if (!tailer_->broken().empty() && !upper.empty()) {
    // The file can no longer be read as a log (not a regular file, truncated): bad data. The
    // source ends with the error, at the upper where it was noticed: a peek from there on
    // answers it, and the dataflow's frontier does not stop.
    env.AddError({"log source " + id + ": " + tailer_->broken(), at(), 1});
    spdlog::error("log source {}: {}; the source ends here, with this error in its collections", id,
                  tailer_->broken());
    upper = Frontier::Empty();
  }
  if (tailer_->rotations() != rotations_logged_) {
    rotations_logged_ = tailer_->rotations();
    spdlog::info("log source {}: {} was replaced by another file; following it from its start", id,
                 tailer_->path());
  }
  if (tailer_->missing() != missing_logged_) {
    missing_logged_ = tailer_->missing();
    if (missing_logged_) {
      spdlog::warn(
          "log source {}: {} does not exist (or cannot be read); its collections wait "
          "for it (their frontiers stay where they are)",
          id, tailer_->path());
    } else {
      spdlog::info("log source {}: {} is there now; reading it", id, tailer_->path());
    }
  }
  if (tailer_->more()) {
    ctx.budget_limited = true;
    ctx.next = ctx.now;  // more of the file is there already: step again at once
  } else {
    ctx.next = std::min(ctx.next, ctx.now + std::chrono::milliseconds(10));
  }
}

std::unique_ptr<Node> LogSource::MakeNode(std::uint32_t me, Time as_of, Frontier until) {
  return envelope_.MakeNode(me, as_of, until);
}

}  // namespace tandem::workers
