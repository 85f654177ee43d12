// The shared parts of the randomized differential suites (runtime_correctness_test.cc,
// import_correctness_test.cc): random expressions, plans, data and peeks, the log file of a
// source, and the controller's side of a session (frontiers, answers, protocol invariants), with
// the comparison of a runtime's answer against the reference evaluator's (tests/reference/).
//
// Everything is deterministic in the generator's seed, so that a failing case reruns alone.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ipc/codec.h"
#include "reference/reference.h"
#include "supervisor_harness.h"

namespace tandem::testing {

namespace pb = ::tandem::protocol;
using reference::Contents;
using reference::Evaluator;
using reference::PeekAnswer;

// ---- random generation ----------------------------------------------------------------------

struct ColumnType {
  pb::ScalarType type = pb::INT64;
  bool nullable = false;
};
using Types = std::vector<ColumnType>;

// Strings of the data domain: spaces, quotes, backslashes and the empty string exercise the log
// format's quoting.
inline const std::vector<std::string>& StringDomain() {
  static const std::vector<std::string> kStrings = {"a", "b", "a b", "q\"t", "back\\slash", ""};
  return kStrings;
}

class Random {
 public:
  explicit Random(std::uint64_t seed) : rng_(seed) {}
  // Uniform in [0, n).
  std::uint64_t Below(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }
  std::int64_t Between(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }
  std::mt19937_64& engine() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

inline pb::ScalarExpr ColumnExpr(std::uint32_t c) {
  pb::ScalarExpr e;
  e.set_column(c);
  return e;
}

inline pb::ScalarExpr LiteralExpr(const Datum& d, pb::ScalarType type) {
  pb::ScalarExpr e;
  *e.mutable_literal()->mutable_value() = reference::ToProto(d);
  e.mutable_literal()->set_type(type);
  return e;
}

inline pb::ScalarExpr UnaryExpr(pb::UnaryFunc f, pb::ScalarExpr x) {
  pb::ScalarExpr e;
  e.mutable_unary()->set_func(f);
  *e.mutable_unary()->mutable_expr() = std::move(x);
  return e;
}

inline pb::ScalarExpr BinaryExpr(pb::BinaryFunc f, pb::ScalarExpr l, pb::ScalarExpr r) {
  pb::ScalarExpr e;
  e.mutable_binary()->set_func(f);
  *e.mutable_binary()->mutable_left() = std::move(l);
  *e.mutable_binary()->mutable_right() = std::move(r);
  return e;
}

inline pb::ScalarExpr IfExpr(pb::ScalarExpr c, pb::ScalarExpr t, pb::ScalarExpr f) {
  pb::ScalarExpr e;
  *e.mutable_if_then_else()->mutable_cond() = std::move(c);
  *e.mutable_if_then_else()->mutable_then() = std::move(t);
  *e.mutable_if_then_else()->mutable_els() = std::move(f);
  return e;
}

// Random expressions, plans, data and peeks for one case.
class Generator {
 public:
  Generator(std::uint64_t seed, bool allow_errors) : rand_(seed), allow_errors_(allow_errors) {}

  Random& rand() { return rand_; }

  // A datum of the data domain for a column: small, so that equal rows and keys recur.
  Datum DataDatum(const ColumnType& c) {
    if (c.nullable && rand_.Chance(0.2)) return Null{};
    switch (c.type) {
      case pb::INT64:
        return rand_.Between(allow_errors_ ? -1 : 0, 4);
      case pb::BOOL:
        return rand_.Chance(0.5);
      case pb::FLOAT64:
        return static_cast<double>(rand_.Between(-4, 4)) / 2;
      default:
        return rand_.Pick(StringDomain());
    }
  }

  ColumnType RandomScalarType() {
    static const std::vector<pb::ScalarType> kTypes = {pb::INT64, pb::INT64, pb::BOOL, pb::STRING};
    return {rand_.Pick(kTypes), false};
  }

