// tandem-shm-torture: one side of the multi-process shared-memory test.
//
//   tandem-shm-torture publish --segment NAME --seconds S [--seed X]
//   tandem-shm-torture read    --segment NAME --seconds S [--seed X]
//   tandem-shm-torture inspect --segment NAME --seconds S [--seed X]
//
// The segment (created by the test, which plays the supervisor) has R rows; each side runs one
// thread per row. Row r holds one arrangement whose contents at every time are a pure function
// of (r, key, time), so the reader checks every answer without talking to the publisher:
//   key k (0 <= k < kKeys) changes value at every multiple of its period 1 + k % 7; its value at
//   time t is Value(r, k, t - t % period). The publisher retracts the old value and inserts the new
//   one at each change, advances upper one tick at a time, and compacts continuously; the reader
//   snapshots, reads at random readable times (scans and point lookups), and raises its hold.
//   The inspector is a tool (tandem-shm's way in: Inspector, announcing in the reader table)
//   reading the same way at random times in [since, upper) of its snapshots; tests kill it
//   mid-read. When it stops, the publisher waits (bounded) for every retired allocation to be
//   freed: once the readers are gone and the test (the supervisor) swept the table, nothing may
//   stay pinned, whatever tools died holding an entry.
// Exit 0 when every answer was right, 1 on the first wrong one (with the details), 2 on misuse.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/row.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "shm/reader_table.h"
#include "shm/segment.h"

