// Microbenchmarks of the shared-memory layer (tandem_shm): batch build and merge throughput,
// point lookups and full scans over a published index, and the cost of taking a snapshot while
// a publisher in another process appends.
//
// Run: build/<dir>/bin/tandem-shm-bench [--benchmark_min_time=0.2] [--benchmark_filter=...]
//
// Ground rules this file keeps:
//  * Every segment is "tandem.bench.<pid>.<n>" and is removed on every path: by its owner's
//    destructor (ScopedSegmentRemover) on a normal run, by Fatal() on a setup error, and by the
//    signal handler on a crash or ^C. The forked publisher child is killed and reaped on the same
//    paths, and dies with its parent (PR_SET_PDEATHSIG).
//  * Publisher and Reader are used only by the thread that attached them. Google Benchmark runs
//    single-threaded benchmarks on the main thread, so the fixtures live in main-thread-owned
//    globals, are created lazily inside benchmark functions (untimed, before the loop) and are
//    destroyed by main after the run (checked by RequireMainThread).
//  * Large fixtures are built once and reused by consecutive benchmarks; benchmarks are
//    registered in main (not with BENCHMARK) so that every benchmark of one index size runs
//    back to back and the 10^7-key index is built only once.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/row.h"
#include "base/time.h"
#include "shm/batch.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "shm/segment.h"

namespace {

using tandem::Datum;
using tandem::Frontier;
using tandem::GlobalId;
using tandem::Row;
using tandem::Time;
using tandem::shm::BatchView;
using tandem::shm::FollowedRef;
using tandem::shm::Mode;
using tandem::shm::PublishedRef;
using tandem::shm::Publisher;
using tandem::shm::Reader;
using tandem::shm::ScopedSegmentRemover;
using tandem::shm::Segment;
using tandem::shm::SegmentOptions;
using tandem::shm::SlotKey;
using tandem::shm::Snapshot;
using tandem::shm::Update;
using tandem::shm::ValueCount;

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::size_t kPayloadChars = 16;    // the string datum of every value
constexpr std::size_t kEncodedKeyBytes = 9;  // EncodeRow({int64}): tag + 8 bytes

// ---------------------------------------------------------------------------------------------
// Emergency cleanup: segment names and the child pid, reachable from a signal handler.

constexpr int kMaxSegments = 8;
struct CleanupTable {
  char paths[kMaxSegments][128];  // "/dev/shm/<name>"
  volatile sig_atomic_t used[kMaxSegments];
};
CleanupTable g_cleanup{};
volatile sig_atomic_t g_child_pid = 0;

// Async-signal-safe: kill, waitpid, unlink only.
void EmergencyCleanup() {
  if (const pid_t child = g_child_pid; child > 0) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    g_child_pid = 0;
  }
  for (int i = 0; i < kMaxSegments; ++i) {
    if (g_cleanup.used[i]) {
      unlink(g_cleanup.paths[i]);
      g_cleanup.used[i] = 0;
    }
  }
}

constexpr int kFatalSignals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGABRT,
                                 SIGSEGV, SIGBUS,  SIGFPE, SIGILL};

extern "C" void OnFatalSignal(int sig) {
  EmergencyCleanup();
  signal(sig, SIG_DFL);
  raise(sig);  // delivered with the default action once the handler returns
}

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnFatalSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) sigaction(sig, &sa, nullptr);
}

void ResetSignalHandlers() {
  for (int sig : kFatalSignals) signal(sig, SIG_DFL);
}

[[noreturn]] void Fatal(const std::string& what) {
  std::fprintf(stderr, "tandem-shm-bench: fatal: %s\n", what.c_str());
  std::fflush(stderr);
  EmergencyCleanup();
  std::_Exit(1);
}

template <typename T>
T Must(tandem::Result<T> result, const char* what) {
  if (!result.ok()) Fatal(std::string(what) + ": " + result.status().ToString());
  return std::move(result).value();
}
void Must(const tandem::Status& status, const char* what) {
  if (!status.ok()) Fatal(std::string(what) + ": " + status.ToString());
}

std::thread::id g_main_thread;
void RequireMainThread() {
  if (std::this_thread::get_id() != g_main_thread) {
    Fatal("a benchmark ran off the main thread; Publisher/Reader fixtures would abort");
  }
}

