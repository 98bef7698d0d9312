// Citus (citus.cpp, docs/citus.md): distributed relations and signed passes.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "nodes/pg_list.h"
}

namespace dperm::pg {

// Citus (citus.cpp, docs/citus.md). dperm.pass_key: the secret, the same
// on every node, under which dperm.train signs the passes Citus runs on the
// workers (superuser-only, postgresql.conf); empty: not configured.
extern char* g_pass_key;
bool PassKeyConfigured();
// Whether `relid` is a Citus table (false when Citus is not installed).
// Needs an SPI connection.
bool IsCitusTable(Oid relid);
// Refuses (0A000, hint dperm.train) when `relids` holds a Citus table or
// shard: the in-memory aggregates do not run there.
void RefuseCitusRelations(List* relids, const char* aggregate);
// A pass token: [expiry (Unix seconds), eight 32-bit words of the HMAC],
// appended to the pass spec's kPassSpecSize values.
const int kPassTokenSize = 9;
// Signs a pass: `spec` holds kPassSpecSize values, w dim values; writes
// kPassTokenSize values to `token`. Needs dperm.pass_key.
void SignPass(const double* spec, const double* w, int dim, double* token);
enum class PassTokenCheck { kValid, kNoKey, kBadMac, kExpired };
PassTokenCheck CheckPassToken(const double* spec, const double* token, const double* w, int dim);

}  // namespace dperm::pg
