// Fuzz target: opening and inspecting a segment (DESIGN §12; issue 12 item 5) — what tandem-shm
// does with a segment after something went wrong.
//
// Once, a small valid segment is made (2 rows, index u7 published on both, several batches on
// ordinal 0, an error row) and copied into memory as the reference image; the segment itself is
// removed. Each input is a list of patches applied to a fresh copy of the image:
//   byte 0      region: an index (mod the count) into the list below
//   bytes 1..2  offset in the region (little-endian, mod its size)
//   byte 3      bits 0..3: length - 1 (1..16 bytes); bit 7: overwrite (else xor)
//   then        the patch's bytes
// Regions: the whole image, the header, RegistryData, each row's head, each live slot, each batch
// list, each batch's header, each batch's columns. An empty input is the valid image.
//
// The copy is opened as tandem-shm opens a segment (Segment::OpenImage: header, registry and
// allocator checks) and, when that succeeds, inspected by the tool's own subcommands — info,
// slots, dump (text and JSON, every ordinal and one) — into memory. Properties (a violation
// abort()s, which libFuzzer and the corpus runner report): no crash or hang (libFuzzer, ASan and
// UBSan see those); every exit code is a documented one (0, 1, 65); a failure says why; and the
// unpatched image opens and inspects with 0.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "base/row.h"
#include "shm/publisher.h"
#include "shm/reader.h"
#include "shm/registry.h"
#include "shm/segment.h"
#include "tools/shm/support.h"

