#include "frontend/server/transaction_block.h"

#include <variant>

#include "frontend/sql/classify.h"
#include "frontend/sql/parse.h"
#include "frontend/sqlstate.h"

namespace tandem::frontend {

using pgwire::ErrorFields;
using pgwire::TransactionStatus;

TransactionEffect ApplyTransactionCommand(TransactionCommand command, TransactionStatus now) {
  TransactionEffect e;
  switch (command) {
    case TransactionCommand::kBegin:
      e.tag = "BEGIN";
      // PostgreSQL: BEGIN inside a failed block is refused (25P02) before it gets here.
      e.status = TransactionStatus::kInTransaction;
      if (now != TransactionStatus::kIdle) {
        e.warning_sqlstate = sqlstate::kActiveSqlTransaction;
        e.warning = "there is already a transaction in progress";
      }
      return e;
    case TransactionCommand::kCommit:
      e.tag = now == TransactionStatus::kFailed ? "ROLLBACK" : "COMMIT";
      break;
    case TransactionCommand::kRollback:
      e.tag = "ROLLBACK";
      break;
  }
  e.status = TransactionStatus::kIdle;
  if (now == TransactionStatus::kIdle) {
    e.warning_sqlstate = sqlstate::kNoActiveSqlTransaction;
    e.warning = "there is no transaction in progress";
  }
  return e;
}

}  // namespace tandem::frontend