// A uniquely named segment, removed (and unregistered from the emergency table) on destruction.
class BenchSegment {
 public:
  BenchSegment(std::uint64_t bytes, const char* what) : reg_(NextName()), remover_(reg_.name) {
    SegmentOptions o;
    o.name = reg_.name;
    o.replica_id = "bench";
    o.size_bytes = bytes;
    o.workers = 1;
    o.mode = Mode::kTwoRuntime;
    o.slots_per_row = 16;
    segment_ = Must(Segment::Create(o), what);
  }
  Segment& segment() { return *segment_; }
  const std::string& name() const { return reg_.name; }

 private:
  struct Registration {
    explicit Registration(std::string n) : name(std::move(n)) {
      for (int i = 0; i < kMaxSegments; ++i) {
        if (!g_cleanup.used[i]) {
          std::snprintf(g_cleanup.paths[i], sizeof g_cleanup.paths[i], "%s",
                        Segment::PathOf(name).c_str());
          g_cleanup.used[i] = 1;
          index = i;
          return;
        }
      }
      Fatal("too many live benchmark segments");
    }
    ~Registration() { g_cleanup.used[index] = 0; }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    std::string name;
    int index = -1;
  };
  static std::string NextName() {
    static int counter = 0;
    return "tandem.bench." + std::to_string(getpid()) + "." + std::to_string(counter++);
  }

  // Destroyed in reverse: unmap, then unlink, then forget the name.
  Registration reg_;
  ScopedSegmentRemover remover_;
  std::unique_ptr<Segment> segment_;
};

// ---------------------------------------------------------------------------------------------
// Data.

std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string Payload(std::uint64_t seed) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s(kPayloadChars, 'x');
  std::uint64_t bits = SplitMix64(seed);
  for (std::size_t i = 0; i < kPayloadChars; ++i) {
    if (i % 8 == 0) bits = SplitMix64(bits + i);
    s[i] = kAlphabet[(bits >> (8 * (i % 8))) % (sizeof kAlphabet - 1)];
  }
  return s;
}

std::string EncodeKey(std::int64_t k) { return tandem::EncodeRow(Row{Datum{k}}); }
std::string EncodeVal(std::int64_t v, std::uint64_t payload_seed) {
  return tandem::EncodeRow(Row{Datum{v}, Datum{Payload(payload_seed)}});
}