namespace tandem::shm {
namespace {

constexpr std::int64_t kKeys = 500;
const GlobalId kId = GlobalId::User(7);

std::int64_t Period(std::int64_t k) { return 1 + k % 7; }
Time ChangedAt(std::int64_t k, Time t) { return t - t % static_cast<Time>(Period(k)); }
std::int64_t Mix(std::uint64_t row, std::int64_t k, Time t) {
  std::uint64_t x =
      row * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(k) * 0xBF58476D1CE4E5B9ULL ^ t;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBULL;
  return static_cast<std::int64_t>(x ^ (x >> 29));
}
std::string KeyBytes(std::int64_t k) { return EncodeRow({k}); }
std::string ValueBytes(std::uint64_t row, std::int64_t k, Time t) {
  const std::int64_t v = Mix(row, k, ChangedAt(k, t));
  return EncodeRow({v, std::string(static_cast<std::size_t>(v & 7), 'v')});
}

struct Args {
  std::string mode, segment;
  double seconds = 5;
  std::uint64_t seed = 1;
};

std::atomic<bool> g_failed{false};
// The segment's reader table (the test made it, playing the supervisor): publishers honour its
// announcements, inspectors announce there.
ReaderTable* g_table = nullptr;

void Fail(const std::string& what) {
  if (!g_failed.exchange(true)) std::fprintf(stderr, "torture: %s\n", what.c_str());
}

void Publish(Segment* seg, std::uint32_t row, const Args& args) {
  auto pub = Publisher::Attach(seg, row);
  if (!pub.ok()) return Fail(pub.status().ToString());
  (*pub)->SetReaderTable(g_table);
  auto ref = (*pub)->BindSlot({kId, 0});
  if (!ref.ok()) return Fail(ref.status().ToString());
  std::mt19937_64 rng(args.seed * 131 + row);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(args.seconds);
  std::uint64_t updates = 0;
  for (Time t = 0; std::chrono::steady_clock::now() < deadline && !g_failed; ++t) {
    std::vector<Update> ups;
    for (std::int64_t k = 0; k < kKeys; ++k) {
      if (t % static_cast<Time>(Period(k)) != 0) continue;
      if (t > 0) ups.push_back({KeyBytes(k), ValueBytes(row, k, t - 1), t, -1});
      ups.push_back({KeyBytes(k), ValueBytes(row, k, t), t, +1});
    }
    updates += ups.size();
    if (Status s = (*pub)->Append(*ref, std::move(ups), Frontier::At(t + 1)); !s.ok()) {
      return Fail("append: " + s.ToString());
    }
    if (t > 8 && rng() % 4 == 0) {
      (void)(*pub)->AllowCompaction(*ref, Frontier::At(t - rng() % 8));
    }
    (*pub)->Maintain();
  }
  // The readers stop too; then nothing may stay pinned (a dead tool's entry, once the test's sweep
  // cleared it, pins nothing).
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for ((*pub)->Maintain(); (*pub)->stats().retired_pending != 0 && !g_failed; (*pub)->Maintain()) {
    if (std::chrono::steady_clock::now() > drain_deadline) {
      return Fail("publisher row " + std::to_string(row) + ": " +
                  std::to_string((*pub)->stats().retired_pending) +
                  " retired allocations still pinned 10 s after publishing stopped");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("publisher row %u: %llu updates, %llu merges, %llu freed\n", row,
              static_cast<unsigned long long>(updates),
              static_cast<unsigned long long>((*pub)->stats().merges),
              static_cast<unsigned long long>((*pub)->stats().freed));
}

void Read(Segment* seg, std::uint32_t row, const Args& args) {
  auto reader = Reader::Attach(seg, row);
  if (!reader.ok()) return Fail(reader.status().ToString());
  auto ref = (*reader)->Follow({kId, 0});
  if (!ref.ok()) return Fail(ref.status().ToString());
  std::mt19937_64 rng(args.seed * 977 + row);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(args.seconds);
  std::uint64_t reads = 0, checked = 0;
  std::vector<ValueCount> vals;
  while (std::chrono::steady_clock::now() < deadline && !g_failed) {
    WakeDrain drain;
    (*reader)->Wait(&drain, std::chrono::milliseconds(50));
    auto snap = (*reader)->Take(*ref);
    if (!snap.ok()) return Fail(snap.status().ToString());
    if (!snap->filled() || snap->upper() == Frontier::Minimum()) continue;
    const Time upper = snap->upper().time();
    const Time hold = (*reader)->hold(*ref).time();
    if (upper <= hold) continue;
    const Time t = hold + rng() % (upper - hold);
    if (Status s = snap->CheckReadable(t); !s.ok()) {
      return Fail("read at " + std::to_string(t) + " (hold " + std::to_string(hold) +
                  ") refused: " + s.ToString());
    }
    ++reads;
    if (rng() % 4 == 0) {  // a full scan
      std::int64_t next_key = 0;
      Status s = snap->Scan(t, [&](std::string_view k, std::string_view v, std::int64_t n) {
        const std::string want_k = KeyBytes(next_key);
        if (k != want_k || v != ValueBytes(row, next_key, t) || n != 1) {
          Fail("scan row " + std::to_string(row) + " t " + std::to_string(t) + ": key " +
               std::to_string(next_key) + " wrong");
          return false;
        }
        ++next_key;
        ++checked;
        return true;
      });
      if (!s.ok()) return Fail(s.ToString());
      if (!g_failed && next_key != kKeys) {
        return Fail("scan at " + std::to_string(t) + " saw " + std::to_string(next_key) + " keys");
      }
    } else {  // point lookups
      for (int i = 0; i < 16 && !g_failed; ++i) {
        const auto k = static_cast<std::int64_t>(rng() % kKeys);
        if (Status s = snap->Lookup(KeyBytes(k), t, &vals); !s.ok()) return Fail(s.ToString());
        if (vals.size() != 1 || vals[0].val != ValueBytes(row, k, t) || vals[0].count != 1) {
          return Fail("lookup row " + std::to_string(row) + " key " + std::to_string(k) + " at " +
                      std::to_string(t) + ": " + std::to_string(vals.size()) + " values, wrong");
        }
        ++checked;
      }
    }
    // Raise the hold now and then (holds only rise), letting the publisher compact behind us.
    if (rng() % 3 == 0) (void)(*reader)->AdvanceHold(*ref, Frontier::At(t));
  }
  std::printf("reader row %u: %llu reads, %llu rows checked\n", row,
              static_cast<unsigned long long>(reads), static_cast<unsigned long long>(checked));
  if (reads == 0) Fail("reader row " + std::to_string(row) + " never read");
}

// Checks `snap` at t: a full scan, or point lookups. "" when right, else what was wrong.
std::string Check(const Snapshot& snap, std::uint32_t row, Time t, std::mt19937_64& rng) {
  const std::string at = "row " + std::to_string(row) + " t " + std::to_string(t) + ": ";
  if (Status s = snap.CheckReadable(t); !s.ok()) return at + s.ToString();
  if (rng() % 4 == 0) {
    std::int64_t next_key = 0;
    std::string wrong;
    Status s = snap.Scan(t, [&](std::string_view k, std::string_view v, std::int64_t n) {
      if (k != KeyBytes(next_key) || v != ValueBytes(row, next_key, t) || n != 1) {
        wrong = at + "scan wrong at key " + std::to_string(next_key);
        return false;
      }
      ++next_key;
      return true;
    });
    if (!s.ok()) return at + s.ToString();
    if (!wrong.empty()) return wrong;
    if (next_key != kKeys) return at + "scan saw " + std::to_string(next_key) + " keys";
    return "";
  }
  std::vector<ValueCount> vals;
  for (int i = 0; i < 16; ++i) {
    const auto k = static_cast<std::int64_t>(rng() % kKeys);
    if (Status s = snap.Lookup(KeyBytes(k), t, &vals); !s.ok()) return at + s.ToString();
    if (vals.size() != 1 || vals[0].val != ValueBytes(row, k, t) || vals[0].count != 1) {
      return at + "lookup of key " + std::to_string(k) + " wrong";
    }
  }
  return "";
}

void Inspect(Segment* seg, std::uint32_t row, const Args& args) {
  Inspector inspector(seg, g_table);
  std::mt19937_64 rng(args.seed * 7919 + row);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(args.seconds);
  std::uint64_t reads = 0;
  while (std::chrono::steady_clock::now() < deadline && !g_failed) {
    for (const SlotInfo& info : inspector.Slots()) {
      if (info.ordinal != row || !(info.flags & kSlotFilled)) continue;
      auto snap = inspector.Take(info.ordinal, info.index);
      if (!snap.ok()) {
        if (snap.status().code() == StatusCode::kUnavailable) continue;  // changed meanwhile
        return Fail("inspect: " + snap.status().ToString());
      }
      if (snap->since().empty() || snap->upper().empty() || snap->upper() <= snap->since()) {
        continue;
      }
      const Time since = snap->since().time();
      const Time t = since + rng() % (snap->upper().time() - since);
      if (std::string wrong = Check(*snap, row, t, rng); !wrong.empty()) {
        return Fail("inspect " + wrong);
      }
      ++reads;
    }
  }
  std::printf("inspector row %u: %llu reads\n", row, static_cast<unsigned long long>(reads));
  if (reads == 0 && !g_failed) Fail("inspector row " + std::to_string(row) + " never read");
}

int Main(int argc, char** argv) {
  Args args;
  if (argc < 2) return 2;
  args.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--segment")
      args.segment = argv[i + 1];
    else if (flag == "--seconds")
      args.seconds = std::stod(argv[i + 1]);
    else if (flag == "--seed")
      args.seed = std::stoull(argv[i + 1]);
    else
      return 2;
  }
  if (args.segment.empty() ||
      (args.mode != "publish" && args.mode != "read" && args.mode != "inspect")) {
    return 2;
  }
  auto seg = Segment::Open(args.segment);
  if (!seg.ok()) {
    std::fprintf(stderr, "torture: %s\n", seg.status().ToString().c_str());
    return 1;
  }
  auto table = ReaderTable::Open(args.segment);
  if (!table.ok()) {
    std::fprintf(stderr, "torture: %s\n", table.status().ToString().c_str());
    return 1;
  }
  g_table = table->get();
  std::vector<std::thread> threads;
  for (std::uint32_t row = 0; row < (*seg)->workers(); ++row) {
    threads.emplace_back(args.mode == "publish" ? Publish
                         : args.mode == "read"  ? Read
                                                : Inspect,
                         seg->get(), row, args);
  }
  for (auto& t : threads) t.join();
  return g_failed ? 1 : 0;
}

}  // namespace
}  // namespace tandem::shm

int main(int argc, char** argv) { return tandem::shm::Main(argc, argv); }
