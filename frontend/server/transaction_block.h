// Transaction blocks as PostgreSQL's clients track them (BEGIN / START TRANSACTION, COMMIT / END,
// ROLLBACK / ABORT): 'T' inside a block, 'E' once a statement in it failed, until it ends — with
// PostgreSQL's tags and warnings (25001 "there is already a transaction in progress", 25P01
// "there is no transaction in progress"; COMMIT of a failed block answers ROLLBACK). Inside a
// failed block every statement but COMMIT and ROLLBACK is refused with 25P02.
#pragma once

#include <string>

#include "frontend/pgwire/messages.h"

namespace tandem::frontend {

// The transaction status after `kind` of statement (BEGIN, COMMIT, ROLLBACK) in `session`, its
// tag and the warning PostgreSQL gives, if any: shared by every executor.
struct TransactionEffect {
  TransactionEffect() {}
  std::string tag;
  pgwire::TransactionStatus status = pgwire::TransactionStatus::kIdle;
  std::string warning_sqlstate, warning;  // empty: none
};
enum class TransactionCommand { kBegin, kCommit, kRollback };
TransactionEffect ApplyTransactionCommand(TransactionCommand command,
                                          pgwire::TransactionStatus now);

}  // namespace tandem::frontend
