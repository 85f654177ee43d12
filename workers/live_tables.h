// The tables of a maintained side (DESIGN §9; workers/tables/table.h): the runtime's group-commit
// writer, and which table source each live table id names, so that every WriteTable reaches its
// table in command order — or is answered with an error, never dropped silently.
//
// A write goes to the writer (which answers it once it is durable), unless the table's backlog is
// full (Table::Admit): then it is answered with an error at once, and the table's refusing writes
// is logged once when it begins and once when it ends.
//
// Thread safety: Open before the workers start. Add, Remove and Route in the start barrier's
// completion (one thread, while every lockstep worker waits), in command order. Answers leave from
// there and from the writer's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "ipc/codec.h"
#include "workers/dataflow.h"
#include "workers/sources/table_source.h"
#include "workers/tables/table.h"

namespace tandem::workers {

class LiveTables {
 public:
  // Sends a WriteResponse to the command thread (from either thread above).
  using Answer = std::function<void(const ipc::pb::Response&)>;
  // `backlog_bound`: --max-table-backlog-bytes, what one table may hold that its index has not
  // taken.
  LiveTables(std::uint64_t backlog_bound, Answer answer)
      : backlog_bound_(backlog_bound), answer_(std::move(answer)) {}

  // Opens the data dir (waiting a while for a dying runtime of it) and starts the writer, whose
  // answers go to `answer`, each group commit's followed by `published` (its writes are ready for
  // the next tick). Logs why and returns false when the data dir cannot be opened.
  bool Open(const std::string& data_dir, std::function<void()> published);
  // The writer, for the table sources (null without a data dir: validation refuses tables then).
  TableWriter* writer() const { return writer_.get(); }

  // `source` is table `id` of dataflow `flow` (is it paused?), live from now on.
  void Add(const std::string& id, TableSource* source, const DataflowShared* flow);
  // `source` was dropped: when it is the live table of its id, that id names no table any more.
  void Remove(const Source& source);
  // Hands `write` to its table's writer, or answers it with an error: the table is not live here,
  // or its backlog is full.
  void Route(const ipc::pb::WriteTable& write);

 private:
  struct Live {
    TableSource* source;
    const DataflowShared* flow;
  };
  void Submit(const ipc::pb::WriteTable& write, const Live& live);
  void Refuse(const ipc::pb::WriteTable& write, const std::string& why);

  const std::uint64_t backlog_bound_;
  const Answer answer_;
  std::unique_ptr<TableWriter> writer_;
  std::map<std::string, Live> live_;
  // Tables refusing writes now (their backlog is full): logged once when it starts and ends.
  std::set<std::string> refusing_;
};

}  // namespace tandem::workers
