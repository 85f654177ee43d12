// The PostgreSQL wire protocol without I/O (frontend/pgwire): the bytes of the startup handshake
// as PostgreSQL's "Message Formats" define them, simple queries answered by a handler at once and
// later from another thread, transaction states, cancel keys, the extended protocol answered in
// order with its error recovery (and refused until Sync by a session without it), and malformed,
// oversized, truncated or random input — an error and a closed connection, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "frontend/pgwire/connection.h"
#include "frontend/pgwire/messages.h"
#include "frontend/pgwire/query_handler.h"
#include "frontend/sqlstate.h"
#include "pgwire_fake_sessions.h"

namespace tandem::pgwire::pgwire_test {
namespace {

// ---- frontend bytes, written here from the protocol's docs (not by the code under test) --------

std::string Int32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
std::string Int16(std::uint16_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v)}; }
std::string Str(std::string_view s) { return std::string(s) + '\0'; }

std::string Typed(char type, const std::string& body) {
  return std::string(1, type) + Int32(static_cast<std::uint32_t>(body.size() + 4)) + body;
}
std::string Startup(const std::vector<std::pair<std::string, std::string>>& params,
                    std::uint32_t version = 196608) {
  std::string body = Int32(version);
  for (const auto& [n, v] : params) body += Str(n) + Str(v);
  body += '\0';
  return Int32(static_cast<std::uint32_t>(body.size() + 4)) + body;
}
std::string UserStartup(const std::string& user = "alice", const std::string& db = "tandem") {
  return Startup({{"user", user}, {"database", db}, {"application_name", "pgwire_test"}});
}
const std::string kSslRequest = Int32(8) + Int32(80877103);
const std::string kGssEncRequest = Int32(8) + Int32(80877104);
std::string CancelRequestBytes(BackendKey k) {
  return Int32(16) + Int32(80877102) + Int32(static_cast<std::uint32_t>(k.process_id)) +
         Int32(static_cast<std::uint32_t>(k.secret_key));
}
std::string Query(const std::string& sql) { return Typed('Q', Str(sql)); }
const std::string kTerminate = Typed('X', "");
const std::string kSync = Typed('S', "");

// ---- backend bytes, read back ------------------------------------------------------------------

struct Msg {
  char type;
  std::string body;
};

std::uint32_t ReadU32(std::string_view s, std::size_t at) {
  return (std::uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(s[at + 3])};
}
std::uint16_t ReadU16(std::string_view s, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(s[at]) << 8) |
                                    static_cast<unsigned char>(s[at + 1]));
}

// Splits backend output into whole messages; a trailing partial message fails the test.
std::vector<Msg> Split(std::string_view out) {
  std::vector<Msg> msgs;
  std::size_t at = 0;
  while (at < out.size()) {
    if (out.size() - at < 5) {
      ADD_FAILURE() << "a partial message header at " << at;
      break;
    }
    const std::uint32_t len = ReadU32(out, at + 1);
    if (len < 4 || out.size() - at - 1 < len) {
      ADD_FAILURE() << "a message of length " << len << " past the output's end";
      break;
    }
    msgs.push_back({out[at], std::string(out.substr(at + 5, len - 4))});
    at += 1 + len;
  }
  return msgs;
}

std::string Types(const std::vector<Msg>& msgs) {
  std::string t;
  for (const Msg& m : msgs) t += m.type;
  return t;
}

// An ErrorResponse's or NoticeResponse's fields by code.
std::map<char, std::string> Fields(const Msg& m) {
  std::map<char, std::string> f;
  std::size_t at = 0;
  while (at < m.body.size() && m.body[at] != '\0') {
    const char code = m.body[at++];
    const std::size_t end = m.body.find('\0', at);
    f[code] = m.body.substr(at, end - at);
    at = end + 1;
  }
  EXPECT_EQ(at + 1, m.body.size()) << "fields end with one NUL";
  return f;
}

std::vector<std::optional<std::string>> RowValues(const Msg& m) {
  EXPECT_EQ(m.type, 'D');
  std::vector<std::optional<std::string>> v;
  const std::uint16_t n = ReadU16(m.body, 0);
  std::size_t at = 2;
  for (std::uint16_t i = 0; i < n; ++i) {
    const auto len = static_cast<std::int32_t>(ReadU32(m.body, at));
    at += 4;
    if (len < 0) {
      v.push_back(std::nullopt);
    } else {
      v.push_back(m.body.substr(at, static_cast<std::size_t>(len)));
      at += static_cast<std::size_t>(len);
    }
  }
  EXPECT_EQ(at, m.body.size());
  return v;
}

struct Column {
  std::string name;
  std::uint32_t table_oid;
  std::uint16_t attnum;
  std::uint32_t type_oid;
  std::int16_t typlen;
  std::int32_t typmod;
  std::uint16_t format;
};
std::vector<Column> Columns(const Msg& m) {
  EXPECT_EQ(m.type, 'T');
  std::vector<Column> cols;
  const std::uint16_t n = ReadU16(m.body, 0);
  std::size_t at = 2;
  for (std::uint16_t i = 0; i < n; ++i) {
    Column c;
    const std::size_t end = m.body.find('\0', at);
    c.name = m.body.substr(at, end - at);
    at = end + 1;
    c.table_oid = ReadU32(m.body, at);
    c.attnum = ReadU16(m.body, at + 4);
    c.type_oid = ReadU32(m.body, at + 6);
    c.typlen = static_cast<std::int16_t>(ReadU16(m.body, at + 10));
    c.typmod = static_cast<std::int32_t>(ReadU32(m.body, at + 12));
    c.format = ReadU16(m.body, at + 16);
    at += 18;
    cols.push_back(c);
  }
  EXPECT_EQ(at, m.body.size());
  return cols;
}

// ---- a scripted SQL layer -----------------------------------------------------------------------

// Sessions whose Query calls `answer` (at once, on the connection's thread); by default the
// answer is `SELECT 1`'s. Counts what the connection did to them.
class Scripted : public QueryHandlerFactory {
 public:
  using Answer = std::function<void(const std::string&, std::shared_ptr<QuerySink>)>;

  std::unique_ptr<QueryHandler> Open(const StartupParameters& startup,
                                     ErrorFields& refusal) override {
    last_startup = startup;
    if (refuse) {
      refusal = *refuse;
      return nullptr;
    }
    ++opened;
    return std::make_unique<Session>(*this);
  }

  Answer answer = [](const std::string&, std::shared_ptr<QuerySink> sink) {
    const FieldDescription f("?column?", kInt4);
    sink->RowDescription({&f, 1});
    const Value v[] = {"1"};
    sink->DataRow(v);
    sink->CommandComplete("SELECT 1");
    sink->Finish(TransactionStatus::kIdle);
  };
  std::optional<ErrorFields> refuse;
  std::optional<StartupParameters> last_startup;
  std::vector<std::string> queries;
  int opened = 0, closed = 0, cancels = 0;

 private:
  class Session : public QueryHandler {
   public:
    explicit Session(Scripted& s) : s_(s) {}
    ~Session() override { ++s_.closed; }
    void Query(std::string sql, std::shared_ptr<QuerySink> sink) override {
      s_.queries.push_back(sql);
      s_.answer(sql, std::move(sink));
    }
    void Cancel() override { ++s_.cancels; }

   private:
    Scripted& s_;
  };
};

// A connection with its own registry, and what it has sent so far.
struct Wire {
  explicit Wire(QueryHandlerFactory& f, ConnectionOptions o = ConnectionOptions())
      : conn(f, cancels, std::move(o), [this] { Wake(); }) {}
  Wire(QueryHandlerFactory& f, CancelRegistry& shared, ConnectionOptions o = ConnectionOptions())
      : conn(f, shared, std::move(o), [this] { Wake(); }) {}

  // Everything output since the last call, consumed.
  std::string Take() {
    std::string out(conn.output());
    conn.ConsumeOutput(out.size());
    return out;
  }
  std::vector<Msg> Send(const std::string& bytes) {
    conn.Receive(bytes);
    return Split(Take());
  }
  // The startup done: the session ready.
  void Start() {
    const auto msgs = Send(UserStartup());
    ASSERT_EQ(conn.state(), Connection::State::kReady) << Types(msgs);
  }

  // The sink's wake (any thread, under the sink's lock).
  void Wake() {
    {
      std::lock_guard<std::mutex> lock(wake_mu);
      ++wakes;
    }
    wake_cv.notify_all();
  }
  // Waits at most `limit` for a wake after the first `seen`.
  void WaitForWake(int seen, std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(wake_mu);
    wake_cv.wait_for(lock, limit, [&] { return wakes > seen; });
  }

  CancelRegistry cancels;
  std::mutex wake_mu;
  std::condition_variable wake_cv;
  std::atomic<int> wakes{0};
  Connection conn;
};

