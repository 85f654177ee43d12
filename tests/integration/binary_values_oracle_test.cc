// PostgreSQL's binary format (frontend/server/binary_values.h) checked against PostgreSQL 15
// itself (tests/postgres_server.h; skipped where it is not installed):
//   * sending: random values of every type, given to PostgreSQL as their text, answer
//     SELECT encode(<type>send(x), 'hex') with the bytes PostgresBinary gives the same datum (and
//     PostgreSQL prints them as PostgresText does);
//   * receiving: bytes sent to PostgreSQL as a binary Bind parameter of the type (PQexecParams)
//     — valid encodings, PostgreSQL's own values Tandem has no datum for (infinities, NaN, numerics
//     of any size), and truncated, extended, corrupted and random ones — give the same text from
//     BinaryParameterText as PostgreSQL prints, or the same SQLSTATE and message. The one
//     difference: a timestamp past Tandem's end (294247-01-10, base/datetime.h) that PostgreSQL
//     takes is refused here.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "binary_value_samples.h"
#include "frontend/pgwire/pg_type.h"
#include "frontend/server/binary_values.h"
#include "frontend/server/sql_answers.h"
#include "ipc/rows.h"
#include "pg_connection.h"
#include "postgres_server.h"

namespace tandem::frontend::binary_values_oracle_test {
namespace {

namespace pb = ipc::pb;
using testing::BinarySampler;
using testing::BinaryType;
using testing::BinaryTypes;
using testing::Hex;
using testing::PgAnswer;
using testing::PgConnection;
using testing::PostgresServer;

constexpr std::int64_t kPostgresEpochMicros = 946'684'800'000'000;

std::string Unhex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// A SQL string literal (standard_conforming_strings: only the quote is doubled).
std::string Literal(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    out.push_back(c);
    if (c == '\'') out.push_back('\'');
  }
  return out + "'";
}

// The text PostgreSQL prints for `bytes` received as a binary parameter of type `oid`, or
// "ERROR <sqlstate>: <message>".
std::string PostgresReceives(PGconn* conn, std::string_view bytes, std::uint32_t oid) {
  const Oid types[1] = {oid};
  const char* values[1] = {bytes.data()};
  const int lengths[1] = {static_cast<int>(bytes.size())};
  const int formats[1] = {1};
  PGresult* r = PQexecParams(conn, "SELECT $1", 1, types, values, lengths, formats, 0);
  std::string out;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
    out = std::string(PQgetvalue(r, 0, 0), static_cast<std::size_t>(PQgetlength(r, 0, 0)));
  } else {
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char* message = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    out = std::string("ERROR ") + (state ? state : "?") + ": " +
          (message ? message : PQerrorMessage(conn));
  }
  PQclear(r);
  return out;
}

std::string TandemReceives(std::string_view bytes, std::uint32_t oid) {
  const sql::SqlResult<std::string> r = BinaryParameterText(bytes, oid, 1);
  if (!r.ok()) return "ERROR " + r.error().sqlstate + ": " + r.error().message;
  return *r;
}

// A timestamp PostgreSQL takes beyond Tandem's last one.
bool PastTandemsLastTimestamp(std::string_view bytes, std::uint32_t oid) {
  if ((oid != pgwire::kTimestamp.oid && oid != pgwire::kTimestamptz.oid) || bytes.size() != 8) {
    return false;
  }
  std::uint64_t u = 0;
  for (char c : bytes) u = (u << 8) | static_cast<unsigned char>(c);
  const auto t = static_cast<std::int64_t>(u);
  return t != std::numeric_limits<std::int64_t>::max() &&
         t > std::numeric_limits<std::int64_t>::max() - kPostgresEpochMicros;
}

class BinaryValuesOracle : public ::testing::Test {
 protected:
  // One server for the suite, started on the main thread (its parent-death signal follows it).
  static void SetUpTestSuite() {
    if (!PostgresServer::Unavailable()) server_ = new PostgresServer();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    TANDEM_SKIP_UNLESS_POSTGRES();
    ASSERT_NE(server_, nullptr);
    ASSERT_TRUE(server_->ok()) << server_->error();
    connection_ = std::make_unique<PgConnection>(server_->conninfo());
    ASSERT_TRUE(connection_->ok()) << connection_->error();
    ASSERT_TRUE(connection_->Execute("SET TimeZone = 'UTC'").ok());
  }