// N updates with random keys and values, times in [0, 16), diff +1.
std::vector<Update> RandomUpdates(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Update> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::int64_t>(rng() >> 24);
    const auto v = static_cast<std::int64_t>(rng() >> 24);
    out.push_back(Update{EncodeKey(k), EncodeVal(v, rng()), rng() % 16, 1});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fixtures. All owned by the main thread; at most one large one lives at a time.

// A segment for BuildBatch / MergeBatches, with cached inputs for the current N.
struct ScratchFixture {
  BenchSegment seg{1 * kGiB, "creating the scratch segment"};
  std::size_t build_n = 0;
  std::vector<Update> build_input;
  std::size_t merge_n = 0;
  std::uint64_t merge_a = 0, merge_b = 0;  // batch offsets

  ~ScratchFixture() { DropMergeInputs(); }
  void DropMergeInputs() {
    if (merge_a) seg.segment().Deallocate(merge_a);
    if (merge_b) seg.segment().Deallocate(merge_b);
    merge_a = merge_b = 0;
    merge_n = 0;
  }
};

// A published index of N keys (key i -> one value, count 1) with a reader following it.
struct IndexFixture {
  std::size_t n;
  std::unique_ptr<BenchSegment> seg;
  std::unique_ptr<Publisher> publisher;
  std::unique_ptr<Reader> reader;
  PublishedRef pref;
  FollowedRef fref;
  Time read_time = 0;
  std::string probes;  // kProbes encoded random existing keys, kEncodedKeyBytes each
  static constexpr std::size_t kProbes = 1 << 20;
  double build_seconds = 0;

  std::string_view Probe(std::size_t i) const {
    return std::string_view(probes).substr((i & (kProbes - 1)) * kEncodedKeyBytes,
                                           kEncodedKeyBytes);
  }

  ~IndexFixture() {
    // Reader first (its destructor releases the reader side), then the publisher, then the
    // segment is unmapped and removed.
    reader.reset();
    publisher.reset();
    seg.reset();
  }
};

std::uint64_t IndexSegmentBytes(std::size_t n) {
  // ~70 bytes per update in a batch; a merge holds the old spine and its output at once.
  if (n <= 100'000) return 256 * kMiB;
  if (n <= 2'000'000) return 1 * kGiB;
  return 3 * kGiB;
}

std::int64_t IndexValue(std::int64_t k) { return 2 * k + 1; }

std::unique_ptr<IndexFixture> BuildIndex(std::size_t n) {
  const auto start = std::chrono::steady_clock::now();
  auto f = std::make_unique<IndexFixture>();
  f->n = n;
  f->seg = std::make_unique<BenchSegment>(IndexSegmentBytes(n), "creating an index segment");
  Segment& segment = f->seg->segment();
  const SlotKey key{GlobalId::User(1), 0};
  f->publisher = Must(Publisher::Attach(&segment, 0), "attaching the publisher");
  f->reader = Must(Reader::Attach(&segment, 0), "attaching the reader");
  f->fref = Must(f->reader->Follow(key), "following the index");
  f->pref = Must(f->publisher->BindSlot(key), "publishing the index");

  // Keys 0..n-1 in random order, appended in chunks at times 0, 1, 2, ...
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(42 + n);
  std::shuffle(order.begin(), order.end(), rng);
  const std::size_t chunk =
      std::min<std::size_t>(1 << 20, std::max<std::size_t>(1024, (n + 7) / 8));
  Time t = 0;
  for (std::size_t begin = 0; begin < n; begin += chunk, ++t) {
    const std::size_t end = std::min(n, begin + chunk);
    std::vector<Update> updates;
    updates.reserve(end - begin);
    for (std::size_t i = begin; i < end; ++i) {
      const std::int64_t k = order[i];
      updates.push_back(
          Update{EncodeKey(k), EncodeVal(IndexValue(k), static_cast<std::uint64_t>(k)), t, 1});
    }
    Must(f->publisher->Append(f->pref, std::move(updates), Frontier::At(t + 1)),
         "appending to the index");
  }
  // Read at the last complete time, and let both sides compact up to it.
  f->read_time = t - 1;
  Must(f->publisher->AllowCompaction(f->pref, Frontier::At(f->read_time)), "allowing compaction");
  Must(f->reader->AdvanceHold(f->fref, Frontier::At(f->read_time)), "advancing the hold");
  f->publisher->Maintain();

  f->probes.reserve(IndexFixture::kProbes * kEncodedKeyBytes);
  std::uniform_int_distribution<std::int64_t> pick(0, static_cast<std::int64_t>(n) - 1);
  for (std::size_t i = 0; i < IndexFixture::kProbes; ++i) {
    const std::string k = EncodeKey(pick(rng));
    if (k.size() != kEncodedKeyBytes) Fatal("unexpected encoded key size");
    f->probes += k;
  }

  // Sanity: the index answers what was put in.
  auto snap = Must(f->reader->Take(f->fref), "taking a snapshot");
  Must(snap.CheckReadable(f->read_time), "index not readable at its read time");
  std::vector<ValueCount> out;
  for (std::size_t i = 0; i < 1000; ++i) {
    Must(snap.Lookup(f->Probe(i), f->read_time, &out), "sanity lookup");
    if (out.size() != 1 || out[0].count != 1) Fatal("sanity lookup: wrong answer");
  }
  f->build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return f;
}

// The cross-process fixture: a forked child runs the publisher of row 0; the benchmark process
// holds the reader of row 0. A small anonymous shared page carries the control words.
struct Control {
  std::atomic<std::uint32_t> stop;
  std::atomic<std::uint32_t> busy;      // parent -> child: 1 = append continuously
  std::atomic<std::uint32_t> busy_ack;  // child -> parent: the mode it is in
  std::atomic<std::uint32_t> ready;     // child published the initial data
  std::atomic<std::uint32_t> failed;
  std::atomic<std::uint64_t> appends;
  char error[512];
};

constexpr std::int64_t kLiveKeys = 1024;      // keys the child's stream keeps live
constexpr std::int64_t kStepsPerAppend = 16;  // each step: retract one value, insert its successor

// The child's publisher; runs on a fresh thread of the forked child (see RunChild).
void ChildPublisher(const std::string& name, Control* control) {
  auto fail = [control](const std::string& why) {
    std::snprintf(control->error, sizeof control->error, "%s", why.c_str());
    control->failed.store(1);
  };
  auto opened = Segment::Open(name);
  if (!opened.ok()) return fail("child: Segment::Open: " + opened.status().ToString());
  std::unique_ptr<Segment> segment = std::move(opened).value();
  auto attached = Publisher::Attach(segment.get(), 0);
  if (!attached.ok()) return fail("child: Publisher::Attach: " + attached.status().ToString());
  std::unique_ptr<Publisher> publisher = std::move(attached).value();
  auto published = publisher->BindSlot(SlotKey{GlobalId::User(1), 0});
  if (!published.ok()) return fail("child: Publish: " + published.status().ToString());
  const PublishedRef ref = *published;

  // Step s touches key s % K: it retracts generation s / K - 1 and inserts generation s / K, so
  // K keys stay live and compaction keeps the arrangement small.
  auto val = [](std::int64_t k, std::int64_t gen) {
    return EncodeVal(gen, static_cast<std::uint64_t>(k * 7919 + gen));
  };
  std::vector<Update> initial;
  for (std::int64_t k = 0; k < kLiveKeys; ++k) initial.push_back({EncodeKey(k), val(k, 0), 0, 1});
  if (auto st = publisher->Append(ref, std::move(initial), Frontier::At(1)); !st.ok()) {
    return fail("child: initial Append: " + st.ToString());
  }
  control->ready.store(1);

  std::int64_t step = kLiveKeys;
  Time t = 1;
  while (control->stop.load() == 0) {
    const std::uint32_t busy = control->busy.load();
    if (control->busy_ack.load() != busy) control->busy_ack.store(busy);
    if (!busy) {
      usleep(1000);
      continue;
    }
    std::vector<Update> updates;
    updates.reserve(2 * kStepsPerAppend);
    for (std::int64_t i = 0; i < kStepsPerAppend; ++i, ++step) {
      const std::int64_t k = step % kLiveKeys, gen = step / kLiveKeys;
      updates.push_back({EncodeKey(k), val(k, gen - 1), t, -1});
      updates.push_back({EncodeKey(k), val(k, gen), t, 1});
    }
    if (auto st = publisher->Append(ref, std::move(updates), Frontier::At(t + 1)); !st.ok()) {
      return fail("child: Append: " + st.ToString());
    }
    if (auto st = publisher->AllowCompaction(ref, Frontier::At(t)); !st.ok()) {
      return fail("child: AllowCompaction: " + st.ToString());
    }
    ++t;
    control->appends.fetch_add(1);
  }
}

[[noreturn]] void RunChild(const std::string& name, Control* control, pid_t parent) {
  ResetSignalHandlers();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(3);  // the parent died before prctl took effect
  // A fresh thread, not this one: the registry caches the (pid, tid) owner token per thread
  // (CurrentThreadToken's thread_local), and this thread's cached token is the parent's.
  std::thread worker([&] { ChildPublisher(name, control); });
  worker.join();
  _exit(control->failed.load() ? 1 : 0);
}

struct TakeFixture {
  std::unique_ptr<BenchSegment> seg;
  std::unique_ptr<Reader> reader;
  FollowedRef fref;
  Control* control = nullptr;
  pid_t child = 0;

  TakeFixture() {
    void* page =
        mmap(nullptr, sizeof(Control), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) Fatal("mmap of the control page failed");
    control = new (page) Control{};
    seg = std::make_unique<BenchSegment>(256 * kMiB, "creating the take segment");
    reader = Must(Reader::Attach(&seg->segment(), 0), "attaching the reader");
    fref = Must(reader->Follow(SlotKey{GlobalId::User(1), 0}), "following the slot");

    const pid_t parent = getpid();
    std::fflush(nullptr);  // nothing buffered gets written twice
    const pid_t pid = fork();
    if (pid < 0) Fatal("fork failed");
    if (pid == 0) RunChild(seg->name(), control, parent);
    child = pid;
    g_child_pid = pid;
    WaitFor([this] { return control->ready.load() != 0; }, "the child to publish");
  }

  ~TakeFixture() {
    StopChild();
    reader.reset();
    seg.reset();
    munmap(control, sizeof(Control));
  }

  void StopChild() {
    if (child <= 0) return;
    control->stop.store(1);
    int status = 0;
    bool reaped = false;
    for (int i = 0; i < 1000 && !reaped; ++i) {  // up to ~10 s
      reaped = waitpid(child, &status, WNOHANG) == child;
      if (!reaped) usleep(10'000);
    }
    if (!reaped) {
      std::fprintf(stderr, "tandem-shm-bench: child %d did not stop; killing it\n", child);
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
    }
    child = 0;
    g_child_pid = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "tandem-shm-bench: publisher child ended badly (status 0x%x): %s\n",
                   status, control->error);
    }
  }

  // Fails the run when the child failed or died, or `done` did not happen within 10 s.
  template <typename F>
  void WaitFor(F done, const char* what) {
    for (int i = 0; i < 10'000; ++i) {
      if (done()) return;
      if (control->failed.load()) Fatal(std::string("waiting for ") + what + ": " + control->error);
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) {
        g_child_pid = 0;
        child = 0;
        Fatal(std::string("the publisher child exited while waiting for ") + what + ": " +
              control->error);
      }
      usleep(1000);
    }
    Fatal(std::string("timed out waiting for ") + what);
  }

  void SetBusy(bool busy) {
    control->busy.store(busy ? 1 : 0);
    WaitFor([&] { return control->busy_ack.load() == (busy ? 1u : 0u); }, "the child's mode");
    if (busy) {  // let it warm up
      const std::uint64_t from = control->appends.load();
      WaitFor([&] { return control->appends.load() >= from + 100; }, "the child to append");
    }
  }
};

