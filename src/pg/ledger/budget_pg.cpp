// The spent budget: dperm.budget_spent and dperm.rdp_orders (the ledger
// composed under a relation's accounting: basic sums or Renyi DP), and who
// may see it (dperm.relation_visible). Setting, moving and retiring a budget
// is in budget_admin.cpp.
#include "dperm/accounting/budget.hpp"

#include "base/arrays.hpp"
#include "base/internal_sql.hpp"
#include "guard/relation_access.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/array.h"
#include "utils/builtins.h"
}

namespace dperm::pg {
namespace {

// The values of a float8[] with the ledger's number of orders, or nullptr
// (a NULL or malformed curve composes by sums).
const double* CurveOrNull(ArrayType* array) {
  int expected = static_cast<int>(LedgerOrders().size());
  if (array == nullptr || ARR_NDIM(array) != 1 || ARR_HASNULL(array) ||
      ArrayGetNItems(1, ARR_DIMS(array)) != expected)
    return nullptr;
  double* copy = static_cast<double*>(palloc(sizeof(double) * expected));
  memcpy(copy, ARR_DATA_PTR(array), sizeof(double) * expected);
  return copy;
}

// A relation's running total (dperm.budget_totals; zeros when it has no
// ledger row). rdp: LedgerOrders().size() values, or nullptr.
struct ChargeSums {
  int64 releases = 0;
  double epsilon = 0, delta = 0, plain_epsilon = 0, plain_delta = 0;
  int64 curves = 0;
  const double* rdp = nullptr;
};

// Read as the catalog owner (the totals cover every role's ledger rows,
// which dperm.budget_spent shows only to roles that may see the relation):
// the statement resolves no name a caller could define.
ChargeSums ReadTotals(Oid relid) {
  MemoryContext outer = CurrentMemoryContext;  // survives SPI_finish
  ChargeSums sums;
  SPI_connect();
  Oid types[1] = {OIDOID};
  Datum args[1] = {ObjectIdGetDatum(relid)};
  RunAsCatalogOwner(
      "SELECT releases, epsilon, delta, plain_epsilon, plain_delta, curves, rdp"
      "  FROM dperm.budget_totals WHERE relation OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 1) {
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    sums.releases = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
    sums.epsilon = DatumGetFloat8(SPI_getbinval(row, desc, 2, &isnull));
    sums.delta = DatumGetFloat8(SPI_getbinval(row, desc, 3, &isnull));
    sums.plain_epsilon = DatumGetFloat8(SPI_getbinval(row, desc, 4, &isnull));
    sums.plain_delta = DatumGetFloat8(SPI_getbinval(row, desc, 5, &isnull));
    sums.curves = DatumGetInt64(SPI_getbinval(row, desc, 6, &isnull));
    Datum curve = SPI_getbinval(row, desc, 7, &isnull);
    if (!isnull) {
      MemoryContext old = MemoryContextSwitchTo(outer);
      sums.rdp = CurveOrNull(DatumGetArrayTypePCopy(curve));
      MemoryContextSwitchTo(old);
    }
  }
  SPI_finish();
  return sums;
}

// Whether the totals miss ledger rows (rows restored without the ledger's
// triggers, pg_restore --data-only --disable-triggers): then the ledger is
// composed itself. False for a catalog without the watermark (before 0.7.0).
bool TotalsStale() {
  if (!OidIsValid(LookupFuncName(
          list_make2(makeString(pstrdup("dperm")), makeString(pstrdup("budget_totals_stale"))), 0,
          nullptr, true)))
    return false;
  SPI_connect();
  RunAsCatalogOwner("SELECT dperm.budget_totals_stale()", 0, nullptr, nullptr, nullptr,
                    SPI_OK_SELECT, true);
  bool isnull;
  bool stale = SPI_processed == 1 && DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0],
                                                                SPI_tuptable->tupdesc, 1, &isnull));
  SPI_finish();
  return stale;
}

// Every ledger row of the relation, with `spare` free slots after them.
dperm::Charge* ReadCharges(Oid relid, int spare, int* count) {
  MemoryContext outer = CurrentMemoryContext;  // survives SPI_finish
  SPI_connect();
  Oid types[1] = {OIDOID};
  Datum args[1] = {ObjectIdGetDatum(relid)};
  RunAsCatalogOwner(
      "SELECT epsilon, delta, rdp FROM dperm.ledger"
      " WHERE relations OPERATOR(pg_catalog.@>) ARRAY[$1::pg_catalog.regclass]",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  int n = static_cast<int>(SPI_processed);
  dperm::Charge* charges = static_cast<dperm::Charge*>(
      MemoryContextAllocZero(outer, sizeof(dperm::Charge) * Max(n + spare, 1)));
  for (int i = 0; i < n; i++) {
    HeapTuple row = SPI_tuptable->vals[i];
    bool isnull;
    charges[i].epsilon = DatumGetFloat8(SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull));
    charges[i].delta = DatumGetFloat8(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull));
    Datum curve = SPI_getbinval(row, SPI_tuptable->tupdesc, 3, &isnull);
    if (!isnull) {
      MemoryContext old = MemoryContextSwitchTo(outer);
      charges[i].rdp = CurveOrNull(DatumGetArrayTypePCopy(curve));
      MemoryContextSwitchTo(old);
    }
  }
  SPI_finish();
  *count = n;
  return charges;
}

