// subscribe: streams the changes of an index (DESIGN §10), in an observer session.
//
//   Subscribe{uuid, id, as_of?, snapshot, up_to?}  as_of absent: the supervisor fills in "latest"
//   SubscribeBatch{uuid, lower, upper, updates}…   printed as they come, flushed per batch
//   SubscribeEnd{uuid, reason, detail}             exactly one: the command ends
//
// --for passing, SIGINT/SIGTERM and a closed stdout send CancelSubscribe and wait (--timeout) for
// the End, so the replica releases the subscribe's hold before the session ends with Goodbye.
//
// The session never stops reading (its receive queue is unbounded: ipc/client.h,
// Options::end_on_disconnect), so a stdout slower than the stream must not hold the batches up
// there: the main thread only receives, and a thread of its own prints (BatchPrinter) from a
// queue bounded in bytes. A stdout that falls kMaxWaitingBatchBytes behind cancels the subscribe
// like ^C, and the command exits 1 ("stdout did not keep up"). Whatever the command ends with,
// what was queued is printed first (a lost session's batches included), then the end.
#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <deque>
#include <iostream>
#include <thread>
#include <utility>

#include "base/row.h"
#include "base/thread_annotations.h"
#include "base/time.h"
#include "ipc/rows.h"
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

struct SubscribeOptions {
  std::string id;
  std::optional<std::string> as_of, up_to, for_text;
  bool no_snapshot = false;
  bool observer = false;  // the default anyway: a subscribe is a read
  bool progress = false;
};

// One batch as lines (in time order, rows in order within a time): text `TIME DIFF DATUM…` per
// update (and `progress UPPER` with --progress), or with --json {"time", "diff", "row"} per update
// and {"progress", "closed"} per completed interval. Parts of an interval (upper == lower) print
// their updates only.
std::string BatchLines(const pb::SubscribeBatch& b, bool progress) {
  // In time order already; within one time the workers' order: sort by row, for a readable and
  // repeatable output.
  std::vector<std::pair<Row, const pb::SubscribeUpdate*>> updates;
  updates.reserve(static_cast<std::size_t>(b.updates_size()));
  for (const auto& u : b.updates()) updates.emplace_back(ipc::FromProto(u.row()), &u);
  std::stable_sort(updates.begin(), updates.end(), [](const auto& x, const auto& y) {
    if (x.second->time() != y.second->time()) return x.second->time() < y.second->time();
    return CompareRow(x.first, y.first) < 0;
  });
  std::string out;
  for (const auto& [row, update] : updates) {
    const pb::SubscribeUpdate& u = *update;
    if (JsonOutput()) {
      JsonWriter json;
      json.BeginObject().Key("time").UInt(u.time()).Key("diff").Int(u.diff());
      json.Key("row").RowValue(row).EndObject();
      out += json.str();
    } else {
      out += std::to_string(u.time()) + " " + std::to_string(u.diff());
      for (const auto& d : u.row().datums()) out += " " + DatumText(d);
    }
    out += '\n';
  }
  if (b.upper() > b.lower()) {
    const bool closed = b.upper() == Frontier::kEmptyRaw;
    if (JsonOutput()) {
      JsonWriter json;
      json.BeginObject().Key("progress");
      if (closed) {
        json.Null();
      } else {
        json.UInt(b.upper());
      }
      json.Key("closed").Bool(closed).EndObject();
      out += json.str() + '\n';
    } else if (progress) {
      out += "progress " + (closed ? std::string("closed") : std::to_string(b.upper())) + '\n';
    }
  }
  return out;
}

std::string ReasonName(pb::SubscribeEnd::Reason r) {
  const std::string& name = pb::SubscribeEnd::Reason_Name(r);
  return name.empty() ? "reason " + std::to_string(static_cast<int>(r)) : name;
}