// Polls `done` every millisecond for at most `limit`.
template <typename F>
bool WaitUntil(F done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// ---- the startup ------------------------------------------------------------------------------

TEST(PgwireStartup, HandshakeIsTheBytesThePostgresProtocolDefines) {
  Scripted s;
  Wire w(s);
  // StartupMessage: Int32 length, Int32 196608 (3.0), then name/value Strings and a final NUL.
  const std::string startup = std::string("\x00\x00\x00\x2d\x00\x03\x00\x00", 8) + "user" + '\0' +
                              "alice" + '\0' + "database" + '\0' + "tandem" + '\0' + "options" +
                              '\0' + '\0' + '\0';
  ASSERT_EQ(startup.size(), 0x2du);
  w.conn.Receive(startup);
  ASSERT_EQ(w.conn.state(), Connection::State::kReady);
  const BackendKey key = s.last_startup->key;
  auto ps = [](const std::string& n, const std::string& v) { return Typed('S', Str(n) + Str(v)); };
  const std::string expected =
      std::string("R\x00\x00\x00\x08\x00\x00\x00\x00", 9) +  // AuthenticationOk
      ps("application_name", "") + ps("client_encoding", "UTF8") + ps("DateStyle", "ISO, MDY") +
      ps("default_transaction_read_only", "off") + ps("in_hot_standby", "off") +
      ps("integer_datetimes", "on") + ps("IntervalStyle", "postgres") + ps("is_superuser", "off") +
      ps("server_encoding", "UTF8") + ps("server_version", "15.0 (Tandem)") +
      ps("session_authorization", "alice") + ps("standard_conforming_strings", "on") +
      ps("TimeZone", "UTC") + std::string("K\x00\x00\x00\x0c", 5) +
      Int32(static_cast<std::uint32_t>(key.process_id)) +
      Int32(static_cast<std::uint32_t>(key.secret_key)) +  // BackendKeyData
      std::string("Z\x00\x00\x00\x05I", 6);                // ReadyForQuery, idle
  EXPECT_EQ(w.Take(), expected);
  EXPECT_EQ(s.opened, 1);
  EXPECT_EQ(s.last_startup->user, "alice");
  EXPECT_EQ(s.last_startup->database, "tandem");
  EXPECT_EQ(s.last_startup->options, "");
  EXPECT_GT(key.process_id, 0);
}

TEST(PgwireStartup, SslRequestIsDeclinedWithNThenTheStartupProceeds) {
  Scripted s;
  Wire w(s);
  w.conn.Receive(std::string("\x00\x00\x00\x08\x04\xd2\x16\x2f", 8));  // SSLRequest
  EXPECT_EQ(w.Take(), "N");
  EXPECT_EQ(w.conn.state(), Connection::State::kStartup);
  const auto msgs = w.Send(UserStartup());
  ASSERT_FALSE(msgs.empty());
  EXPECT_EQ(msgs.front().type, 'R');
  EXPECT_EQ(msgs.back().type, 'Z');
  EXPECT_EQ(w.conn.state(), Connection::State::kReady);
}

TEST(PgwireStartup, GssEncRequestThenSslRequestAreBothDeclined) {
  Scripted s;
  Wire w(s);
  w.conn.Receive(kGssEncRequest);
  EXPECT_EQ(w.Take(), "N");
  w.conn.Receive(kSslRequest);
  EXPECT_EQ(w.Take(), "N");
  w.Start();
}

TEST(PgwireStartup, ASecondSslRequestIsAProtocolViolation) {
  Scripted s;
  Wire w(s);
  w.conn.Receive(kSslRequest);
  EXPECT_EQ(w.Take(), "N");
  const auto msgs = w.Send(kSslRequest);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['S'], "FATAL");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kProtocolViolation);
  EXPECT_TRUE(w.conn.closed());
}

TEST(PgwireStartup, HandshakeSentOneByteAtATimeIsTheSame) {
  Scripted s;
  Wire w(s);
  const std::string bytes = kSslRequest + UserStartup() + Query("SELECT 1");
  std::string out;
  for (const char c : bytes) {
    w.conn.Receive(std::string_view(&c, 1));
    out += w.Take();
  }
  ASSERT_EQ(out.substr(0, 1), "N");
  EXPECT_EQ(Types(Split(out.substr(1))), "RSSSSSSSSSSSSSKZTDCZ");
  EXPECT_EQ(s.queries, std::vector<std::string>{"SELECT 1"});
}

TEST(PgwireStartup, AnotherDatabaseIsRefused3D000) {
  Scripted s;
  Wire w(s);
  const auto msgs = w.Send(UserStartup("alice", "postgres"));
  ASSERT_EQ(msgs.size(), 1u);
  auto f = Fields(msgs[0]);
  EXPECT_EQ(f['S'], "FATAL");
  EXPECT_EQ(f['V'], "FATAL");
  EXPECT_EQ(f['C'], sqlstate::kInvalidCatalogName);
  EXPECT_EQ(f['M'], "database \"postgres\" does not exist");
  EXPECT_TRUE(w.conn.closed());
  EXPECT_EQ(s.opened, 0);
}

TEST(PgwireStartup, TheDatabaseDefaultsToTheUserName) {
  Scripted s;
  Wire w(s);
  w.conn.Receive(Startup({{"user", "tandem"}}));
  EXPECT_EQ(w.conn.state(), Connection::State::kReady);
  EXPECT_EQ(s.last_startup->database, "tandem");
}

TEST(PgwireStartup, NoUserIsRefused28000) {
  Scripted s;
  Wire w(s);
  const auto msgs = w.Send(Startup({{"database", "tandem"}}));
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kInvalidAuthorizationSpecification);
  EXPECT_TRUE(w.conn.closed());
}

TEST(PgwireStartup, ProtocolTwoIsRefused0A000) {
  Scripted s;
  Wire w(s);
  const auto msgs = w.Send(Startup({{"user", "alice"}}, 2u << 16));
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kFeatureNotSupported);
  EXPECT_EQ(Fields(msgs[0])['M'], "unsupported frontend protocol 2.0: server supports 3.0 to 3.0");
  EXPECT_TRUE(w.conn.closed());
}

TEST(PgwireStartup, ANewerMinorVersionAndProtocolOptionsAreNegotiatedDown) {
  Scripted s;
  Wire w(s);
  const auto msgs = w.Send(Startup(
      {{"user", "alice"}, {"database", "tandem"}, {"_pq_.compression", "on"}}, (3u << 16) | 2));
  ASSERT_GE(msgs.size(), 2u);
  ASSERT_EQ(msgs[0].type, 'v');
  EXPECT_EQ(msgs[0].body, Int32(0) + Int32(1) + Str("_pq_.compression"));
  EXPECT_EQ(msgs[1].type, 'R');
  EXPECT_EQ(w.conn.state(), Connection::State::kReady);
  for (const auto& [n, v] : s.last_startup->parameters) EXPECT_NE(n, "_pq_.compression");
}

TEST(PgwireStartup, AFactoryRefusalIsSentAsFatal) {
  Scripted s;
  s.refuse = ErrorFields::Error(sqlstate::kTooManyConnections, "no sessions left");
  Wire w(s);
  const auto msgs = w.Send(UserStartup());
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['S'], "FATAL");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kTooManyConnections);
  EXPECT_TRUE(w.conn.closed());
  EXPECT_EQ(w.cancels.size(), 0u) << "a refused session leaves no cancel key behind";
}

TEST(PgwireStartup, ARefusedStartupStillDeclinesSslAndSaysWhy) {
  Scripted s;
  Wire w(s);
  w.conn.RefuseStartup(ErrorFields::Fatal(sqlstate::kTooManyConnections, "too many connections"));
  w.conn.Receive(kSslRequest);
  EXPECT_EQ(w.Take(), "N");
  const auto msgs = w.Send(UserStartup());
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kTooManyConnections);
  EXPECT_TRUE(w.conn.closed());
  EXPECT_EQ(s.opened, 0);
}

TEST(PgwireStartup, ReplicationConnectionsAreRefused) {
  Scripted s;
  Wire w(s);
  const auto msgs =
      w.Send(Startup({{"user", "alice"}, {"database", "tandem"}, {"replication", "database"}}));
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kFeatureNotSupported);
}

// ---- simple queries -----------------------------------------------------------------------------

TEST(PgwireQuery, AnswerIsRowDescriptionDataRowsCommandCompleteReadyForQuery) {
  Scripted s;
  s.answer = [](const std::string&, std::shared_ptr<QuerySink> sink) {
    const FieldDescription f[] = {{"k", kInt8}, {"v", kText}};
    EXPECT_TRUE(sink->RowDescription(f));
    const Value r1[] = {"1", "one"};
    const Value r2[] = {"2", std::nullopt};
    const Value r3[] = {"3", ""};
    EXPECT_TRUE(sink->DataRow(r1));
    EXPECT_TRUE(sink->DataRow(r2));
    EXPECT_TRUE(sink->DataRow(r3));
    EXPECT_TRUE(sink->CommandComplete("SELECT 3"));
    sink->Finish(TransactionStatus::kIdle);
  };
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Query("SELECT * FROM pairs"));
  ASSERT_EQ(Types(msgs), "TDDDCZ");
  const auto cols = Columns(msgs[0]);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[0].name, "k");
  EXPECT_EQ(cols[0].table_oid, 0u);
  EXPECT_EQ(cols[0].attnum, 0u);
  EXPECT_EQ(cols[0].type_oid, 20u);
  EXPECT_EQ(cols[0].typlen, 8);
  EXPECT_EQ(cols[0].typmod, -1);
  EXPECT_EQ(cols[0].format, 0u);
  EXPECT_EQ(cols[1].type_oid, 25u);
  EXPECT_EQ(cols[1].typlen, -1);
  EXPECT_EQ(RowValues(msgs[1]), (std::vector<std::optional<std::string>>{"1", "one"}));
  EXPECT_EQ(RowValues(msgs[2]), (std::vector<std::optional<std::string>>{"2", std::nullopt}));
  EXPECT_EQ(RowValues(msgs[3]), (std::vector<std::optional<std::string>>{"3", ""}));
  // NULL is the length -1 and no bytes; an empty string is the length 0.
  EXPECT_EQ(msgs[2].body, Int16(2) + Int32(1) + "2" + Int32(0xffffffff));
  EXPECT_EQ(msgs[4].body, Str("SELECT 3"));
  EXPECT_EQ(msgs[5].body, "I");
  EXPECT_EQ(s.queries, std::vector<std::string>{"SELECT * FROM pairs"});
}

