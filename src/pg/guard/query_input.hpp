// A query as the input of a release (query_input.cpp; docs/design.md
// section 4, "a query is an input with a noisy size"): the text an analyst
// gives dperm.train_query, parsed and analysed as the caller, checked to map
// each row of its one private relation to at most one input row through
// per-row expressions that cannot fail on a value, and written back as a
// canonical text that names every object by its schema. Every refusal here
// comes before anything is charged.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "nodes/parsenodes.h"
}

namespace dperm::pg {

// Whether a relation is private: a budget or protection in its family (the
// release room's StrictRelations over TrainRelations), passed in so that the
// guard needs nothing above it.
using IsPrivateRelation = bool (*)(Oid relid);

// A validated query: exactly one private relation (a plain or partitioned
// table), read directly or through views (each replaced by its body, a
// sub-query validated by the same rules: query_views.hpp), and zero or more
// public lookup relations joined on a unique key, at any level.
struct QueryInput {
  Query* query;       // analysed and validated (the caller's search_path), views inlined
  Query* source;      // as analysed, views by name (CanonicalQuerySource)
  int private_index;  // the range table index of the private relation, or of the view over it
  Oid relid;          // the private relation
  RangeTblEntry* private_rte;  // its entry (in `query` or a view's body): its permission check
  List* private_path;          // range table indexes from `query` down to the private relation's
  List* views;                 // the views read, their entries as referenced (permission checks)
  List* lookups;               // the lookup relations (Oids)
};

// Parses and analyses `text` as the caller with the caller's search_path
// (exactly one plain SELECT), and refuses (0A000 and others, nothing
// charged) everything that is not a per-row map of one private relation:
// aggregates, grouping, windows, DISTINCT, ORDER BY, LIMIT/OFFSET, set
// operations, CTEs, sub-queries, set-returning functions, locking clauses,
// TABLESAMPLE, functions or sub-queries in FROM, Citus tables, two private
// relations, a lookup that is not public or not joined on a unique key of
// it; and every function that is not IMMUTABLE and either LEAKPROOF or on
// the reviewed list of built-ins that never raise (QueryFunctionRule). A
// view in FROM is replaced by its body, which the same rules validate
// (recursively, for views of views; a refusal there names the view).
QueryInput AnalyseQueryInput(const char* text, IsPrivateRelation is_private);

// Refuses (42501, nothing charged) a lookup relation that `caller` or
// `reader` may not SELECT, or that has row-level security enabled.
void CheckLookups(const QueryInput& q, Oid caller, Oid reader);

// The types of the query's output columns `features` and `label` (42703 when
// it has none or several of that name; 42804 for features that are not an
// array of float8, float4 or an integer type).
void QueryColumnTypes(const QueryInput& q, const char* features, const char* label,
                      Oid* features_type, Oid* label_type);

// The canonical text of the query: its output columns `features` and `label`
// and a column dperm_unit (kQueryUnitColumn) -- the private relation's
// column `unit_column`, or, when nullptr, the row itself (its tableoid and
// ctid, unique across partitions), carried up through the views over it
// (ExprThroughViews) -- deparsed under PinInternalSettings
// (search_path = 'pg_catalog, pg_temp', pg_temp explicitly last, and every
// setting that changes a constant's text pinned), so that
// every name is schema-qualified and the text resolves to the same objects
// when dperm's internal SQL parses it again under the same settings.
// `filter` (nullptr: none), a boolean expression over the query's range
// table (GroupFilter, query_groups.hpp), is ANDed into its WHERE clause.
char* CanonicalQueryText(const QueryInput& q, const char* features, const char* label,
                         const char* unit_column, Expr* filter = nullptr);

// The expression of the query's output column `name` (over its range
// table), or 42703 when it has none or several of that name.
Expr* QueryOutputExpr(const QueryInput& q, const char* name);

// The query itself (all its output columns, no unit column) as analysed,
// views by name, deparsed under the same pinned settings: the text a named
// model stores and each retrain validates again with AnalyseQueryInput under
// those settings (model_query.cpp), so that a later search_path cannot
// change what it reads, and a view is read (and validated) as it is then.
char* CanonicalQuerySource(const QueryInput& q);

// The name of the unit column CanonicalQueryText adds.
constexpr char kQueryUnitColumn[] = "dperm_unit";

}  // namespace dperm::pg