  // A random expression of `type` over `columns`. Its nullability is not tracked (the validator
  // derives the schemas the peeks need).
  pb::ScalarExpr Expr(pb::ScalarType type, const Types& columns, int depth) {
    std::vector<std::uint32_t> of_type;
    for (std::uint32_t c = 0; c < columns.size(); ++c) {
      if (columns[c].type == type) of_type.push_back(c);
    }
    if (depth <= 0 || rand_.Chance(0.25)) {
      if (!of_type.empty() && rand_.Chance(0.75)) return ColumnExpr(rand_.Pick(of_type));
      return Literal(type);
    }
    switch (type) {
      case pb::INT64:
        switch (rand_.Below(allow_errors_ ? 7 : 5)) {
          case 0:
            return BinaryExpr(pb::ADD, Expr(type, columns, depth - 1),
                              Expr(type, columns, depth - 1));
          case 1:
            return BinaryExpr(pb::SUB, Expr(type, columns, depth - 1),
                              Expr(type, columns, depth - 1));
          case 2:
            // Multiply by something small only: no overflow in stacked plans.
            return BinaryExpr(pb::MUL, Expr(type, columns, depth - 1), SmallInt());
          case 3:
            return UnaryExpr(pb::NEGATE, Expr(type, columns, depth - 1));
          case 4:
            return IfExpr(Expr(pb::BOOL, columns, depth - 1), Expr(type, columns, depth - 1),
                          Expr(type, columns, depth - 1));
          case 5:
            return BinaryExpr(pb::DIV, Expr(type, columns, depth - 1),
                              Expr(type, columns, depth - 1));
          default:
            return BinaryExpr(pb::MOD, Expr(type, columns, depth - 1),
                              Expr(type, columns, depth - 1));
        }
      case pb::BOOL:
        switch (rand_.Below(7)) {
          case 0:
          case 1: {
            static const std::vector<pb::BinaryFunc> kCompare = {pb::EQ, pb::NE, pb::LT,
                                                                 pb::LE, pb::GT, pb::GE};
            const pb::ScalarType operand = rand_.Chance(0.6)   ? pb::INT64
                                           : rand_.Chance(0.7) ? pb::STRING
                                                               : pb::BOOL;
            return BinaryExpr(rand_.Pick(kCompare), Expr(operand, columns, depth - 1),
                              Expr(operand, columns, depth - 1));
          }
          case 2:
            return BinaryExpr(pb::AND, Expr(type, columns, depth - 1),
                              Expr(type, columns, depth - 1));
          case 3:
            return BinaryExpr(pb::OR, Expr(type, columns, depth - 1),
                              Expr(type, columns, depth - 1));
          case 4:
            return UnaryExpr(pb::NOT, Expr(type, columns, depth - 1));
          case 5:
            return UnaryExpr(rand_.Chance(0.5) ? pb::IS_NULL : pb::IS_NOT_NULL,
                             Expr(RandomScalarType().type, columns, depth - 1));
          default:
            return IfExpr(Expr(pb::BOOL, columns, depth - 1), Expr(type, columns, depth - 1),
                          Expr(type, columns, depth - 1));
        }
      default:
        return IfExpr(Expr(pb::BOOL, columns, depth - 1), Expr(type, columns, depth - 1),
                      Expr(type, columns, depth - 1));
    }
  }

  pb::ScalarExpr SmallInt() { return LiteralExpr(rand_.Between(-2, 3), pb::INT64); }

  pb::ScalarExpr Literal(pb::ScalarType type) {
    if (rand_.Chance(0.1)) return LiteralExpr(Null{}, type);
    switch (type) {
      case pb::INT64:
        return LiteralExpr(rand_.Between(allow_errors_ ? -2 : 0, 4), type);
      case pb::BOOL:
        return LiteralExpr(rand_.Chance(0.5), type);
      default:
        return LiteralExpr(rand_.Pick(StringDomain()), type);
    }
  }

