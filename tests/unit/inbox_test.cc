// The command thread's inbox (workers/inbox.h): messages arrive whole and in each sender's order,
// and its eventfd is readable exactly while messages wait — never left readable over an empty
// inbox (the command thread's poll would then never sleep: a core spun on an idle replica).
#include "workers/inbox.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <thread>
#include <vector>

namespace tandem::workers {
namespace {

Inbox::Message From(std::uint32_t worker, std::uint64_t seq) {
  Inbox::Message m;
  m.worker = worker;
  m.seq = seq;
  return m;
}

TEST(Inbox, TheSignalIsUpExactlyWhileMessagesWait) {
  Inbox inbox;
  std::vector<Inbox::Message> taken;
  EXPECT_FALSE(inbox.Signalled());
  inbox.Take(&taken);
  EXPECT_TRUE(taken.empty());
  inbox.Push(From(0, 1));
  inbox.Push(From(0, 2));
  EXPECT_TRUE(inbox.Signalled());
  inbox.Take(&taken);
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].seq, 1u);
  EXPECT_EQ(taken[1].seq, 2u);
  EXPECT_FALSE(inbox.Signalled());
  inbox.Take(&taken);
  EXPECT_TRUE(taken.empty());
  EXPECT_FALSE(inbox.Signalled());
}

TEST(Inbox, ConcurrentPushesAndTakesLoseNothingKeepOrderAndLeaveNoSignalBehind) {
  Inbox inbox;
  constexpr std::uint32_t kSenders = 3;
  constexpr std::uint64_t kEach = 20000;
  std::vector<std::thread> senders;
  for (std::uint32_t w = 0; w < kSenders; ++w) {
    senders.emplace_back([&inbox, w] {
      for (std::uint64_t i = 0; i < kEach; ++i) inbox.Push(From(w, i));
    });
  }
  // The command thread's way: sleep on the eventfd, take everything, look again.
  std::vector<std::uint64_t> next(kSenders, 0);
  std::uint64_t received = 0;
  std::vector<Inbox::Message> taken;
  bool ok = true;
  while (ok && received < kSenders * kEach) {
    pollfd p{inbox.fd(), POLLIN, 0};
    if (poll(&p, 1, 10'000) != 1) {
      ADD_FAILURE() << "no signal while " << kSenders * kEach - received
                    << " messages were still to come";
      ok = false;
    }
    inbox.Take(&taken);
    for (const Inbox::Message& m : taken) {
      if (m.worker >= kSenders || m.seq != next[m.worker]) {
        ADD_FAILURE() << "sender " << m.worker << ": message " << m.seq << " out of order";
        ok = false;
        break;
      }
      ++next[m.worker];
    }
    received += taken.size();
  }
  for (std::thread& t : senders) t.join();
  ASSERT_TRUE(ok);
  inbox.Take(&taken);
  EXPECT_TRUE(taken.empty());
  EXPECT_FALSE(inbox.Signalled()) << "the eventfd stays readable over an empty inbox";
}

}  // namespace
}  // namespace tandem::workers
