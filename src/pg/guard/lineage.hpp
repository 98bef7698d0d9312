// dperm.lineage (lineage.cpp): budgets and protection follow the rows
// through DETACH PARTITION, NO INHERIT and dperm.move_budget.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "nodes/pg_list.h"
}

namespace dperm::pg {

// Whether dperm.lineage exists (a catalog from before 0.7.0's lineage has
// none: nothing is recorded).
bool HasLineage();

// `ancestors` (of `relid`) plus their dperm.lineage ancestors, transitively.
List* LineageAncestors(Oid relid, List* ancestors);

// Records that `relid` and every partition and inheritance child of it held
// the rows of `ancestors`. Needs an SPI connection.
void RecordLineage(Oid relid, List* ancestors);

}  // namespace dperm::pg
