#include "workers/command_log.h"

#include "base/check.h"

namespace tandem::workers {

void CommandLog::Append(Entry command, std::uint64_t trim_below) {
  {
    MutexLock lock(mu_);
    entries_.push_back(std::move(command));
    while (entries_.size() > 1 && base_ < trim_below) {
      entries_.pop_front();
      ++base_;
    }
  }
  cv_.NotifyAll();
}

std::uint64_t CommandLog::end() const {
  MutexLock lock(mu_);
  return base_ + entries_.size();
}

CommandLog::Numbered CommandLog::Read(std::uint64_t from, std::uint64_t to) const {
  MutexLock lock(mu_);
  const std::uint64_t end = base_ + entries_.size();
  if (to == kToEnd) to = end;
  TANDEM_CHECK(from >= base_ && to <= end,
               "a worker read a part of the command log it does not hold");
  Numbered out;
  out.reserve(to - std::min(to, from));
  for (std::uint64_t seq = from; seq < to; ++seq) out.emplace_back(seq, entries_[seq - base_]);
  return out;
}

void CommandLog::WaitFor(std::uint64_t seq, std::chrono::steady_clock::time_point deadline,
                         const std::atomic<bool>& stop, std::uint64_t pokes_seen) const {
  MutexLock lock(mu_);
  while (base_ + entries_.size() <= seq && !stop.load() && pokes_ <= pokes_seen) {
    if (!cv_.WaitUntil(mu_, deadline)) return;
  }
}

void CommandLog::WakeAll() {
  // Under the lock, so that a waiter between its check of `stop` and its wait cannot miss it.
  MutexLock lock(mu_);
  cv_.NotifyAll();
}

void CommandLog::Poke() {
  {
    MutexLock lock(mu_);
    ++pokes_;
  }
  cv_.NotifyAll();
}

std::uint64_t CommandLog::pokes() const {
  MutexLock lock(mu_);
  return pokes_;
}

}  // namespace tandem::workers