  // A random map/filter/project over `input`; `output` gets its column types.
  pb::MapFilterProject Mfp(const Types& input, Types* output, int expr_depth = 2) {
    pb::MapFilterProject mfp;
    Types columns = input;
    const int maps = static_cast<int>(rand_.Below(3));
    for (int i = 0; i < maps; ++i) {
      const ColumnType type = RandomScalarType();
      *mfp.add_map() = Expr(type.type, columns, expr_depth);
      columns.push_back({type.type, true});
    }
    const int predicates = static_cast<int>(rand_.Below(3));
    for (int i = 0; i < predicates; ++i)
      *mfp.add_predicates() = Expr(pb::BOOL, columns, expr_depth);
    if (rand_.Chance(0.4)) {
      *output = columns;
      return mfp;
    }
    const int width = 1 + static_cast<int>(rand_.Below(std::min<std::size_t>(4, columns.size())));
    output->clear();
    for (int i = 0; i < width; ++i) {
      const auto c = static_cast<std::uint32_t>(rand_.Below(columns.size()));
      mfp.add_projection(c);
      output->push_back(columns[c]);
    }
    return mfp;
  }

  struct Collection {
    std::string id;
    Types types;
  };

  // A random plan of depth <= `depth` over `scope`; `output` gets its column types.
  pb::Plan Plan(const std::vector<Collection>& scope, int depth, Types* output) {
    pb::Plan plan;
    const std::uint64_t kind = depth <= 0 ? 0 : rand_.Below(10);
    if (kind == 0) {
      const Collection& c = rand_.Pick(scope);
      plan.mutable_get()->set_id(c.id);
      *output = c.types;
      return plan;
    }
    if (kind <= 3) {  // Mfp
      Types input;
      *plan.mutable_mfp()->mutable_input() = Plan(scope, depth - 1, &input);
      *plan.mutable_mfp()->mutable_mfp() = Mfp(input, output);
      return plan;
    }
    if (kind <= 5) {  // Reduce
      Types input;
      auto* reduce = plan.mutable_reduce();
      *reduce->mutable_input() = Plan(scope, depth - 1, &input);
      output->clear();
      const int keys = static_cast<int>(rand_.Below(3));
      for (int i = 0; i < keys; ++i) {
        const auto c = static_cast<std::uint32_t>(rand_.Below(input.size()));
        reduce->add_group_key(c);
        output->push_back(input[c]);
      }
      // Aggregate-free reduces too (the group keys alone: a SELECT DISTINCT of them); without
      // keys, at least one aggregate (an index needs a column).
      const int aggregates = static_cast<int>(rand_.Below(3)) + (keys == 0 ? 1 : 0);
      for (int i = 0; i < aggregates; ++i) {
        auto* a = reduce->add_aggregates();
        std::vector<std::uint32_t> ints;
        for (std::uint32_t c = 0; c < input.size(); ++c) {
          if (input[c].type == pb::INT64) ints.push_back(c);
        }
        const std::uint64_t f = rand_.Below(4);
        if (f == 0 || (f == 1 && ints.empty())) {
          a->set_func(pb::COUNT);
          output->push_back({pb::INT64, false});
        } else if (f == 1) {
          a->set_func(pb::SUM);
          a->set_column(rand_.Pick(ints));
          output->push_back({pb::INT64, true});
        } else {
          a->set_func(f == 2 ? pb::MIN : pb::MAX);
          a->set_column(static_cast<std::uint32_t>(rand_.Below(input.size())));
          output->push_back({input[a->column()].type, true});
        }
      }
      return plan;
    }
    if (kind <= 7) {  // Union of two branches, the second made to fit the first
      Types left, right;
      auto* u = plan.mutable_union_();
      *u->add_inputs() = Plan(scope, depth - 1, &left);
      pb::Plan second = Plan(scope, depth - 1, &right);
      bool same = left.size() == right.size();
      for (std::size_t i = 0; same && i < left.size(); ++i) same = left[i].type == right[i].type;
      if (!same || rand_.Chance(0.2)) {
        pb::Plan fitted;
        *fitted.mutable_mfp()->mutable_input() = std::move(second);
        auto* mfp = fitted.mutable_mfp()->mutable_mfp();
        for (std::size_t i = 0; i < left.size(); ++i) {
          *mfp->add_map() = Expr(left[i].type, right, 1);
          mfp->add_projection(static_cast<std::uint32_t>(right.size() + i));
        }
        second = std::move(fitted);
      }
      *u->add_inputs() = std::move(second);
      *output = left;
      for (auto& c : *output) c.nullable = true;
      return plan;
    }
    // Distinct
    *plan.mutable_distinct()->mutable_input() = Plan(scope, depth - 1, output);
    return plan;
  }

