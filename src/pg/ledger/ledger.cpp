// The ledger writer's transaction (docs/design.md section 3, item 4): the budget
// check and the ledger row of one release, in a transaction of its own, as
// the bootstrap superuser. The check and the charge are atomic across
// sessions: the writer locks the budget rows of the relations (SELECT ...
// FOR UPDATE SKIP LOCKED) before summing the ledger, and answers busy
// instead of waiting when one is locked. Why a separate writer, and what a
// release sends it, is in charge.cpp; how the request reaches it (a
// persistent writer with shared_preload_libraries, else a dynamic worker) is
// in ledger_writer.cpp. Requests of other kinds go to the handler their
// kind registered (RegisterLedgerHandler), in the same transaction.
#include "base/arrays.hpp"
#include "base/internal_sql.hpp"
#include "ledger/ledger.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {

namespace {

// The handlers of the request kinds other than kChargeRelease, by kind.
const int kMaxLedgerKinds = 16;
LedgerHandler g_handlers[kMaxLedgerKinds] = {};

// Runs the handler registered for req->kind; a kind without one raises (the
// request fails, and nothing is written).
void ServeRegistered(LedgerRequest* req) {
  int kind = req->kind;
  LedgerHandler handler =
      kind > kChargeRelease && kind < kMaxLedgerKinds ? g_handlers[kind] : nullptr;
  if (handler == nullptr) elog(ERROR, "dperm ledger writer: no handler for request kind %d", kind);
  handler(req);
}

// What relation `relid` will have spent, under `accounting`, after a release
// with this curve (nullptr: none), epsilon and delta. A 0.1.0 catalog (not yet
// ALTER EXTENSION ... UPDATE'd) has no budget_spent: plain sums, as 0.1.0 did.
void SpentAfter(bool legacy_catalog, Datum relid, const char* accounting, double budget_delta,
                const double* rdp, int n_rdp, double epsilon, double delta, double* spent_eps,
                double* spent_delta) {
  Oid types[6] = {OIDOID, TEXTOID, FLOAT8OID, FLOAT8ARRAYOID, FLOAT8OID, FLOAT8OID};
  Datum args[6] = {relid,
                   CStringGetTextDatum(accounting),
                   Float8GetDatum(budget_delta),
                   n_rdp > 0 ? Float8ArrayDatum(rdp, n_rdp) : (Datum)0,
                   Float8GetDatum(epsilon),
                   Float8GetDatum(delta)};
  char nulls[6] = {' ', ' ', ' ', n_rdp > 0 ? ' ' : 'n', ' ', ' '};
  if (SPI_execute_with_args(
          legacy_catalog
              ? "SELECT COALESCE(pg_catalog.sum(epsilon), 0) OPERATOR(pg_catalog.+) $5,"
                "       COALESCE(pg_catalog.sum(delta), 0) OPERATOR(pg_catalog.+) $6"
                "  FROM dperm.ledger WHERE relations OPERATOR(pg_catalog.@>) ARRAY[$1::pg_catalog.regclass]"
              : "SELECT epsilon, delta FROM dperm.budget_spent($1::pg_catalog.regclass, $2, $3, $4, $5, $6)",
          6, types, args, nulls, false, 1) != SPI_OK_SELECT ||
      SPI_processed != 1)
    elog(ERROR, "could not compute the spent budget of relation %u", DatumGetObjectId(relid));
  bool isnull;
  *spent_eps =
      DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  *spent_delta =
      DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
}

// The first of the request's budgeted relations whose budget row the locking
// read skipped (it is locked by another transaction), or InvalidOid. The
// budget rows are listed again without a lock; a row that appeared or went
// away in between reads as skipped, and the retry sees it settled.
Oid SkippedBudget(LedgerRequest* req, SPITupleTable* locked, uint64 n_locked) {
  Oid argtypes[1] = {OIDARRAYOID};
  Datum args[1] = {OidArrayDatum(req->relations, req->n_relations)};
  if (SPI_execute_with_args("SELECT b.relation::pg_catalog.oid FROM dperm.budgets b"
                            " WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)"
                            " ORDER BY b.relation::pg_catalog.oid",
                            1, argtypes, args, nullptr, false, 0) != SPI_OK_SELECT)
    elog(ERROR, "could not read dperm.budgets");
  for (uint64 i = 0; i < SPI_processed; i++) {
    bool isnull;
    Oid relid =
        DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
    bool found = false;
    for (uint64 j = 0; j < n_locked && !found; j++)
      found =
          DatumGetObjectId(SPI_getbinval(locked->vals[j], locked->tupdesc, 1, &isnull)) == relid;
    if (!found) return relid;
  }
  return InvalidOid;
}

// What a release costs a budget (ledger_request.hpp): the request's (epsilon, delta,
// curve), or, for a unit-level release and a budget that names no unit, its
// cost at the row.
struct BudgetCost {
  double epsilon;
  double delta;
  const double* rdp;
  int n_rdp;
};
BudgetCost UnitCost(const LedgerRequest* req) {
  return {req->epsilon, req->delta, req->rdp, req->n_rdp};
}
BudgetCost RowCost(const LedgerRequest* req) {
  if (req->unit_rows <= 0) return UnitCost(req);
  return {req->row_epsilon, req->row_delta, req->row_rdp, req->n_row_rdp};
}

// Checks every budget of the request's relations with this release added,
// under each relation's accounting (dperm.budget_spent); fills a refusal if
// one would be overspent.
bool WithinBudgets(LedgerRequest* req, List** unit_budgets) {
  *unit_budgets = NIL;
  if (req->n_relations == 0) return true;
  // A unit-level release states its cost at the row too, never below the
  // unit's (UnitReleaseCharge): without it, no budget of rows is charged.
  if (req->unit_rows > 0 && !(req->row_epsilon >= req->epsilon && req->row_delta >= req->delta))
    elog(ERROR, "a unit-level charge without its cost at the row");
  Oid argtypes[1] = {OIDARRAYOID};
  Datum args[1] = {OidArrayDatum(req->relations, req->n_relations)};
  // Lock the budgets so concurrent charges serialise, without ever waiting:
  // a row another transaction holds (an uncommitted dperm.set_budget) is
  // skipped, and the request answered busy below. A wait here would hold up
  // every release behind it (the persistent writer serves one request at a
  // time; a dynamic one holds a worker slot).
  if (SPI_execute_with_args(
          req->legacy_catalog
              ? "SELECT b.relation::pg_catalog.oid, b.relation::pg_catalog.text, b.epsilon, b.delta, 'basic',"
                "       NULL::pg_catalog.text, NULL::pg_catalog.int8"
                "  FROM dperm.budgets b WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)"
                "  ORDER BY b.relation::pg_catalog.oid FOR UPDATE SKIP LOCKED"
              : "SELECT b.relation::pg_catalog.oid, b.relation::pg_catalog.text, b.epsilon, b.delta, b.accounting,"
                "       (pg_catalog.to_jsonb(b) OPERATOR(pg_catalog.->>) 'privacy_unit'),"
                "       (pg_catalog.to_jsonb(b) OPERATOR(pg_catalog.->>) 'max_rows_per_unit')::pg_catalog.int8"
                "  FROM dperm.budgets b WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)"
                "  ORDER BY b.relation::pg_catalog.oid FOR UPDATE SKIP LOCKED",
          1, argtypes, args, nullptr, false, 0) != SPI_OK_SELECT)
    elog(ERROR, "could not read dperm.budgets");
  SPITupleTable* budgets = SPI_tuptable;
  uint64 n_budgets = SPI_processed;
  Oid skipped = SkippedBudget(req, budgets, n_budgets);
  if (OidIsValid(skipped)) {
    req->status = kBusy;
    req->busy_relation = skipped;
    return false;
  }
  for (uint64 i = 0; i < n_budgets; i++) {
    HeapTuple row = budgets->vals[i];
    TupleDesc desc = budgets->tupdesc;
    bool isnull;
    Datum relid = SPI_getbinval(row, desc, 1, &isnull);
    char* name = SPI_getvalue(row, desc, 2);
    double budget_eps = DatumGetFloat8(SPI_getbinval(row, desc, 3, &isnull));
    double budget_delta = DatumGetFloat8(SPI_getbinval(row, desc, 4, &isnull));
    char* accounting = SPI_getvalue(row, desc, 5);
    // Under the budget row's lock: a release whose rows were not bounded to
    // this budget's unit (a race with dperm.set_budget; every release path
    // checks the unit before this) is not charged.
    char* unit = SPI_getvalue(row, desc, 6);
    bool unit_null;
    int64 max_rows = DatumGetInt64(SPI_getbinval(row, desc, 7, &unit_null));
    if (unit != nullptr &&
        (req->unit_rows < 1 || req->unit_rows > max_rows || strcmp(req->unit, unit) != 0))
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                      errmsg("the budget of %s protects each \"%s\" (at most " INT64_FORMAT
                             " rows), but the release did not bound its rows by that unit",
                             name, unit, max_rows)));
    // Each budget is charged at its own unit: per unit where it names the
    // release's unit, at the row where it names none.
    if (unit != nullptr) *unit_budgets = lappend_oid(*unit_budgets, DatumGetObjectId(relid));
    const BudgetCost cost = unit != nullptr ? UnitCost(req) : RowCost(req);
    double after_eps, after_delta;
    SpentAfter(req->legacy_catalog, relid, accounting, budget_delta, cost.rdp, cost.n_rdp,
               cost.epsilon, cost.delta, &after_eps, &after_delta);
    // A relative slack of 1e-12 absorbs rounding in the sums only; a zero
    // budget admits nothing.
    bool ok = after_eps <= budget_eps * (1 + 1e-12) && after_delta <= budget_delta * (1 + 1e-12);
    if (!ok) {
      // What is left now, for the message (the spend without this release).
      double now_eps, now_delta;
      SpentAfter(req->legacy_catalog, relid, accounting, budget_delta, nullptr, 0, 0, 0, &now_eps,
                 &now_delta);
      double left_eps = budget_eps - now_eps;
      double left_delta = budget_delta - now_delta;
      req->status = kRefused;
      // The same message whatever is left (a role that may not see the
      // spend gets charge.cpp's detail instead): "exhausted" would be
      // false with epsilon left, and telling the cases apart a leak.
      snprintf(req->message, sizeof req->message,
               "the release does not fit in the privacy budget of relation %s", name);
      snprintf(req->detail, sizeof req->detail,
               "%s has epsilon = %.6g and delta = %.6g left of its budget "
               "(epsilon = %.6g, delta = %.6g, %s accounting); the release asks for "
               "epsilon = %.6g and delta = %.6g, with which it would have spent "
               "epsilon = %.6g and delta = %.6g.",
               name, Max(left_eps, 0.0), Max(left_delta, 0.0), budget_eps, budget_delta, accounting,
               cost.epsilon, cost.delta, after_eps, after_delta);
      snprintf(req->hint, sizeof req->hint,
               "Ask the owner of %s to raise its budget with dperm.set_budget, "
               "or release with a smaller epsilon or delta.",
               name);
      return false;
    }
  }
  return true;
}