TEST(PgwireQuery, SeveralStatementsInOneMessageEndInOneReadyForQuery) {
  Scripted s;
  s.answer = [](const std::string& sql, std::shared_ptr<QuerySink> sink) {
    EXPECT_EQ(sql, "CREATE TABLE t (k int8); INSERT INTO t VALUES (1); SELECT 1; ;");
    sink->CommandComplete("CREATE TABLE");
    sink->CommandComplete("INSERT 0 1");
    const FieldDescription f("?column?", kInt4);
    sink->RowDescription({&f, 1});
    const Value v[] = {"1"};
    sink->DataRow(v);
    sink->CommandComplete("SELECT 1");
    sink->Finish(TransactionStatus::kIdle);
  };
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Query("CREATE TABLE t (k int8); INSERT INTO t VALUES (1); SELECT 1; ;"));
  ASSERT_EQ(Types(msgs), "CCTDCZ");
  EXPECT_EQ(msgs[0].body, Str("CREATE TABLE"));
  EXPECT_EQ(msgs[1].body, Str("INSERT 0 1"));
}

TEST(PgwireQuery, AnErrorMidMessageEndsItsStatementsWithAllFieldsThenReadyForQuery) {
  Scripted s;
  s.answer = [](const std::string&, std::shared_ptr<QuerySink> sink) {
    sink->CommandComplete("INSERT 0 1");
    const FieldDescription f("k", kInt8);
    sink->RowDescription({&f, 1});
    const Value v[] = {"7"};
    sink->DataRow(v);
    ErrorFields e =
        ErrorFields::Error(sqlstate::kUndefinedTable, "relation \"nope\" does not exist");
    e.detail = "a detail";
    e.hint = "a hint";
    e.position = 42;
    EXPECT_TRUE(sink->Error(e));  // in the middle of the rows: PostgreSQL may fail there too
    sink->Finish(TransactionStatus::kIdle);
  };
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Query("INSERT INTO t VALUES (1); SELECT k FROM nope; SELECT 2"));
  ASSERT_EQ(Types(msgs), "CTDEZ");
  auto f = Fields(msgs[3]);
  EXPECT_EQ(f['S'], "ERROR");
  EXPECT_EQ(f['V'], "ERROR");
  EXPECT_EQ(f['C'], "42P01");
  EXPECT_EQ(f['M'], "relation \"nope\" does not exist");
  EXPECT_EQ(f['D'], "a detail");
  EXPECT_EQ(f['H'], "a hint");
  EXPECT_EQ(f['P'], "42");
  EXPECT_EQ(msgs[4].body, "I");
  // The session goes on.
  EXPECT_EQ(w.conn.state(), Connection::State::kReady);
}

TEST(PgwireQuery, ReadyForQueryCarriesTheTransactionStatusTheHandlerReports) {
  testing::FakeSessions fake;  // BEGIN / errors / ROLLBACK as PostgreSQL tracks them
  std::mutex mu;
  std::condition_variable cv;
  int wakes = 0;
  CancelRegistry registry;
  Connection conn(fake, registry, ConnectionOptions(), [&] {
    std::lock_guard<std::mutex> lock(mu);
    ++wakes;
    cv.notify_all();
  });
  std::string out;
  // Sends `bytes`, then pumps as the worker thread wakes the connection, until ReadyForQuery.
  auto round = [&](const std::string& bytes) -> std::vector<Msg> {
    conn.Receive(bytes);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      out += std::string(conn.output());
      conn.ConsumeOutput(conn.output().size());
      if (!out.empty() && conn.state() != Connection::State::kQuery) break;
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_until(lock, deadline, [&] { return wakes > 0; })) {
        ADD_FAILURE() << "no answer within 10 s";
        break;
      }
      wakes = 0;
      lock.unlock();
      conn.Pump();
    }
    std::vector<Msg> msgs = Split(out);
    out.clear();
    return msgs;
  };
  ASSERT_EQ(round(UserStartup()).back().body, "I");
  EXPECT_EQ(Types(round(Query("BEGIN"))), "CZ");
  EXPECT_EQ(conn.transaction_status(), TransactionStatus::kInTransaction);
  auto msgs = round(Query("SELECT 1"));
  EXPECT_EQ(Types(msgs), "TDCZ");
  EXPECT_EQ(msgs.back().body, "T");
  msgs = round(Query("SELECT * FROM missing"));
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['C'], "42P01");
  EXPECT_EQ(Fields(msgs[0])['P'], "15");
  EXPECT_EQ(msgs.back().body, "E");
  msgs = round(Query("SELECT 1"));
  EXPECT_EQ(Fields(msgs[0])['C'], "25P02");
  EXPECT_EQ(msgs.back().body, "E");
  msgs = round(Query("ROLLBACK"));
  EXPECT_EQ(msgs[0].body, Str("ROLLBACK"));
  EXPECT_EQ(msgs.back().body, "I");
  EXPECT_EQ(conn.transaction_status(), TransactionStatus::kIdle);
}

TEST(PgwireQuery, AnAnswerGivenLaterFromAnotherThreadGoesOutOnPump) {
  Scripted s;
  std::shared_ptr<QuerySink> held;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) { held = std::move(sink); };
  Wire w(s);
  w.Start();
  // Two queries pipelined: the second is not read until the first is answered.
  EXPECT_TRUE(w.Send(Query("SELECT slow") + Query("SELECT next")).empty());
  EXPECT_EQ(w.conn.state(), Connection::State::kQuery);
  EXPECT_EQ(s.queries.size(), 1u);
  ASSERT_TRUE(held);
  const int wakes_before = w.wakes;
  std::thread answerer([sink = held] {
    const FieldDescription f("x", kBool);
    sink->RowDescription({&f, 1});
    const Value v[] = {"t"};
    sink->DataRow(v);
    sink->CommandComplete("SELECT 1");
    sink->Finish(TransactionStatus::kIdle);
  });
  answerer.join();
  EXPECT_GT(w.wakes, wakes_before);
  EXPECT_TRUE(w.conn.output().empty()) << "nothing moves before Pump";
  held.reset();
  s.answer = [](const std::string&, std::shared_ptr<QuerySink> sink) {
    sink->CommandComplete("SHOW");
    sink->Finish(TransactionStatus::kIdle);
  };
  w.conn.Pump();
  EXPECT_EQ(Types(Split(w.Take())), "TDCZCZ");
  EXPECT_EQ(s.queries, (std::vector<std::string>{"SELECT slow", "SELECT next"}));
}

TEST(PgwireQuery, AnEmptyQueryIsEmptyQueryResponse) {
  Scripted s;
  s.answer = [](const std::string& sql, std::shared_ptr<QuerySink> sink) {
    EXPECT_EQ(sql, "");
    sink->EmptyQuery();
    sink->Finish(TransactionStatus::kIdle);
  };
  Wire w(s);
  w.Start();
  EXPECT_EQ(Types(w.Send(Query(""))), "IZ");
}

TEST(PgwireQuery, NoticesAndParameterStatusMayComeAnywhere) {
  Scripted s;
  s.answer = [](const std::string&, std::shared_ptr<QuerySink> sink) {
    sink->Notice(ErrorFields(Severity::kWarning, "01000", "careful"));
    sink->ParameterStatus("application_name", "renamed");
    sink->CommandComplete("SET");
    sink->Finish(TransactionStatus::kIdle);
  };
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Query("SET application_name = renamed"));
  ASSERT_EQ(Types(msgs), "NSCZ");
  EXPECT_EQ(Fields(msgs[0])['S'], "WARNING");
  EXPECT_EQ(msgs[1].body, Str("application_name") + Str("renamed"));
}

TEST(PgwireQuery, CopyOutStreamsCopyDataBetweenCopyOutResponseAndCopyDone) {
  Scripted s;
  s.answer = [](const std::string&, std::shared_ptr<QuerySink> sink) {
    sink->CopyOutResponse(3);
    sink->CopyData("1\t1\ta\n");
    sink->CopyData("2\t-1\t\\N\n");
    sink->CopyDone();
    sink->CommandComplete("SUBSCRIBE");
    sink->Finish(TransactionStatus::kIdle);
  };
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Query("SUBSCRIBE t"));
  ASSERT_EQ(Types(msgs), "HddcCZ");
  // CopyOutResponse: Int8 0 (text), Int16 columns, an Int16 0 (text) per column.
  EXPECT_EQ(msgs[0].body, std::string(1, '\0') + Int16(3) + Int16(0) + Int16(0) + Int16(0));
  EXPECT_EQ(msgs[1].body, "1\t1\ta\n");
  EXPECT_EQ(msgs[3].body, "");
}

TEST(PgwireQuery, QueryTextThatIsNotUtf8IsError22021AndTheSessionGoesOn) {
  Scripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Query("SELECT '\xc3\x28'"));
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kCharacterNotInRepertoire);
  // PostgreSQL's words: the bytes the lead byte announces (base/utf8.h).
  EXPECT_EQ(Fields(msgs[0])['M'], "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28");
  EXPECT_TRUE(s.queries.empty());
  EXPECT_EQ(Types(w.Send(Query("SELECT 1"))), "TDCZ");
}

TEST(PgwireQuery, TerminateEndsTheSessionSilently) {
  Scripted s;
  Wire w(s);
  w.Start();
  EXPECT_TRUE(w.Send(kTerminate).empty());
  EXPECT_TRUE(w.conn.closed());
  EXPECT_EQ(w.conn.close_reason(), "Terminate");
  EXPECT_EQ(s.closed, 1) << "the handler is destroyed when the session ends";
  EXPECT_EQ(w.cancels.size(), 0u);
}