// The End: its reason on stderr (and {"end", "detail"} with --json); exit 0 for the ends that
// are the subscribe's purpose (UP_TO, CLOSED, CANCELED when we canceled), else 1 — and 1 whatever
// the End when `failed` says why the output is incomplete (stdout did not keep up).
int Finish(const std::string& what, const pb::SubscribeEnd& e, bool canceled,
           const std::string& failed) {
  const std::string reason = ReasonName(e.reason());
  const bool ok = failed.empty() && (e.reason() == pb::SubscribeEnd::UP_TO ||
                                     e.reason() == pb::SubscribeEnd::CLOSED ||
                                     (e.reason() == pb::SubscribeEnd::CANCELED && canceled));
  if (JsonOutput()) {
    JsonWriter json;
    json.BeginObject().Key("end").String(reason).Key("detail").String(e.detail()).EndObject();
    std::cout << json.str() << std::endl;
  }
  std::string lower = reason;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // The detail, unless it only repeats the reason ("CANCELED: canceled").
  const bool said = e.detail().empty() || e.detail() == lower;
  const std::string ended = "ended: " + reason + (said ? "" : ": " + e.detail());
  if (ok) {
    std::cerr << "tandem-ctl: " << what << ": " << ended << "\n";
    return kExitOk;
  }
  return Fail(kExitFailed, what + ": " + (failed.empty() ? "" : failed + "; ") + ended);
}

bool IsSubscribeRefusal(const pb::Response& r) {
  return r.has_command_error() && r.command_error().what().rfind("Subscribe", 0) == 0;
}

// The most the batches waiting for stdout may weigh, parsed, in memory (SpaceUsedLong: several
// times their encoded size, a heap object per update, row and datum) — unless one batch alone
// weighs more: it is always taken into an empty queue. The session's own queue is unbounded, so
// this is what bounds the memory of a subscribe whose stdout is slower than its stream.
constexpr std::size_t kMaxWaitingBatchBytes = std::size_t{64} << 20;

// Prints batches (BatchLines) on stdout in a thread of its own, in the order they were pushed,
// flushing after each. One thread — the command's — calls its methods; while the printing thread
// runs, only it writes std::cout (the command writes its end and failures there after Drain).
class BatchPrinter {
 public:
  explicit BatchPrinter(bool progress) : progress_(progress) {
    thread_ = std::thread([this] { Run(); });
  }
  ~BatchPrinter() { Drain(); }
  BatchPrinter(const BatchPrinter&) = delete;
  BatchPrinter& operator=(const BatchPrinter&) = delete;

  // Queues `batch`, or drops it once stdout is closed(): true. False, and nothing queued, when
  // the batches waiting would weigh more than kMaxWaitingBatchBytes with it; `*waiting` is then
  // what they weigh now.
  bool Push(pb::SubscribeBatch batch, std::size_t* waiting) {
    const std::size_t bytes = batch.SpaceUsedLong();
    {
      MutexLock l(mu_);
      if (closed_) return true;
      if (bytes_ > 0 && bytes_ + bytes > kMaxWaitingBatchBytes) {
        *waiting = bytes_;
        return false;
      }
      queue_.emplace_back(std::move(batch), bytes);
      bytes_ += bytes;
    }
    cv_.NotifyAll();
    return true;
  }

  // A write to stdout failed (its reader went away): nothing more is printed.
  bool closed() {
    MutexLock l(mu_);
    return closed_;
  }

  // Prints everything queued — blocking as long as stdout does — and stops the thread. Then the
  // caller may write std::cout. Idempotent.
  void Drain() {
    {
      MutexLock l(mu_);
      draining_ = true;
    }
    cv_.NotifyAll();
    if (thread_.joinable()) thread_.join();
  }

  // Like Drain, for a stream that is over anyway (stdout did not keep up, ^C, no End in time):
  // prints what is queued for at most `patience`. False when stdout is still blocked then: the
  // rest is dropped, the thread left to its write (detached), and the caller must leave without
  // touching std::cout (std::_Exit).
  bool DrainWithin(std::chrono::milliseconds patience) {
    bool done = false;
    {
      MutexLock l(mu_);
      draining_ = true;
      cv_.NotifyAll();
      const auto until = std::chrono::steady_clock::now() + patience;
      while (!done_ && std::chrono::steady_clock::now() < until) cv_.WaitUntil(mu_, until);
      done = done_;
      if (!done) queue_.clear();
    }
    if (!thread_.joinable()) return true;
    if (!done) {
      thread_.detach();
      return false;
    }
    thread_.join();
    return true;
  }