// The first values of a ledger row: time, role (%s: the OID $15 or the
// name $2, as the catalog's role column stores it), relations ($3, an
// oid[]) and their names as schema.name (the OID where the relation is gone).
#define LEDGER_ROW_HEAD                                                               \
  " SELECT $1, %s, $3::pg_catalog.regclass[],"                                        \
  "  ARRAY(SELECT CASE WHEN c.oid IS NULL THEN u.relid::pg_catalog.text"              \
  "                    ELSE pg_catalog.format('%%I.%%I', ns.nspname, c.relname) END"  \
  "          FROM pg_catalog.unnest($3) WITH ORDINALITY u(relid, i)"                  \
  "          LEFT JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) u.relid" \
  "          LEFT JOIN pg_catalog.pg_namespace ns"                                    \
  "                 ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace"                  \
  "         ORDER BY u.i),"

// Appends one ledger row of the request: `relations` charged `cost`, with
// `neighbors`, and charged_with (0: none; dperm 0.7.0's catalog) the row it
// accompanies. Returns its id. The role is stored by OID, and its name at
// the release in role_name (dperm 0.7.0's catalog; older ones have a name
// column only).
int64 AppendLedgerRow(LedgerRequest* req, const Oid* relations, int n_relations,
                      const BudgetCost& cost, const char* neighbors, int64 charged_with) {
  Oid types[16] = {TIMESTAMPTZOID, TEXTOID,        OIDARRAYOID, TEXTOID, TEXTOID, TEXTOID,
                   TEXTOID,        FLOAT8OID,      FLOAT8OID,   INT8OID, INT4OID, BOOLOID,
                   TEXTOID,        FLOAT8ARRAYOID, OIDOID,      INT8OID};
  Datum args[16] = {TimestampTzGetDatum(req->released_at),
                    CStringGetTextDatum(req->role),
                    OidArrayDatum(relations, n_relations),
                    CStringGetTextDatum(req->algorithm),
                    CStringGetTextDatum(req->mechanism),
                    CStringGetTextDatum(req->loss),
                    CStringGetTextDatum(neighbors),
                    Float8GetDatum(cost.epsilon),
                    Float8GetDatum(cost.delta),
                    Int64GetDatum(req->n),
                    Int32GetDatum(req->d),
                    BoolGetDatum(req->seeded),
                    CStringGetTextDatum(req->query),
                    cost.n_rdp > 0 ? Float8ArrayDatum(cost.rdp, cost.n_rdp) : (Datum)0,
                    ObjectIdGetDatum(req->role_id),
                    Int64GetDatum(charged_with)};
  char nulls[16] = {' ',
                    ' ',
                    ' ',
                    ' ',
                    ' ',
                    ' ',
                    ' ',
                    ' ',
                    ' ',
                    ' ',
                    ' ',
                    ' ',
                    req->query[0] ? ' ' : 'n',
                    cost.n_rdp > 0 ? ' ' : 'n',
                    ' ',
                    ' '};
  if (req->legacy_catalog) nulls[13] = 'n';         // 0.1.0 has no rdp column
  bool by_oid = RoleColumnIsOid("ledger", "role");  // then role_name exists too
  const char* role = by_oid ? "$15::pg_catalog.regrole" : "$2::pg_catalog.name";
  const bool with = charged_with != 0;
  char* sql =
      req->legacy_catalog
          ? psprintf(
                "INSERT INTO dperm.ledger (released_at, role, relations, relation_names,"
                "  algorithm, mechanism, loss, neighbors, epsilon, delta, n, d, seeded, query)" LEDGER_ROW_HEAD
                "  $4, $5, $6, $7, $8, $9, $10, $11, $12, $13"
                " RETURNING id",
                role)
          : psprintf(
                "INSERT INTO dperm.ledger (released_at, role, relations, relation_names,"
                "  algorithm, mechanism, loss, neighbors, epsilon, delta, n, d, seeded, query,"
                "  rdp%s%s)" LEDGER_ROW_HEAD
                "  $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14%s%s"
                " RETURNING id",
                by_oid ? ", role_name" : "", with ? ", charged_with" : "", role,
                by_oid ? ", $2::pg_catalog.name" : "", with ? ", $16" : "");
  // tcount 0: the INSERT runs to completion, so its AFTER STATEMENT
  // trigger (dperm.ledger_totals: the running budget totals) fires; a limit
  // stops the executor at the first RETURNING row and skips it.
  if (SPI_execute_with_args(sql, with ? 16 : 15, types, args, nulls, false, 0) !=
          SPI_OK_INSERT_RETURNING ||
      SPI_processed != 1)
    elog(ERROR, "could not append to dperm.ledger");
  bool isnull;
  return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

// Appends the request's ledger rows; the id of the first goes back to the
// caller. A unit-level release is charged at the unit to the relations
// whose budget names it (`unit_budgets`), and at the row to every other
// relation it reads, in a second row whose charged_with is the first: each
// relation's totals then hold what the release cost at its budget's unit
// (an unbudgeted relation at the row: a budget set on it later counts the
// cost at the row, never less).
void AppendLedgerRows(LedgerRequest* req, List* unit_budgets) {
  if (req->unit_rows <= 0) {
    req->ledger_id =
        AppendLedgerRow(req, req->relations, req->n_relations, UnitCost(req), req->neighbors, 0);
    return;
  }
  Oid* at_unit = static_cast<Oid*>(palloc(sizeof(Oid) * (req->n_relations + 1)));
  Oid* at_row = static_cast<Oid*>(palloc(sizeof(Oid) * (req->n_relations + 1)));
  int n_unit = 0, n_row = 0;
  for (int i = 0; i < req->n_relations; i++) {
    if (list_member_oid(unit_budgets, req->relations[i])) at_unit[n_unit++] = req->relations[i];
    else at_row[n_row++] = req->relations[i];
  }
  int64 first = 0;
  if (n_unit > 0) first = AppendLedgerRow(req, at_unit, n_unit, UnitCost(req), req->neighbors, 0);
  if (n_row > 0) {
    int64 row = AppendLedgerRow(req, at_row, n_row, RowCost(req),
                                "replace_one (a unit-level release, charged at the row)", first);
    if (first == 0) first = row;
  }
  req->ledger_id = first;
}

// The writer waits at most this long for any other lock (a row a record
// request updates, a budget_totals row another dynamic writer is
// inserting): charges hold theirs for milliseconds, and a longer wait means
// an uncommitted transaction, whose release would otherwise hold up every
// other release behind it. It then answers busy (55P03 is retried by the
// releasing backend) and never waits on a lock an untrusted role controls.
const char* const kWriterLockTimeout = "100ms";

// True when the database still has dperm 0.1.0's SQL objects (the library
// was upgraded, ALTER EXTENSION dperm UPDATE not yet run).
bool CatalogIsLegacy() {
  if (SPI_execute(
          "SELECT extversion FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'dperm'",
          true, 1) != SPI_OK_SELECT ||
      SPI_processed != 1)
    elog(ERROR, "dperm is not installed in this database");
  char* version = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  return strcmp(version, "0.1.0") == 0;
}

// Recounts dperm.budget_totals when they miss ledger rows (rows restored
// without the ledger's triggers), before the budget check reads them. A
// catalog without the watermark (before 0.7.0) has nothing to refresh.
void RefreshTotals() {
  if (SPI_execute("SELECT pg_catalog.to_regprocedure('dperm.refresh_budget_totals()') IS NOT NULL",
                  true, 1) != SPI_OK_SELECT ||
      SPI_processed != 1)
    elog(ERROR, "could not look up dperm.refresh_budget_totals");
  bool isnull;
  if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
    return;
  if (SPI_execute("SELECT dperm.refresh_budget_totals()", false, 0) != SPI_OK_SELECT)
    elog(ERROR, "could not refresh dperm.budget_totals");
}

void CopyText(char* dst, size_t size, const char* src) {
  strlcpy(dst, src != nullptr ? src : "", size);
}

}  // namespace