struct Fixtures {
  std::unique_ptr<ScratchFixture> scratch;
  std::unique_ptr<IndexFixture> index;
  std::unique_ptr<TakeFixture> take;
  void Release() {  // each reset ends before the next begins: one big fixture at a time
    take.reset();
    index.reset();
    scratch.reset();
  }
};
Fixtures g_fixtures;

ScratchFixture& AcquireScratch() {
  RequireMainThread();
  if (!g_fixtures.scratch) {
    g_fixtures.Release();
    g_fixtures.scratch = std::make_unique<ScratchFixture>();
  }
  return *g_fixtures.scratch;
}

IndexFixture& AcquireIndex(std::size_t n) {
  RequireMainThread();
  if (!g_fixtures.index || g_fixtures.index->n != n) {
    g_fixtures.Release();
    g_fixtures.index = BuildIndex(n);
  }
  return *g_fixtures.index;
}

TakeFixture& AcquireTake() {
  RequireMainThread();
  if (!g_fixtures.take) {
    g_fixtures.Release();  // fork a small process, not one holding a big index
    g_fixtures.take = std::make_unique<TakeFixture>();
  }
  return *g_fixtures.take;
}

// ---------------------------------------------------------------------------------------------
// 1. BuildBatch of N random updates.

void BM_BuildBatch(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ScratchFixture& f = AcquireScratch();
  if (f.build_n != n) {
    f.build_input = RandomUpdates(n, 1);
    f.build_n = n;
  }
  Segment& segment = f.seg.segment();
  std::uint64_t batch_bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Update> input = f.build_input;
    state.ResumeTiming();
    auto built = BuildBatch(segment, std::move(input), Frontier::Minimum());
    state.PauseTiming();
    if (!built.ok() || *built == 0) {
      state.SkipWithError(built.ok() ? "empty batch" : built.status().ToString().c_str());
      break;
    }
    batch_bytes = BatchView(segment.At<tandem::shm::BatchHeader>(*built)).total_bytes();
    segment.Deallocate(*built);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  state.counters["batch_bytes"] = static_cast<double>(batch_bytes);
}

