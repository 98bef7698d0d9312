// Citus (docs/citus.md): finding distributed relations
// without linking to Citus, keeping the in-memory aggregates off them, and
// the pass tokens that let a worker run a streaming pass.
//
// Why tokens. dperm.train runs a pass over a distributed table as
//   SELECT dperm.pass_logreg(features, label, w, spec) FROM t
// and Citus splits it: worker_partial_agg runs the transition on every shard,
// on the workers, over connections Citus opens as the current user (the
// reader: the caller, or a protected relation's owner); coord_combine_agg sums
// the states on the coordinator. dperm.internal_pass, the guard of a local
// pass, is a session setting of the coordinator's backend; it does not reach
// the workers, and the reader (not a superuser) cannot set it there. Three
// schemes were weighed:
// * A Citus-propagated SET LOCAL: the worker session runs as the reader, who
//   may not set a superuser-only setting; a setting the reader may set, an
//   analyst may set too. Unsound.
// * Guarding only where the query starts and trusting the workers: the
//   transition never runs on the coordinator for a distributed table (only
//   the combine does), and a query grouped by the distribution column runs
//   the whole aggregate on the workers, so an analyst's
//   SELECT dperm.pass_logreg(...) FROM t GROUP BY id would return exact
//   per-row gradients. The coordinator cannot see that happen. Unsound.
// * A token per pass, verifiable on the worker (this file): the driver signs
//   (spec, w, expiry) with HMAC-SHA256 under dperm.pass_key, a secret the
//   administrator sets to the same value in postgresql.conf on every node,
//   readable by superusers only; the spec array carries the expiry and the
//   MAC to the workers (Citus inlines it as text; float8 text round-trips
//   exactly). A transition without dperm.internal_pass runs only under a
//   valid, unexpired token. An analyst cannot make one without the key, and
//   a token authorises only the pass dperm.train ran: the same spec and w.
// What a token does not do: bind the relation (a shard's name differs on
// every worker). A role that sees a token (its own pass's worker query
// text, in pg_stat_activity or the log, for a relation it may read itself)
// may replay it within the hour over rows it may read, and learns the
// gradient at that w of rows it can already read; the token of a protected
// relation's pass lives in a session of the relation's owner, which an
// analyst cannot see. Rows stay behind the workers' privileges: Citus copies
// a distributed table's grants and revokes (dperm.protect's) to its shards.
#include "dperm/release/streaming.hpp"

#include <cmath>

#include "base/arrays.hpp"
#include "base/citus.hpp"
#include "base/internal_sql.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/hmac.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {

char* g_pass_key = nullptr;

