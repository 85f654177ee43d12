// A one-shot query whose operators would make more rows than memory holds: a join of an index with
// itself on a key with two values (k % 2), whose output is the square of its input. Without a
// bound the runtime that serves peeks grew past 4–6 GB and the OOM kill took the replica with it.
// With max_one_shot_memory (here 4 MiB) the join stops, the one-shot's peek answers an Error naming
// the bound, the runtime's own memory stays far below what the whole product takes, and the
// replica serves on: a small one-shot of the same plan answers exactly, and a good peek follows.
#include <chrono>

#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

namespace pb = ipc::pb;
namespace samples = ipc::samples;

constexpr std::uint64_t kJoinKeys =
    1000;  // the product: kJoinKeys^2 / 2 = 500 000 rows of 6 columns
constexpr std::uint64_t kOneShotBound = 4u << 20;

// t1: COUNT of u2 ⋈ u2 on k % 2, over the rows with k < `below`.
pb::Command ParityJoinCount(std::uint64_t as_of, std::int64_t below, const std::string& name) {
  using samples::Binary;
  using samples::Col;
  using samples::IntLit;
  const pb::Plan side = samples::MfpPlan(
      samples::GetPlan("u2"), samples::Mfp({Binary(pb::MOD, Col(0), IntLit(2))},
                                           {Binary(pb::LT, Col(0), IntLit(below))}, {2, 0, 1}));
  return samples::OneShot(
      as_of, {samples::Import("u2", "u1", samples::KeyValueSchema(), {0})},
      {samples::Build("t2", samples::JoinPlan(side, side, {0}, {0})),
       samples::Build("t3", samples::ReducePlan(samples::GetPlan("t2"), {}, {{pb::COUNT, 0}}))},
      {samples::Export("t1", "t3", {0})}, name);
}

// The answer to a peek of `id` at `t` through the target's session (nullopt, and a failure, if none
// within 60 s).
std::optional<pb::PeekResponse> OneShotPeek(Target& target, const std::string& id, Time t) {
  static int n = 0;
  const std::string uuid = "one-shot-memory-" + std::to_string(++n);
  target.ctl().Send(samples::PeekAt(uuid, id, t));
  auto r = target.ctl().ReceiveUntil(
      [&](const pb::Response& r) {
        return r.has_peek_response() && r.peek_response().uuid() == uuid;
      },
      60s);
  if (!r) {
    ADD_FAILURE() << "no answer to a peek of " << id << "; the replica "
                  << (target.sup().Exited() ? "went down" : "is up") << "\n"
                  << target.sup().Log();
    return std::nullopt;
  }
  return r->peek_response();
}

class OneShotMemory : public ::testing::TestWithParam<bool> {};

TEST_P(OneShotMemory, AJoinPastTheBoundAnswersAnErrorAndTheReplicaServesOn) {
  Target target({"--param", "max_one_shot_memory=" + std::to_string(kOneShotBound)}, 2,
                {.two_runtime = GetParam(), .keys = kJoinKeys});
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const pid_t server = target.ServingRuntime();
  const std::uint64_t anon_before = AnonRssBytes(server);

  target.ctl().Send(ParityJoinCount(1, kJoinKeys, "the whole product"));
  auto big = OneShotPeek(target, "t1", 1);
  ASSERT_TRUE(big);
  ASSERT_EQ(big->result_case(), pb::PeekResponse::kError) << big->rows().rows_size() << " rows";
  EXPECT_NE(big->error().find("max_one_shot_memory (" + std::to_string(kOneShotBound) + " bytes)"),
            std::string::npos)
      << big->error();
  const std::uint64_t anon_after = AnonRssBytes(server);
  std::printf("serving runtime's anonymous memory: %llu MiB before, %llu MiB after\n",
              static_cast<unsigned long long>(anon_before >> 20),
              static_cast<unsigned long long>(anon_after >> 20));
  // The whole product is 500 000 rows of six datums (~150 MB in the operators alone).
  if (kRssIsMeaningful) {
    EXPECT_LT(anon_after, anon_before + (64u << 20));
  }
  target.ctl().Send(samples::Drop("t1"));
  ASSERT_FALSE(target.sup().Exited()) << target.sup().Log();

  // The same plan over k < 20 (ten even and ten odd keys, one row each at time 1): 10·10 + 10·10.
  target.ctl().Send(ParityJoinCount(1, 20, "a small product"));
  auto small = OneShotPeek(target, "t1", 1);
  ASSERT_TRUE(small);
  ASSERT_EQ(small->result_case(), pb::PeekResponse::kRows) << small->error();
  ASSERT_EQ(small->rows().rows_size(), 1);
  EXPECT_EQ(small->rows().rows(0).row().datums(0).int64(), 200);
  target.ctl().Send(samples::Drop("t1"));
  target.ExpectStillServing();
}

INSTANTIATE_TEST_SUITE_P(Modes, OneShotMemory, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "TwoRuntime" : "Solo"; });

}  // namespace
}  // namespace tandem::testing::adversarial