 private:
  void Run() {
    Loop();
    MutexLock l(mu_);
    done_ = true;
    cv_.NotifyAll();
  }
  void Loop() {
    for (;;) {
      pb::SubscribeBatch batch;
      std::size_t bytes = 0;
      {
        MutexLock l(mu_);
        while (queue_.empty() && !draining_) {
          cv_.WaitUntil(mu_, std::chrono::steady_clock::now() + std::chrono::seconds(1));
        }
        if (queue_.empty()) return;  // draining, and everything was printed
        batch = std::move(queue_.front().first);
        bytes = queue_.front().second;
        queue_.pop_front();
      }
      // Outside the lock: a stalled stdout blocks this thread only, never Push.
      std::cout << BatchLines(batch, progress_);
      std::cout.flush();
      const bool failed = !std::cout.good();
      MutexLock l(mu_);
      bytes_ -= bytes;
      if (failed) {
        closed_ = true;
        queue_.clear();
        bytes_ = 0;
      }
    }
  }

  const bool progress_;
  Mutex mu_;
  CondVar cv_;  // queue_ gained a batch, draining_ was set, or done_
  // Waiting to be printed: each batch with what it weighs (SpaceUsedLong).
  std::deque<std::pair<pb::SubscribeBatch, std::size_t>> queue_ TANDEM_GUARDED_BY(mu_);
  // What queue_ and the batch being printed weigh.
  std::size_t bytes_ TANDEM_GUARDED_BY(mu_) = 0;
  bool draining_ TANDEM_GUARDED_BY(mu_) = false;
  bool closed_ TANDEM_GUARDED_BY(mu_) = false;
  bool done_ TANDEM_GUARDED_BY(mu_) = false;  // Loop returned
  std::thread thread_;
};

int RunSubscribe(const SubscribeOptions& o, Session& s) {
  std::optional<std::uint64_t> as_of, up_to;
  std::optional<double> seconds;
  if (o.as_of && *o.as_of != "latest") {
    auto t = ParseU64(*o.as_of, "--as-of");
    if (!t.ok()) return Usage(t.status().message());
    as_of = *t;
  }
  if (o.up_to) {
    auto t = ParseU64(*o.up_to, "--up-to");
    if (!t.ok()) return Usage(t.status().message());
    up_to = *t;
  }
  for (const auto& [name, t] : {std::pair{"--as-of", as_of}, std::pair{"--up-to", up_to}}) {
    if (t && *t > kMaxTime) {
      return Usage(std::string(name) + " " + std::to_string(*t) + ": the largest time is " +
                   std::to_string(kMaxTime) + " (UINT64_MAX is reserved for the empty frontier)");
    }
  }
  if (as_of && up_to && *up_to <= *as_of) {
    return Usage("--up-to " + std::to_string(*up_to) + " is not after --as-of " +
                 std::to_string(*as_of) + " (the subscribe would deliver nothing)");
  }
  if (o.for_text) {
    auto parsed = ParseSeconds(*o.for_text, "--for");
    if (!parsed.ok()) return Usage(parsed.status().message());
    seconds = *parsed;
  }
  const std::string id = s.history().IndexFor(o.id);
  const std::string what = "subscribe " + o.id;
  pb::Command c;
  auto* sub = c.mutable_subscribe();
  sub->set_uuid(RandomHex(16));
  sub->set_id(id);
  if (as_of) sub->set_as_of(*as_of);
  sub->set_snapshot(!o.no_snapshot);
  if (up_to) sub->set_up_to(*up_to);
  const std::string uuid = sub->uuid();

  // A closed stdout (`| head`) is a reason to cancel, not a SIGPIPE death mid-stream.
  std::signal(SIGPIPE, SIG_IGN);
  if (auto code = s.Open(Session::Mode::kObserve)) return *code;
  s.client().Send(c);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<std::int64_t>(seconds.value_or(0) * 1000));
  bool canceled = false;
  std::chrono::steady_clock::time_point cancel_deadline;
  std::string cancel_why;
  auto cancel = [&](const std::string& why) {
    pb::Command cs;
    cs.mutable_cancel_subscribe()->set_uuid(uuid);
    s.client().Send(cs);
    canceled = true;
    cancel_why = why;
    cancel_deadline = std::chrono::steady_clock::now() + s.client().timeout();
  };
  // Every way out below prints what is queued first (printer.Drain()), then the end or the
  // failure — also on stdout with --json, after the stream. A stream that is over anyway waits
  // for a blocked stdout a second at most, then leaves without the rest.
  BatchPrinter printer(o.progress);
  auto give_up = [&](int code, const std::string& why) {
    if (printer.DrainWithin(std::chrono::seconds(1))) return;
    std::fprintf(stderr, "tandem-ctl: %s: %s; stdout is blocked: exiting without the rest\n",
                 what.c_str(), why.c_str());
    std::fflush(stderr);
    std::_Exit(code);
  };
  std::string failed;  // set once stdout did not keep up: the rest of the stream is dropped
  for (;;) {
    if (s.over()) {
      printer.Drain();
      return s.Ended(Status::Ok());
    }
    if (!canceled) {
      if (Interrupted()) {
        cancel("interrupted");
      } else if (printer.closed()) {
        cancel("stdout closed");
      } else if (seconds && std::chrono::steady_clock::now() >= deadline) {
        cancel("--for " + *o.for_text + " s passed");
      }
    } else if (std::chrono::steady_clock::now() >= cancel_deadline) {
      give_up(kExitFailed, cancel_why + ", canceled, but no SubscribeEnd came");
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", s.globals().timeout_s);
      return Fail(kExitFailed, what + ": " + cancel_why +
                                   ", canceled, but no SubscribeEnd came within " + limit +
                                   " s (--timeout)");
    }
    auto r = s.client().Receive(std::chrono::milliseconds(100));
    if (!r) continue;
    if (r->has_subscribe_batch() && r->subscribe_batch().uuid() == uuid) {
      if (!failed.empty()) continue;  // canceled: wait for the End
      std::size_t waiting = 0;
      if (!printer.Push(std::move(*r->mutable_subscribe_batch()), &waiting)) {
        failed = "stdout did not keep up (" + std::to_string(waiting >> 20) + " MiB waiting)";
        if (!canceled) cancel(failed);
      }
    } else if (r->has_subscribe_end() && r->subscribe_end().uuid() == uuid) {
      if (!failed.empty() || cancel_why == "interrupted") {
        give_up(failed.empty() ? kExitOk : kExitFailed, failed.empty() ? cancel_why : failed);
      } else {
        printer.Drain();
      }
      return Finish(what, r->subscribe_end(), canceled, failed);
    } else if (IsSubscribeRefusal(*r)) {
      // An observer cannot send a barrier: the refusal comes in the stream, before any batch.
      printer.Drain();
      return Refused(what, s.Refusal(r->command_error()));
    } else if (r->has_command_error()) {
      Warn(ReplicaRefusal(r->command_error()));
    }
  }
}

}  // namespace

