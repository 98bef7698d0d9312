// dperm.budget_spent and dperm.rdp_orders: the ledger composed under a
// relation's accounting (basic sums or Renyi DP).
#include "dperm/budget.hpp"

#include "dperm_pg.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
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

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.rdp_orders(): the orders of the ledger's RDP curves.
DPERM_FUNCTION(dperm_rdp_orders) {
  const std::vector<double>& orders = dperm::LedgerOrders();
  return Float8ArrayDatum(orders.data(), static_cast<int>(orders.size()));
}

// dperm.budget_spent(relation, accounting, delta_budget [, extra_rdp,
// extra_epsilon, extra_delta]) -> (epsilon, delta, releases)
DPERM_FUNCTION(dperm_budget_spent) {
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2)) PG_RETURN_NULL();
  Oid relid = PG_GETARG_OID(0);
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

  MemoryContext outer = CurrentMemoryContext;  // survives SPI_finish
  // SECURITY DEFINER (the totals need every role's ledger rows): the
  // statement resolves no name a caller could define (kInternalSearchPath,
  // qualified types and operators).
  SPI_connect();
  int guc_level = PinInternalSearchPath();
  Oid types[1] = {OIDOID};
  Datum args[1] = {ObjectIdGetDatum(relid)};
  if (SPI_execute_with_args(
          "SELECT epsilon, delta, rdp FROM dperm.ledger"
          " WHERE relations OPERATOR(pg_catalog.@>) ARRAY[$1::pg_catalog.regclass]",
          1, types, args, nullptr, true, 0) != SPI_OK_SELECT)
    elog(ERROR, "could not read dperm.ledger");
  AtEOXact_GUC(true, guc_level);
  int64 n = static_cast<int64>(SPI_processed);
  // The release being checked, if any: a curve or a non-zero epsilon/delta.
  bool has_extra = PG_NARGS() > 5 &&
                   (!PG_ARGISNULL(3) || (!PG_ARGISNULL(4) && PG_GETARG_FLOAT8(4) != 0) ||
                    (!PG_ARGISNULL(5) && PG_GETARG_FLOAT8(5) != 0));
  int total = static_cast<int>(n) + (has_extra ? 1 : 0);
  dperm::Charge* charges = static_cast<dperm::Charge*>(
      MemoryContextAllocZero(outer, sizeof(dperm::Charge) * Max(total, 1)));
  for (int64 i = 0; i < n; i++) {
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
  if (has_extra) {
    charges[n].rdp = PG_ARGISNULL(3) ? nullptr : CurveOrNull(PG_GETARG_ARRAYTYPE_P(3));
    charges[n].epsilon = PG_ARGISNULL(4) ? 0 : PG_GETARG_FLOAT8(4);
    charges[n].delta = PG_ARGISNULL(5) ? 0 : PG_GETARG_FLOAT8(5);
  }
  dperm::Spent spent;
  RunCore([&] {
    spent = dperm::ComposeCharges(rdp, delta_budget,
                                  std::vector<dperm::Charge>(charges, charges + total));
  });
  Datum values[3] = {Float8GetDatum(spent.epsilon), Float8GetDatum(spent.delta), Int64GetDatum(n)};
  bool nulls[3] = {false, false, false};
  PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