  // Receiving `bytes` as `oid` gives what PostgreSQL gives; false (with a failure) otherwise.
  bool ReceivesAsPostgres(std::string_view bytes, std::uint32_t oid, const char* what) {
    const std::string expected = PostgresReceives(connection_->raw(), bytes, oid);
    const std::string actual = TandemReceives(bytes, oid);
    if (actual == expected) return true;
    if (PastTandemsLastTimestamp(bytes, oid) && expected.rfind("ERROR", 0) != 0 &&
        actual == "ERROR 22008: timestamp out of range") {
      ++past_tandems_end_;
      return true;
    }
    ADD_FAILURE() << what << " OID " << oid << " bytes " << Hex(bytes)
                  << "\n  PostgreSQL: " << expected.substr(0, 300)
                  << "\n  Tandem:     " << actual.substr(0, 300);
    return false;
  }

  static PostgresServer* server_;
  std::unique_ptr<PgConnection> connection_;
  int past_tandems_end_ = 0;
};

PostgresServer* BinaryValuesOracle::server_ = nullptr;

TEST_F(BinaryValuesOracle, SendsWhatPostgresSends) {
  BinarySampler sampler(7);
  for (const BinaryType& type : BinaryTypes()) {
    const bool float4 = type.oid == pgwire::kFloat4.oid;
    std::vector<pb::Datum> values;
    while (values.size() < 300) {
      const Datum d = sampler.Next(type.oid);
      // PostgreSQL 15 cannot read back the interval of -2^63 microseconds it prints.
      if (const auto* i = std::get_if<Interval>(&d);
          i != nullptr && i->micros == std::numeric_limits<std::int64_t>::min()) {
        continue;
      }
      values.push_back(ipc::ToProto(d));
    }
    std::string sql = std::string("SELECT encode(") + type.send + "(x::" + type.name +
                      "), 'hex'), x::" + type.name + " FROM unnest(ARRAY[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += Literal(*PostgresText(values[i], float4));
    }
    sql += "]::text[]) WITH ORDINALITY AS u(x, n) ORDER BY n";
    const PgAnswer answer = connection_->Execute(sql);
    ASSERT_TRUE(answer.ok()) << type.name << ": " << answer.error->ToString();
    ASSERT_EQ(answer.rows.size(), values.size()) << type.name;
    int failures = 0;
    for (std::size_t i = 0; i < values.size() && failures < 5; ++i) {
      const std::string text = *PostgresText(values[i], float4);
      const std::string binary = Hex(*PostgresBinary(values[i], type.oid));
      if (answer.rows[i][0] != binary || answer.rows[i][1] != text) {
        ++failures;
        ADD_FAILURE() << type.name << " " << Literal(text)
                      << "\n  PostgreSQL: " << answer.rows[i][0].value_or("NULL") << " "
                      << answer.rows[i][1].value_or("NULL") << "\n  Tandem:     " << binary << " "
                      << text;
      }
    }
  }
}

TEST_F(BinaryValuesOracle, ReceivesValidEncodingsAsPostgres) {
  BinarySampler sampler(11);
  for (const BinaryType& type : BinaryTypes()) {
    int failures = 0;
    for (int i = 0; i < 150 && failures < 5; ++i) {
      const pgwire::Value bytes = PostgresBinary(ipc::ToProto(sampler.Next(type.oid)), type.oid);
      if (!ReceivesAsPostgres(*bytes, type.oid, type.name)) ++failures;
    }
  }
  // "unknown" is received as text.
  for (const char* text : {"", "abc", "it's \\ é"}) {
    ReceivesAsPostgres(text, pgwire::kUnknown.oid, "unknown");
  }
}

