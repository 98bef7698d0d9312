// dperm.train_query (docs/design.md section 4, "a query is an input with a
// noisy size"; docs/user-guide.md, "Training on a query"): a release on a
// filtered or derived query of one private relation, on the privacy-unit
// path of dperm.train (train_pg.cpp): the query is validated before
// anything is charged (query_input.cpp), written back as canonical text,
// and read as the FROM item `(canonical query) t` by the unit path -- a
// noisy count of the query's units (ReleaseUnitCount), charged whole with
// the model before anything is read, then exactly that many units of k
// slots each (UnitBoundedSource: a random subset, or public dummy units).
//
// Why it is private, at the relation's unit:
// - The query is 1-stable ([McS09], PINQ, stable transformations): a
//   filter, per-row expressions and a join to a public relation on a key
//   unique there map each private row to at most one input row, carrying
//   the row's unit (dperm_unit). So one unit (or, without a unit, one row)
//   added to or removed from the private relation adds or
//   removes at most one unit of the input, with at most the rows it had.
// - The row unit (no unit in the budget): each input row is its own unit,
//   k = max_rows_per_unit = 1, dperm_unit = ROW(tableoid, ctid). The count
//   of units then has sensitivity 1 under one row added or removed: the
//   discrete Laplace at UnitCountEpsilon (unit_count.hpp) is that share-DP (Dwork &
//   Roth 2014, Thm 3.6, its discrete form: Ghosh, Roughgarden & Sundararajan
//   2012). Given the noisy count m, the read is the first m units in a
//   uniformly random order, then public dummies: coupling the two orders on
//   the common units, a neighbour with one more row reads the same m slots
//   except that the added row may take the place of one other row or dummy
//   -- the slot tables have the same n = m and differ in at most one
//   replaced slot, which the model's replace-one mechanism at the rest of
//   epsilon covers (unit_level.hpp with k = 1: RowLevelOptions is the
//   identity). Basic composition (Dwork & Roth 2014, Thm 3.16) gives the
//   whole epsilon for one row added or removed; the ledger says so
//   (NeighborsOf: "one row added or removed") and charges every budget of
//   the relation's family the release's own cost (charge.cpp: a row unit is
//   charged at the row).
// - A declared unit: the same at the unit, with k slots (unit_level.hpp).
// An empty query is a release like any other: its count is noisy, its slots
// dummies. A noisy count of zero releases NULL, after the charge, as
// dperm.train's unit path does: a function of the noisy count only.
#include "dperm/options/options.hpp"
#include "dperm/planning/unit_count.hpp"
#include "dperm/planning/unit_level.hpp"

#include "types/model_type.hpp"
#include "types/options_pg.hpp"
#include "guard/privacy_unit.hpp"
#include "guard/protect.hpp"
#include "guard/query_input.hpp"
#include "guard/relation_access.hpp"
#include "guard/relations.hpp"
#include "release/progress.hpp"
#include "release/release_checks.hpp"
#include "release/release_guard.hpp"
#include "release/train_query.hpp"
#include "release/train_steps.hpp"

