#include "supervisor/peek_path.h"

#include <unistd.h>

#include "base/check.h"
#include "ipc/channel.h"

namespace tandem::supervisor {
namespace {

shm::PeekRingsData* RingsOf(const shm::Segment& segment) {
  shm::PeekRingsData* rings = shm::PeekRingsOf(segment);
  TANDEM_CHECK(rings != nullptr, "a peek path needs a segment with peek rings");
  return rings;
}

}  // namespace

PeekPath::PeekPath(const shm::Segment& segment)
    : rings_(RingsOf(segment)),
      request_fd_(shm::MakeRingWakeFd()),
      answer_fd_(shm::MakeRingWakeFd()),
      requests_(segment, &rings_->requests, request_fd_),
      answers_(segment, &rings_->answers, answer_fd_) {}

PeekPath::~PeekPath() {
  close(request_fd_);
  close(answer_fd_);
}

std::string PeekPath::FdsArgument() const {
  return std::to_string(request_fd_) + "," + std::to_string(answer_fd_);
}

bool PeekPath::TrySend(std::uint64_t seq, const std::string& encoded) {
  return requests_.TryPush({ipc::SequenceFrame(seq), encoded});
}

}  // namespace tandem::supervisor
