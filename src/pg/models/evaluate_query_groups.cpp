// dperm.evaluate_query_groups (docs/user-guide.md, "Per-group models"):
// one private evaluation per declared group of a query's input, each of its
// own model (dperm.train_query_groups' output), in one statement charged
// once.
//
// The models come as a JSON object from each group's key to its model
// (a dp_model as jsonb, or null: that group's noisy count was 0 and
// dperm.train_query_groups released no model). Its keys are the declared
// domain (query_groups.cpp: cast to the column's type, pairwise distinct
// under its equality), checked with the query and the models before
// anything is charged.
//
// Why it is epsilon-DP with respect to one row added or removed (the row
// unit; a relation whose budgets name a unit is refused, as
// train_query_groups refuses it: a unit's rows may span groups):
// - Each group's release is dperm.evaluate_query's mechanism on its rows
//   (evaluate_query.cpp: m + 1 clipped sums, each row moving each
//   normalised sum by at most 1, discrete Laplace at epsilon): epsilon-DP
//   for one input row added or removed.
// - The query is 1-stable and the keys are disjoint, so one private row
//   falls in at most one group; the other groups' inputs are the same on
//   both neighbours. Their noise is independent (fresh keys, or the
//   superuser-only seed split per group: GroupSeed).
// - Parallel composition ([McS09], PINQ, Thm 4): the statement is
//   epsilon-DP, charged one evaluation's epsilon in one ledger row naming
//   the groups. A group whose model is null is not evaluated: the decision
//   is a function of the models, a public input.
#include "dperm/options/options.hpp"

#include "base/internal_sql.hpp"
#include "guard/query_groups.hpp"
#include "models/evaluate_query.hpp"
#include "models/model_registry.hpp"
#include "types/model_type.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
}

namespace dperm::pg {
namespace {

// The groups' keys (as text) and models (dp_model or (Datum)0 for null)
// of the object `models`, in its order; `type` is dp_model's OID. Needs SPI.
struct GroupModels {
  int n;
  const char** keys;
  Datum* models;
  Oid type;
};
GroupModels ReadGroupModels(Jsonb* models, const char* schema) {
  Oid types[1] = {JSONBOID};
  Datum args[1] = {JsonbPGetDatum(models)};
  if (!JB_ROOT_IS_OBJECT(models) || JB_ROOT_IS_SCALAR(models))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("models must be a JSON object from each group's key to its model"),
                    errhint("Build it from dperm.train_query_groups: SELECT "
                            "jsonb_object_agg(group_key, model::jsonb) FROM "
                            "dperm.train_query_groups(...).")));
  RunInternalSql(GetUserId(),
                 psprintf("SELECT e.key, CASE WHEN pg_catalog.jsonb_typeof(e.value)"
                          " OPERATOR(pg_catalog.=) 'null' THEN NULL ELSE e.value::%s.dp_model END"
                          "  FROM pg_catalog.jsonb_each($1) e",
                          schema),
                 1, types, args, nullptr, SPI_OK_SELECT, true);
  GroupModels g;
  g.n = static_cast<int>(SPI_processed);
  g.keys = static_cast<const char**>(palloc0(sizeof(char*) * (g.n + 1)));
  g.models = static_cast<Datum*>(palloc0(sizeof(Datum) * (g.n + 1)));
  g.type = SPI_gettypeid(SPI_tuptable->tupdesc, 2);
  for (int i = 0; i < g.n; i++) {
    HeapTuple row = SPI_tuptable->vals[i];
    g.keys[i] = SPI_getvalue(row, SPI_tuptable->tupdesc, 1);
    bool isnull;
    Datum model = SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull);
    if (!isnull) g.models[i] = SPI_datumTransfer(model, false, -1);
  }
  return g;
}

// The keys as a JSON array of strings (AnalyseQueryGroups' domain).
Jsonb* KeysArray(const GroupModels& g) {
  StringInfoData s;
  initStringInfo(&s);
  appendStringInfoChar(&s, '[');
  for (int i = 0; i < g.n; i++) {
    if (i > 0) appendStringInfoChar(&s, ',');
    escape_json(&s, g.keys[i]);
  }
  appendStringInfoChar(&s, ']');
  return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(s.data)));
}