namespace {

// How long a pass token stays valid; the nodes' clocks must agree within it.
const int kPassTokenLifetimeSeconds = 3600;

bool CitusInstalled() { return OidIsValid(get_extension_oid("citus", true)); }

// Whether any relation in `relids` is a Citus table, or (on a worker) a
// shard of one. Needs an SPI connection and Citus installed.
bool AnyCitusRelation(List* relids) {
  Oid* oids = static_cast<Oid*>(palloc(sizeof(Oid) * Max(list_length(relids), 1)));
  int n = 0;
  ListCell* lc;
  foreach (lc, relids) oids[n++] = lfirst_oid(lc);
  Oid types[1] = {OIDARRAYOID};
  Datum args[1] = {OidArrayDatum(oids, n)};
  RunAsCatalogOwner(
      "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition p"
      "                WHERE p.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1))"
      "    OR EXISTS (SELECT 1 FROM pg_catalog.unnest($1) r"
      "                WHERE pg_catalog.relation_is_a_known_shard(r::pg_catalog.regclass))",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  bool isnull;
  return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

void HmacStep(pg_hmac_ctx* ctx, int status) {
  if (status < 0)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("dperm could not compute a pass token: %s", pg_hmac_error(ctx))));
}

void HmacDouble(pg_hmac_ctx* ctx, double v) {
  uint64 bits;
  memcpy(&bits, &v, sizeof bits);
  uint8 bytes[8];  // big-endian IEEE 754, as float8send writes it
  for (int i = 7; i >= 0; i--, bits >>= 8) bytes[i] = static_cast<uint8>(bits & 0xff);
  HmacStep(ctx, pg_hmac_update(ctx, bytes, sizeof bytes));
}

// HMAC-SHA256 under dperm.pass_key of "dperm pass v1", the spec's values,
// the expiry and w, each float8 in its big-endian bytes.
void PassMac(const double* spec, double expires, const double* w, int dim, uint8 mac[32]) {
  pg_hmac_ctx* ctx = pg_hmac_create(PG_SHA256);
  if (ctx == nullptr) ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
  static const char kDomain[] = "dperm pass v1";
  HmacStep(ctx, pg_hmac_init(ctx, reinterpret_cast<const uint8*>(g_pass_key), strlen(g_pass_key)));
  HmacStep(ctx, pg_hmac_update(ctx, reinterpret_cast<const uint8*>(kDomain), strlen(kDomain)));
  for (int i = 0; i < kPassSpecSize; i++) HmacDouble(ctx, spec[i]);
  HmacDouble(ctx, expires);
  for (int i = 0; i < dim; i++) HmacDouble(ctx, w[i]);
  HmacStep(ctx, pg_hmac_final(ctx, mac, 32));
  pg_hmac_free(ctx);
}

// Word i of a MAC (big-endian), exact in a float8 and in its text form.
double MacWord(const uint8 mac[32], int i) {
  return static_cast<double>((uint32(mac[4 * i]) << 24) | (uint32(mac[4 * i + 1]) << 16) |
                             (uint32(mac[4 * i + 2]) << 8) | uint32(mac[4 * i + 3]));
}

double NowUnixSeconds() {
  return static_cast<double>(GetCurrentTimestamp() / USECS_PER_SEC +
                             (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY);
}

}  // namespace

bool PassKeyConfigured() { return g_pass_key != nullptr && g_pass_key[0] != '\0'; }

bool IsCitusTable(Oid relid) { return CitusInstalled() && AnyCitusRelation(list_make1_oid(relid)); }

void RefuseCitusRelations(List* relids, const char* aggregate) {
  if (relids == NIL || !CitusInstalled()) return;
  SPI_connect();
  bool citus = AnyCitusRelation(relids);
  SPI_finish();
  // Depends on the catalog only (public), so the refusal is not charged.
  if (citus)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s cannot read a Citus distributed table or its shards", aggregate),
                    errdetail("Citus would either pull every row to the coordinator or run the "
                              "release on a worker, charged to a shard instead of the table."),
                    errhint("Train with dperm.train(relation, features, label, loss, options): it "
                            "streams over distributed tables and charges the table once, on the "
                            "coordinator.")));
}

void SignPass(const double* spec, const double* w, int dim, double* token) {
  double expires = NowUnixSeconds() + kPassTokenLifetimeSeconds;
  uint8 mac[32];
  PassMac(spec, expires, w, dim, mac);
  token[0] = expires;
  for (int i = 0; i < 8; i++) token[1 + i] = MacWord(mac, i);
}

PassTokenCheck CheckPassToken(const double* spec, const double* token, const double* w, int dim) {
  if (!PassKeyConfigured()) return PassTokenCheck::kNoKey;
  if (!std::isfinite(token[0])) return PassTokenCheck::kBadMac;
  uint8 mac[32];
  PassMac(spec, token[0], w, dim, mac);
  uint32 diff = 0;  // compared in constant time
  for (int i = 0; i < 8; i++) diff |= static_cast<uint32>(MacWord(mac, i) != token[1 + i]);
  if (diff != 0) return PassTokenCheck::kBadMac;
  return token[0] < NowUnixSeconds() ? PassTokenCheck::kExpired : PassTokenCheck::kValid;
}

}  // namespace dperm::pg
