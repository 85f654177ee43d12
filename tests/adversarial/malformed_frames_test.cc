// Garbage, truncated and multi-frame messages from an authenticated controller: each is answered
// with a CommandError, and the replica keeps serving.
#include <random>

#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

TEST(MalformedFrames, RandomBytesAndTruncatedCommandsAreAnsweredAndChangeNothing) {
  Target target;
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const std::string valid = ipc::Encode(ipc::samples::PrimaryDataflow());
  std::mt19937_64 rng(12);
  std::vector<std::string> bad;
  for (int i = 0; i < 50; ++i) {  // random bytes of random lengths
    std::string b(rng() % 300, '\0');
    for (auto& ch : b) ch = static_cast<char>(rng());
    bad.push_back(std::move(b));
  }
  for (std::size_t cut = 1; cut < valid.size(); cut += 1 + valid.size() / 40)  // truncations
    bad.push_back(valid.substr(0, valid.size() - cut));
  for (const std::string& b : bad) {
    target.ctl().SendRaw(b);
    auto r = target.ctl().ReceiveUntil(
        [](const ipc::pb::Response& r) { return r.has_command_error(); }, 5s);
    ASSERT_TRUE(r) << "no CommandError for a malformed message of " << b.size() << " bytes";
  }
  target.ExpectStillServing();
}

}  // namespace
}  // namespace tandem::testing::adversarial