extern "C" {
#include "access/sysattr.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {

// A relation is private when its family has a budget or protection: the
// predicates dperm.train uses (TrainRelations, StrictRelations).
bool IsPrivateQueryRelation(Oid relid) {
  int n = 0;
  Oid* family = TrainRelations(relid, InvalidOid, &n);
  return ChargedStrictly(family, n);
}

// Who reads: the owner of a protected relation (the caller must be one of
// its analysts; no row-level security in its family; the views over it need
// no grant: their bodies passed the same rules as the query), else the role
// PostgreSQL reads the private relation as -- the caller, or the owner of
// the view over it (the caller for a security_invoker view) -- after
// PostgreSQL's own checks of every view read (SELECT on it, as the caller
// or as the owner of the view that reads it) and of the private relation.
// The lookups must be readable by the caller and the reader (CheckLookups).
void CheckQueryReader(TrainInput* in, const QueryInput& q) {
  bool allowed = false;
  in->is_protected = OidIsValid(ProtectionOf(in->relid, in->caller, &allowed));
  if (in->is_protected) {
    if (!allowed)
      ereport(
          ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("role %s may not train on %s", GetUserNameFromId(in->caller, false), in->name),
           errdetail("Nothing was charged."),
           errhint("The owner lists the analysts of a protected relation with dperm.protect.")));
    RefuseRowSecurity(in->relid, in->name, false);
    in->reader = in->owner;
  } else {
    // The checks the executor would make on the query as the caller wrote
    // it (ExecCheckRTPerms, each entry as its checkAsUser or the caller),
    // so that a view reads no row its reader could not SELECT through it.
    List* checks = lappend(list_copy(q.views), q.private_rte);
    ListCell* lc;
    foreach (lc, checks) {
      RangeTblEntry* rte = static_cast<RangeTblEntry*>(lfirst(lc));
      if (ExecCheckRTPerms(list_make1(rte), false)) continue;
      const char* kind = rte->relkind == RELKIND_VIEW ? "view" : "relation";
      ereport(
          ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           OidIsValid(rte->checkAsUser)
               ? errmsg("permission denied for %s %s to role %s, the owner of the view that "
                        "reads it",
                        kind, get_rel_name(rte->relid), GetUserNameFromId(rte->checkAsUser, false))
               : errmsg("permission denied for %s %s", kind, get_rel_name(rte->relid)),
           errdetail("Nothing was charged."),
           errhint("dperm.train_query reads a relation with the caller's rights, and a view as "
                   "PostgreSQL does (its tables with its owner's rights, or the caller's when "
                   "security_invoker), unless the owner of the relation under it protected it "
                   "with dperm.protect and listed the caller.")));
    }
    in->reader = OidIsValid(q.private_rte->checkAsUser) ? q.private_rte->checkAsUser : in->caller;
  }
  CheckLookups(q, in->caller, in->reader);
}

// The reader must be able to read the unit as well -- the private
// relation's unit column, or its tableoid and ctid for the row -- which the
// query need not select: checked now, as the executor will, so that the
// read after the charge cannot fail on it. A protected relation is read by
// its owner.
void CheckUnitReadable(const TrainInput& in, const QueryInput& q, const char* unit_column) {
  if (in.is_protected) return;
  RangeTblEntry* rte = static_cast<RangeTblEntry*>(copyObjectImpl(q.private_rte));
  rte->requiredPerms = ACL_SELECT;
  rte->checkAsUser = in.reader;
  const int offset = FirstLowInvalidHeapAttributeNumber;
  if (unit_column != nullptr) {
    rte->selectedCols = bms_make_singleton(get_attnum(in.relid, unit_column) - offset);
  } else {
    rte->selectedCols = bms_make_singleton(TableOidAttributeNumber - offset);
    rte->selectedCols = bms_add_member(rte->selectedCols, SelfItemPointerAttributeNumber - offset);
  }
  if (!ExecCheckRTPerms(list_make1(rte), false))
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("role %s may not read the privacy unit of %s (%s)",
                    GetUserNameFromId(in.reader, false), in.name,
                    unit_column != nullptr ? quote_identifier(unit_column) : "its rows' ctid"),
             errdetail("The release reads each input row's unit. Nothing was charged."),
             errhint("Grant SELECT on %s to the role that reads it (a grant on the table, not "
                     "on columns, for a budget without a privacy unit).",
                     unit_column != nullptr ? "the unit column" : "the relation")));
}

// The relations charged (the private relation's family and `dataset`,
// never a lookup), the unit: the budgets' (its column read as dperm_unit)
// or the row (k = 1), and the model's options (the count's share off
// epsilon). Returns the private relation's unit column, or nullptr for the
// row. Every refusal costs nothing.
const char* QueryChargedTo(const TrainInput& in, Oid dataset, ReleaseRequest* request) {
  ReleaseRequest& r = *request;
  r.relations = TrainRelations(in.relid, dataset, &r.n_relations);
  r.strict = true;
  PrivacyUnit u = UnitOf(r.relations, r.n_relations);
  const char* unit_column = nullptr;
  if (u.column != nullptr) {
    u = TrainUnit(in.relid, r.relations, r.n_relations);
    CheckUnitType(in.relid, u);
    unit_column = u.column;
  } else {
    u.column = kQueryUnitColumn;
    u.max_rows = 1;
    u.relation = in.relid;
    u.row = true;
  }
  u.read_column = kQueryUnitColumn;
  r.unit = u;
  CheckUnitOption(r.parsed.options, u.max_rows, "dperm.train_query");
  // The count's share (unit_count.hpp), the rule dperm.train uses. A query
  // always releases its count: a filter's number of units is not the
  // number a budget declares public (units => N, PublicUnits).
  const dperm::Options& given = r.parsed.options;
  RunCore(
      [&] { r.unit_count_epsilon = dperm::UnitCountEpsilon(given.epsilon, given.units_estimate); });
  r.options = UnitModelOptions(&r.parsed, r.options,
                               r.parsed.options.epsilon - r.unit_count_epsilon, u.max_rows);
  RunCore([&] { dperm::CheckUnitLevelOptions(r.parsed.options); });
  r.charged = true;  // with the count (ReleaseUnitCount)
  r.query_input = true;
  r.d = dperm::DeclaredDimension(r.parsed.options);
  if (r.d < 0) RaiseUndeclaredDimension("dperm.train_query");
  return unit_column;
}