TEST(PgwireQuery, InputThatEndsBetweenMessagesIsAnsweredThenClosed) {
  Scripted s;
  Wire w(s);
  w.Start();
  w.conn.Receive(Query("SELECT 1"));
  w.conn.ReceiveEnd();
  EXPECT_EQ(Types(Split(w.Take())), "TDCZ");
  EXPECT_TRUE(w.conn.closed());
}

// The client went away while its Query runs (a SUBSCRIBE that may send nothing for hours): the
// handler is told to cancel, nothing pipelined behind is run, and the connection closes.
TEST(PgwireQuery, InputThatEndsWhileAQueryIsAnsweredCancelsItAndCloses) {
  Scripted s;
  std::shared_ptr<QuerySink> held;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) { held = std::move(sink); };
  Wire w(s);
  w.Start();
  w.conn.Receive(Query("SUBSCRIBE t") + Query("SELECT 1"));
  ASSERT_TRUE(held);
  EXPECT_EQ(s.cancels, 0);
  w.conn.ReceiveEnd();
  EXPECT_EQ(s.cancels, 1);
  EXPECT_FALSE(w.conn.wants_input());
  held->Error(
      ErrorFields::Error(sqlstate::kQueryCanceled, "canceling statement due to user request"));
  held->Finish(TransactionStatus::kIdle);
  w.conn.Pump();
  EXPECT_EQ(Types(Split(w.Take())), "EZ");
  EXPECT_TRUE(w.conn.closed());
  EXPECT_EQ(s.queries, std::vector<std::string>{"SUBSCRIBE t"}) << "nothing behind it is run";
  EXPECT_EQ(s.closed, 1);
}

TEST(PgwireQuery, ASessionEndingMidAnswerMakesItsSinkUnwanted) {
  Scripted s;
  std::shared_ptr<QuerySink> held;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) { held = std::move(sink); };
  auto w = std::make_unique<Wire>(s);
  w->Start();
  w->conn.Receive(Query("SELECT slow"));
  ASSERT_TRUE(held);
  EXPECT_TRUE(held->wanted());
  w.reset();  // the client left
  EXPECT_EQ(s.closed, 1);
  EXPECT_FALSE(held->wanted());
  const FieldDescription f("x", kInt8);
  EXPECT_FALSE(held->RowDescription({&f, 1}));
  held->Finish(TransactionStatus::kIdle);  // harmless
}

// ---- bounds on the answer and the output --------------------------------------------------------

TEST(PgwireBounds, AnAnswerBeyondMaxBufferedBytesCutsTheClient53200) {
  Scripted s;
  bool still_wanted = true;
  int rows = 0;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) {
    const FieldDescription f("b", kText);
    sink->RowDescription({&f, 1});
    const Value v[] = {std::string(100, 'b')};
    while ((still_wanted = sink->DataRow(v)) && rows < 100000) ++rows;
    sink->CommandComplete("SELECT");
    sink->Finish(TransactionStatus::kIdle);
  };
  ConnectionOptions o;
  o.max_buffered_bytes = 10000;
  o.output_high_water = 1000;
  Wire w(s, o);
  w.Start();
  w.conn.Receive(Query("SELECT big"));
  EXPECT_FALSE(still_wanted);
  EXPECT_LT(rows, 100);
  const auto msgs = Split(w.Take());
  ASSERT_FALSE(msgs.empty());
  EXPECT_EQ(msgs.back().type, 'E');
  EXPECT_EQ(Fields(msgs.back())['S'], "FATAL");
  EXPECT_EQ(Fields(msgs.back())['C'], sqlstate::kOutOfMemory);
  EXPECT_TRUE(w.conn.closed());
}

TEST(PgwireBounds, AClientThatReadsNothingIsCutOnceItsAnswerOverflows) {
  Scripted s;
  std::shared_ptr<QuerySink> held;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) { held = std::move(sink); };
  ConnectionOptions o;
  o.max_buffered_bytes = 10000;
  o.output_high_water = 1000;
  Wire w(s, o);
  w.Start();
  w.conn.Receive(Query("SUBSCRIBE t"));
  ASSERT_TRUE(held);
  held->CopyOutResponse(1);
  const std::string line(500, 'x');
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(held->CopyData(line));
  w.conn.Pump();  // 1 KB out, up to high water (then one message more), and the client reads none
  w.conn.Pump();
  ASSERT_GE(w.conn.output().size(), o.output_high_water);
  EXPECT_TRUE(held->CopyData(line));  // wakes the owner …
  w.conn.Pump();                      // … which takes nothing: the output is above high water
  EXPECT_EQ(w.conn.state(), Connection::State::kQuery);
  int sent = 0;
  const int wakes = w.wakes;
  while (held->CopyData(line) && sent < 1000) ++sent;
  EXPECT_LT(sent, 25) << "the sink refuses once 10000 bytes wait";
  EXPECT_GT(w.wakes, wakes) << "the overflow wakes the owner, though a wake was out";
  w.conn.Pump();
  EXPECT_TRUE(w.conn.closed());
  const auto msgs = Split(w.Take());
  ASSERT_FALSE(msgs.empty());
  EXPECT_EQ(Fields(msgs.back())['C'], sqlstate::kOutOfMemory);
  EXPECT_EQ(s.closed, 1);
}

TEST(PgwireBounds, TheConnectionTakesWholeMessagesOnlyUpToHighWater) {
  Scripted s;
  const std::string value(295, 'v');  // a DataRow of 1 + 4 + 2 + 4 + 295 = 306 bytes
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) {
    const FieldDescription f("v", kText);
    sink->RowDescription({&f, 1});
    const Value v[] = {value};
    for (int i = 0; i < 10; ++i) EXPECT_TRUE(sink->DataRow(v));
    const Value big[] = {std::string(2000, 'b')};  // alone larger than high water
    EXPECT_TRUE(sink->DataRow(big));
    sink->CommandComplete("SELECT 11");
    sink->Finish(TransactionStatus::kIdle);
  };
  ConnectionOptions o;
  o.output_high_water = 1000;
  Wire w(s, o);
  w.Start();
  w.conn.Receive(Query("SELECT v"));
  std::string all;
  std::vector<std::size_t> taken;
  for (int turn = 0; turn < 20 && !w.conn.output().empty(); ++turn) {
    taken.push_back(w.conn.output().size());
    all += w.Take();
    w.conn.Pump();
  }
  // RowDescription and 3 rows (944 bytes; a 4th would pass 1000), then 3 rows at a time, then
  // the big row alone, then the rest with ReadyForQuery.
  const std::size_t row_description = 7 + 20, row = 306, big = 1 + 4 + 2 + 4 + 2000;
  const std::size_t command_complete = 1 + 4 + 10, ready_for_query = 6;
  EXPECT_EQ(taken, (std::vector<std::size_t>{row_description + 3 * row, 3 * row, 3 * row, row, big,
                                             command_complete + ready_for_query}));
  EXPECT_EQ(Types(Split(all)), "T" + std::string(11, 'D') + "CZ");
  EXPECT_EQ(w.conn.state(), Connection::State::kReady);
}

TEST(PgwireBounds, AboveHighWaterTheConnectionReadsNoMessageUntilOutputIsSent) {
  Scripted s;
  ConnectionOptions o;
  o.output_high_water = 10;  // below one answer
  Wire w(s, o);
  w.conn.Receive(UserStartup());  // its answer alone is above 10 bytes
  EXPECT_EQ(w.conn.state(), Connection::State::kReady);
  w.conn.Receive(Query("SELECT 1") + Query("SELECT 1"));
  EXPECT_TRUE(s.queries.empty()) << "output above high water: no message is read";
  EXPECT_TRUE(w.conn.wants_input()) << "a client may pipeline a little";
  w.conn.Receive(Query(std::string(64 * 1024, 'x')));
  EXPECT_FALSE(w.conn.wants_input()) << "more than a little: read no more";
  // Each answer goes out a message at a time (each message is above high water); the next Query
  // is read only once the whole answer, ReadyForQuery included, has been sent.
  w.Take();  // the startup's answer
  std::string answers;
  for (int turn = 0; turn < 100 && (s.queries.size() < 3 || !w.conn.output().empty()); ++turn) {
    const std::size_t read = s.queries.size();
    answers += w.Take();
    w.conn.Pump();
    EXPECT_LE(s.queries.size(), read + 1);
  }
  EXPECT_EQ(s.queries.size(), 3u);
  EXPECT_EQ(Types(Split(answers)), "TDCZTDCZTDCZ");
  EXPECT_TRUE(w.conn.wants_input());
}

// ---- back-pressure ------------------------------------------------------------------------------