  // Peek keys for an index: mostly keys present in `rows` (the collection at some time), some
  // random ones (maybe absent), and nulls where the key column is nullable.
  std::vector<Row> Keys(const std::vector<std::uint32_t>& key, const pb::Schema& schema,
                        const reference::Multiset& rows) {
    std::vector<Row> present;
    for (const auto& [row, count] : rows) {
      Row k;
      for (auto c : key) k.push_back(row[c]);
      present.push_back(std::move(k));
    }
    std::vector<Row> keys;
    const int n = 1 + static_cast<int>(rand_.Below(3));
    for (int i = 0; i < n; ++i) {
      if (!present.empty() && rand_.Chance(0.7)) {
        keys.push_back(rand_.Pick(present));
        continue;
      }
      Row k;
      for (auto c : key) {
        const auto& column = schema.columns(static_cast<int>(c));
        k.push_back(DataDatum({column.type(), column.nullable()}));
      }
      keys.push_back(std::move(k));
    }
    // Mostly distinct keys; sometimes the same key twice (it still selects its rows once).
    if (!rand_.Chance(0.15)) {
      std::vector<Row> distinct;
      for (auto& k : keys) {
        const bool seen = std::any_of(distinct.begin(), distinct.end(),
                                      [&](const Row& d) { return CompareRow(d, k) == 0; });
        if (!seen) distinct.push_back(std::move(k));
      }
      keys = std::move(distinct);
    }
    return keys;
  }

  pb::Finishing Finishing(std::size_t columns) {
    pb::Finishing f;
    const int order = static_cast<int>(rand_.Below(3));
    for (int i = 0; i < order; ++i) {
      auto* o = f.add_order_by();
      o->set_column(static_cast<std::uint32_t>(rand_.Below(columns)));
      o->set_desc(rand_.Chance(0.5));
      o->set_nulls_last(rand_.Chance(0.5));
    }
    if (rand_.Chance(0.5)) f.set_limit(rand_.Below(6));
    if (rand_.Chance(0.3)) f.set_offset(rand_.Below(4));
    if (rand_.Chance(0.4)) {
      const int width = 1 + static_cast<int>(rand_.Below(columns));
      for (int i = 0; i < width; ++i)
        f.add_project(static_cast<std::uint32_t>(rand_.Below(columns)));
    }
    return f;
  }