Subcommand AddSubscribe(CLI::App& app) {
  auto o = std::make_shared<SubscribeOptions>();
  auto* sub = app.add_subcommand(
      "subscribe",
      "stream index ID (or the index on collection ID): a snapshot, then every change");
  sub->footer(
      "Streams index ID (or the index on collection ID) from --as-of T (default latest: the\n"
      "newest complete time, filled in by the replica): first its contents at T (the snapshot;\n"
      "--no-snapshot: none, the changes after T only), then every change, as the replica\n"
      "publishes it. One line per update, flushed per batch: TIME DIFF DATUM… (datums as peek\n"
      "prints them); --progress adds `progress U` when every change before U was printed. With\n"
      "--json: {\"time\", \"diff\", \"row\"} per update and {\"progress\": U, \"closed\"} per\n"
      "completed interval, and {\"end\", \"detail\"} last. It ends when every time before\n"
      "--up-to T was printed, the index closes (exit 0), --for passes or on ^C (CancelSubscribe,\n"
      "then the end is awaited: exit 0); the end's reason goes to stderr. Ended by the replica\n"
      "otherwise (the index dropped, an error, too slow a reader): exit 1; refused: exit 1.\n"
      "Printing has a queue of its own: a stdout that falls 64 MiB of batches behind the\n"
      "stream cancels it too, and exits 1 (stdout did not keep up). A lost connection exits 69,\n"
      "after what was received is printed. Always an observer session (--observer is the\n"
      "default): it changes nothing.");
  sub->add_option("ID", o->id, "an index, or a collection with an index")->required();
  AddOptional(*sub, "--as-of", &o->as_of, "T|latest: the first time (default latest)");
  sub->add_flag("--no-snapshot", o->no_snapshot, "no snapshot: only the changes after --as-of");
  AddOptional(*sub, "--up-to", &o->up_to, "T: end once every time before T was printed");
  AddOptional(*sub, "--for", &o->for_text, "SECONDS: cancel after this long");
  sub->add_flag("--observer", o->observer, "an observer session (the default)");
  sub->add_flag("--progress", o->progress, "text: a `progress U` line per completed interval");
  return {sub,
          [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunSubscribe(*o, s);
          },
          History::Access::kRead};
}

}  // namespace tandem::ctl
