// What dperm.set_budget, move_budget and retire_budget share
// (budget_admin.cpp, budget_retire.cpp).
#pragma once

extern "C" {
#include "postgres.h"
}

namespace dperm::pg {

// The display name of `relid`, which the caller must own (or be a
// superuser) to `action` (42501 otherwise; 42P01 for a missing relation).
char* OwnedRelation(Oid relid, const char* action);

}  // namespace dperm::pg