// The model every group shares the loss and sizes of (the first not
// null), or 22023 when two differ; `any` false when every model is null.
EvaluatedModel SharedShape(const GroupModels& g, bool* any) {
  EvaluatedModel m = {};
  *any = false;
  for (int i = 0; i < g.n; i++) {
    if (g.models[i] == (Datum)0) continue;
    const ModelDatum* md = CheckedModel(g.models[i]);
    const auto loss = static_cast<dperm::LossKind>(md->loss);
    if (!*any) {
      m = {dperm::LossName(loss), loss, g.type, (Datum)0, md->d, ModelClasses(md)};
      if (m.classes == 0) m.classes = 2;
      *any = true;
    } else if (loss != m.loss || md->d != m.d ||
               (ModelClasses(md) == 0 ? 2 : ModelClasses(md)) != m.classes) {
      ereport(ERROR,
              (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
               errmsg("the model of group \"%s\" differs from the first group's in loss, d "
                      "or classes",
                      g.keys[i]),
               errdetail("One statement evaluates one kind of model. Nothing was charged.")));
    }
  }
  return m;
}

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.evaluate_query_groups(query text, features text, label text,
// group_by text, models jsonb, options jsonb) -> SETOF (group_key text,
// evaluation jsonb): each group's model evaluated on its rows, charged once.
DPERM_FUNCTION(dperm_evaluate_query_groups) {
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const char* query_text = text_to_cstring(PG_GETARG_TEXT_PP(0));
  const char* features = text_to_cstring(PG_GETARG_TEXT_PP(1));
  const char* label = text_to_cstring(PG_GETARG_TEXT_PP(2));
  const char* group_by = text_to_cstring(PG_GETARG_TEXT_PP(3));
  Jsonb* models_json = PG_GETARG_JSONB_P(4);
  EvaluateOptions o = ParseEvaluateOptions(PG_GETARG_JSONB_P(5));
  SPI_connect();
  // Every check before the charge: the models, the query and its reader,
  // the groups, the unit.
  char* schema = ExtensionSchema("dperm", CurrentMemoryContext);
  if (schema == nullptr) elog(ERROR, "dperm is not installed in this database");
  const GroupModels g = ReadGroupModels(models_json, quote_identifier(schema));
  bool any;
  EvaluatedModel shape = SharedShape(g, &any);
  // Every model null: nothing is evaluated, so no label rule applies.
  if (!any) shape.loss_name = nullptr;
  const EvaluationQuery e = CheckEvaluationQuery(query_text, features, label, shape);
  const QueryGroups groups = AnalyseQueryGroups(e.q, group_by, KeysArray(g));
  if (e.unit_column != nullptr)
    RefuseUnitGroups("dperm.evaluate_query_groups", "dperm.evaluate_query", e.relation,
                     e.unit_column);
  const char* neighbors = psprintf("%s; groups by %s: %d declared, disjoint", NeighborsOf(e.unit),
                                   quote_identifier(group_by), groups.n);
  const uint64 seed = static_cast<uint64>(o.seed);
  int64 ledger_id = 0;
  MemoryContext group_context =
      AllocSetContextCreate(CurrentMemoryContext, "dperm group", ALLOCSET_DEFAULT_SIZES);
  for (int i = 0; i < groups.n; i++) {
    CHECK_FOR_INTERRUPTS();
    Datum values[2] = {CStringGetTextDatum(groups.texts[i]), (Datum)0};
    bool nulls[2] = {false, true};
    if (g.models[i] != (Datum)0) {
      MemoryContext outer = MemoryContextSwitchTo(group_context);
      EvaluatedModel m = shape;
      m.model = g.models[i];
      EvaluateOptions go = o;
      if (o.has_seed) go.seed = static_cast<int64>(GroupSeed(seed, i));
      const char* canonical =
          CanonicalQueryText(e.q, features, label, nullptr, GroupFilter(e.q, groups, i));
      // The first group evaluated charges the statement; the others were
      // charged with it.
      QueryMetrics r = ReleaseQueryMetrics(e, canonical, m, go, ledger_id != 0, neighbors);
      if (ledger_id == 0) ledger_id = r.released.ledger_id;
      r.released.ledger_id = ledger_id;
      StringInfoData head;
      initStringInfo(&head);
      appendStringInfoString(&head, "{\"group_key\": ");
      escape_json(&head, groups.texts[i]);
      appendStringInfoChar(&head, '}');
      values[1] =
          DirectFunctionCall1(jsonb_in, CStringGetDatum(QueryEvaluationJson(
                                            head.data, query_text, e, o, r, CurrentMemoryContext)));
      nulls[1] = false;
      MemoryContextSwitchTo(outer);
    }
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    MemoryContextReset(group_context);
  }
  SPI_finish();
  return (Datum)0;
}