// PostgreSQL's values that have no datum here, the ends of its ranges, and malformed bytes.
TEST_F(BinaryValuesOracle, ReceivesSpecialAndMalformedBytesAsPostgres) {
  struct Case {
    std::uint32_t oid;
    const char* hex;
  };
  const Case cases[] = {
      {pgwire::kBool.oid, ""},
      {pgwire::kBool.oid, "ff"},
      {pgwire::kBool.oid, "0100"},
      {pgwire::kInt2.oid, "80"},
      {pgwire::kInt4.oid, "0000000101"},
      {pgwire::kFloat4.oid, "ffc00001"},
      {pgwire::kFloat4.oid, "00000001"},
      {pgwire::kFloat8.oid, "fff8000000000001"},
      {pgwire::kFloat8.oid, "0000000000000001"},
      {pgwire::kNumeric.oid, "0000000000000000"},
      {pgwire::kNumeric.oid, "00000000c0000000"},
      {pgwire::kNumeric.oid, "00010000c0000000270f"},
      {pgwire::kNumeric.oid, "00000000d0000000"},
      {pgwire::kNumeric.oid, "00000000f0000005"},
      {pgwire::kNumeric.oid, "00000000e0000000"},
      {pgwire::kNumeric.oid, "0000000000004000"},
      {pgwire::kNumeric.oid, "00000000000003ff"},
      {pgwire::kNumeric.oid, "00000000000002ff"},
      {pgwire::kNumeric.oid, "0001000a000000000001"},
      {pgwire::kNumeric.oid, "00017fff000000000001"},
      {pgwire::kNumeric.oid, "00018000000000100001"},
      {pgwire::kNumeric.oid, "00018000000000003fff0001"},
      {pgwire::kNumeric.oid, "0002000000000000000113880000"},
      {pgwire::kNumeric.oid, "000200000000000100011388"},
      {pgwire::kNumeric.oid, "0001ffff400000020001"},
      {pgwire::kNumeric.oid, "00010000400000000000"},
      {pgwire::kNumeric.oid, "00040001000000010000000713880000"},
      {pgwire::kNumeric.oid, "0001fffd0000000e0001"},
      {pgwire::kNumeric.oid, "000100000000000027100001"},
      {pgwire::kNumeric.oid, "0001000000000000"},
      {pgwire::kNumeric.oid, "ffff0000000000000001"},
      {pgwire::kText.oid, "c328"},
      {pgwire::kText.oid, "c3"},
      {pgwire::kText.oid, "f0908d"},
      {pgwire::kText.oid, "610062"},
      {pgwire::kText.oid, "eda080"},
      {pgwire::kText.oid, "f4908080"},
      {pgwire::kText.oid, "c0af"},
      {pgwire::kVarchar.oid, "ff"},
      {pgwire::kBpchar.oid, "6161202020"},
      {pgwire::kName.oid,
       "616161616161616161616161616161616161616161616161616161616161616161616161"
       "616161616161616161616161616161616161616161616161616161"},
      {pgwire::kBytea.oid, ""},
      {pgwire::kDate.oid, "7fffffff"},
      {pgwire::kDate.oid, "80000000"},
      {pgwire::kDate.oid, "ffda97a7"},
      {pgwire::kDate.oid, "ffda97a6"},
      {pgwire::kDate.oid, "7fda970c"},
      {pgwire::kDate.oid, "7fda970d"},
      {pgwire::kDate.oid, "7fda97"},
      {pgwire::kTime.oid, "000000141dd76000"},
      {pgwire::kTime.oid, "000000141dd76001"},
      {pgwire::kTime.oid, "ffffffffffffffff"},
      {pgwire::kTimestamp.oid, "7fffffffffffffff"},
      {pgwire::kTimestamp.oid, "8000000000000000"},
      {pgwire::kTimestamp.oid, "fd0f7cc1411fa000"},
      {pgwire::kTimestamp.oid, "fd0f7cc1411f9fff"},
      {pgwire::kTimestamp.oid, "7ffca2fec4c81fff"},
      {pgwire::kTimestamp.oid, "7fffff5bb3b29fff"},
      {pgwire::kTimestamp.oid, "7fffff5bb3b2a000"},
      {pgwire::kTimestamptz.oid, "7fffffffffffffff"},
      {pgwire::kTimestamptz.oid, "8000000000000000"},
      {pgwire::kTimestamptz.oid, "7ffca2fec4c82000"},
      {pgwire::kTimestamptz.oid, "00000000000000"},
      {pgwire::kInterval.oid, "80000000000000008000000080000000"},
      {pgwire::kInterval.oid, "7fffffffffffffff7fffffff7fffffff"},
      {pgwire::kInterval.oid, "000000000000000000000001000000"},
      {pgwire::kUuid.oid, "a0eebc999c0b4ef8bb6d6bb9bd380a11ff"},
      {pgwire::kUuid.oid, ""},
  };
  for (const Case& c : cases) ReceivesAsPostgres(Unhex(c.hex), c.oid, "special");
  EXPECT_EQ(past_tandems_end_, 2);  // 294276-12-31 23:59:59.999999 and 294247-01-10 04:00:54.775808
}

