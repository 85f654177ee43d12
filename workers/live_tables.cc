#include "workers/live_tables.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "workers/tables/data_dir.h"

namespace tandem::workers {

namespace pb = ipc::pb;

bool LiveTables::Open(const std::string& data_dir, std::function<void()> published) {
  // Another runtime of this data dir may still be dying (shared fate kills it): wait a while.
  auto dir = DataDir::Open(data_dir, std::chrono::seconds(10));
  if (!dir.ok()) {
    spdlog::critical("data dir {}: {}", data_dir, dir.status().ToString());
    return false;
  }
  writer_ = std::make_unique<TableWriter>(
      std::move(dir).value(),
      [this, published = std::move(published)](std::vector<pb::Response> answers) {
        for (const pb::Response& r : answers) answer_(r);
        published();
      });
  return true;
}

void LiveTables::Add(const std::string& id, TableSource* source, const DataflowShared* flow) {
  live_[id] = {source, flow};
}

void LiveTables::Remove(const Source& source) {
  auto it = live_.find(source.id);
  if (it != live_.end() && it->second.source == &source) live_.erase(it);
}

void LiveTables::Route(const pb::WriteTable& write) {
  auto it = live_.find(write.id());
  if (it != live_.end()) {
    Submit(write, it->second);
    return;
  }
  // Validation admits writes to live tables only; answered, never dropped silently.
  spdlog::error("WriteTable to {}, which is not a live table here: answered with an error",
                write.id());
  Refuse(write, "unknown table " + write.id());
}

void LiveTables::Submit(const pb::WriteTable& write, const Live& live) {
  const std::shared_ptr<Table>& table = live.source->table();
  if (writer_->Submit(table, write, backlog_bound_)) {
    if (refusing_.erase(table->id()) > 0) {
      spdlog::info("table {}: its index took what it held; writes are accepted again", table->id());
    }
    return;
  }
  // Paused: the dataflow's last Prepare found a worker stalled on a full segment.
  const bool paused = live.flow->stall_backoff.count() > 0;
  std::string why = "table " + table->id() + " holds " + std::to_string(table->backlog()) +
                    " bytes of writes its index has not taken yet, the bound "
                    "(--max-table-backlog-bytes " +
                    std::to_string(backlog_bound_) + ")";
  why += paused ? ": its index is paused on a full segment until compaction or a drop frees room"
                : ": its dataflow has not kept up";
  why += "; this write was not applied: send it again later (with the same uuid)";
  if (refusing_.insert(table->id()).second) spdlog::warn("{}", why);
  Refuse(write, why);
}

void LiveTables::Refuse(const pb::WriteTable& write, const std::string& why) {
  pb::Response r;
  r.mutable_write_response()->set_uuid(write.uuid());
  r.mutable_write_response()->set_error(why);
  answer_(r);
}

}  // namespace tandem::workers
