// Who may read or see a relation, through its family (relation_access.cpp):
// its ancestors (inheritance, partitions, dperm.lineage), the protection that
// covers it, row-level security anywhere in it, and the `dataset` option's
// check.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "nodes/pg_list.h"
}

namespace dperm::pg {

// The nearest of `relid` and its inheritance/partition ancestors that is
// protected (dperm.protected), or InvalidOid; *allowed says whether `role`
// may train on it. Needs an SPI connection.
Oid ProtectionOf(Oid relid, Oid role, bool* allowed);

// Whether `role` may see what dperm records about `relid` (its budget and
// the totals of every role's releases): a superuser or a member of
// pg_read_all_stats; a role with the privileges of the owner of the relation
// or of one of its ancestors, or SELECT on one of them (the table or a
// column); an analyst of its protection. False for a relation that no
// longer exists (except for the first two).
bool MaySeeRelation(Oid relid, Oid role);

// Every inheritance or partition ancestor of `relid`, nearest first, then
// every relation whose rows it or they held (dperm.lineage: a partition
// detached, a child disinherited, the relations of a moved budget), whose
// budgets and protection still cover it.
List* AncestorsOf(Oid relid);

// The first relation of `relid`'s family (itself, then its partitions and
// inheritance children, then its ancestors) with row-level security enabled,
// or InvalidOid. Locks the descendants (AccessShareLock).
Oid RowSecurityInFamily(Oid relid);

// Resolves and checks the `dataset` option for `role`: it must name a
// relation that is not a system catalog and that `role` may read (SELECT on
// the table or a column, or an analyst of the protected relation). Returns
// its OID. Needs an SPI connection.
Oid CheckDataset(const char* dataset, Oid role);

}  // namespace dperm::pg