// Encodings truncated, extended and corrupted, random bytes, and numerics built of random header
// words and digits (valid and invalid signs, scales and digits, weights far out).
TEST_F(BinaryValuesOracle, ReceivesRandomBytesAsPostgres) {
  BinarySampler sampler(13);
  auto random_bytes = [&](std::uint64_t n) {
    std::string s;
    for (std::uint64_t i = 0; i < n; ++i) s.push_back(static_cast<char>(sampler.Pick(256)));
    return s;
  };
  for (const BinaryType& type : BinaryTypes()) {
    int failures = 0;
    for (int i = 0; i < 150 && failures < 5; ++i) {
      std::string bytes = *PostgresBinary(ipc::ToProto(sampler.Next(type.oid)), type.oid);
      switch (sampler.Pick(4)) {
        case 0:
          bytes.resize(sampler.Pick(bytes.size() + 1));
          break;
        case 1:
          bytes += random_bytes(1 + sampler.Pick(3));
          break;
        case 2:
          for (std::uint64_t k = 0, n = 1 + sampler.Pick(3); k < n && !bytes.empty(); ++k) {
            bytes[sampler.Pick(bytes.size())] = static_cast<char>(sampler.Pick(256));
          }
          break;
        default:
          bytes = random_bytes(sampler.Pick(25));
      }
      if (!ReceivesAsPostgres(bytes, type.oid, type.name)) ++failures;
    }
  }
  // Numerics from random header words and digits.
  int failures = 0;
  for (int i = 0; i < 400 && failures < 5; ++i) {
    std::string bytes;
    auto word = [&](std::uint64_t v) {
      bytes.push_back(static_cast<char>(v >> 8));
      bytes.push_back(static_cast<char>(v));
    };
    const std::uint64_t ndigits = sampler.Pick(7);
    word(ndigits);
    switch (sampler.Pick(3)) {
      case 0:
        word(static_cast<std::uint64_t>(sampler.Between(-12, 12)) & 0xffff);
        break;
      case 1:
        word(static_cast<std::uint64_t>(sampler.Between(-5000, 5000)) & 0xffff);
        break;
      default:
        word(sampler.Pick(0x10000));
    }
    static constexpr std::uint64_t kSigns[] = {0x0000, 0x4000, 0xC000, 0xD000, 0xF000};
    const std::uint64_t sign = sampler.Pick(10);  // mostly + and -, some special, some invalid
    word(sign == 0  ? sampler.Pick(0x10000)
         : sign < 8 ? kSigns[sampler.Pick(2)]
                    : kSigns[2 + sampler.Pick(3)]);
    switch (sampler.Pick(4)) {
      case 0:
        word(sampler.Pick(0x10000));
        break;
      case 1:
        word(sampler.Pick(0x4000));
        break;
      default:
        word(sampler.Pick(45));
    }
    for (std::uint64_t k = 0; k < ndigits; ++k) {
      word(sampler.Pick(20) == 0  ? sampler.Pick(0x10000)
           : sampler.Pick(4) == 0 ? 0
                                  : sampler.Pick(10000));
    }
    if (sampler.Pick(8) == 0) bytes.resize(sampler.Pick(bytes.size() + 1));
    if (sampler.Pick(8) == 0) bytes += random_bytes(1 + sampler.Pick(2));
    if (!ReceivesAsPostgres(bytes, pgwire::kNumeric.oid, "numeric")) ++failures;
  }
}

}  // namespace
}  // namespace tandem::frontend::binary_values_oracle_test