// 2. MergeBatches of two batches of N updates each. B retracts half of A's updates; since (16)
// is past every time, so times advance and the retracted pairs cancel.
void BM_MergeBatches(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ScratchFixture& f = AcquireScratch();
  Segment& segment = f.seg.segment();
  if (f.merge_n != n) {
    f.DropMergeInputs();
    f.build_input.clear();
    f.build_input.shrink_to_fit();
    f.build_n = 0;
    std::vector<Update> a = RandomUpdates(n, 2);
    for (Update& u : a) u.time %= 8;  // A: times [0, 8)
    std::vector<Update> b = RandomUpdates(n, 3);
    for (std::size_t i = 0; i < n; ++i) {
      b[i].time = 8 + b[i].time % 8;  // B: times [8, 16)
      if (i < n / 2) {
        b[i].key = a[i].key;
        b[i].val = a[i].val;
        b[i].diff = -1;
      }
    }
    f.merge_a = Must(BuildBatch(segment, std::move(a), Frontier::Minimum()), "building batch A");
    f.merge_b = Must(BuildBatch(segment, std::move(b), Frontier::Minimum()), "building batch B");
    f.merge_n = n;
  }
  const BatchView inputs[2] = {BatchView(segment.At<tandem::shm::BatchHeader>(f.merge_a)),
                               BatchView(segment.At<tandem::shm::BatchHeader>(f.merge_b))};
  const Frontier since = Frontier::At(16);
  std::uint64_t out_updates = 0;
  for (auto _ : state) {
    auto merged = MergeBatches(segment, inputs, since);
    state.PauseTiming();
    if (!merged.ok() || *merged == 0) {
      state.SkipWithError(merged.ok() ? "empty merge" : merged.status().ToString().c_str());
      break;
    }
    out_updates = BatchView(segment.At<tandem::shm::BatchHeader>(*merged)).update_count();
    segment.Deallocate(*merged);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(inputs[0].update_count() +
                                                                         inputs[1].update_count()));
  state.counters["out_updates"] = static_cast<double>(out_updates);
}