// 42501 unless the caller may see `relid`'s budget and spend.
void CheckMaySeeBudget(Oid relid) {
  if (MaySeeRelation(relid, GetUserId())) return;
  char* name = get_rel_name(relid);
  ereport(ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("permission denied for the privacy budget of relation %s",
                  name != nullptr ? name : psprintf("%u", relid)),
           errdetail("The spent budget counts the releases of every role: dperm shows it to "
                     "roles with the privileges of the relation's owner, SELECT on it (or on "
                     "a parent), its analysts (dperm.protect), and members of "
                     "pg_read_all_stats.")));
}

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.relation_visible(relation regclass) -> boolean: whether the caller
// may see the relation's budget and spend (MaySeeRelation); the row-level
// security policy of dperm.budgets.
DPERM_FUNCTION(dperm_relation_visible) {
  PG_RETURN_BOOL(MaySeeRelation(PG_GETARG_OID(0), GetUserId()));
}

// dperm.rdp_orders(): the orders of the ledger's RDP curves.
DPERM_FUNCTION(dperm_rdp_orders) {
  const std::vector<double>& orders = dperm::LedgerOrders();
  return Float8ArrayDatum(orders.data(), static_cast<int>(orders.size()));
}

// dperm.budget_spent(relation, accounting, delta_budget [, extra_rdp,
// extra_epsilon, extra_delta]) -> (epsilon, delta, releases): the ledger of
// every role composed, so only for a caller that may see the relation
// (MaySeeRelation; the ledger writer and dperm's internal callers run as the
// bootstrap superuser).
DPERM_FUNCTION(dperm_budget_spent) {
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2)) PG_RETURN_NULL();
  Oid relid = PG_GETARG_OID(0);
  CheckMaySeeBudget(relid);
  char* accounting = text_to_cstring(PG_GETARG_TEXT_PP(1));
  double delta_budget = PG_GETARG_FLOAT8(2);
  bool rdp = strcmp(accounting, "rdp") == 0;
  if (!rdp && strcmp(accounting, "basic") != 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("unknown accounting \"%s\"", accounting)));
  TupleDesc desc;
  if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
    elog(ERROR, "dperm.budget_spent must return a record");
  desc = BlessTupleDesc(desc);

  // The release being checked, if any: a curve or a non-zero epsilon/delta.
  bool has_extra =
      PG_NARGS() > 5 && (!PG_ARGISNULL(3) || (!PG_ARGISNULL(4) && PG_GETARG_FLOAT8(4) != 0) ||
                         (!PG_ARGISNULL(5) && PG_GETARG_FLOAT8(5) != 0));
  dperm::Charge extra;
  if (has_extra) {
    extra.rdp = PG_ARGISNULL(3) ? nullptr : CurveOrNull(PG_GETARG_ARRAYTYPE_P(3));
    extra.epsilon = PG_ARGISNULL(4) ? 0 : PG_GETARG_FLOAT8(4);
    extra.delta = PG_ARGISNULL(5) ? 0 : PG_GETARG_FLOAT8(5);
  }
  int64 n = 0;
  dperm::Spent spent;
  if (get_relname_relid("budget_totals", get_namespace_oid("dperm", false)) != InvalidOid &&
      !TotalsStale()) {
    ChargeSums sums = ReadTotals(relid);
    n = sums.releases;
    RunCore([&] {
      dperm::ChargeTotals totals;
      totals.releases = sums.releases;
      totals.epsilon = sums.epsilon;
      totals.delta = sums.delta;
      totals.plain_epsilon = sums.plain_epsilon;
      totals.plain_delta = sums.plain_delta;
      totals.curves = sums.curves;
      if (sums.rdp != nullptr) totals.rdp.assign(sums.rdp, sums.rdp + dperm::LedgerOrders().size());
      if (has_extra) dperm::AddCharge(&totals, extra);
      spent = dperm::ComposeTotals(rdp, delta_budget, totals);
    });
  } else {
    // A catalog from before 0.6.0 (ALTER EXTENSION ... UPDATE not yet run)
    // has no totals, and stale totals miss rows: compose the ledger's rows.
    int count = 0;
    dperm::Charge* charges = ReadCharges(relid, has_extra ? 1 : 0, &count);
    n = count;
    if (has_extra) charges[count++] = extra;
    RunCore([&] {
      spent = dperm::ComposeCharges(rdp, delta_budget,
                                    std::vector<dperm::Charge>(charges, charges + count));
    });
  }
  Datum values[3] = {Float8GetDatum(spent.epsilon), Float8GetDatum(spent.delta), Int64GetDatum(n)};
  bool nulls[3] = {false, false, false};
  PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