// An answer many times the buffer reaches a client that reads, however slowly: the producer waits
// for room, and the connection's taking lets it go on. Nothing overflows, nobody is cut.
TEST(PgwireBackPressure, AProducerThatWaitsForRoomStreamsManyBuffersToAClientThatReads) {
  using std::chrono::steady_clock;
  constexpr int kRows = 1000;
  Scripted s;
  std::shared_ptr<QuerySink> held;
  std::thread producer;
  std::atomic<bool> all_wanted{true};
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) {
    held = sink;
    producer = std::thread([sink, &all_wanted] {
      const FieldDescription f("v", kText);
      sink->RowDescription({&f, 1});
      for (int i = 0; i < kRows; ++i) {
        const Value v[] = {std::to_string(i) + std::string(100, 'v')};
        if (!sink->WaitForRoom(steady_clock::now() + std::chrono::seconds(30)) ||
            !sink->DataRow(v)) {
          all_wanted = false;
          break;
        }
      }
      sink->CommandComplete("SELECT 1000");
      sink->Finish(TransactionStatus::kIdle);
    });
  };
  ConnectionOptions o;
  o.max_buffered_bytes = 4000;  // ~35 rows; the answer is ~115 KB
  o.output_high_water = 1000;
  // Joined after the connection is gone (which releases a producer still waiting), however the
  // test ends.
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{producer};
  Wire w(s, o);
  w.Start();
  w.conn.Receive(Query("SELECT v"));
  ASSERT_TRUE(held);
  // The client has read nothing yet: the producer stops at room, its answer still wanted.
  ASSERT_TRUE(WaitUntil([&] { return !held->has_room(); }, std::chrono::seconds(10)));
  EXPECT_TRUE(held->wanted());
  // Now the client reads everything sent, as the server's loop would pump on each wake.
  std::string got;
  std::size_t most = 0;
  const auto deadline = steady_clock::now() + std::chrono::seconds(60);
  while (w.conn.state() == Connection::State::kQuery && steady_clock::now() < deadline) {
    const int seen = w.wakes;
    w.conn.Pump();
    most = std::max(most, w.conn.output().size());
    const std::string out = w.Take();
    got += out;
    if (out.empty()) w.WaitForWake(seen, std::chrono::milliseconds(100));
  }
  got += w.Take();
  producer.join();
  EXPECT_TRUE(all_wanted);
  EXPECT_FALSE(w.conn.closed());
  const auto msgs = Split(got);
  ASSERT_EQ(msgs.size(), std::size_t{kRows} + 3) << Types(msgs).substr(0, 40);
  for (int i = 0; i < kRows; ++i) {
    ASSERT_EQ(RowValues(msgs[1 + i])[0], std::to_string(i) + std::string(100, 'v'));
  }
  EXPECT_EQ(msgs.back().type, 'Z');
  EXPECT_LE(most, o.output_high_water + 200) << "high water and one message at most";
}

TEST(PgwireBackPressure, NotifyWhenRoomCallsBackOnTheConnectionsThreadAsItTakes) {
  Scripted s;
  std::shared_ptr<QuerySink> held;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) { held = std::move(sink); };
  ConnectionOptions o;
  o.max_buffered_bytes = 4000;  // room: at most 2000 bytes queued
  o.output_high_water = 1000;
  Wire w(s, o);
  w.Start();
  w.conn.Receive(Query("SUBSCRIBE t"));
  ASSERT_TRUE(held);
  EXPECT_TRUE(held->CopyOutResponse(1));                       // 10 bytes
  const std::string line(495, 'x');                            // CopyData: 500 bytes
  while (held->has_room()) ASSERT_TRUE(held->CopyData(line));  // the connection takes nothing
  int called = 0;
  std::thread::id on;
  EXPECT_FALSE(held->NotifyWhenRoom([&] {
    ++called;
    on = std::this_thread::get_id();
  }));
  EXPECT_EQ(called, 0);
  w.conn.Pump();  // takes up to high water: 510 bytes, leaving 1500 queued — room
  EXPECT_EQ(called, 1);
  EXPECT_EQ(on, std::this_thread::get_id());
  EXPECT_TRUE(held->NotifyWhenRoom([&] { ++called; })) << "room now: not kept";
  w.Take();
  w.conn.Pump();
  EXPECT_EQ(called, 1);
  // A callback still waiting when the session ends is called: the answer is unwanted.
  while (held->has_room()) ASSERT_TRUE(held->CopyData(line));
  EXPECT_FALSE(held->NotifyWhenRoom([&] { ++called; }));
  w.conn.Terminate(ErrorFields::Fatal(sqlstate::kAdminShutdown, "shutting down"));
  EXPECT_EQ(called, 2);
  EXPECT_FALSE(held->wanted());
  EXPECT_TRUE(held->NotifyWhenRoom([&] { ++called; })) << "unwanted: nothing to wait for";
  EXPECT_FALSE(held->CopyData(line));
}

TEST(PgwireBackPressure, WaitForRoomEndsAtItsDeadlineAndWhenTheSessionEnds) {
  using std::chrono::steady_clock;
  Scripted s;
  std::shared_ptr<QuerySink> held;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) { held = std::move(sink); };
  ConnectionOptions o;
  o.max_buffered_bytes = 4000;
  Wire w(s, o);
  w.Start();
  w.conn.Receive(Query("SUBSCRIBE t"));
  ASSERT_TRUE(held);
  held->CopyOutResponse(1);
  while (held->has_room()) ASSERT_TRUE(held->CopyData(std::string(495, 'x')));
  const auto start = steady_clock::now();
  EXPECT_FALSE(held->WaitForRoom(start + std::chrono::milliseconds(50)));
  EXPECT_GE(steady_clock::now() - start, std::chrono::milliseconds(50));
  EXPECT_TRUE(held->wanted()) << "a deadline passing ends nothing";
  std::atomic<bool> room{true};
  std::thread waiter(
      [&] { room = held->WaitForRoom(steady_clock::now() + std::chrono::seconds(60)); });
  w.conn.Terminate(ErrorFields::Fatal(sqlstate::kAdminShutdown, "shutting down"));
  waiter.join();  // released by the session's end, long before its deadline
  EXPECT_FALSE(room);
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(30));
}

// What SQL can make too wide or too large for the protocol is an ERROR the client reads, and the
// session goes on: never an abort.
TEST(PgwireBounds, AResultWiderThanPostgresAllowsIsError54011NotAnAbort) {
  for (const std::size_t width : {kMaxColumns + 1, std::size_t{32768}, std::size_t{70000}}) {
    Scripted s;
    std::vector<bool> returned;
    s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) {
      std::vector<FieldDescription> fields(width, FieldDescription("c", kInt4));
      returned.push_back(sink->RowDescription(fields));
      std::vector<Value> row(width, Value("1"));
      returned.push_back(sink->DataRow(row));  // ignored: the statement was refused
      returned.push_back(sink->CommandComplete("SELECT 1"));
      returned.push_back(sink->wanted());
      sink->Finish(TransactionStatus::kFailed);
    };
    Wire w(s);
    w.Start();
    const auto msgs = w.Send(Query("SELECT wide"));
    ASSERT_EQ(Types(msgs), "EZ") << width;
    EXPECT_EQ(Fields(msgs[0])['S'], "ERROR");
    EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kTooManyColumns);
    EXPECT_EQ(Fields(msgs[0])['M'], "target lists can have at most 1664 entries");
    EXPECT_EQ(msgs[1].body, "E");
    EXPECT_EQ(returned, std::vector<bool>(4, false));
    EXPECT_FALSE(w.conn.closed());
    s.answer = Scripted().answer;
    EXPECT_EQ(Types(w.Send(Query("SELECT 1"))), "TDCZ") << "the session goes on";
  }
}

TEST(PgwireBounds, AResultOfExactlyMaxColumnsIsSent) {
  Scripted s;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) {
    std::vector<FieldDescription> fields(kMaxColumns, FieldDescription("c", kInt4));
    EXPECT_TRUE(sink->RowDescription(fields));
    std::vector<Value> row(kMaxColumns, Value("1"));
    EXPECT_TRUE(sink->DataRow(row));
    sink->CommandComplete("SELECT 1");
    sink->Finish(TransactionStatus::kIdle);
  };
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Query("SELECT wide"));
  ASSERT_EQ(Types(msgs), "TDCZ");
  EXPECT_EQ(Columns(msgs[0]).size(), kMaxColumns);
  EXPECT_EQ(RowValues(msgs[1]).size(), kMaxColumns);
}

TEST(PgwireBounds, ACopyWiderThanPostgresAllowsIsError54011) {
  Scripted s;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) {
    EXPECT_FALSE(sink->CopyOutResponse(40000));
    EXPECT_FALSE(sink->CopyData("1\n"));
    EXPECT_FALSE(sink->CopyDone());
    sink->Finish(TransactionStatus::kIdle);
  };
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Query("SUBSCRIBE wide"));
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kTooManyColumns);
}

// A row larger than room (half the buffer) could not be queued however the producer waits.
TEST(PgwireBounds, ARowLargerThanRoomIsError54000AndTheSessionGoesOn) {
  Scripted s;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) {
    const FieldDescription f("b", kBytea);
    EXPECT_TRUE(sink->RowDescription({&f, 1}));
    const Value small[] = {std::string(10, 'x')};
    EXPECT_TRUE(sink->DataRow(small));
    const Value huge[] = {std::string(8000, 'x')};  // fits the buffer, not room
    EXPECT_FALSE(sink->DataRow(huge));
    EXPECT_FALSE(sink->CommandComplete("SELECT 2"));
    sink->Finish(TransactionStatus::kIdle);
  };
  ConnectionOptions o;
  o.max_buffered_bytes = 10000;
  Wire w(s, o);
  w.Start();
  const auto msgs = w.Send(Query("SELECT huge"));
  ASSERT_EQ(Types(msgs), "TDEZ");
  EXPECT_EQ(Fields(msgs[2])['S'], "ERROR");
  EXPECT_EQ(Fields(msgs[2])['C'], sqlstate::kProgramLimitExceeded);
  EXPECT_EQ(Fields(msgs[2])['M'],
            "a row of 8011 bytes exceeds the 5000 bytes the server can send to a client at once");
  EXPECT_FALSE(w.conn.closed());
}