// 3. Point lookups of random existing keys at the read time.
void LookupCounters(benchmark::State& state, const IndexFixture& f, std::size_t batches,
                    std::uint64_t found) {
  state.SetItemsProcessed(state.iterations());
  state.counters["batches"] = static_cast<double>(batches);
  state.counters["index_build_s"] = f.build_seconds;
  if (!state.error_occurred() && found != static_cast<std::uint64_t>(state.iterations())) {
    state.SkipWithError("a lookup did not find its key");
  }
}

void BM_LookupReuseSnapshot(benchmark::State& state) {
  IndexFixture& f = AcquireIndex(static_cast<std::size_t>(state.range(0)));
  auto snap = Must(f.reader->Take(f.fref), "taking a snapshot");
  std::vector<ValueCount> out;
  std::size_t i = 0;
  std::uint64_t found = 0;
  for (auto _ : state) {
    if (const auto st = snap.Lookup(f.Probe(i++), f.read_time, &out); !st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
    found += out.size();
    benchmark::DoNotOptimize(out.data());
  }
  LookupCounters(state, f, snap.batches().size(), found);
}

void BM_LookupNewSnapshot(benchmark::State& state) {
  IndexFixture& f = AcquireIndex(static_cast<std::size_t>(state.range(0)));
  std::vector<ValueCount> out;
  std::size_t i = 0, batches = 0;
  std::uint64_t found = 0;
  for (auto _ : state) {
    auto snap = f.reader->Take(f.fref);
    if (!snap.ok()) {
      state.SkipWithError(snap.status().ToString().c_str());
      break;
    }
    if (const auto st = snap->Lookup(f.Probe(i++), f.read_time, &out); !st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
    found += out.size();
    batches = snap->batches().size();
    benchmark::DoNotOptimize(out.data());
  }
  LookupCounters(state, f, batches, found);
}

// 4. Full scan; bytes = key + val bytes visited.
void BM_Scan(benchmark::State& state) {
  IndexFixture& f = AcquireIndex(static_cast<std::size_t>(state.range(0)));
  std::uint64_t bytes = 0, rows = 0;
  for (auto _ : state) {
    auto snap = f.reader->Take(f.fref);
    if (!snap.ok()) {
      state.SkipWithError(snap.status().ToString().c_str());
      break;
    }
    std::uint64_t scanned = 0;
    const auto st =
        snap->Scan(f.read_time, [&](std::string_view k, std::string_view v, std::int64_t count) {
          bytes += k.size() + v.size();
          scanned += static_cast<std::uint64_t>(count);
          return true;
        });
    if (!st.ok() || scanned != f.n) {
      state.SkipWithError(st.ok() ? "scan saw the wrong number of rows" : st.ToString().c_str());
      break;
    }
    rows += scanned;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(static_cast<std::int64_t>(rows));
}

// 5. Reader::Take() + destruction while the publisher (another process) is idle or appending.
void BM_TakeSnapshot(benchmark::State& state) {
  const bool busy = state.range(0) != 0;
  TakeFixture& f = AcquireTake();
  f.SetBusy(busy);
  const std::uint64_t appends_before = f.control->appends.load();
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t i = 0, batches = 0;
  for (auto _ : state) {
    auto snap = f.reader->Take(f.fref);
    if (!snap.ok()) {
      state.SkipWithError(snap.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(snap->batches().data());
    batches += snap->batches().size();
    // Keep the peer hold near upper so the publisher can compact (as a live reader would).
    if ((++i & 255) == 0 && !snap->upper().empty() && snap->upper().time() > 0) {
      (void)f.reader->AdvanceHold(f.fref, Frontier::At(snap->upper().time() - 1));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::uint64_t appends = f.control->appends.load() - appends_before;
  f.SetBusy(false);  // no growth while the harness is between runs
  if (f.control->failed.load()) state.SkipWithError(f.control->error);
  state.SetItemsProcessed(state.iterations());
  state.counters["pub_appends_per_s"] = seconds > 0 ? static_cast<double>(appends) / seconds : 0;
  state.counters["batches"] =
      state.iterations() ? static_cast<double>(batches) / static_cast<double>(state.iterations())
                         : 0;
}

void RegisterAll() {
  using benchmark::kMicrosecond;
  using benchmark::kMillisecond;
  using benchmark::kNanosecond;
  benchmark::RegisterBenchmark("BM_BuildBatch", BM_BuildBatch)
      ->ArgName("updates")
      ->Arg(1 << 10)
      ->Arg(1 << 16)
      ->Arg(1 << 20)
      ->Unit(kMicrosecond);
  benchmark::RegisterBenchmark("BM_MergeBatches", BM_MergeBatches)
      ->ArgName("updates_each")
      ->Arg(1 << 10)
      ->Arg(1 << 16)
      ->Arg(1 << 20)
      ->Unit(kMicrosecond);
  // Grouped by index size so that each index is built once.
  for (const std::int64_t n : {10'000, 1'000'000, 10'000'000}) {
    benchmark::RegisterBenchmark("BM_LookupReuseSnapshot", BM_LookupReuseSnapshot)
        ->ArgName("keys")
        ->Arg(n)
        ->Unit(kNanosecond);
    benchmark::RegisterBenchmark("BM_LookupNewSnapshot", BM_LookupNewSnapshot)
        ->ArgName("keys")
        ->Arg(n)
        ->Unit(kNanosecond);
    if (n == 1'000'000) {
      benchmark::RegisterBenchmark("BM_Scan", BM_Scan)->ArgName("keys")->Arg(n)->Unit(kMillisecond);
    }
  }
  benchmark::RegisterBenchmark("BM_TakeSnapshot", BM_TakeSnapshot)
      ->ArgName("publisher_busy")
      ->Arg(0)
      ->Arg(1)
      ->Unit(kNanosecond);
}

}  // namespace

int main(int argc, char** argv) {
  g_main_thread = std::this_thread::get_id();
  InstallSignalHandlers();
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  g_fixtures.Release();
  benchmark::Shutdown();
  const std::string prefix = "tandem.bench." + std::to_string(getpid()) + ".";
  if (const auto left = Segment::List(prefix); !left.empty()) {
    std::fprintf(stderr, "tandem-shm-bench: %zu segment(s) left in /dev/shm\n", left.size());
    return 1;
  }
  return 0;
}
