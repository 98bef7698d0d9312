// The release guard (release_guard.cpp): what makes a release's outcome
// independent of any single row except through its noise, checked from
// public inputs (the statement's plan, its options, the catalog) before the
// statement reads its first row.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "nodes/pg_list.h"
}

namespace dperm::pg {

// Installs the executor hook that checks every dperm training aggregate of
// a statement before the statement runs (from _PG_init).
void InstallReleaseGuard();

// Whether a release charged to `relations` must be private with respect to
// them (docs/design.md section 4): one of them has a budget or is protected.
// Then d must be declared, and the aggregate must read every row of its
// relations exactly once (no filter, join, grouping, HAVING, FILTER or
// DISTINCT: the model states n). Reads dperm's catalog as its owner.
bool ChargedStrictly(const Oid* relations, int n_relations);

// The budgeted or protected relations among `relations` (a List of OIDs,
// allocated in the caller's memory context).
List* StrictRelations(const Oid* relations, int n_relations);

// The one check every reader of a relation makes before it counts or reads
// a row (dperm.train, dperm.evaluate, and the named models and Citus
// through them; the aggregates have the executor guard): whether the
// release charged to `relations` is strict (`is_protected`, or a budget or
// protection among them: ChargedStrictly), and, if it is, refuses (0A000,
// nothing charged) a read of table `relid` that is only part of a budgeted
// or protected relation among them (a partition or child of a budgeted
// parent). `who` names the caller in the message. Returns whether strict.
bool CheckReleaseReads(Oid relid, bool is_protected, const Oid* relations, int n_relations,
                       const char* who);

// Runs `sql`, which counts the rows of `relid` (and may return more
// columns), as `reader` (RunInternalSql, read-only; its row in
// SPI_tuptable). When `strict` and `relid` is a view, the count is opened as
// a cursor and its plan checked to read every row of the budgeted or
// protected relations below it once before it reads a row (0A000, nothing
// charged).
void RunReleaseCount(Oid reader, Oid relid, bool strict, const char* sql);

// Refuses a release whose options argument may differ from row to row (it
// references a column, runs a subquery or calls a volatile function): one
// row's options would decide another's release. Needs only the statement.
void CheckRowIndependentOptions(FunctionCallInfo fcinfo, const char* aggregate);

}  // namespace dperm::pg
