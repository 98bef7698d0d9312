// Views in a query's input (query_views.cpp; docs/design.md section 4, "a
// query is an input with a noisy size"; issue 46): a view in FROM is
// replaced by its body, a sub-query that query_input.cpp validates by the
// same rules as the query itself, so that the input is analysed as if the
// view's query were written inline. What is kept of the view: its entry's
// permission check (SELECT on the view, as the caller or as the owner of
// the view that reads it), which PostgreSQL's rewriter would have moved to
// the view's *OLD* entry (ApplyRetrieveRule).
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "nodes/parsenodes.h"
}

namespace dperm::pg {

// Replaces view `rte` (an RTE_RELATION of relkind 'v', locked) by its body:
// a copy of its stored query, every relation it reads locked
// (AcquireRewriteLocks), its output columns named as the view's columns are
// now, each of its relations' permission checked as the view's owner or,
// for a security_invoker view, as the caller (the stored query's
// checkAsUser). `rte` becomes an RTE_SUBQUERY of that body (the view's
// security_barrier kept); a copy of it as it was, its permission check, is
// appended to `*checks`. Returns the body, not yet validated.
Query* InlineView(RangeTblEntry* rte, List** checks);

// `expr`, an expression over the range table of the last level of `path`
// (range table indexes from `q` down through the views inlined, the last
// one the private relation's), as an expression of `q`: each view's body on
// the path gets an output column named `column` (dperm_unit,
// kQueryUnitColumn) holding it, which the level above reads as a column of
// the view.
Expr* ExprThroughViews(Query* q, List* path, Expr* expr, const char* column);

}  // namespace dperm::pg
