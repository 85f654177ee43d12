#include "controller/write_ledger.h"

#include <fcntl.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "base/json.h"
#include "ipc/model.h"

namespace tandem::controller {
namespace {

namespace gpb = google::protobuf;

Result<WriteLedger> ReadLedger(const std::string& path) {
  WriteLedger ledger;
  std::ifstream in(path);
  if (!in) {
    if (std::filesystem::exists(path)) return Status::Unavailable("cannot read " + path);
    return ledger;
  }
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;  // blank
    auto bad = [&](const std::string& why) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) + ": " + why +
                                     " (the record of this state file's table writes; removing "
                                     "it makes reads through several replicas forget them)");
    };
    gpb::Struct doc;
    if (!gpb::util::JsonStringToMessage(line, &doc).ok()) return bad("not a JSON object");
    const auto& fields = doc.fields();
    auto text = [&](const char* name) -> const std::string* {
      auto it = fields.find(name);
      if (it == fields.end() || it->second.kind_case() != gpb::Value::kStringValue) return nullptr;
      return &it->second.string_value();
    };
    const std::string* table = text("table");
    const std::string* endpoint = text("endpoint");
    const std::string* floor = text("floor");
    if (!table || !endpoint || !floor) return bad("needs the strings table, endpoint and floor");
    ReplicaWrites& entry = ledger[*table][*endpoint];
    const auto r = std::from_chars(floor->data(), floor->data() + floor->size(), entry.floor);
    if (r.ec != std::errc() || r.ptr != floor->data() + floor->size()) {
      return bad("floor \"" + *floor + "\" is not a time");
    }
    if (auto it = fields.find("missing"); it != fields.end()) {
      if (it->second.kind_case() != gpb::Value::kListValue) return bad("missing is not a list");
      for (const auto& uuid : it->second.list_value().values()) {
        if (uuid.kind_case() != gpb::Value::kStringValue) return bad("a missing uuid is no string");
        entry.missing.insert(uuid.string_value());
      }
    }
  }
  return ledger;
}

// Replaces the file at `path` with `ledger` (temporary file + rename; none when it is empty).
Status WriteLedgerFile(const std::string& path, const WriteLedger& ledger) {
  std::error_code ec;
  if (ledger.empty()) {
    std::filesystem::remove(path, ec);
    if (ec) return Status::Unavailable("cannot remove " + path + ": " + ec.message());
    return Status::Ok();
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::Unavailable("cannot write " + tmp);
    for (const auto& [table, replicas] : ledger) {
      for (const auto& [endpoint, entry] : replicas) {
        out << "{\"table\":" << JsonQuote(table) << ",\"endpoint\":" << JsonQuote(endpoint)
            << ",\"floor\":" << JsonQuote(std::to_string(entry.floor)) << ",\"missing\":[";
        const char* comma = "";
        for (const auto& uuid : entry.missing) {
          out << comma << JsonQuote(uuid);
          comma = ",";
        }
        out << "]}\n";
      }
    }
    out.flush();
    if (!out) return Status::Unavailable("cannot write " + tmp);
  }
  // Durable before it replaces the old one, and the rename durable: a crash leaves one whole
  // ledger, never an empty or a cut one.
  auto sync = [](const std::string& p, int flags) {
    const int fd = open(p.c_str(), flags | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = fsync(fd) == 0;
    close(fd);
    return ok;
  };
  if (!sync(tmp, O_RDONLY)) return Status::Unavailable("cannot sync " + tmp);
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::Unavailable("cannot replace " + path + ": " + ec.message());
  const std::string dir = std::filesystem::path(path).parent_path().string();
  (void)sync(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY);
  return Status::Ok();
}

// Runs `change` on the ledger of `state` under its lock, and saves the result.
Status Change(const std::string& state, const std::function<void(WriteLedger&)>& change) {
  const std::string path = WriteLedgerPath(state);
  const std::string lock_path = path + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot open " + lock_path + ": " + std::strerror(errno));
  }
  // Held only for a read, a change and a rename: waiting for another holder is short — unless
  // it is stopped (^Z), which is not waited for beyond kLockWait.
  constexpr auto kLockWait = std::chrono::seconds(5);
  const auto give_up = std::chrono::steady_clock::now() + kLockWait;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() >= give_up) {
      const std::string why =
          errno == EWOULDBLOCK ? "another tandem-ctl holds it" : std::strerror(errno);
      close(fd);
      return Status::Unavailable("cannot lock " + lock_path + ": " + why);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a retry's pace
  }
  Status result = Status::Ok();
  auto ledger = ReadLedger(path);
  if (ledger.ok()) {
    change(*ledger);
    result = WriteLedgerFile(path, *ledger);
  } else {
    result = ledger.status();
  }
  close(fd);  // releases the lock
  return result;
}

}  // namespace

std::string WriteLedgerPath(const std::string& state) { return state + ".writes"; }

Result<WriteLedger> LoadWriteLedger(const std::string& state) {
  return ReadLedger(WriteLedgerPath(state));
}

