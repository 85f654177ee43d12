#include "workers/maintained_side.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/check.h"
#include "ipc/model.h"
#include "shm/publisher.h"
#include "workers/sources/index_import.h"
#include "workers/step_stats.h"

namespace tandem::workers {

namespace pb = ipc::pb;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {
// Work one lockstep iteration aims at: commands (and, in solo, peeks) wait at most about this long
// behind a step, plus whatever single tick cannot be split (spine merges are fueled:
// shm/publisher.h). Small steps are also faster overall than big ones (their updates stay in
// cache): measured with `tandem-bench ingest`.
constexpr std::chrono::microseconds kStepBudget = 5ms;
}  // namespace

std::unique_ptr<MaintainedSide> MaintainedSide::Open(const RuntimeOptions& options,
                                                     shm::Segment* segment, CommandLog* log,
                                                     LiveTables::Answer answer) {
  // Local readers' and tools' announcements (DESIGN §11), which this runtime's publishers
  // honour: without them a batch could be freed under a reader, so no table is no start. The
  // supervisor made it with the segment, for the same incarnation.
  auto table =
      options.reader_table_fd >= 0
          ? shm::ReaderTable::Inherit(options.reader_table_fd, segment->header().generation)
          : shm::ReaderTable::Open(options.segment);
  if (!table.ok()) {
    spdlog::critical("cannot open the reader table of {}: {}", options.segment,
                     table.status().ToString());
    return nullptr;
  }
  if ((*table)->generation() != segment->header().generation) {
    spdlog::critical("the reader table of {} is of generation {}, the segment of {}",
                     options.segment, (*table)->generation(), segment->header().generation);
    return nullptr;
  }
  return std::unique_ptr<MaintainedSide>(
      new MaintainedSide(options, segment, log, std::move(table).value(), std::move(answer)));
}

MaintainedSide::MaintainedSide(const RuntimeOptions& options, shm::Segment* segment,
                               CommandLog* log, std::unique_ptr<shm::ReaderTable> reader_table,
                               LiveTables::Answer answer)
    : options_(options),
      segment_(segment),
      log_(*log),
      reader_table_(std::move(reader_table)),
      exchange_(std::make_unique<Exchange>(options.workers)),
      start_barrier_(std::make_unique<std::barrier<Completion>>(
          options.workers, Completion{this, &MaintainedSide::StartCompletion})),
      tick_barrier_(std::make_unique<std::barrier<Completion>>(
          options.workers, Completion{this, &MaintainedSide::TickCompletion})),
      tables_(options.max_table_backlog_bytes, std::move(answer)) {
  for (std::uint32_t i = 0; i < options.workers; ++i)
    workers_.push_back(std::make_unique<Worker>());
}

MaintainedSide::~MaintainedSide() = default;

bool MaintainedSide::OpenTables() {
  return tables_.Open(options_.data_dir, [this] { log_.Poke(); });
}

void MaintainedSide::Attach(std::uint32_t me, Renderer::SendFrontier send) {
  auto p = shm::Publisher::Attach(segment_, me);
  if (!p.ok()) spdlog::critical("worker {}: {}", me, p.status().ToString());
  TANDEM_CHECK(p.ok(), "could not take the publishing side of this worker's registry row");
  (*p)->SetReaderTable(reader_table_.get());
  workers_[me]->renderer =
      std::make_unique<Renderer>(std::move(p).value(), me, exchange_.get(), std::move(send));
}

std::uint64_t MaintainedSide::Start() {
  TimedArriveAndWait(*start_barrier_);
  return horizon_.load();
}

void MaintainedSide::Apply(std::uint32_t me, std::uint64_t seq, const pb::Command& c) {
  Renderer& renderer = *workers_[me]->renderer;
  switch (c.kind_case()) {
    case pb::Command::kCreateDataflow:
      // A one-shot dataflow is the reading side's (interactive; solo's own): nothing here.
      if (c.create_dataflow().desc().class_() == pb::ONE_SHOT_READ) break;
      renderer.Create(seq, dataflows_.at(seq).get());
      break;
    case pb::Command::kAllowCompaction:
      renderer.AllowCompaction(c.allow_compaction().id(),
                               ipc::FrontierOf(c.allow_compaction().frontier()));
      break;
    default:
      break;
  }
}

void MaintainedSide::Step(std::uint32_t me) {
  TimedArriveAndWait(*tick_barrier_);
  Worker& w = *workers_[me];
  const auto step_start = Clock::now();
  const bool ticked = w.renderer->Step();
  w.step_work = Clock::now() - step_start;
  if (ticked) StepStats::RecordStep(w.step_work);  // a step of some dataflow, not an idle turn
}

void MaintainedSide::ReportFrontiers(std::uint32_t me) {
  workers_[me]->renderer->ReportFrontiers();
}

void MaintainedSide::StartCompletion() noexcept {
  // Dataflows dropped in the previous iteration: every worker has let go of them now.
  std::erase_if(dataflows_, [](const auto& entry) { return entry.second->AllExportsDropped(); });
  const std::uint64_t from = horizon_.load();
  const std::uint64_t to = log_.end();
  const auto now = Clock::now();
  for (const auto& [seq, entry] : log_.Read(from, to)) TakeInOrder(seq, *entry, now);
  horizon_ = to;
}

void MaintainedSide::TickCompletion() noexcept {
  const auto now = Clock::now();
  Clock::duration longest{};
  for (const auto& w : workers_) longest = std::max(longest, w->step_work);
  // Grow only after a step the budget held back: a short step with nothing to do (a command, a
  // poll) must not blow the budget up for the next busy one.
  const bool limited = std::any_of(dataflows_.begin(), dataflows_.end(),
                                   [](const auto& entry) { return entry.second->budget_limited; });
  if (longest > kStepBudget) {  // scale down to fit the budget at once
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(longest).count();
    step_ticks_ = std::max<Time>(1, step_ticks_ * kStepBudget.count() / us);
  } else if (longest < kStepBudget / 2 && limited) {
    step_ticks_ = std::min<Time>(kMaxStepTicks, step_ticks_ * 2);
  }
  next_wake_ = now + 1s;
  for (auto& [seq, s] : dataflows_)
    next_wake_ = std::min(next_wake_, s->Prepare(options_.workers, step_ticks_, now));
}

void MaintainedSide::TakeInOrder(std::uint64_t seq, const pb::Command& c, Clock::time_point now) {
  if (c.has_create_dataflow() && c.create_dataflow().desc().class_() == pb::MAINTAINED) {
    Build(seq, c.create_dataflow().desc(), now);
  } else if (ipc::IsDrop(c)) {
    Drop(c.allow_compaction().id());
  } else if (c.has_write_table()) {
    tables_.Route(c.write_table());
  }
}

void MaintainedSide::Build(std::uint64_t seq, const pb::DataflowDescription& desc,
                           Clock::time_point now) {
  auto s = std::make_unique<DataflowShared>();
  s->desc = desc;
  s->as_of = s->desc.as_of().elements(0);
  s->until = ipc::FrontierOf(s->desc.until());
  for (const auto& si : s->desc.source_imports()) {
    s->sources.push_back(MakeSource(si, now, tables_.writer(), options_.workers));
    if (auto* t = dynamic_cast<TableSource*>(s->sources.back().get()))
      tables_.Add(si.id(), t, s.get());
  }
  // An import's progress is the imported index's upper over every worker's part (read in the
  // tick barrier's completion, while every worker waits).
  for (const auto& ii : s->desc.index_imports()) {
    s->sources.push_back(std::make_unique<ImportSource>(
        ii,
        [this, id = ii.id()] {
          Frontier upper = Frontier::Empty();
          for (const auto& w : workers_) upper = Min(upper, w->renderer->ExportUpper(id));
          return upper;
        },
        now));
  }
  dataflows_[seq] = std::move(s);
}

void MaintainedSide::Drop(const std::string& id) {
  for (auto& [q, s] : dataflows_) {
    const bool was_dropped = s->AllExportsDropped();
    for (const auto& e : s->desc.index_exports()) {
      if (e.id() == id) s->dropped_exports.insert(e.id());
    }
    if (was_dropped || !s->AllExportsDropped()) continue;
    for (const auto& source : s->sources) {
      source->OnDropped();
      tables_.Remove(*source);
    }
  }
}

}  // namespace tandem::workers
