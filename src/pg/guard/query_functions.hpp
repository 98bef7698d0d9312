// The function rule of a query's input (query_functions.cpp; issue 46,
// item 3): a protected relation is read as its owner, so nothing an analyst
// writes may run code of their choosing with the owner's rights, and no
// expression may fail on one row (an error that depends on one row leaks
// it, whatever was charged). dperm.train_query checks its query; the
// direct aggregates on a budgeted or protected relation check what they
// evaluate per row.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "nodes/parsenodes.h"
}

namespace dperm::pg {

// Whether function `fn` may run on a private row: IMMUTABLE and either
// LEAKPROOF (it cannot fail on a value: PostgreSQL's own mark, which
// security_barrier views rely on) or on dperm's reviewed list of built-ins
// that never raise on any argument.
bool QueryFunctionAllowed(Oid fn);

// Walks every expression of `q` (target list, WHERE, ON) and refuses
// (0A000, nothing charged) a node that is not on the list of those that
// cannot fail (columns, constants, CASE, AND/OR/NOT, IS [NOT] NULL,
// COALESCE, GREATEST/LEAST, ARRAY[...], ROW(...), IN (...), array
// subscripts, binary-compatible casts) or that calls a function
// QueryFunctionAllowed refuses, with a hint naming the total function to
// use (dperm.div, dperm.ln, ...). A cast through text (CoerceViaIO) is
// refused: a text input can fail on one value. `view` (nullptr: the query
// itself) names the view whose body `q` is, in the refusal.
void CheckQueryFunctions(Query* q, const char* view = nullptr);

// What a refusal says: `what`, or, in the body of view `view`, that the
// view is not an allowed input and why.
const char* InView(const char* view, const char* what);

// The same rule on an expression of a planned statement that runs per row:
// a training aggregate's features and label, or a projection below it
// (release_guard.cpp, on a budgeted or protected relation). Planned
// columns (OUTER_VAR, a scan's) and the statement's parameters ($1) are
// values; `who` (the aggregate's name) opens the refusal.
void CheckExpressionFunctions(Node* expr, const char* who);

}  // namespace dperm::pg