TEST(PgwireBounds, AStartupPacketLongerThan10000BytesIsRefusedFromItsLengthAlone) {
  Scripted s;
  Wire w(s);
  const auto msgs = w.Send(Int32(10001));
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kProtocolViolation);
  EXPECT_TRUE(w.conn.closed());
}

TEST(PgwireBounds, AQueryLongerThanMaxMessageBytesIsRefusedFromItsHeaderAlone) {
  Scripted s;
  ConnectionOptions o;
  o.max_message_bytes = 1000;
  Wire w(s, o);
  w.Start();
  EXPECT_EQ(Types(w.Send(Query(std::string(990, 'x')))), "TDCZ");  // 995 bytes: fits
  const auto msgs = w.Send("Q" + Int32(1005));                     // 1001 bytes of contents
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['S'], "FATAL");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kProtocolViolation);
  EXPECT_EQ(Fields(msgs[0])['M'], "a Query message of 1001 bytes exceeds the limit of 1000 bytes");
  EXPECT_TRUE(w.conn.closed());
}

TEST(PgwireBounds, SmallMessagesAreBoundedAt10000Bytes) {
  Scripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send("S" + Int32(10005));
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kProtocolViolation);
  EXPECT_TRUE(w.conn.closed());
}

// ---- the extended query protocol ---------------------------------------------------------------

// Sessions that answer the extended protocol at once, on the connection's thread: statements
// "SELECT many" (i int8: 1 … 5), "SELECT $1" (?column? text: the parameter), "BEGIN" (no rows),
// and "SELECT bad" (a Parse error, 42601); an unknown statement 26000, an unknown portal 34000.
class ExtendedScripted : public QueryHandlerFactory {
 public:
  std::unique_ptr<QueryHandler> Open(const StartupParameters&, ErrorFields&) override {
    return std::make_unique<Session>(*this);
  }
  std::vector<std::string> asked;  // "Parse SELECT many", "Execute p 2", "Sync", …

 private:
  class Session : public QueryHandler {
   public:
    explicit Session(ExtendedScripted& s) : s_(s) {}
    void Query(std::string, std::shared_ptr<QuerySink> sink) override {
      sink->EmptyQuery();
      sink->Finish(status_);
    }
    void Cancel() override {}
    bool SupportsExtendedProtocol() const override { return true; }

    void Parse(ParseRequest r, std::shared_ptr<QuerySink> sink) override {
      s_.asked.push_back("Parse " + r.query);
      if (r.query == "SELECT bad") return Fail(*sink, sqlstate::kSyntaxError, "syntax error");
      statements_[r.statement] = {r.query, r.parameter_types};
      sink->ParseComplete();
      sink->Finish(status_);
    }
    void Bind(BindRequest r, std::shared_ptr<QuerySink> sink) override {
      s_.asked.push_back("Bind " + r.portal);
      auto it = statements_.find(r.statement);
      if (it == statements_.end()) {
        return Fail(*sink, "26000", "prepared statement \"" + r.statement + "\" does not exist");
      }
      Portal p;
      p.query = it->second.query;
      if (p.query == "SELECT many") {
        for (int i = 1; i <= 5; ++i) p.rows.push_back({std::to_string(i)});
      } else if (p.query == "SELECT $1") {
        p.rows.push_back({r.parameters.at(0)});
      }
      portals_[r.portal] = std::move(p);
      sink->BindComplete();
      sink->Finish(status_);
    }
    void Describe(Target target, std::string name, std::shared_ptr<QuerySink> sink) override {
      s_.asked.push_back(std::string("Describe ") + static_cast<char>(target) + " " + name);
      std::string query;
      if (target == Target::kStatement) {
        auto it = statements_.find(name);
        if (it == statements_.end()) {
          return Fail(*sink, "26000", "prepared statement \"" + name + "\" does not exist");
        }
        std::vector<std::uint32_t> types;
        for (std::uint32_t t : it->second.parameter_types) types.push_back(t ? t : kText.oid);
        sink->ParameterDescription(types);
        query = it->second.query;
      } else {
        auto it = portals_.find(name);
        if (it == portals_.end()) {
          return Fail(*sink, "34000", "portal \"" + name + "\" does not exist");
        }
        query = it->second.query;
      }
      if (query == "BEGIN") {
        sink->NoData();
      } else {
        const FieldDescription f(query == "SELECT many" ? "i" : "?column?",
                                 query == "SELECT many" ? kInt8 : kText);
        sink->RowDescription({&f, 1});
      }
      sink->Finish(status_);
    }
    void Execute(std::string portal, std::uint32_t max_rows,
                 std::shared_ptr<QuerySink> sink) override {
      s_.asked.push_back("Execute " + portal + " " + std::to_string(max_rows));
      auto it = portals_.find(portal);
      if (it == portals_.end()) {
        return Fail(*sink, "34000", "portal \"" + portal + "\" does not exist");
      }
      Portal& p = it->second;
      if (p.query == "BEGIN") {
        status_ = TransactionStatus::kInTransaction;
        sink->CommandComplete("BEGIN");
        sink->Finish(status_);
        return;
      }
      std::uint32_t sent = 0;
      while (p.next < p.rows.size() && (max_rows == 0 || sent < max_rows)) {
        sink->DataRow(p.rows[p.next++]);
        ++sent;
      }
      if (p.next < p.rows.size()) {
        sink->PortalSuspended();
      } else {
        sink->CommandComplete("SELECT " + std::to_string(p.rows.size()));
      }
      sink->Finish(status_);
    }
    void Close(Target target, std::string name, std::shared_ptr<QuerySink> sink) override {
      s_.asked.push_back(std::string("Close ") + static_cast<char>(target) + " " + name);
      (target == Target::kStatement ? statements_.erase(name) : portals_.erase(name));
      sink->CloseComplete();
      sink->Finish(status_);
    }
    void Sync(std::shared_ptr<QuerySink> sink) override {
      s_.asked.push_back("Sync");
      sink->Finish(status_);
    }

   private:
    struct Statement {
      std::string query;
      std::vector<std::uint32_t> parameter_types;
    };
    struct Portal {
      std::string query;
      std::vector<std::vector<Value>> rows;
      std::size_t next = 0;
    };
    void Fail(QuerySink& sink, const std::string& code, const std::string& message) {
      sink.Error(ErrorFields::Error(code, message));
      sink.Finish(status_);
    }

    ExtendedScripted& s_;
    TransactionStatus status_ = TransactionStatus::kIdle;
    std::map<std::string, Statement> statements_;
    std::map<std::string, Portal> portals_;
  };
};

std::string Parse(const std::string& name, const std::string& query,
                  const std::vector<std::uint32_t>& types = {}) {
  std::string body = Str(name) + Str(query) + Int16(static_cast<std::uint16_t>(types.size()));
  for (std::uint32_t t : types) body += Int32(t);
  return Typed('P', body);
}
// Text parameters, text results.
std::string Bind(const std::string& portal, const std::string& statement,
                 const std::vector<std::optional<std::string>>& params = {}) {
  std::string body =
      Str(portal) + Str(statement) + Int16(0) + Int16(static_cast<std::uint16_t>(params.size()));
  for (const auto& p : params) {
    body += p ? Int32(static_cast<std::uint32_t>(p->size())) + *p : Int32(0xffffffffu);
  }
  return Typed('B', body + Int16(0));
}
std::string Describe(char target, const std::string& name) {
  return Typed('D', std::string(1, target) + Str(name));
}
std::string Execute(const std::string& portal, std::uint32_t max_rows = 0) {
  return Typed('E', Str(portal) + Int32(max_rows));
}
std::string CloseMessage(char target, const std::string& name) {
  return Typed('C', std::string(1, target) + Str(name));
}

TEST(PgwireExtended, ParseBindDescribeExecuteSyncAnswerEachInOrderThenReadyForQuery) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Parse("", "SELECT $1") + Bind("", "", {"hello"}) + Describe('P', "") +
                           Execute("") + kSync);
  ASSERT_EQ(Types(msgs), "12TDCZ");
  EXPECT_EQ(Columns(msgs[2])[0].type_oid, kText.oid);
  EXPECT_EQ(RowValues(msgs[3]), (std::vector<std::optional<std::string>>{"hello"}));
  EXPECT_EQ(s.asked, (std::vector<std::string>{"Parse SELECT $1", "Bind ", "Describe P ",
                                               "Execute  0", "Sync"}));
}

TEST(PgwireExtended, AStatementsDescriptionIsItsParameterTypesThenItsColumns) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Parse("s1", "SELECT $1", {0}) + Describe('S', "s1") +
                           Parse("s2", "BEGIN") + Describe('S', "s2") + kSync);
  ASSERT_EQ(Types(msgs), "1tT1tnZ");
  ASSERT_EQ(ReadU16(msgs[1].body, 0), 1);
  EXPECT_EQ(ReadU32(msgs[1].body, 2), kText.oid) << "an unspecified type, as inferred";
  EXPECT_EQ(ReadU16(msgs[4].body, 0), 0) << "no parameters";
}

TEST(PgwireExtended, ARowLimitSuspendsThePortalAndTheNextExecuteResumesIt) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Parse("", "SELECT many") + Bind("cursor", "") + Execute("cursor", 2) +
                           Execute("cursor", 2) + Execute("cursor", 2) + kSync);
  ASSERT_EQ(Types(msgs), "12DDsDDsDCZ");
  EXPECT_EQ(RowValues(msgs[8]), (std::vector<std::optional<std::string>>{"5"}));
}

