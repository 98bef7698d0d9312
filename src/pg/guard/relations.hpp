// Which relations a release reads and is charged to (relations.cpp): what
// the plan below a training aggregate reads, a view's relations, and the
// closure under ancestors and the `dataset` option. Who may read or see a
// relation is relation_access.hpp.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "nodes/execnodes.h"
#include "nodes/pg_list.h"
}

namespace dperm::pg {

// The most relations one release may read and be charged to, its
// ancestors included (RelationsRead refuses more): the size of a ledger
// request's list (ledger_request.hpp).
const int kMaxRelations = 256;

// Relations whose rows the aggregate call in `fcinfo` reads
// (AggregateRelations of its AggState; docs/design.md section 3, item 4).
// Returns a palloc'd array.
Oid* RelationsRead(FunctionCallInfo fcinfo, const char* dataset, int* count);

// The relations the plan below aggregate node `agg` reads: every relation a
// scan below it reads (partitioned and inheritance parents of an Append
// included), those of the subplans it reads (subqueries in its expressions
// and its children's, initPlans whose parameters it uses, CTEs), and each
// view of the statement whose relations are among them (or that reads no
// relation). Every relation of the statement's range table when something
// reaches it from outside its plan (an outer query's row, a lateral
// parameter) or through another extension's scan: over-charging is safe,
// under-charging is not. A UNION ALL's other branches are not its reads.
List* AggregateReads(AggState* agg);

// AggregateReads plus the `dataset` option's relation when given
// (CheckDataset), plus the inheritance and partition ancestors of each.
// Returns a palloc'd array.
Oid* AggregateRelations(AggState* agg, const char* dataset, int* count);
// The relations in the range table of the statement of `estate`.
List* EStateRelations(EState* estate);

// RelationsRead for the statement of executor state `estate`.
Oid* StatementRelations(EState* estate, const char* dataset, int* count);
// The relations in the range table of the query running aggregate `fcinfo`.
List* RangeTableRelations(FunctionCallInfo fcinfo);

// The relations a dperm.train release from `relid` is charged to, as the
// in-memory query's range table gives them: the relation, its partitions and
// inheritance children, for a view every relation it reads (ViewReads) and
// their partitions and children, `dataset` when valid, and every ancestor of
// each.
Oid* TrainRelations(Oid relid, Oid dataset, int* count);

}  // namespace dperm::pg