void RegisterLedgerHandler(LedgerRequestKind kind, LedgerHandler handler) {
  if (kind <= kChargeRelease || kind >= kMaxLedgerKinds)
    elog(ERROR, "dperm ledger writer: request kind %d cannot have a handler",
         static_cast<int>(kind));
  g_handlers[kind] = handler;
}

// One request, one transaction (the dynamic writer and the persistent one). The
// writer is connected as the bootstrap superuser: the catalog is writable by
// its owner only; the worker writes for the releasing role, which it records
// in the row.
void ServeLedgerRequest(LedgerRequest* req) {
  SetCurrentStatementStartTimestamp();
  StartTransactionCommand();
  MemoryContext context = CurrentMemoryContext;
  PG_TRY();
  {
    SPI_connect();
    PushActiveSnapshot(GetTransactionSnapshot());
    int guc_level = PinInternalSettings();
    set_config_option("lock_timeout", kWriterLockTimeout, PGC_USERSET, PGC_S_SESSION,
                      GUC_ACTION_SAVE, true, 0, false);
    bool charge = true;
    if (req->kind != kChargeRelease) {
      ServeRegistered(req);  // a record, no charge
    } else {
      req->legacy_catalog = CatalogIsLegacy();
      if (!req->legacy_catalog) RefreshTotals();
      List* unit_budgets = NIL;
      charge = WithinBudgets(req, &unit_budgets);
      if (charge) AppendLedgerRows(req, unit_budgets);
    }
    AtEOXact_GUC(true, guc_level);
    SPI_finish();
    PopActiveSnapshot();
    CommitTransactionCommand();
    if (charge) req->status = kCharged;
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(context);
    ErrorData* error = CopyErrorData();
    FlushErrorState();
    req->sqlstate = error->sqlerrcode;
    CopyText(req->message, sizeof req->message, error->message);
    // A lock the writer would have waited for: nothing was written.
    req->status = error->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE ? kBusy : kFailed;
    req->busy_relation = InvalidOid;
    AbortCurrentTransaction();
  }
  PG_END_TRY();
}

}  // namespace dperm::pg
