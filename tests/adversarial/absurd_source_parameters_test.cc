// Absurd source parameters (issue 12 item 1): a key_value source of 2^40 or 2^62 keys or updates
// per tick used to pass validation and abort the maintenance runtime (length_error, bad_alloc);
// 3·10^7 keys quietly took 2.4 GB. Each is refused with a CommandError naming the parameter and
// its bound, creates nothing, and the replica keeps serving with its memory where it was.
#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

ipc::pb::Command KeyValueDataflow(std::uint64_t keys, std::uint64_t updates_per_tick) {
  ipc::pb::Command c = ipc::samples::EmptyDataflow("absurd");
  auto* d = ipc::samples::Desc(c);
  ipc::pb::SourceImport s = ipc::samples::KeyValueImport("u3");
  s.mutable_source()->mutable_key_value()->set_keys(keys);
  s.mutable_source()->mutable_key_value()->set_updates_per_tick(updates_per_tick);
  s.mutable_source()->mutable_key_value()->set_tick_interval_us(0);
  *d->add_source_imports() = std::move(s);
  *d->add_index_exports() = ipc::samples::Export("u4", "u3", {0});
  return c;
}

TEST(AbsurdSourceParameters, HugeKeyValueParametersAreRefusedNamingTheBoundAndChangeNothing) {
  Target target;
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const std::uint64_t k40 = std::uint64_t{1} << 40, k62 = std::uint64_t{1} << 62;
  struct Case {
    std::uint64_t keys, updates;
    std::string parameter;
  };
  for (const Case& c :
       {Case{k40, 10, "keys " + std::to_string(k40)}, Case{k62, 10, "keys " + std::to_string(k62)},
        Case{100, k40, "updates_per_tick " + std::to_string(k40)},
        Case{100, k62, "updates_per_tick " + std::to_string(k62)},
        Case{30000000, 10, "keys 30000000"}}) {
    SCOPED_TRACE(c.parameter);
    target.ctl().Send(KeyValueDataflow(c.keys, c.updates));
    auto r = target.ctl().ReceiveUntil(
        [](const ipc::pb::Response& r) { return r.has_command_error(); }, 5s);
    ASSERT_TRUE(r) << "no CommandError\n" << target.sup().Log();
    EXPECT_NE(r->command_error().why().find(c.parameter + " is over the bound"), std::string::npos)
        << r->command_error().why();
  }
  // Nothing was created: u4 is unknown.
  target.ctl().Send(ipc::samples::PeekAt("absurd-u4", "u4", 1));
  auto unknown = target.ctl().ReceiveUntil(
      [](const ipc::pb::Response& r) { return r.has_command_error(); }, 5s);
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->command_error().why().find("unknown index u4"), std::string::npos)
      << unknown->command_error().why();
  target.ExpectStillServing();
  for (pid_t pid : target.sup().runtime_pids()) EXPECT_LT(RssBytes(pid), 200u << 20) << pid;
}

}  // namespace
}  // namespace tandem::testing::adversarial
