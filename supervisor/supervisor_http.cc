// The Supervisor's internal HTTP endpoint: /livez, /readyz and /metrics — the series declared at
// construction, and those copied at each scrape (the segment, the peek rings, the workers' step
// statistics, the multiplexer's subscribes, the HTTP server's own counts). The server itself is
// http_server.h; the counters are increased where things happen (the endpoint, the links).
#include <algorithm>
#include <cmath>

#include "shm/layout.h"
#include "shm/reader.h"
#include "supervisor/metric_names.h"
#include "supervisor/supervisor.h"

namespace tandem::supervisor {

using namespace metric;  // NOLINT(google-build-using-namespace): the metric names read as words

namespace {
// At most this many tandem_index_hold_gap series (the largest gaps): bounded however many
// indexes live (--slots-per-row allows 256 by default).
constexpr std::size_t kHoldGapSeries = 32;
// At most this many tandem_subscribe_lag series (the largest lags).
constexpr std::size_t kSubscribeLagSeries = 20;
}  // namespace

void Supervisor::DeclareMetrics() {
  using T = Metrics::Type;
  metrics_.Declare(kCommands, T::kCounter,
                   "controller commands by type and result (forwarded or refused)");
  metrics_.Declare(kRefused, T::kCounter, "refused controller commands by reason");
  metrics_.Declare(kMalformed, T::kCounter, "undecodable controller messages by reason");
  metrics_.Declare(kResponses, T::kCounter, "responses forwarded to the controller, by type");
  metrics_.Declare(kDropped, T::kCounter, "responses not forwarded, by reason");
  metrics_.Declare(kPeekLatency, T::kHistogram,
                   "time from forwarding a peek to its response, in seconds",
                   {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1, 2.5, 5, 10});
  metrics_.Declare(kRuntimeUp, T::kGauge,
                   "1 while the runtime process runs and has reported ready");
  metrics_.Declare(kSegmentBytes, T::kGauge, "shared-memory segment bytes (total, used, free)");
  metrics_.Declare(kStalled, T::kGauge,
                   "index parts (one per worker) whose updates wait for room in the segment");
  metrics_.Declare(kLoopTurns, T::kCounter, "turns of the supervisor loop");
  metrics_.Declare(kControllerEvents, T::kCounter,
                   "sessions: hello, superseded, observer_hello, goodbye, disconnected");
  metrics_.Declare(kObservers, T::kGauge, "observer sessions open now");
  metrics_.Declare(kLocalReaders, T::kGauge,
                   "local readers (LocalReader) attached now, by their reader-table entries");
  metrics_.Set(kLocalReaders, {}, 0);
  metrics_.Declare(kLocalReadersCleared, T::kCounter,
                   "reader-table entries of local readers that died, cleared by the supervisor");
  metrics_.Declare(kReaderTableRepairs, T::kCounter,
                   "reader-table headers put back after a process that may write the table (the "
                   "replica's user, the --reader-group) overwrote them");
  metrics_.Set(kObservers, {}, 0);
  metrics_.Declare(kPeekRingRecords, T::kCounter,
                   "records offered to the peek fast path's rings (DESIGN §14), by ring (requests: "
                   "Peek and CancelPeek to the runtime; answers: PeekResponses back) and result "
                   "(pushed; full: no room then, sent on the runtime channel instead; too_large: "
                   "over a quarter of the ring, sent on the channel)");
  std::vector<double> step_buckets;
  for (std::size_t i = 0; i + 1 < shm::kStepBuckets; ++i) {
    step_buckets.push_back(std::ldexp(1.0, shm::kStepBucketMinLog2 + static_cast<int>(i)));
  }
  metrics_.Declare(kStepSeconds, T::kHistogram,
                   "wall time of one lockstep step of every dataflow (exchange barriers "
                   "included), by role (maintenance, solo) and worker, in seconds",
                   std::move(step_buckets));
  metrics_.Declare(kWorkerBusy, T::kCounter,
                   "time a lockstep worker spent working (applying commands, stepping, serving "
                   "solo's peeks), barrier waits excluded, by role and worker, in seconds");
  metrics_.Declare(kWorkerWaiting, T::kCounter,
                   "time a lockstep worker spent waiting for the other workers at barriers "
                   "(iteration start, tick, exchanges), by role and worker, in seconds");
  metrics_.Declare(kReady, T::kGauge, "1 when /readyz answers 200");
  metrics_.Declare(kReconciled, T::kCounter,
                   "dataflows after a reconnect, by runtime and outcome (kept, dropped, built)");
  metrics_.Declare(kRuntimeStalled, T::kGauge,
                   "1 while the runtime has made no progress for --runtime-stall-timeout");
  metrics_.Declare(kRuntimeStalls, T::kCounter,
                   "times the runtime was found stalled (no progress for --runtime-stall-timeout)");
  metrics_.Declare(kPeeksInFlight, T::kGauge, "peeks forwarded and not yet answered");
  metrics_.Declare(kHttpConnections, T::kCounter,
                   "internal HTTP connections by outcome (accepted; evicted, the oldest one closed "
                   "beyond --http-max-connections; timed_out; bad; answered)");
  metrics_.Declare(kHttpOpen, T::kGauge, "internal HTTP connections open now");
  metrics_.Declare(kOneShotsBuilt, T::kCounter,
                   "one-shot (ONE_SHOT_READ) dataflows the controller built (forwarded creates; a "
                   "replay of one already running is not counted again)");
  metrics_.Inc(kOneShotsBuilt, {}, 0);
  metrics_.Declare(kOneShotsRunning, T::kGauge,
                   "one-shot dataflows built and not yet dropped (AllowCompaction(empty) of "
                   "their exports)");
  metrics_.Set(kOneShotsRunning, {}, 0);
  metrics_.Declare(
      kOneShotLatency, T::kHistogram,
      "time from forwarding a one-shot CreateDataflow to the Frontiers response that "
      "reports the last of its exports computed (write past its as_of), in seconds",
      {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30});
  metrics_.Declare(kHoldGap, T::kGauge,
                   "how far the slowest hold of an index (peer, import, reader holds) is behind "
                   "the controller's frontier, in timestamp units: the most, over worker "
                   "ordinals, of own frontier - since; the " +
                       std::to_string(kHoldGapSeries) + " largest");
  metrics_.Declare(
      kWrites, T::kCounter,
      "table writes (WriteTable) by result: ok (acknowledged durable), error (answered "
      "not applied), refused (CommandError from the supervisor)");
  for (const char* result : {"ok", "error", "refused"})
    metrics_.Inc(kWrites, {{"result", result}}, 0);
  metrics_.Declare(kWriteSeconds, T::kHistogram,
                   "time from forwarding a write to its WriteResponse, in seconds",
                   {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1, 2.5, 5, 10});
  metrics_.Declare(kWritesInFlight, T::kGauge, "writes forwarded and not yet answered");
  metrics_.Declare(kSubscribes, T::kGauge, "live subscribes (DESIGN §10), of every session");
  metrics_.Set(kSubscribes, {}, 0);
  metrics_.Declare(kSubscribeBatches, T::kCounter, "SubscribeBatch answers sent to sessions");
  metrics_.Inc(kSubscribeBatches, {}, 0);
  metrics_.Declare(kSubscribeRows, T::kCounter,
                   "subscribe updates (one row's change at one time) sent to sessions");
  metrics_.Inc(kSubscribeRows, {}, 0);
  metrics_.Declare(
      kSubscribeEnds, T::kCounter,
      "subscribes ended, by reason (up_to, canceled, dropped, error, too_slow, closed, "
      "session_ended: the controller's new epoch, or an observer's session ended)");
  for (const char* reason :
       {"up_to", "canceled", "dropped", "error", "too_slow", "closed", "session_ended"}) {
    metrics_.Inc(kSubscribeEnds, {{"reason", reason}}, 0);
  }
  metrics_.Declare(kSubscribeLag, T::kGauge,
                   "how far a live subscribe is behind its index: the index's write frontier - the "
                   "upper delivered to the subscriber, in timestamp units, by wire uuid; the " +
                       std::to_string(kSubscribeLagSeries) + " largest");
  metrics_.Declare(kSubscribeLagMax, T::kGauge,
                   "the largest lag of any live subscribe (tandem_subscribe_lag)");
  metrics_.Set(kSubscribeLagMax, {}, 0);
  metrics_.Declare(kHoldGapMax, T::kGauge,
                   "the largest hold gap of any index (tandem_index_hold_gap), in timestamp units");
}

void Supervisor::SetSubscribeMetrics() {
  metrics_.Set(kSubscribes, {}, static_cast<double>(mux_.live_subscribes()));
  for (const auto& [reason, n] : mux_.subscribe_ends()) {
    metrics_.Inc(kSubscribeEnds, {{"reason", reason}},
                 static_cast<double>(n) - metrics_.Value(kSubscribeEnds, {{"reason", reason}}));
  }
  std::vector<std::pair<std::uint64_t, std::string>> lags;
  const std::map<std::string, ipc::pb::Frontiers>& latest = endpoint_.frontiers().latest();
  for (const Multiplexer::SubscribeInfo& s : mux_.LiveSubscribes()) {
    std::uint64_t lag = 0;
    if (auto it = latest.find(s.id); it != latest.end() && !it->second.write().elements().empty()) {
      const std::uint64_t write = it->second.write().elements(0);
      lag = write > s.delivered ? write - s.delivered : 0;
    }
    lags.emplace_back(lag, s.wire_uuid);
  }
  std::sort(lags.begin(), lags.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  metrics_.Clear(kSubscribeLag);  // an ended subscribe's series goes with it
  for (std::size_t i = 0; i < lags.size() && i < kSubscribeLagSeries; ++i) {
    metrics_.Set(kSubscribeLag, {{"uuid", lags[i].second}}, static_cast<double>(lags[i].first));
  }
  metrics_.Set(kSubscribeLagMax, {}, lags.empty() ? 0 : static_cast<double>(lags.front().first));
}

void Supervisor::SetHoldGaps(const std::vector<shm::SlotInfo>& slots) {
  Time max_gap = 0;
  const std::vector<HoldGap> gaps = HoldGaps(slots, kHoldGapSeries, &max_gap);
  metrics_.Clear(kHoldGap);  // a dropped index's series goes with it
  for (const HoldGap& g : gaps) metrics_.Set(kHoldGap, {{"id", g.id}}, static_cast<double>(g.gap));
  metrics_.Set(kHoldGapMax, {}, static_cast<double>(max_gap));
}

void Supervisor::SetPeekRingMetrics() {
  const RuntimeLink* link = PeekServingRuntime();
  if (!link) return;
  const shm::PeekRingsData& rings = link->peek_path()->rings();
  for (const auto& [name, ring] :
       {std::pair<const char*, const shm::PeekRingData*>{"requests", &rings.requests},
        {"answers", &rings.answers}}) {
    metrics_.SetCounter(kPeekRingRecords, {{"ring", name}, {"result", "pushed"}},
                        static_cast<double>(ring->pushed.load(std::memory_order_relaxed)));
    metrics_.SetCounter(kPeekRingRecords, {{"ring", name}, {"result", "full"}},
                        static_cast<double>(ring->full.load(std::memory_order_relaxed)));
    metrics_.SetCounter(kPeekRingRecords, {{"ring", name}, {"result", "too_large"}},
                        static_cast<double>(ring->too_large.load(std::memory_order_relaxed)));
  }
}

void Supervisor::SetStepMetrics() {
  if (!segment_) return;
  const std::string role =
      RoleName(segment_->mode() == shm::Mode::kSolo ? Role::kSolo : Role::kMaintenance);
  std::vector<std::uint64_t> counts(shm::kStepBuckets);
  for (std::uint32_t i = 0; i < segment_->workers(); ++i) {
    const shm::StepStatsData* s = segment_->step_stats(i);
    if (!s) return;
    const Labels labels = {{"role", role}, {"worker", std::to_string(i)}};
    for (std::size_t b = 0; b < counts.size(); ++b) {
      counts[b] = s->step_buckets[b].load(std::memory_order_relaxed);
    }
    auto seconds = [](const std::atomic<std::uint64_t>& ns) {
      return static_cast<double>(ns.load(std::memory_order_relaxed)) / 1e9;
    };
    metrics_.SetHistogram(kStepSeconds, labels, counts, seconds(s->step_ns));
    metrics_.SetCounter(kWorkerBusy, labels, seconds(s->busy_ns));
    metrics_.SetCounter(kWorkerWaiting, labels, seconds(s->waiting_ns));
  }
}

HttpResponse Supervisor::ServeHttp(const std::string& path) {
  if (path == "/livez") return {200, "text/plain", "ok\n"};
  if (path == "/readyz") {
    if (Ready()) return {200, "text/plain", "ready\n"};
    std::string why = "not ready:";
    if (!segment_) why += " no segment;";
    if (!bound_) why += " endpoint not bound;";
    for (const auto& [id, link] : links_) {
      if (!link.ready()) why += std::string(" ") + RoleName(id) + " runtime not ready;";
      if (link.ready() && link.stalled()) {
        why +=
            std::string(" ") + RoleName(id) + " runtime (pid " + std::to_string(link.pid()) +
            ") stalled: no progress for " +
            SecondsText(std::chrono::duration<double>(Clock::now() - link.progress_at()).count()) +
            " s;";
      }
    }
    return {503, "text/plain", why + "\n"};
  }
  if (path == "/metrics") {
    for (const auto& [id, link] : links_) {
      metrics_.Set(kRuntimeUp, {{"role", RoleName(id)}},
                   link.ready() && children_.live().count(link.pid()) ? 1 : 0);
    }
    if (segment_) {
      metrics_.Set(kSegmentBytes, {{"kind", "total"}}, static_cast<double>(segment_->size_bytes()));
      metrics_.Set(kSegmentBytes, {{"kind", "used"}}, static_cast<double>(segment_->used_bytes()));
      metrics_.Set(kSegmentBytes, {{"kind", "free"}}, static_cast<double>(segment_->free_bytes()));
      const auto slots = shm::Inspector(segment_.get()).Slots();
      metrics_.Set(kStalled, {},
                   static_cast<double>(std::count_if(slots.begin(), slots.end(), [](const auto& s) {
                     return (s.flags & shm::kSlotStalled) != 0;
                   })));
      SetHoldGaps(slots);
    }
    SetPeekRingMetrics();
    SetStepMetrics();
    metrics_.Set(kReady, {}, Ready() ? 1 : 0);
    metrics_.Set(kPeeksInFlight, {}, static_cast<double>(mux_.outstanding_peeks()));
    metrics_.Set(kWritesInFlight, {}, static_cast<double>(mux_.outstanding_writes()));
    SetSubscribeMetrics();
    metrics_.Set(kHttpOpen, {}, static_cast<double>(http_->open_connections()));
    const HttpServer::Counts& hc = http_->counts();
    for (const auto& [outcome, n] : {std::pair<const char*, std::uint64_t>{"accepted", hc.accepted},
                                     {"evicted", hc.evicted},
                                     {"timed_out", hc.timed_out},
                                     {"bad", hc.bad},
                                     {"answered", hc.answered}}) {
      metrics_.Inc(
          kHttpConnections, {{"outcome", outcome}},
          static_cast<double>(n) - metrics_.Value(kHttpConnections, {{"outcome", outcome}}));
    }
    return {200, "text/plain; version=0.0.4; charset=utf-8", metrics_.Render()};
  }
  return {404, "text/plain", "not found: try /livez, /readyz or /metrics\n"};
}

}  // namespace tandem::supervisor