void Apply(WriteLedger& ledger, const std::string& table, const AnsweredWrite& write) {
  if (write.applied_nowhere) {
    auto it = ledger.find(table);
    if (it == ledger.end()) return;
    for (auto& [endpoint, entry] : it->second) entry.missing.erase(write.uuid);
    return;
  }
  std::map<std::string, ReplicaWrites>& replicas = ledger[table];
  const bool earlier_writes = !replicas.empty();
  // A replica first recorded now was sent none of the earlier writes.
  auto entry_of = [&](const std::string& endpoint) -> ReplicaWrites& {
    auto [it, added] = replicas.try_emplace(endpoint);
    if (added && earlier_writes) it->second.missing.insert(kEarlierWrites);
    return it->second;
  };
  // A uuid some replica is recorded as missing was sent before: a retry. A replica that does not
  // acknowledge it now is left as it was (it may have acknowledged it then); a new write is
  // missing on every replica that does not acknowledge it.
  const bool retry = std::any_of(replicas.begin(), replicas.end(), [&](const auto& r) {
    return r.second.missing.count(write.uuid) > 0;
  });
  for (const auto& [endpoint, at] : write.acknowledged) {
    ReplicaWrites& entry = entry_of(endpoint);
    entry.floor = std::max(entry.floor, at);
    entry.missing.erase(write.uuid);
  }
  if (retry) return;
  for (const auto& endpoint : write.sent_to) (void)entry_of(endpoint);
  for (auto& [endpoint, entry] : replicas) {
    if (!write.acknowledged.count(endpoint)) entry.missing.insert(write.uuid);
  }
}

AnsweredWrite AnsweredBy(const ReplicaSet& set, const ReplicaSet::WriteResult& result) {
  AnsweredWrite w;
  w.uuid = result.uuid;
  for (const auto& [i, response] : result.answers) {
    if (response.result_case() == pb::WriteResponse::kTime) {
      w.acknowledged[set.status(i).endpoint] = response.time();
    }
  }
  w.applied_nowhere = w.acknowledged.empty() && result.unanswered.empty();
  return w;
}

Status RecordWrites(const std::string& state, const std::string& table,
                    const std::vector<AnsweredWrite>& writes) {
  if (writes.empty()) return Status::Ok();
  return Change(state, [&](WriteLedger& ledger) {
    for (const auto& w : writes) Apply(ledger, table, w);
  });
}

Status ForgetTables(const std::string& state, const std::set<std::string>& live) {
  // Nothing to do (and no lock file to make) when this state file never wrote a table.
  if (!std::filesystem::exists(WriteLedgerPath(state))) return Status::Ok();
  return Change(state, [&](WriteLedger& ledger) {
    std::erase_if(ledger, [&](const auto& entry) { return !live.count(entry.first); });
  });
}

std::set<std::string> TablesRead(const History& h, const std::string& id) {
  std::set<std::string> tables, seen;
  std::vector<std::string> todo = {id};
  while (!todo.empty()) {
    const std::string x = todo.back();
    todo.pop_back();
    if (!seen.insert(x).second) continue;
    for (const pb::Command& c : h.commands()) {
      if (!c.has_create_dataflow() || History::IsPendingSource(c)) continue;
      const auto& d = c.create_dataflow().desc();
      const auto ids = ipc::CreatedIds(d);
      if (std::find(ids.begin(), ids.end(), x) == ids.end()) continue;
      // The whole dataflow, not only what `x` is built from: more tables than it reads at most,
      // which leaves out more replicas, never fewer.
      for (const auto& s : d.source_imports()) {
        if (s.source().has_table()) tables.insert(s.id());
      }
      for (const auto& i : d.index_imports()) todo.push_back(i.id());
    }
  }
  return tables;
}

Readers ReadersOf(const WriteLedger& ledger, const std::set<std::string>& tables,
                  const std::vector<std::string>& endpoints) {
  Readers readers;
  std::vector<const std::string*> written;  // the tables of `tables` this state file wrote
  for (const auto& t : tables) {
    if (ledger.count(t)) written.push_back(&t);
  }
  readers.restricted = !written.empty();
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    Time floor = 0;
    std::string why;
    for (const std::string* table : written) {
      const auto& replicas = ledger.at(*table);
      auto it = replicas.find(endpoints[i]);
      if (it == replicas.end()) {
        why = "none of this state file's writes to " + *table + " went to it";
        break;
      }
      if (it->second.missing.count(kEarlierWrites)) {
        why = "it was first sent a write of this state file to " + *table +
              " after others were, so it lacks those";
        break;
      }
      if (!it->second.missing.empty()) {
        const std::size_t n = it->second.missing.size();
        why = "it did not acknowledge " +
              (n == 1 ? "write " : std::to_string(n) + " writes to " + *table + ", e.g. ") +
              *it->second.missing.begin() + (n == 1 ? " to " + *table : "") +
              " (a retry with that --uuid is applied once)";
        break;
      }
      floor = std::max(floor, it->second.floor);
    }
    if (why.empty()) {
      readers.floors[i] = floor;
    } else {
      readers.left_out[i] = why;
    }
  }
  return readers;
}

ReplicaSet::PeekTargets TargetsAt(const Readers& readers, Time t, ReadAt at) {
  ReplicaSet::PeekTargets targets;
  if (!readers.restricted) return targets;
  std::set<std::size_t> all, at_t;
  for (const auto& [i, floor] : readers.floors) {
    all.insert(i);
    if (floor <= t) at_t.insert(i);
  }
  switch (at) {
    case ReadAt::kProbe:
      targets.only = std::move(all);
      break;
    case ReadAt::kLatest:
      targets.only = std::move(all);
      targets.at_least = readers.floors;
      break;
    case ReadAt::kExactly:
      targets.only = at_t.empty() ? std::move(all) : std::move(at_t);
      break;
  }
  return targets;
}

}  // namespace tandem::controller