namespace tandem::shm {
namespace {

#define FUZZ_CHECK(cond, what)                                                   \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz_shm_inspect: property violated: %s\n", (what)); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

struct Region {
  std::uint64_t at, bytes;
};

struct Reference {
  std::string image;
  std::vector<Region> regions;
};

std::string Key(std::int64_t k) { return EncodeRow({k}); }

// Builds the reference image (see the top of the file).
Reference MakeReference() {
  Reference ref;
  SegmentOptions o;
  o.name = "tandem.fuzz.shm_inspect." + std::to_string(getpid());
  o.replica_id = "fuzz";
  o.workers = 2;
  o.slots_per_row = 4;
  o.size_bytes = 256u << 10;
  (void)Segment::Remove(o.name);
  ScopedSegmentRemover remover(o.name);
  auto created = Segment::Create(o);
  FUZZ_CHECK(created.ok(), "creating the reference segment");
  Segment& seg = **created;
  seg.SetRuntime(Role::kMaintenance, getpid(), RuntimeState::kReady);
  const SlotKey index{GlobalId::User(7), 10};
  {
    std::vector<std::unique_ptr<Publisher>> pubs;
    std::vector<std::unique_ptr<Reader>> readers;
    for (std::uint32_t ordinal = 0; ordinal < 2; ++ordinal) {
      auto pub = Publisher::Attach(&seg, ordinal);
      FUZZ_CHECK(pub.ok(), "attaching a publisher");
      auto reader = Reader::Attach(&seg, ordinal);
      FUZZ_CHECK(reader.ok(), "attaching a reader");
      FUZZ_CHECK((*reader)->Follow(index).ok(), "following the index");
      auto slot = (*pub)->BindSlot(index);
      FUZZ_CHECK(slot.ok(), "publishing the index");
      const Time base = 11 + ordinal;
      FUZZ_CHECK((*pub)
                     ->Append(*slot,
                              {{Key(1 + ordinal), EncodeRow({std::string("v")}), base, 2},
                               {Key(5), EncodeRow({2.5, std::int64_t{-3}}), base + 1, 1},
                               {std::string(1, '\0') + "division by zero", "", base + 1, 1}},
                              Frontier::At(base + 5))
                     .ok(),
                 "appending");
      if (ordinal == 0) {
        FUZZ_CHECK((*pub)->Append(*slot, {{Key(8), Key(80), 17, 1}}, Frontier::At(18)).ok(),
                   "appending");
        FUZZ_CHECK((*pub)->Append(*slot, {{Key(9), Key(90), 18, -1}}, Frontier::At(19)).ok(),
                   "appending");
      }
      pubs.push_back(std::move(pub).value());
      readers.push_back(std::move(reader).value());
    }
    // The regions, while the rows are attached.
    ref.regions.push_back({0, o.size_bytes});
    ref.regions.push_back({0, sizeof(SegmentHeader)});
    ref.regions.push_back({seg.header().registry_offset, sizeof(RegistryData)});
    Registry registry(&seg);
    for (std::uint32_t r = 0; r < registry.workers(); ++r) {
      ref.regions.push_back({seg.OffsetOf(&registry.row(r)), kRowDataHead});
    }
    std::vector<Region> lists, headers, columns;
    for (std::uint32_t r = 0; r < registry.workers(); ++r) {
      for (std::uint32_t j = 0; j < registry.slots_per_row(); ++j) {
        const SlotData& s = registry.slot(r, j);
        if (s.state.load() != static_cast<std::uint32_t>(SlotState::kLive)) continue;
        ref.regions.push_back({seg.OffsetOf(&s), sizeof(SlotData)});
        const std::uint64_t list = s.list.load();
        if (list == 0) continue;
        const auto* l = seg.At<BatchListData>(list);
        lists.push_back({list, 16 + 8 * l->count});
        for (std::uint64_t b = 0; b < l->count; ++b) {
          const std::uint64_t at = l->batches[b];
          headers.push_back({at, sizeof(BatchHeader)});
          const std::uint64_t total = seg.At<BatchHeader>(at)->total_bytes;
          columns.push_back({at + sizeof(BatchHeader), total - sizeof(BatchHeader)});
        }
      }
    }
    for (const auto* part : {&lists, &headers, &columns}) {
      ref.regions.insert(ref.regions.end(), part->begin(), part->end());
    }
  }
  ref.image.resize(o.size_bytes);
  const int fd = open(Segment::PathOf(o.name).c_str(), O_RDONLY | O_CLOEXEC);
  FUZZ_CHECK(fd >= 0, "opening the reference segment's file");
  FUZZ_CHECK(
      pread(fd, ref.image.data(), ref.image.size(), 0) == static_cast<ssize_t>(ref.image.size()),
      "reading the reference segment");
  close(fd);
  return ref;
}

const Reference& TheReference() {
  static const Reference ref = MakeReference();
  return ref;
}

// A 64-byte aligned buffer of the image's size, reused.
char* Buffer(std::size_t bytes) {
  static char* buffer = static_cast<char*>(std::aligned_alloc(64, (bytes + 63) & ~std::size_t{63}));
  return buffer;
}

void CheckRun(int code, const std::ostringstream& err, bool pristine, const char* what) {
  FUZZ_CHECK(code == tools::kExitOk || code == tools::kExitError || code == tools::kExitCorrupt,
             what);
  if (code != tools::kExitOk) FUZZ_CHECK(err.str().size() > 12, "a failure says why");
  if (pristine && code != tools::kExitOk) {
    std::fprintf(stderr, "%s", err.str().c_str());
    FUZZ_CHECK(false, "the valid image inspects cleanly");
  }
}

}  // namespace
}  // namespace tandem::shm

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tandem;
  using namespace tandem::shm;
  const Reference& ref = TheReference();
  char* image = Buffer(ref.image.size());
  std::memcpy(image, ref.image.data(), ref.image.size());
  const bool pristine = size == 0;
  for (std::size_t i = 0; i + 4 <= size;) {
    const Region& region = ref.regions[data[i] % ref.regions.size()];
    const std::uint64_t offset =
        region.at + (data[i + 1] | std::uint64_t{data[i + 2]} << 8) % region.bytes;
    const bool overwrite = data[i + 3] & 0x80;
    const std::size_t n = (data[i + 3] & 15) + 1;
    i += 4;
    for (std::size_t k = 0; k < n && i < size; ++k, ++i) {
      if (offset + k >= ref.image.size()) continue;
      image[offset + k] = static_cast<char>(overwrite ? data[i] : image[offset + k] ^ data[i]);
    }
  }

  auto opened = tools::inspect::OpenImage("fuzz", image, ref.image.size());
  if (!opened.ok()) {
    FUZZ_CHECK(!pristine, "the valid image opens");
    FUZZ_CHECK(!opened.status().message().empty(), "a refusal says why");
    return 0;
  }
  for (const bool json : {false, true}) {
    std::ostringstream out, err;
    const tools::Output o{out, err, json};
    CheckRun(tools::PrintInfo(o, *opened), err, pristine, "info: documented exit code");
    CheckRun(tools::PrintSlots(o, *opened), err, pristine, "slots: documented exit code");
    tools::DumpOptions dump;
    dump.id = "u7";
    CheckRun(tools::PrintDump(o, *opened, dump), err, pristine, "dump: documented exit code");
    dump.ordinal = 1;
    dump.limit = 2;
    CheckRun(tools::PrintDump(o, *opened, dump), err, pristine,
             "dump --ordinal 1: documented exit code");
  }
  return 0;
}