 private:
  Random rand_;
  bool allow_errors_;
};

inline Types TypesOf(const pb::Schema& schema) {
  Types out;
  for (const auto& c : schema.columns()) out.push_back({c.type(), c.nullable()});
  return out;
}

// Updates over times [0, end) on a small domain: insertions, retractions of what is there,
// duplicates, and pairs that cancel within one time. Counts never go negative. With `huge`,
// insertions have multiplicities near INT64_MAX / 2, so that sums of two or three of them (in
// consolidation, COUNT, a union, a peek) no longer fit int64. `scale` multiplies the number of
// updates per time.
inline std::vector<reference::Update> RandomUpdates(Generator& gen, const Types& types, Time end,
                                                    bool huge = false, int scale = 1) {
  constexpr std::int64_t kHalf = std::numeric_limits<std::int64_t>::max() / 2;
  std::vector<reference::Update> updates;
  reference::Multiset current;
  auto random_row = [&] {
    Row row;
    for (const auto& c : types) row.push_back(gen.DataDatum(c));
    return row;
  };
  for (Time t = 0; t < end; ++t) {
    const int ops = static_cast<int>(gen.rand().Below(t == 0 ? 8 : 5)) * scale;
    for (int i = 0; i < ops; ++i) {
      const std::uint64_t op = gen.rand().Below(10);
      if (op < 5 || current.empty()) {  // insert
        const Row row = random_row();
        const std::int64_t diff = huge && gen.rand().Chance(0.6)
                                      ? kHalf + gen.rand().Between(0, 1 << 20)
                                  : gen.rand().Chance(0.7) ? 1
                                                           : gen.rand().Between(2, 3);
        updates.push_back({row, t, diff});
        reference::AddTo(current, row, diff);
      } else if (op < 8) {  // retract some of an existing row
        auto it = current.begin();
        std::advance(it, static_cast<long>(gen.rand().Below(current.size())));
        const std::int64_t most = static_cast<std::int64_t>(
            std::min<reference::Count>(it->second, std::numeric_limits<std::int64_t>::max()));
        const std::int64_t diff = -gen.rand().Between(1, most);
        updates.push_back({it->first, t, diff});
        reference::AddTo(current, Row(it->first), diff);
      } else if (op < 9) {  // a pair that cancels
        const Row row = random_row();
        const std::int64_t diff = gen.rand().Between(1, 2);
        updates.push_back({row, t, diff});
        updates.push_back({row, t, -diff});
      } else {  // a duplicate: the same insertion on two lines
        const Row row = random_row();
        updates.push_back({row, t, 1});
        updates.push_back({row, t, 1});
        reference::AddTo(current, row, 2);
      }
    }
  }
  return updates;
}

// The log file: updates grouped between progress marks, shuffled within each group (any order
// is allowed there), with comments and blank lines, ending with `P <end>` (and `C` if closed).
inline std::string LogText(Generator& gen, std::vector<reference::Update> updates, Time end,
                           bool closed = false) {
  std::string text = "# tandem runtime correctness test\n";
  std::size_t next = 0;
  Time mark = 0;
  while (mark < end) {
    const Time next_mark = std::min<Time>(end, mark + 1 + gen.rand().Below(4));
    std::vector<reference::Update> group;
    while (next < updates.size() && updates[next].time < next_mark)
      group.push_back(updates[next++]);
    std::shuffle(group.begin(), group.end(), gen.rand().engine());
    for (const auto& u : group) {
      text += reference::LogUpdateLine(u.row, u.time, u.diff);
      if (gen.rand().Chance(0.03)) text += "\n";
      if (gen.rand().Chance(0.03)) text += "# a comment\n";
    }
    text += "P " + std::to_string(next_mark) + "\n";
    mark = next_mark;
  }
  if (closed) text += "C\n";
  return text;
}

// ---- the controller side --------------------------------------------------------------------

// Receives responses, keeps the latest frontiers and the peek answers, and checks protocol
// invariants on the way (frontiers never regress, one answer per uuid).
class Session {
 public:
  Session(SupervisorProcess& sup, TestController& ctl) : sup_(sup), ctl_(&ctl) {}

  // From here on the responses come to `ctl` (a controller that replaced the previous one).
  void Rebind(TestController& ctl) { ctl_ = &ctl; }

  void Pump(std::chrono::milliseconds limit) {
    auto r = ctl_->Receive(limit);
    while (r) {
      Handle(*r);
      r = ctl_->Receive(0ms);
    }
  }

  bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline || sup_.Exited()) return done();
      Pump(20ms);
    }
    return true;
  }

  // UINT64_MAX stands for the empty frontier; nullopt if nothing was reported.
  std::optional<std::uint64_t> Write(const std::string& id) const {
    auto it = write_.find(id);
    if (it == write_.end()) return std::nullopt;
    return it->second;
  }

  std::map<std::string, pb::PeekResponse>& peeks() { return peeks_; }
  // Forgets `id`'s frontiers (it was dropped and is about to be created again).
  void Forget(const std::string& id) { write_.erase(id); }
  std::vector<std::string>& command_errors() { return command_errors_; }
  // Status responses (Reconciled, ...), in arrival order.
  std::vector<pb::Response>& statuses() { return statuses_; }

 private:
  void Handle(const pb::Response& r) {
    if (r.has_frontiers()) {
      const auto& f = r.frontiers();
      const std::uint64_t raw = f.write().elements_size() == 0
                                    ? std::numeric_limits<std::uint64_t>::max()
                                    : f.write().elements(0);
      EXPECT_LE(f.write().elements_size(), 1) << ipc::ToJson(r);
      auto [it, inserted] = write_.emplace(f.id(), raw);
      if (!inserted) {
        EXPECT_GE(raw, it->second)
            << "write frontier of " << f.id() << " regressed: " << ipc::ToJson(r);
        it->second = std::max(it->second, raw);
      }
    } else if (r.has_peek_response()) {
      const auto& p = r.peek_response();
      EXPECT_TRUE(peeks_.emplace(p.uuid(), p).second)
          << "a second PeekResponse for " << p.uuid() << ": " << ipc::ToJson(r);
    } else if (r.has_command_error()) {
      command_errors_.push_back(ipc::ToJson(r));
    } else if (r.has_status()) {
      statuses_.push_back(r);
    }
  }

  SupervisorProcess& sup_;
  TestController* ctl_;
  std::map<std::string, std::uint64_t> write_;
  std::map<std::string, pb::PeekResponse> peeks_;
  std::vector<std::string> command_errors_;
  std::vector<pb::Response> statuses_;
};

inline std::string AnswerText(const pb::PeekResponse& p) {
  switch (p.result_case()) {
    case pb::PeekResponse::kRows: {
      PeekAnswer a;
      for (const auto& rc : p.rows().rows()) {
        a.rows.emplace_back(reference::FromProto(rc.row()), rc.count());
      }
      return reference::ToString(a);
    }
    case pb::PeekResponse::kError:
      return "Error(" + p.error() + ")";
    case pb::PeekResponse::kCanceled:
      return "Canceled";
    default:
      return "(no result)";
  }
}

// True when the runtime's answer is the reference's: the same rows with the same counts in the
// same order, or both an error (messages are not compared: they are the runtime's wording).
inline bool Agrees(const PeekAnswer& expected, const pb::PeekResponse& actual) {
  if (!expected.ok) return actual.has_error();
  if (!actual.has_rows() || actual.rows().rows_size() != static_cast<int>(expected.rows.size())) {
    return false;
  }
  for (int i = 0; i < actual.rows().rows_size(); ++i) {
    const auto& rc = actual.rows().rows(i);
    if (rc.count() != expected.rows[static_cast<std::size_t>(i)].second) return false;
    const Row row = reference::FromProto(rc.row());
    const Row& want = expected.rows[static_cast<std::size_t>(i)].first;
    // Same datums, same types (CompareRow alone equates -0.0 and 0.0, which is fine here).
    if (row.size() != want.size() || CompareRow(row, want) != 0) return false;
    for (std::size_t d = 0; d < row.size(); ++d) {
      if (row[d].index() != want[d].index()) return false;
    }
  }
  return true;
}

inline std::string Tail(const std::string& log) {
  constexpr std::size_t kTail = 4000;
  return "--- supervisor log (tail) ---\n" +
         (log.size() > kTail ? log.substr(log.size() - kTail) : log);
}

inline int CasesFromEnv(int fallback) {
  const char* v = std::getenv("TANDEM_TEST_CASES");
  return v ? std::max(1, std::atoi(v)) : fallback;
}

inline std::optional<std::uint64_t> SeedFromEnv() {
  const char* v = std::getenv("TANDEM_TEST_SEED");
  if (!v) return std::nullopt;
  return std::strtoull(v, nullptr, 10);
}

}  // namespace tandem::testing