TEST(PgwireExtended, AfterAnErrorEveryMessageIsSkippedUntilSyncAndTheSessionGoesOn) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  auto msgs =
      w.Send(Parse("", "SELECT bad") + Bind("", "") + Execute("") + Query("SELECT 1") + kSync);
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kSyntaxError);
  EXPECT_EQ(s.asked, (std::vector<std::string>{"Parse SELECT bad", "Sync"}));
  msgs = w.Send(Bind("", "nope") + kSync);
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['M'], "prepared statement \"nope\" does not exist");
  EXPECT_EQ(Types(w.Send(Parse("", "SELECT many") + Bind("", "") + Execute("") + kSync)),
            "12DDDDDCZ");
}

TEST(PgwireExtended, ClosedStatementsAndPortalsAreGoneAndClosingAnUnknownNameIsNoError) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  auto msgs = w.Send(Parse("s", "SELECT many") + Bind("p", "s") + CloseMessage('P', "p") +
                     CloseMessage('S', "s") + CloseMessage('S', "never") + kSync);
  ASSERT_EQ(Types(msgs), "12333Z");
  msgs = w.Send(Execute("p") + kSync);
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['C'], "34000");
}

TEST(PgwireExtended, ReadyForQueryAfterSyncCarriesTheStatusTheSessionReports) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Parse("", "BEGIN") + Bind("", "") + Execute("") + kSync);
  ASSERT_EQ(Types(msgs), "12CZ");
  EXPECT_EQ(msgs[3].body, "T");
  EXPECT_EQ(w.conn.transaction_status(), TransactionStatus::kInTransaction);
}

TEST(PgwireExtended, AParseWhoseQueryIsNotUtf8IsRefused22021UntilSync) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Parse("", "SELECT '\xff'") + Bind("", "") + kSync);
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kCharacterNotInRepertoire);
  EXPECT_EQ(s.asked, (std::vector<std::string>{"Sync"})) << "the session never saw it";
}

TEST(PgwireExtended, AMalformedBindIsAProtocolViolationSkippedUntilSync) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  // Two format codes for one parameter, in a well-framed message: the stream is still in step.
  const auto msgs = w.Send(Typed('B', Str("") + Str("") + Int16(2) + Int16(0) + Int16(0) +
                                          Int16(1) + Int32(1) + "x" + Int16(0)) +
                           Execute("") + kSync);
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['S'], "ERROR");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kProtocolViolation);
  EXPECT_EQ(Fields(msgs[0])['M'],
            "invalid Bind message: 2 parameter format codes for 1 parameters (0, 1 or one each)");
  EXPECT_FALSE(w.conn.closed());
  EXPECT_EQ(s.asked, (std::vector<std::string>{"Sync"}));
}

TEST(PgwireExtended, ANameThatIsNotUtf8IsRefused22021UntilSync) {
  ExtendedScripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Parse("", "SELECT many") + Bind("\xc3", "") + Execute("") + kSync);
  ASSERT_EQ(Types(msgs), "1EZ");
  EXPECT_EQ(Fields(msgs[1])['C'], sqlstate::kCharacterNotInRepertoire);
}

// Without a Describe nothing bounded the result's width before its first row: that row is.
TEST(PgwireExtended, AnExecutesFirstRowWiderThan1664ColumnsIsRefused54011UntilSync) {
  class Wide : public QueryHandlerFactory {
   public:
    std::unique_ptr<QueryHandler> Open(const StartupParameters&, ErrorFields&) override {
      return std::make_unique<Session>();
    }

   private:
    class Session : public QueryHandler {
     public:
      void Query(std::string, std::shared_ptr<QuerySink>) override {}
      void Cancel() override {}
      bool SupportsExtendedProtocol() const override { return true; }
      void Execute(std::string, std::uint32_t, std::shared_ptr<QuerySink> sink) override {
        const std::vector<Value> row(40000, std::nullopt);
        EXPECT_FALSE(sink->DataRow(row));
        sink->Finish(TransactionStatus::kIdle);
      }
      void Sync(std::shared_ptr<QuerySink> sink) override {
        sink->Finish(TransactionStatus::kIdle);
      }
    };
  };
  Wide f;
  Wire w(f);
  w.Start();
  const auto msgs = w.Send(Execute("") + Execute("") + kSync);
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kTooManyColumns);
}

// ---- what is not supported yet ------------------------------------------------------------------

TEST(PgwireUnsupported, ExtendedProtocolIsRefused0A000AndIgnoredUntilSync) {
  Scripted s;
  Wire w(s);
  w.Start();
  const std::string parse = Typed('P', Str("") + Str("SELECT 1") + Int16(0));
  const std::string bind = Typed('B', Str("") + Str("") + Int16(0) + Int16(0) + Int16(0));
  const std::string describe = Typed('D', "P" + Str(""));
  const std::string execute = Typed('E', Str("") + Int32(0));
  const auto msgs = w.Send(parse + bind + describe + execute + Query("SELECT 1") + kSync);
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['S'], "ERROR");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kFeatureNotSupported);
  EXPECT_EQ(Fields(msgs[0])['M'], "the extended query protocol is not supported (a Parse message)");
  EXPECT_TRUE(s.queries.empty()) << "a Query before the Sync is ignored, as PostgreSQL does";
  EXPECT_EQ(Types(w.Send(Query("SELECT 1"))), "TDCZ");
}

TEST(PgwireUnsupported, FunctionCallIsRefused0A000WithReadyForQuery) {
  Scripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send(Typed('F', Int32(1234) + Int16(0) + Int16(0) + Int16(0)));
  ASSERT_EQ(Types(msgs), "EZ");
  EXPECT_EQ(Fields(msgs[0])['C'], sqlstate::kFeatureNotSupported);
}

TEST(PgwireUnsupported, FlushAndStrayCopyMessagesAreIgnored) {
  Scripted s;
  Wire w(s);
  w.Start();
  EXPECT_TRUE(
      w.Send(Typed('H', "") + Typed('d', "x") + Typed('c', "") + Typed('f', Str("no"))).empty());
  EXPECT_EQ(w.conn.state(), Connection::State::kReady);
  EXPECT_EQ(Types(w.Send(kSync)), "Z");
}

// ---- malformed input ----------------------------------------------------------------------------

void ExpectFatal(const std::vector<Msg>& msgs, const Connection& conn, const char* code) {
  ASSERT_FALSE(msgs.empty());
  EXPECT_EQ(msgs.back().type, 'E');
  EXPECT_EQ(Fields(msgs.back())['S'], "FATAL");
  EXPECT_EQ(Fields(msgs.back())['C'], code);
  EXPECT_TRUE(conn.closed());
}

TEST(PgwireMalformed, AQueryWithoutItsNulIsFatal08P01) {
  Scripted s;
  Wire w(s);
  w.Start();
  ExpectFatal(w.Send(Typed('Q', "SELECT 1")), w.conn, sqlstate::kProtocolViolation);
  EXPECT_TRUE(s.queries.empty());
}

TEST(PgwireMalformed, BytesAfterAQuerysStringAreFatal08P01) {
  Scripted s;
  Wire w(s);
  w.Start();
  ExpectFatal(w.Send(Typed('Q', Str("SELECT 1") + "x")), w.conn, sqlstate::kProtocolViolation);
}

TEST(PgwireMalformed, AnUnknownMessageTypeIsFatalAtOnce) {
  Scripted s;
  Wire w(s);
  w.Start();
  const auto msgs = w.Send("\x01");
  ExpectFatal(msgs, w.conn, sqlstate::kProtocolViolation);
  EXPECT_EQ(Fields(msgs.back())['M'], "invalid frontend message type 0x01");
}

TEST(PgwireMalformed, ALengthBelowFourIsFatal) {
  Scripted s;
  Wire w(s);
  w.Start();
  ExpectFatal(w.Send("Q" + Int32(3)), w.conn, sqlstate::kProtocolViolation);
}

TEST(PgwireMalformed, APasswordMessageWithoutAuthenticationIsFatal) {
  Scripted s;
  Wire w(s);
  w.Start();
  ExpectFatal(w.Send(Typed('p', Str("secret"))), w.conn, sqlstate::kProtocolViolation);
}

TEST(PgwireMalformed, StartupPacketsThatDoNotDecodeAreFatal) {
  const std::vector<std::string> bad = {
      Int32(8) + Int32(196608),                   // no terminator
      Int32(13) + Int32(196608) + Str("user"),    // a name without value
      Int32(12) + Int32(80877103) + Int32(0),     // a long SSLRequest
      Int32(12) + Int32(80877102) + Int32(1),     // a short CancelRequest
      Int32(7) + std::string("\x00\x03\x00", 3),  // below 8 bytes
      Startup({{"user", "a"}, {"user", "b"}}),    // a name twice
      Int32(12) + Int32(196608) + Str("") + Str("x") + std::string(1, '\0'),  // an empty name
      Int32(17) + Int32(196608) + Str("user") + Str("bob"),  // the last value's NUL, no terminator
  };
  for (const std::string& b : bad) {
    Scripted s;
    Wire w(s);
    ExpectFatal(w.Send(b), w.conn, sqlstate::kProtocolViolation);
    EXPECT_EQ(s.opened, 0);
  }
}

TEST(PgwireMalformed, InputThatEndsInsideAMessageIsFatal) {
  Scripted s;
  Wire w(s);
  w.Start();
  w.conn.Receive(Query("SELECT 1").substr(0, 7));
  EXPECT_TRUE(w.Take().empty());
  w.conn.ReceiveEnd();
  ExpectFatal(Split(w.Take()), w.conn, sqlstate::kProtocolViolation);
  EXPECT_TRUE(s.queries.empty());
}

