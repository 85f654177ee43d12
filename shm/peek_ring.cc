#include "shm/peek_ring.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "base/check.h"
#include "shm/segment.h"

namespace tandem::shm {
namespace {

constexpr std::uint64_t kAlign = 64;
constexpr std::uint64_t AlignUp(std::uint64_t n, std::uint64_t to) {
  return (n + to - 1) & ~(to - 1);
}
// A record's bytes in the ring: its header and its payload padded to 8.
constexpr std::uint64_t RecordBytes(std::uint64_t payload) {
  return sizeof(RingRecordHeader) + AlignUp(payload, 8);
}

void InitRing(PeekRingData* ring, std::uint64_t data_offset, std::uint64_t capacity) {
  new (ring) PeekRingData();
  ring->capacity = capacity;
  ring->data_offset = data_offset;
  ring->max_record = capacity / 4;
}

Status CheckRing(const Segment& segment, const PeekRingData& ring, const std::string& what) {
  const std::uint64_t cap = ring.capacity;
  if (!ValidPeekRingBytes(cap) || ring.max_record != cap / 4 || ring.data_offset % kAlign != 0 ||
      !segment.Contains(ring.data_offset, cap)) {
    return Status::Corruption(what + ": capacity " + std::to_string(cap) + " at offset " +
                              std::to_string(ring.data_offset) + " (max record " +
                              std::to_string(ring.max_record) + ") is not a power of two in [" +
                              std::to_string(kMinPeekRingBytes) + ", " +
                              std::to_string(kMaxPeekRingBytes) +
                              "] bytes, aligned, inside the segment, with a quarter as max record");
  }
  const std::uint64_t head = ring.head.load(std::memory_order_relaxed);
  const std::uint64_t tail = ring.tail.load(std::memory_order_relaxed);
  if (head % 8 != 0 || tail % 8 != 0 || head < tail || head - tail > cap) {
    return Status::Corruption(what + ": head " + std::to_string(head) + " and tail " +
                              std::to_string(tail) + " are not 8-byte multiples at most " +
                              std::to_string(cap) + " apart");
  }
  return Status::Ok();
}

}  // namespace

Result<std::uint64_t> InitializePeekRings(Segment& segment, std::uint64_t capacity) {
  TANDEM_CHECK(
      ValidPeekRingBytes(capacity),
      "a peek ring's capacity is a power of two in [kMinPeekRingBytes, kMaxPeekRingBytes]");
  // 64 bytes of slack to align the start; the data of each ring follows the two headers.
  TANDEM_ASSIGN_OR_RETURN(
      std::uint64_t raw,
      segment.Allocate(kAlign + sizeof(PeekRingsData) + 2 * capacity, "the peek rings"));
  const std::uint64_t at = AlignUp(raw, kAlign);
  auto* rings = segment.At<PeekRingsData>(at);
  InitRing(&rings->requests, at + sizeof(PeekRingsData), capacity);
  InitRing(&rings->answers, at + sizeof(PeekRingsData) + capacity, capacity);
  return at;
}

PeekRingsData* PeekRingsOf(const Segment& segment) {
  const std::uint64_t at = segment.header().peek_rings_offset;
  return at == 0 ? nullptr : segment.At<PeekRingsData>(at);
}

Status CheckPeekRings(const Segment& segment) {
  const std::uint64_t at = segment.header().peek_rings_offset;
  if (at == 0) return Status::Ok();
  const std::string what = "segment '" + segment.name() + "': ";
  if (at % kAlign != 0 || !segment.Contains(at, sizeof(PeekRingsData))) {
    return Status::Corruption(what + "header: peek rings offset " + std::to_string(at) +
                              " is outside the segment or misaligned");
  }
  const PeekRingsData& rings = *segment.At<PeekRingsData>(at);
  TANDEM_RETURN_IF_ERROR(CheckRing(segment, rings.requests, what + "peek request ring"));
  TANDEM_RETURN_IF_ERROR(CheckRing(segment, rings.answers, what + "peek answer ring"));
  // As InitializePeekRings lays them out: the two data areas right after the headers, apart.
  const std::uint64_t cap = rings.requests.capacity;
  if (rings.answers.capacity != cap || rings.requests.data_offset != at + sizeof(PeekRingsData) ||
      rings.answers.data_offset != rings.requests.data_offset + cap) {
    return Status::Corruption(
        what + "peek rings: data at offsets " + std::to_string(rings.requests.data_offset) +
        " and " + std::to_string(rings.answers.data_offset) + " (" + std::to_string(cap) + " and " +
        std::to_string(rings.answers.capacity) + " bytes) are not laid out after their headers");
  }
  return Status::Ok();
}

int MakeRingWakeFd() {
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  TANDEM_CHECK(fd >= 0, "eventfd for a peek ring's wake-ups");
  return fd;
}

// ---------------------------------------------------------------------------------------------

RingWriter::RingWriter(const Segment& segment, PeekRingData* ring, int wake_fd)
    : ring_(ring), bytes_(segment.At<char>(ring->data_offset)), wake_fd_(wake_fd) {}

bool RingWriter::TryPush(std::initializer_list<std::string_view> parts) {
  std::uint64_t payload = 0;
  for (std::string_view p : parts) payload += p.size();
  if (payload > ring_->max_record) {
    ring_->too_large.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const std::uint64_t cap = ring_->capacity;
  const std::uint64_t record = RecordBytes(payload);
  std::uint64_t head = ring_->head.load(std::memory_order_relaxed);  // ours alone
  const std::uint64_t tail = ring_->tail.load(std::memory_order_acquire);
  TANDEM_CHECK(head - tail <= cap, "a peek ring's head is at most its capacity past its tail");
  std::uint64_t at = head & (cap - 1);
  const std::uint64_t to_end = cap - at;  // a multiple of 8, so at least a record header
  const std::uint64_t pad = to_end < record ? to_end : 0;
  if (cap - (head - tail) < pad + record) {
    ring_->full.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (pad != 0) {
    const RingRecordHeader skip{static_cast<std::uint32_t>(pad - sizeof(RingRecordHeader)),
                                kRingPad};
    std::memcpy(bytes_ + at, &skip, sizeof skip);
    head += pad;
    at = 0;
  }
  const RingRecordHeader header{static_cast<std::uint32_t>(payload), kRingRecord};
  std::memcpy(bytes_ + at, &header, sizeof header);
  char* out = bytes_ + at + sizeof header;
  for (std::string_view p : parts) {
    if (!p.empty()) std::memcpy(out, p.data(), p.size());
    out += p.size();
  }
  // seq_cst, with the load of `sleeping` after it: see the header (no lost wake-up).
  ring_->head.store(head + record, std::memory_order_seq_cst);
  ring_->pushed.fetch_add(1, std::memory_order_relaxed);
  if (ring_->sleeping.load(std::memory_order_seq_cst) != 0) {
    ring_->wakes_sent.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t one = 1;
    // EAGAIN: the count is at its maximum, so the consumer is woken anyway.
    const ssize_t n = write(wake_fd_, &one, sizeof one);
    TANDEM_CHECK(n == sizeof one || errno == EAGAIN, "write to a peek ring's eventfd");
  }
  return true;
}

// ---------------------------------------------------------------------------------------------

RingReader::RingReader(const Segment& segment, PeekRingData* ring, int wake_fd)
    : ring_(ring), bytes_(segment.At<const char>(ring->data_offset)), wake_fd_(wake_fd) {}

bool RingReader::Front(std::string_view* payload) {
  const std::uint64_t cap = ring_->capacity;
  for (;;) {
    const std::uint64_t tail = ring_->tail.load(std::memory_order_relaxed);  // ours alone
    const std::uint64_t head = ring_->head.load(std::memory_order_acquire);
    if (tail == head) return false;
    TANDEM_CHECK(head - tail <= cap && tail % 8 == 0, "a peek ring's head and tail agree");
    const std::uint64_t at = tail & (cap - 1);
    RingRecordHeader header;
    std::memcpy(&header, bytes_ + at, sizeof header);
    if (header.kind == kRingPad) {
      TANDEM_CHECK(header.bytes == cap - at - sizeof header, "a pad record runs to the ring's end");
      ring_->tail.store(tail + cap - at, std::memory_order_release);
      continue;
    }
    TANDEM_CHECK(header.kind == kRingRecord && header.bytes <= ring_->max_record &&
                     RecordBytes(header.bytes) <= cap - at &&
                     RecordBytes(header.bytes) <= head - tail,
                 "a peek ring record's header is in bounds");
    front_bytes_ = RecordBytes(header.bytes);
    *payload = std::string_view(bytes_ + at + sizeof header, header.bytes);
    return true;
  }
}

void RingReader::Pop() {
  TANDEM_CHECK(front_bytes_ != 0, "RingReader::Pop after a Front that found a record");
  // Release: the producer may reuse the bytes only after we are done reading them.
  ring_->tail.store(ring_->tail.load(std::memory_order_relaxed) + front_bytes_,
                    std::memory_order_release);
  front_bytes_ = 0;
}

bool RingReader::PrepareToSleep() {
  ring_->sleeping.store(1, std::memory_order_seq_cst);
  return ring_->head.load(std::memory_order_seq_cst) == ring_->tail.load(std::memory_order_relaxed);
}

void RingReader::Awake(bool woken) {
  ring_->sleeping.store(0, std::memory_order_relaxed);
  if (!woken) return;
  std::uint64_t count = 0;
  const ssize_t n = read(wake_fd_, &count, sizeof count);
  TANDEM_CHECK(n == sizeof count || errno == EAGAIN, "read of a peek ring's eventfd");
}

}  // namespace tandem::shm
