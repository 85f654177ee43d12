// Deep nesting (issue 12, DESIGN §12: every decoder of outside bytes is bounded in depth). The
// protocol's messages nest (expressions in expressions, plans in plans); a decoder or a checker
// that recursed as deep as the sender likes would overflow its stack. Protobuf's decoder refuses
// nesting beyond 100 messages, so a message nested deeper is answered with a CommandError, while
// one just below the limit is decoded, validated, rendered and evaluated — recursively, at a
// depth that is bounded by that limit.
#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

namespace samples = ipc::samples;

// Field numbers of ipc/tandem.proto that the raw encoding below uses.
constexpr std::uint32_t kCommandPeek = 9, kPeekUuid = 1, kPeekId = 2, kPeekTimestamp = 3,
                        kPeekMfp = 5, kMfpMap = 1, kExprUnary = 3, kUnaryFunc = 1, kUnaryExpr = 2,
                        kExprColumn = 1, kNegate = 4;

// Protobuf's wire format, written back to front (so wrapping a message in another is O(1)).
class ReversedWriter {
 public:
  void Varint(std::uint64_t v) {
    std::string forward;
    do {
      forward.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
      v >>= 7;
    } while (v != 0);
    bytes_.append(forward.rbegin(), forward.rend());
  }
  void Tag(std::uint32_t field, std::uint32_t wire_type) { Varint((field << 3) | wire_type); }
  // Wraps everything written since `mark` as field `field` of the enclosing message.
  void Wrap(std::size_t mark, std::uint32_t field) {
    Varint(bytes_.size() - mark);
    Tag(field, 2);
  }
  void Bytes(std::uint32_t field, const std::string& s) {
    bytes_.append(s.rbegin(), s.rend());
    Varint(s.size());
    Tag(field, 2);
  }
  std::size_t size() const { return bytes_.size(); }
  std::string Forward() const { return std::string(bytes_.rbegin(), bytes_.rend()); }

 private:
  std::string bytes_;
};

// A Peek of u2 at time 1 whose mfp maps -(-(-(…(column 1)…))), `depth` negations deep.
std::string NestedPeek(const std::string& uuid, int depth) {
  // Written innermost first; every message here is the whole of what was written so far, so each
  // Wrap(0, …) makes it a field of the next message out.
  ReversedWriter w;
  w.Varint(1);  // the innermost ScalarExpr: column 1
  w.Tag(kExprColumn, 0);
  for (int i = 0; i < depth; ++i) {
    w.Wrap(0, kUnaryExpr);  // CallUnary{func: NEGATE, expr: <so far>}
    w.Varint(kNegate);
    w.Tag(kUnaryFunc, 0);
    w.Wrap(0, kExprUnary);  // ScalarExpr{unary: …}
  }
  w.Wrap(0, kMfpMap);   // MapFilterProject{map: [<expr>]}
  w.Wrap(0, kPeekMfp);  // Peek{uuid, id: u2, timestamp: 1, mfp}
  w.Varint(1);
  w.Tag(kPeekTimestamp, 0);
  w.Bytes(kPeekId, "u2");
  w.Bytes(kPeekUuid, uuid);
  w.Wrap(0, kCommandPeek);  // Command{peek}
  return w.Forward();
}

TEST(DeepNesting, AnExpressionBeyondTheDecodersDepthIsRefusedAndOneBelowItIsEvaluated) {
  Target target;
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  // The encoding is what protobuf itself writes: at a small depth it decodes to the peek meant.
  ipc::pb::Command decoded;
  ASSERT_TRUE(decoded.ParseFromString(NestedPeek("check", 3)));
  ASSERT_EQ(decoded.peek().mfp().map(0).unary().expr().unary().expr().unary().expr().column(), 1u);

  for (const int depth : {100'000, 1'000, 120}) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    target.ctl().SendRaw(NestedPeek("deep-" + std::to_string(depth), depth));
    auto r = target.ctl().ReceiveUntil(
        [](const ipc::pb::Response& r) { return r.has_command_error(); }, 10s);
    ASSERT_TRUE(r) << "no CommandError for an expression nested " << depth << " deep";
    EXPECT_NE(r->command_error().why().find("not a valid protobuf encoding"), std::string::npos)
        << r->command_error().why();
  }
  // 45 negations (each two messages deep, plus the envelope's): decoded, validated, evaluated.
  const std::string uuid = "shallow";
  target.ctl().SendRaw(NestedPeek(uuid, 45));
  auto r = target.ctl().ReceiveUntil(
      [&](const ipc::pb::Response& r) {
        return (r.has_peek_response() && r.peek_response().uuid() == uuid) || r.has_command_error();
      },
      10s);
  ASSERT_TRUE(r) << target.sup().Log();
  ASSERT_TRUE(r->has_peek_response()) << r->command_error().why();
  ASSERT_TRUE(r->peek_response().has_rows()) << r->peek_response().error();
  ASSERT_GT(r->peek_response().rows().rows_size(), 0);
  // An odd number of negations: the mapped column is -value.
  const auto& row = r->peek_response().rows().rows(0).row();
  ASSERT_EQ(row.datums_size(), 3);
  EXPECT_EQ(row.datums(2).int64(), -row.datums(1).int64());
  target.ExpectStillServing();
}

}  // namespace
}  // namespace tandem::testing::adversarial