QueryInput ResolveQueryReader(const char* query_text, TrainInput* in) {
  in->caller = GetUserId();
  in->loss = ParseLossName(in->loss_name);
  const QueryInput q = AnalyseQueryInput(query_text, IsPrivateQueryRelation);
  in->relid = q.relid;
  in->name = LockReadableRelation(q.relid, &in->owner, false);
  CheckQueryReader(in, q);
  Oid features_type;
  QueryColumnTypes(q, in->features, in->label, &features_type, &in->label_type);
  return q;
}

const char* ResolveQueryRequest(const QueryInput& q, TrainInput* in, ReleaseRequest* request) {
  in->target = TargetFor(in->loss, in->label_type, in->label, in->loss_name);
  in->features_sql = quote_identifier(in->features);
  in->label_sql = quote_identifier(in->label);
  Oid dataset;
  *request = RequestFor(*in, &dataset);
  const char* unit_column = QueryChargedTo(*in, dataset, request);
  CheckUnitReadable(*in, q, unit_column);
  return unit_column;
}

TrainInput QueryArguments(FunctionCallInfo fcinfo) {
  TrainInput in = {};
  in.features = text_to_cstring(PG_GETARG_TEXT_PP(1));
  in.label = text_to_cstring(PG_GETARG_TEXT_PP(2));
  in.loss_name = text_to_cstring(PG_GETARG_TEXT_PP(3));
  in.options = PG_GETARG_JSONB_P(4);
  in.mode = TrainMode::kAuto;
  return in;
}

Datum TrainQueryResolved(const char* query_text, TrainInput in, ChargeOutcome* outcome,
                         bool* isnull) {
  SPI_connect();
  // Steps 1 to 3: the query, as the caller; who reads; the columns; the
  // request, the charge's relations and the unit.
  const QueryInput q = ResolveQueryReader(query_text, &in);
  ReleaseRequest request = {};
  const char* unit_column = ResolveQueryRequest(q, &in, &request);
  request.outcome = outcome;
  const uint64 progress = ProgressBegin(in.relid, in.loss);
  ProgressSetPhase(ProgressPhase::kCountingRows);
  in.qualified = psprintf("(%s)", CanonicalQueryText(q, in.features, in.label, unit_column));
  // Steps 4 to 6 as dperm.train's unit path: the noisy count, charged whole,
  // then units * k slots, in memory or streaming.
  Datum model = CountAndRelease(in, &request, isnull);
  if (!*isnull) model = SPI_datumTransfer(model, false, -1);
  SPI_finish();
  ProgressEnd(progress);
  return model;
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.train_query(query text, features text, label text, loss text,
// options jsonb [, mode text]) -> dp_model: a private release on the rows a
// query selects from one budgeted or protected relation (with public
// lookups joined on a unique key), its size released noisily, charged to
// the relation's family under the caller's name.
DPERM_FUNCTION(dperm_train_query) {
  const char* query_text = text_to_cstring(PG_GETARG_TEXT_PP(0));
  TrainInput in = QueryArguments(fcinfo);
  in.mode =
      PG_NARGS() > 5 ? ParseTrainMode(text_to_cstring(PG_GETARG_TEXT_PP(5))) : TrainMode::kAuto;
  bool isnull;
  Datum model = TrainQueryResolved(query_text, in, nullptr, &isnull);
  if (isnull) PG_RETURN_NULL();
  PG_RETURN_DATUM(model);
}
