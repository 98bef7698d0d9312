// Protected relations (protect.cpp): dperm.protect, and the checks that
// dperm.train and dperm.move_budget share with it.
#pragma once

#include "base/boundary.hpp"

namespace dperm::pg {

// Protects `relid` (a table, partitioned table or materialized view; the
// caller checked ownership): revokes every direct privilege on it, its
// partitions and inheritance children from every grantee but their owners,
// and records them in dperm.protected with `analysts` (a regrole[]; NULL:
// every role). Refused (2BP01) while a view or materialized view exposes
// their rows to another role. dperm.protect, and dperm.move_budget for the
// relation that replaces a protected one.
void ProtectRelation(Oid relid, Datum analysts, bool analysts_null);
// Refuses (0A000 when protecting, else 55000) a relation with row-level
// security enabled anywhere in its family (RowSecurityInFamily): dperm reads a
// protected relation as its owner, so its policies would be evaluated for
// the owner, not for the analyst. `name` is the relation's name for the
// message.
void RefuseRowSecurity(Oid relid, const char* name, bool protecting);

// Locks `relid` (ACCESS SHARE, to the end of the transaction) and refuses
// (42809) anything but a table, partitioned table or materialized view, or
// also a view when `view_allowed`. Returns its name; its owner in `owner`.
char* LockReadableRelation(Oid relid, Oid* owner, bool view_allowed);

}  // namespace dperm::pg
