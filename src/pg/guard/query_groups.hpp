// The declared groups of dperm.train_query_groups (query_groups.cpp;
// docs/design.md section 4, "per-group models"): a public domain of keys,
// cast once to the type of one output column of a query's input, pairwise
// distinct under that type's equality, so that each input row falls in at
// most one group. Every refusal here comes before anything is charged.
#pragma once

#include "base/boundary.hpp"
#include "guard/query_input.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

// The most groups one statement declares (54000 above).
constexpr int kMaxGroups = 1000;

struct QueryGroups {
  const char* column;  // the query's output column (group_by)
  Oid type;            // its type (a base or enum type)
  Oid collation;       // its collation, which the equality uses
  Oid eq_operator;     // the type's default equality (btree or hash opclass)
  int n;               // 1 .. kMaxGroups
  Datum* keys;         // the declared keys, cast to `type`
  const char** texts;  // each key as the type writes it
};

// The groups `groups` (a JSON array of 1 to kMaxGroups strings, numbers or
// booleans) of the query's output column `group_by`: 42703 when the query
// has no such column; 0A000 for a type without a default equality, or
// whose equality is not allowed on private rows (QueryFunctionAllowed), or
// that is not a base or enum type; 22023 for an array that is not one, is
// empty, or holds a NULL, an array or an object; 54000 above kMaxGroups;
// the input function's own SQLSTATE (22P02 ...) for a key that does not
// cast; 22023 for two keys equal under the equality. Nothing is charged.
QueryGroups AnalyseQueryGroups(const QueryInput& q, const char* group_by, Jsonb* groups);

// The filter `group_by = key i` over the query's range table (the column's
// expression, the equality, the key as a constant of its type), for
// CanonicalQueryText.
Expr* GroupFilter(const QueryInput& q, const QueryGroups& g, int i);

// Group i's seed under the superuser-only seed (dperm.allow_seed): distinct
// per group (splitmix64's increment), so no two groups share noise.
uint64 GroupSeed(uint64 seed, int i);

// Refuses (0A000, nothing charged) to group `relation`, whose budgets
// declare the unit `unit_column`: a unit's rows may fall in several
// groups, so the groups do not compose in parallel at the unit
// (train_query_groups.cpp, "The unit rule"). `who` names the grouped
// function, `one_by_one` the function that releases one group (each
// charged).
[[noreturn]] void RefuseUnitGroups(const char* who, const char* one_by_one, const char* relation,
                                   const char* unit_column);

}  // namespace dperm::pg
