// dperm.retire_budget: the owner ends a relation's budget (budget_admin.cpp
// sets and moves it).
#include "base/boundary.hpp"
#include "base/internal_sql.hpp"
#include "ledger/budget_admin.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
}

using namespace dperm::pg;

// dperm.retire_budget(relation regclass): the owner (or a superuser) ends a
// relation's budget, an explicit decision: the budget and what it had spent
// go to dperm.retired_budgets, the ledger keeps every charge, and a NOTICE
// says so. Releases from the relation are then unlimited; it may be dropped.
DPERM_FUNCTION(dperm_retire_budget) {
  if (PG_ARGISNULL(0))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("relation must not be NULL")));
  Oid relid = PG_GETARG_OID(0);
  char* name = OwnedRelation(relid, "retire its privacy budget");
  SPI_connect();
  Oid types[2] = {OIDOID, OIDOID};
  Datum args[2] = {ObjectIdGetDatum(relid), ObjectIdGetDatum(GetUserId())};
  RunAsCatalogOwner(
      "WITH b AS (DELETE FROM dperm.budgets b"
      "            WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1"
      "           RETURNING b.relation, b.epsilon, b.delta, b.accounting, b.set_by,"
      "                     b.privacy_unit, b.max_rows_per_unit)"
      " INSERT INTO dperm.retired_budgets (relation, relation_name, epsilon, delta, accounting,"
      "   epsilon_spent, delta_spent, releases, set_by, retired_by, retired_at, privacy_unit,"
      "   max_rows_per_unit)"
      " SELECT $1, pg_catalog.format('%I.%I', n.nspname, c.relname), b.epsilon, b.delta,"
      "        b.accounting, s.epsilon, s.delta, s.releases, b.set_by,"
      "        $2::pg_catalog.regrole, pg_catalog.now(), b.privacy_unit, b.max_rows_per_unit"
      "   FROM b, dperm.budget_spent(b.relation, b.accounting, b.delta) s,"
      "        pg_catalog.pg_class c"
      "   JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace"
      "  WHERE c.oid OPERATOR(pg_catalog.=) $1"
      " RETURNING epsilon, delta, accounting, epsilon_spent, delta_spent, releases",
      2, types, args, nullptr, SPI_OK_INSERT_RETURNING, false);
  if (SPI_processed == 0)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                    errmsg("relation %s has no privacy budget to retire", name),
                    errhint("dperm.budgets lists the budgeted relations.")));
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  bool isnull;
  double epsilon = DatumGetFloat8(SPI_getbinval(row, desc, 1, &isnull));
  double delta = DatumGetFloat8(SPI_getbinval(row, desc, 2, &isnull));
  char* accounting = SPI_getvalue(row, desc, 3);
  double spent_epsilon = DatumGetFloat8(SPI_getbinval(row, desc, 4, &isnull));
  double spent_delta = DatumGetFloat8(SPI_getbinval(row, desc, 5, &isnull));
  int64 releases = DatumGetInt64(SPI_getbinval(row, desc, 6, &isnull));
  ereport(NOTICE,
          (errmsg("retired the privacy budget of %s", name),
           errdetail("It had spent epsilon = %g of %g and delta = %g of %g in " INT64_FORMAT
                     " release(s) (%s accounting). The ledger keeps those rows and "
                     "dperm.retired_budgets records the decision; releases from %s are no "
                     "longer limited.",
                     spent_epsilon, epsilon, spent_delta, delta, releases, accounting, name)));
  SPI_finish();
  PG_RETURN_VOID();
}
