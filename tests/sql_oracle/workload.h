// The workload generator: from a seed, 2–5 tables of the engine's types (some with a PRIMARY KEY,
// some columns NOT NULL) and a random INSERT/UPDATE/DELETE workload over them (UPDATE and DELETE
// with WHERE), with NULLs and duplicate rows; and its application to PostgreSQL, whose contents
// after the workload are what an engine under test is given (schema.h: Database).
//
// Invariants of a generated workload, so that PostgreSQL runs every statement and another engine
// applying the same statements reaches the same contents:
//   * a primary key value is never inserted twice (each table draws its keys from a counter) and
//     no UPDATE sets a key column, so no statement violates a key;
//   * no statement writes NULL into a NOT NULL column;
//   * values stay in the domains of values.h (an UPDATE adds at most 2 to an integer, 0.5 to a
//     double or real, 0.25 or -0.5 to a numeric, an hour or minus a day or half an hour to a
//     temporal value, and a workload has at most max_writes statements); varchar and char values
//     fit their lengths.
//
// Thread safety: GenerateWorkload is a pure function; ApplyWorkload uses the connection.
#pragma once

#include <cstdint>
#include <string>

#include "pg_connection.h"
#include "sql_oracle/schema.h"

namespace tandem::testing::sql_oracle {

struct WorkloadOptions {
  int min_tables = 2;
  int max_tables = 5;
  int max_columns = 5;       // besides the first (a bigint: every table can join on one)
  int max_initial_rows = 8;  // per table, in its first INSERT
  int min_writes = 4;        // INSERT/UPDATE/DELETE statements after the first INSERTs
  int max_writes = 14;
  // Double precision values written '1.25'::float8 (the engine's type) instead of bare (1.25 is
  // numeric in PostgreSQL, which an engine without numeric may refuse): the same values, the
  // same draws — only the statements' text differs.
  bool float8_literals = false;
  // Columns of every type of DESIGN §16 too: smallint, integer, real, numeric(10,2),
  // numeric(12,4), numeric, varchar(4), char(3), bytea, date, time, timestamp, timestamptz,
  // interval, uuid (values.h: their domains); and the query generator then uses every type and
  // the features of their functions (query_generator.h). Off: the engines that do not have them
  // yet see only the four first types, and every draw is the same as before they existed.
  bool new_types = false;
};

Database GenerateWorkload(std::uint64_t seed, const WorkloadOptions& options = {});

// Empties `connection`'s schema public (DROP SCHEMA … CASCADE, CREATE SCHEMA). "" or the error.
std::string ResetSchema(PgConnection& connection);

// On `connection`: ResetSchema, the CREATE TABLEs, every write in order (each must succeed), then
// each table read back (SELECT * … ORDER BY every column) into database->rows. "" on success,
// else the statement that failed and PostgreSQL's error.
std::string ApplyWorkload(PgConnection& connection, Database* database);

}  // namespace tandem::testing::sql_oracle