TEST(PgwireMalformed, AStartupThatEndsEarlyIsFatal) {
  Scripted s;
  Wire w(s);
  w.conn.Receive(UserStartup().substr(0, 10));
  w.conn.ReceiveEnd();
  ExpectFatal(Split(w.Take()), w.conn, sqlstate::kProtocolViolation);
}

// Random bytes, and valid streams with random bytes changed, cut or inserted: whatever comes
// in, the output is whole messages (and the 'N' of a declined SSLRequest), the connection is
// open or closed after at most one FATAL, and nothing crashes.
TEST(PgwireMalformed, RandomAndMutatedInputNeverCrashesAndOutputStaysFramed) {
  std::mt19937 rng(20240601);
  const std::string valid = kSslRequest + UserStartup() + Query("SELECT 1") +
                            Query("SELECT 1; SELECT 1") + kSync + Typed('H', "") + kTerminate;
  for (int round = 0; round < 3000; ++round) {
    std::string in;
    if (round % 3 == 0) {
      std::uniform_int_distribution<int> len(0, 200), byte(0, 255);
      for (int i = len(rng); i > 0; --i) in += static_cast<char>(byte(rng));
      if (round % 2 == 0) in = UserStartup() + in;  // garbage after a good startup
    } else {
      in = valid;
      std::uniform_int_distribution<int> edits(1, 4), byte(0, 255);
      for (int e = edits(rng); e > 0; --e) {
        std::uniform_int_distribution<std::size_t> pos(0, in.size() - 1);
        switch (rng() % 3) {
          case 0:
            in[pos(rng)] = static_cast<char>(byte(rng));
            break;
          case 1:
            in.erase(pos(rng), 1 + rng() % 8);
            break;
          default:
            in.insert(pos(rng), 1, static_cast<char>(byte(rng)));
        }
        if (in.empty()) in = "x";
      }
    }
    Scripted s;
    Wire w(s);
    std::string out;
    // Fed in random slices.
    for (std::size_t at = 0; at < in.size();) {
      const std::size_t n = 1 + rng() % 40;
      w.conn.Receive(std::string_view(in).substr(at, n));
      out += w.Take();
      at += n;
    }
    if (rng() % 2 == 0) {
      w.conn.ReceiveEnd();
      out += w.Take();
    }
    std::size_t skip = 0;
    while (skip < out.size() && out[skip] == 'N' && skip < 2) ++skip;  // declined requests
    const auto msgs = Split(std::string_view(out).substr(skip));
    int fatals = 0;
    for (const Msg& m : msgs) {
      ASSERT_NE(std::string("RSKZTDCEIv").find(m.type), std::string::npos) << m.type;
      if (m.type == 'E' && Fields(m)['S'] == "FATAL") ++fatals;
    }
    EXPECT_LE(fatals, 1);
    if (fatals == 1) {
      EXPECT_TRUE(w.conn.closed());
      EXPECT_EQ(msgs.back().type, 'E') << "nothing after a FATAL";
    }
  }
}

// ---- cancel keys ------------------------------------------------------------------------------

TEST(PgwireCancel, ACancelRequestOnANewConnectionReachesThatSessionsHandler) {
  Scripted s;
  std::shared_ptr<QuerySink> held;
  s.answer = [&](const std::string&, std::shared_ptr<QuerySink> sink) { held = std::move(sink); };
  CancelRegistry registry;
  Wire a(s, registry), b(s, registry);
  a.Start();
  b.Start();
  ASSERT_NE(a.conn.startup()->key.process_id, b.conn.startup()->key.process_id);
  a.conn.Receive(Query("SELECT slow"));
  EXPECT_EQ(a.conn.state(), Connection::State::kQuery);

  // The wrong secret: nothing.
  BackendKey wrong = a.conn.startup()->key;
  wrong.secret_key ^= 1;
  Wire c1(s, registry);
  EXPECT_TRUE(c1.Send(CancelRequestBytes(wrong)).empty());
  EXPECT_TRUE(c1.conn.closed());
  EXPECT_EQ(s.cancels, 0);

  // The right key: a's handler is told; the cancelling connection closes without a word.
  Wire c2(s, registry);
  c2.conn.Receive(kSslRequest);
  EXPECT_EQ(c2.Take(), "N");
  EXPECT_TRUE(c2.Send(CancelRequestBytes(a.conn.startup()->key)).empty());
  EXPECT_TRUE(c2.conn.closed());
  EXPECT_EQ(c2.conn.close_reason(), "CancelRequest");
  EXPECT_EQ(s.cancels, 1);
  EXPECT_EQ(s.opened, 2) << "a cancel opens no session";

  // b is idle: a cancel naming it reaches nobody.
  Wire c3(s, registry);
  c3.conn.Receive(CancelRequestBytes(b.conn.startup()->key));
  EXPECT_EQ(s.cancels, 1);
}

TEST(PgwireCancel, KeysAreUniqueAndForgottenWhenTheSessionEnds) {
  Scripted s;
  CancelRegistry registry;
  std::vector<std::unique_ptr<Wire>> wires;
  std::map<std::int32_t, int> pids;
  for (int i = 0; i < 50; ++i) {
    wires.push_back(std::make_unique<Wire>(s, registry));
    wires.back()->Start();
    ++pids[wires.back()->conn.startup()->key.process_id];
  }
  EXPECT_EQ(pids.size(), 50u);
  EXPECT_EQ(registry.size(), 50u);
  const BackendKey first = wires[0]->conn.startup()->key;
  EXPECT_EQ(registry.Find(first), &wires[0]->conn);
  wires[0]->conn.Receive(kTerminate);
  EXPECT_EQ(registry.Find(first), nullptr);
  wires.clear();
  EXPECT_EQ(registry.size(), 0u);
}

// ---- messages.h alone
// -----------------------------------------------------------------------------

TEST(PgwireMessages, BackendMessagesAreTheDocumentedBytes) {
  std::string out;
  AppendReadyForQuery(out, TransactionStatus::kFailed);
  EXPECT_EQ(out, std::string("Z\x00\x00\x00\x05"
                             "E",
                             6));
  out.clear();
  AppendCommandComplete(out, "INSERT 0 5");
  EXPECT_EQ(out, "C" + Int32(15) + Str("INSERT 0 5"));
  out.clear();
  AppendEmptyQueryResponse(out);
  EXPECT_EQ(out, "I" + Int32(4));
  out.clear();
  AppendCopyDone(out);
  EXPECT_EQ(out, "c" + Int32(4));
  out.clear();
  AppendBackendKeyData(out, BackendKey{7, -2});
  EXPECT_EQ(out, "K" + Int32(12) + Int32(7) + Int32(0xfffffffe));
  out.clear();
  const FieldDescription f("n", kNumeric);
  AppendRowDescription(out, {&f, 1});
  EXPECT_EQ(out, "T" + Int32(4 + 2 + 2 + 18) + Int16(1) + Str("n") + Int32(0) + Int16(0) +
                     Int32(1700) + Int16(0xffff) + Int32(0xffffffff) + Int16(0));
  out.clear();
  const Value values[] = {std::nullopt, std::string("ab\0c", 4)};
  AppendDataRow(out, values);
  EXPECT_EQ(out.size(), DataRowBytes(values));
  EXPECT_EQ(out, "D" + Int32(4 + 2 + 4 + 4 + 4) + Int16(2) + Int32(0xffffffff) + Int32(4) +
                     std::string("ab\0c", 4));
}

TEST(PgwireMessages, AStringFieldIsCutAtItsFirstNul) {
  std::string out;
  ErrorFields e = ErrorFields::Error("XX000", std::string("bad\0rest", 8));
  AppendErrorResponse(out, e);
  const auto msgs = Split(out);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(Fields(msgs[0])['M'], "bad");
}

TEST(PgwireMessages, FramesAreBoundedBeforeTheirContentsArrive) {
  EXPECT_EQ(ReadMessageFrame("Q", 100).kind, Frame::Kind::kIncomplete);
  EXPECT_EQ(ReadMessageFrame("Q" + Int32(104), 100).kind, Frame::Kind::kIncomplete);
  EXPECT_EQ(ReadMessageFrame("Q" + Int32(105), 100).kind, Frame::Kind::kInvalid);
  EXPECT_EQ(ReadMessageFrame("X" + Int32(10005), 1 << 20).kind, Frame::Kind::kInvalid);
  const std::string in = Query("x") + "rest";
  const Frame f = ReadMessageFrame(in, 100);  // views `in`
  ASSERT_EQ(f.kind, Frame::Kind::kMessage);
  EXPECT_EQ(f.type, 'Q');
  EXPECT_EQ(f.body, Str("x"));
  EXPECT_EQ(f.size, 7u);
  EXPECT_EQ(ReadStartupFrame(Int32(7)).kind, Frame::Kind::kInvalid);
  EXPECT_EQ(ReadStartupFrame(Int32(10000)).kind, Frame::Kind::kIncomplete);
}

using PgwireSinkDeathTest = ::testing::Test;

TEST(PgwireSinkDeathTest, AnAnswerOutOfOrderIsTheHandlersBugAndAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        QuerySink sink(1000, nullptr);
        const Value v[] = {"1"};
        sink.DataRow(v);
      },
      "DataRow without a RowDescription");
  EXPECT_DEATH(
      {
        QuerySink sink(1000, nullptr);
        const FieldDescription f("x", kInt8);
        sink.RowDescription({&f, 1});
        sink.Finish(TransactionStatus::kIdle);
      },
      "Finish in the middle of a statement");
}

}  // namespace
}  // namespace tandem::pgwire::pgwire_test
