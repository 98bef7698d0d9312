// The release guard (release_guard.cpp): what makes a release's outcome
// independent of any single row except through its noise, checked from
// public inputs (the statement's plan, its options, the catalog) before the
// statement reads its first row.
#pragma once

#include "boundary.hpp"

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

// Refuses a dperm.train of table `relid` charged to `relations` that would
// read only part of a budgeted or protected one among them (a partition or
// child of a budgeted parent), before anything is counted or charged.
void CheckTrainReadsWhole(Oid relid, const Oid* relations, int n_relations);

// Refuses a release whose options argument may differ from row to row (it
// references a column, runs a subquery or calls a volatile function): one
// row's options would decide another's release. Needs only the statement.
void CheckRowIndependentOptions(FunctionCallInfo fcinfo, const char* aggregate);

// Refuses a strict release whose options declare no d (SQLSTATE 22023).
[[noreturn]] void RaiseUndeclaredDimension(const char* aggregate);

}  // namespace dperm::pg
