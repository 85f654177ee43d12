// The extended query protocol's objects (DESIGN §17): prepared statements (Parse) and portals
// (Bind), per session, and what turns one into the other — the parameters a Bind sends, each
// replaced into the statement as a constant of the parameter's type (sql/parameters.h). The
// executor plans a portal's statement as it plans a simple Query's (sql_executor.h).
//
// Who touches them: the session's state holds them (statement_executor.h), and only the message
// being answered reads or changes them — one at a time per session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/pgwire/messages.h"
#include "frontend/pgwire/query_handler.h"
#include "frontend/sql/classify.h"
#include "frontend/sql/parse.h"
#include "frontend/sql/sql_error.h"
#include "ipc/codec.h"

namespace tandem::frontend {

// What one session may hold (54000 past it): a client is not the frontend's to trust with its
// memory. Prepared statements: at most this many, of at most this much SQL together (each is kept
// parsed too). Portals: at most this many, each with at most one answer's rows (a replica's
// answer is bounded by its max_result_size, an in-place read by local_reads.h's), freed once sent.
inline constexpr std::size_t kMaxPreparedPerSession = 1000;
inline constexpr std::size_t kMaxPreparedBytesPerSession = std::size_t{16} << 20;
inline constexpr std::size_t kMaxPortalsPerSession = 64;

struct PreparedStatement {
  PreparedStatement() {}
  std::string query;                              // its text: the tree's locations are into it
  std::optional<sql::ParsedStatement> statement;  // none: an empty query (Execute: EmptyQuery)
  sql::StatementKind kind = sql::StatementKind::kSelect;
  // One per $n: the OID Parse gave, or the one the statement's context decided (text where none
  // did), as PostgreSQL infers it.
  std::vector<std::uint32_t> parameter_types;
};

struct Portal {
  Portal() {}
  std::shared_ptr<const PreparedStatement> prepared;
  std::optional<sql::ParsedStatement> statement;  // prepared's, its parameters replaced by values
  std::vector<pgwire::Format> result_formats;     // as Bind sent them: none, one, or per column

  // The first Execute runs the statement; a statement that returns rows keeps them here, and
  // each Execute sends the next max_rows of them.
  bool started = false;
  bool rows_kept = false;  // the statement returned rows (`fields`, `rows`)
  std::vector<pgwire::FieldDescription> fields;
  ipc::pb::Rows rows;
  int next_row = 0;             // rows.rows(next_row) is the next to send …
  std::uint64_t next_copy = 0;  // … its next_copy-th copy (of its count)
  std::uint32_t max_rows = 0;   // the running Execute's limit (0: none)
  bool keep_only = false;       // the statement runs for a Describe: its rows are kept, not sent
};

// The type name a cast to `oid` spells ("int4", "timestamptz" …) for a type the SQL layer has;
// nullopt for any other OID.
std::optional<std::string_view> ParameterTypeName(std::uint32_t oid);
// The reverse: the OID of type name `name` (as ParameterTypeName spells it); nullopt for others.
std::optional<std::uint32_t> ParameterTypeOid(std::string_view name);

// `prepared`'s statement with `request`'s parameters replaced by their values: 08P01 when the
// counts differ, 22021 for a text value that is not UTF-8, the binary format's errors
// (binary_values.h).
sql::SqlResult<Portal> BindPortal(std::shared_ptr<const PreparedStatement> prepared,
                                  const pgwire::BindRequest& request);

// `fields` in the formats a Bind asked for its result: 08P01 when the counts disagree.
sql::SqlResult<std::vector<pgwire::FieldDescription>> WithResultFormats(
    std::vector<pgwire::FieldDescription> fields, const std::vector<pgwire::Format>& formats);

// Sends the portal's kept rows from where it stopped, at most portal.max_rows of them (0: all):
// DataRows in the fields' formats, then PortalSuspended when it sent max_rows, else
// CommandComplete "SELECT n" (n: the rows this Execute sent). Waits for room before each row until
// `deadline`, as SendRows does; false when the answer is no longer wanted.
bool SendPortalRows(pgwire::QuerySink& sink, Portal& portal,
                    std::chrono::steady_clock::time_point deadline);

}  // namespace tandem::frontend
