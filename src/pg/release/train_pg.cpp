// dperm.train (docs/design.md section 6): a private release from a
// relation, protected (read as its owner) or not (read with the caller's
// rights), in memory or streaming, in small steps: resolve the input and
// check who reads (train_input.cpp), build the request, count, choose the
// mode, then the release pipeline (release.cpp: plan, charge, read or
// passes, key, train, model).
//
// dperm.train is a C function rather than a SECURITY DEFINER one so that it
// knows its caller: it checks the caller, records them as the releasing role
// in the ledger, and switches identity only around the queries it builds
// itself: as the relation's owner under SECURITY_RESTRICTED_OPERATION to
// read it, as the bootstrap superuser for dperm's own catalog; identifiers
// quoted, types, functions and operators qualified, search_path =
// pg_catalog, pg_temp. A relation with row-level security enabled in its
// family is not read through its protection (RefuseRowSecurity,
// protect.cpp).
#include "dperm/options/options.hpp"
#include "dperm/planning/unit_count.hpp"
#include "dperm/planning/unit_level.hpp"

#include "base/citus.hpp"
#include "types/model_type.hpp"
#include "types/options_pg.hpp"
#include "guard/privacy_unit.hpp"
#include "release/auto_domain_pg.hpp"
#include "release/progress.hpp"
#include "guard/relation_access.hpp"
#include "guard/relations.hpp"
#include "release/release.hpp"
#include "release/release_checks.hpp"
#include "release/release_guard.hpp"
#include "release/release_sums.hpp"
#include "release/train_input.hpp"
#include "release/train_steps.hpp"

extern "C" {
#include "catalog/pg_class.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {

// Step 3: the request (release_request.hpp), from public inputs only:
// every refusal here costs nothing. The options, parsed once (a spec
// declares d, the names and the bound), and the `dataset` they name.
ReleaseRequest RequestFor(const TrainInput& in, Oid* dataset) {
  ReleaseRequest r = {};
  r.loss = in.loss;
  r.role = in.caller;
  r.reports = true;
  r.options = in.has_spec ? DatumGetJsonbP(WithSpecOptions(in.options, *in.spec.spec, in.loss))
                          : in.options;
  r.parsed = ParseOptionsJsonb(r.options);
  RunCore([&] { dperm::CheckOptionsForLoss(r.parsed.options, in.loss); });
  CheckSeedAllowed(r.parsed.options);
  *dataset = r.parsed.dataset != nullptr ? CheckDataset(r.parsed.dataset, in.caller) : InvalidOid;
  return r;
}

namespace {

// The relations the request is charged to (and `dataset`), and whether the
// release must be private with respect to them (a budget or protection:
// then d is declared); the privacy unit, and a unit-level model's options.
void ChargedTo(const TrainInput& in, Oid dataset, ReleaseRequest* request) {
  ReleaseRequest& r = *request;
  r.relations = TrainRelations(in.relid, dataset, &r.n_relations);
  r.strict =
      CheckReleaseReads(in.relid, in.is_protected, r.relations, r.n_relations, "dperm.train");
  // A privacy unit (privacy_unit.hpp): the number of units is released
  // first, with the count's share of epsilon (UnitCountEpsilon,
  // unit_count.hpp: a tenth, less with a public units_estimate), or not at
  // all when the relation's own budget declares it public (PublicUnits:
  // the count's share is 0); the model is planned for that many units of
  // exactly k row slots each, n = units * k, with the rest of epsilon, and
  // the options carry k (the plan is per unit).
  r.unit = TrainUnit(in.relid, r.relations, r.n_relations);
  if (r.unit.column != nullptr) CheckUnitType(in.relid, r.unit);
  CheckUnitOption(r.parsed.options, r.unit.max_rows, "dperm.train");
  if (r.unit.column != nullptr) {
    r.unit.public_units = PublicUnits(in.relid, r.relations, r.n_relations);
    const dperm::Options& given = r.parsed.options;
    if (r.unit.public_units == 0)
      RunCore([&] {
        r.unit_count_epsilon = dperm::UnitCountEpsilon(given.epsilon, given.units_estimate);
      });
    r.options = UnitModelOptions(&r.parsed, r.options,
                                 r.parsed.options.epsilon - r.unit_count_epsilon, r.unit.max_rows);
    // Refusals of the options alone (epsilon / k below the floor) come
    // before the count is charged.
    RunCore([&] { dperm::CheckUnitLevelOptions(r.parsed.options); });
    r.charged = true;  // with the count (ReleaseUnitCount)
  }
  r.d = dperm::DeclaredDimension(r.parsed.options);
  if (r.strict && r.d < 0) RaiseUndeclaredDimension("dperm.train");
}

}  // namespace

// Step 4: n and d, counted as the reader in the snapshot the read uses too
// (every row is kept, NULLs imputed, so n does not depend on the columns or
// options chosen); a unit-level release first releases its number of
// units, charged whole (ReleaseUnitCount), and reads units * k slots.
// Without a budget or protection and with d not declared, d is the length
// of the first non-NULL features value (the model shows both anyway).
TrainSource CountRows(const TrainInput& in, ReleaseRequest* r) {
  // A view of a budgeted or protected relation: RunReleaseCount checks the
  // count's plan reads every row of them once.
  const bool strict_view = r->strict && get_rel_relkind(in.relid) == RELKIND_VIEW;
  int64 units = 0;
  // The whole release (count and model) is charged before the count reads
  // a row; nothing is read or decided from the exact count (a unit added or
  // removed changes it).
  if (r->unit.column != nullptr && r->unit.public_units > 0) {
    // A public number of units: checked (a refusal costs nothing and
    // depends on the units count only, privacy_unit.cpp's
    // RefuseUnitMismatch), then the release is charged whole -- the model
    // alone -- and reads exactly that many units.
    RefuseUnitMismatch(in.reader, UnitCountFrom(in.qualified, r->unit), r->unit.public_units,
                       in.name, "dperm.train");
    if (!r->count_charged) ChargeUnitRelease(*r, nullptr);
    units = r->unit.public_units;
  } else if (r->unit.column != nullptr) {
    units = ReleaseUnitCount(*r, in.reader, UnitCountFrom(in.qualified, r->unit));
  }
  const char* q = in.qualified;
  const char* f = quote_identifier(in.features);
  RunReleaseCount(
      in.reader, in.relid, r->strict,
      // Two scalar subqueries, not a subquery beside count(*): Citus
      // plans each of them on a distributed relation (it cannot push
      // a target-list subquery down beside an aggregate).
      strict_view ? psprintf("SELECT pg_catalog.count(*), %d FROM %s", r->d, q)
      : r->unit.column != nullptr
          ? psprintf("SELECT " INT64_FORMAT "::pg_catalog.int8, %d", units, r->d)
      : r->d >= 0
          ? psprintf("SELECT (SELECT pg_catalog.count(*) FROM %s), %d", q, r->d)
          : psprintf("SELECT (SELECT pg_catalog.count(*) FROM %s),"
                     " (SELECT pg_catalog.cardinality(%s) FROM %s WHERE %s IS NOT NULL LIMIT 1)",
                     q, f, q, f));
  bool isnull;
  r->n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
  r->d = isnull ? 0 : DatumGetInt32(d);
  if (r->unit.column == nullptr) return {in.qualified, in.features_sql, in.label_sql};
  const Options& o = r->parsed.options;
  UnitRead read = {in.qualified,
                   in.features_sql,
                   in.label_sql,
                   in.label,
                   units,
                   r->d,
                   UnitDummyLabel(in.loss, in.label_type, o.classes),
                   o.has_seed,
                   static_cast<uint64>(o.seed)};
  // Units times k slots; the plan refuses what does not fit anyway.
  if (r->n > PG_INT64_MAX / r->unit.max_rows)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("too many units for max_rows_per_unit = %lld",
                           static_cast<long long>(r->unit.max_rows))));
  r->n *= r->unit.max_rows;
  return {UnitBoundedSource(read, r->unit, "dperm_features"), "dperm_features",
          quote_identifier(in.label)};
}

// Step 5: in memory or streaming, from n and d only (public): the rows'
// buffer against dperm.max_buffer, as the aggregate itself would count it.
// A Citus table streams: the in-memory aggregates do not run on one
// (RefuseCitusRelations), the per-pass aggregates split into O(d) partial
// sums per shard. Whether a relation is distributed is catalog data.
bool ChooseStreaming(const TrainInput& in, const ReleaseRequest& r, bool* distributed) {
  CheckCoefficientCount(r.loss, r.d, r.parsed.options);
  bool fits = InMemoryFits(r.n, r.d);
  *distributed = IsCitusTable(in.relid);
  if (*distributed && in.mode == TrainMode::kInMemory)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s is a Citus distributed table; dperm.train reads it only in "
                           "streaming mode",
                           in.name),
                    errhint("Use mode => 'streaming' or 'auto'.")));
  if (*distributed && !PassKeyConfigured())
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("dperm.pass_key is not set: the workers could not verify the passes "
                           "over the distributed table %s",
                           in.name),
                    errhint("Set dperm.pass_key to the same secret (at least 32 characters) in "
                            "postgresql.conf on the coordinator and every worker, and reload. "
                            "Nothing was charged.")));
  bool streaming =
      in.mode == TrainMode::kStreaming || (in.mode == TrainMode::kAuto && (!fits || *distributed));
  if (!streaming && !fits) RaiseBufferRefusal();
  ProgressSetMode(streaming ? ProgressMode::kStreaming : ProgressMode::kInMemory);
  return streaming;
}

// Step 6: the release pipeline (release.cpp: plan, charge, then the read
// or the passes, key, train, model) on the rows (features float8[], label)
// of `source`, read as the reader: in memory into the row buffer the
// aggregates fill, after the charge; streaming by passes of dperm's
// per-pass aggregate (in dperm's own schema "dperm"), which read the rows
// once into a temporary file when they can. n > 0.
namespace {

// The queries of the read (in memory, or by passes when `passes` is set)
// of `features` and `label` (SQL of the columns) from `from`.
struct ReadSql {
  const TrainTarget* target;
  const char* from;
  RowQuery* rows;
  PassSource* passes;
  AutoDomains* domains;
  const char* label;  // the label's SQL when the spec declares none
};

void WriteReadSql(const ReadSql& s, const char* features, const char* label) {
  const TrainTarget& t = *s.target;
  s.rows->sql = psprintf("SELECT %s::pg_catalog.float8[], %s::%s FROM %s", features, label,
                         t.label_cast, s.from);
  if (s.passes == nullptr) return;
  s.passes->sql = psprintf(
      "SELECT dperm.%s(%s::pg_catalog.float8[], %s::%s,"
      " $1::pg_catalog.float8[], $2::pg_catalog.float8[]) FROM %s",
      t.pass_aggregate, features, label, t.label_cast, s.from);
  s.passes->rows.sql = s.rows->sql;
}

// The domain step after the charge (Release's DomainStep): the spec's auto
// bounds chosen, then the read rewritten to encode through them. A unit is
// refused with auto domains (PlanAutoDomains), so the read is the relation's.
void RunDomainStep(void* context) {
  const ReadSql& s = *static_cast<const ReadSql*>(context);
  RunAutoDomains(s.domains);
  WriteReadSql(s, s.domains->features_sql,
               s.domains->label_sql != nullptr ? s.domains->label_sql : s.label);
}

}  // namespace

Datum ReleaseRows(const TrainInput& in, const ReleaseRequest& r, const TrainSource& source,
                  bool streaming, bool distributed) {
  const TrainTarget& t = in.target;
  RowQuery rows = {in.reader,
                   psprintf("SELECT %s::pg_catalog.float8[], %s::%s FROM %s", source.features,
                            source.label, t.label_cast, source.from),
                   t.aggregate};
  PassSource passes = {};
  ReadSql read = {&t, source.from, &rows, streaming ? &passes : nullptr, in.domains, source.label};
  DomainStep domains = {RunDomainStep, &read};
  const DomainStep* step = in.domains != nullptr ? &domains : nullptr;
  if (streaming) {
    // A Citus table among what the release reads (a view of one): its rows
    // are never copied here, every pass runs the query (catalog data).
    bool on_citus = distributed;
    for (int i = 0; i < r.n_relations && !on_citus; i++) on_citus = IsCitusTable(r.relations[i]);
    passes = {in.reader,
              psprintf("SELECT dperm.%s(%s::pg_catalog.float8[], %s::%s,"
                       " $1::pg_catalog.float8[], $2::pg_catalog.float8[]) FROM %s",
                       t.pass_aggregate, source.features, source.label, t.label_cast, source.from),
              distributed,
              on_citus,
              {in.reader, rows.sql, nullptr},
              t.rule};
    return Release(r, {nullptr, nullptr, &passes, step});
  }
  const Options& o = r.parsed.options;
  RowBuffer buffer;
  InitRowBuffer(&buffer, CurrentMemoryContext, r.d, t.rule, o, o.classes);
  return Release(r, {&buffer, &rows, nullptr, step});
}

// Steps 4 to 6 (train_steps.hpp).
Datum CountAndRelease(const TrainInput& in, ReleaseRequest* r, bool* isnull) {
  const TrainSource source = CountRows(in, r);
  bool distributed;
  const bool streaming = ChooseStreaming(in, *r, &distributed);
  *isnull = r->n == 0;
  return *isnull ? (Datum)0 : ReleaseRows(in, *r, source, streaming, distributed);
}

// Steps 2 to 6 on a resolved input (train_steps.hpp).
Datum TrainResolved(TrainInput* input, ChargeOutcome* outcome, bool* isnull) {
  TrainInput& in = *input;
  SPI_connect();
  CheckReader(&in);
  Oid dataset;
  ReleaseRequest request = RequestFor(in, &dataset);
  request.outcome = outcome;
  // dperm.progress: this release's row, ended below or by the transaction
  // callbacks should anything raise (progress.cpp).
  const uint64 progress = ProgressBegin(in.relid, in.loss);
  ProgressSetPhase(ProgressPhase::kCountingRows);
  ChargedTo(in, dataset, &request);
  // A spec's "bounds": "auto": the domain step's share of epsilon, charged
  // with the model (auto_domain_pg.hpp); refused at a unit, uncharged.
  in.domains = PlanAutoDomains(in, &request);
  // An empty relation releases nothing and charges nothing (n = 0 is public).
  Datum model = CountAndRelease(in, &request, isnull);
  if (!*isnull) model = SPI_datumTransfer(model, false, -1);
  SPI_finish();
  // A target label's bounds: the model back in the label's units.
  if (!*isnull && in.spec_label && dperm::LossLabel(in.loss) == dperm::LabelKind::kTarget)
    model = RescaledTargetModel(model, in.spec.spec->label.lo, in.spec.spec->label.hi);
  // The spec beside the model: dp_coefficients in the raw columns' units.
  // With auto domains, the spec with the bounds chosen and their epsilon.
  if (!*isnull && in.has_spec)
    model = SpecStatedModel(model, in.domains != nullptr && in.domains->resolved != nullptr
                                       ? *in.domains->resolved
                                       : *in.spec.spec);
  ProgressEnd(progress);
  return model;
}

// Steps 2 and 3 alone, for dperm.explain (train_steps.hpp).
ReleaseRequest RequestBeforeCount(TrainInput* in) {
  CheckReader(in);
  Oid dataset;
  ReleaseRequest request = RequestFor(*in, &dataset);
  ChargedTo(*in, dataset, &request);
  return request;
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.train(relation regclass, features text, label text, loss text,
// options jsonb [, mode text]) -> dp_model: a private release from a
// relation, charged to it (and its partitions and ancestors) and recorded
// under the caller's name. A protected relation is read as its owner, by
// the analysts the owner listed (refused, before any charge, while
// row-level security is enabled in its family); any other relation with the
// caller's own rights (SELECT on it or on both columns; row-level security
// as the caller sees it). mode: 'in_memory' reads the rows into memory as
// the training aggregate does and trains on them (refused, uncharged, when
// n (d + 1) float8 pass dperm.max_buffer);
// 'streaming' charges once and runs one pass of a per-pass aggregate per
// iteration (the algorithms that stream, StreamingAlgorithms(): a gradient,
// or dp_newton's curvature sums), in constant memory; 'auto' (the
// 5-argument form) streams exactly when the rows would not fit.
DPERM_FUNCTION(dperm_train) {
  TrainInput in = ResolveInput(fcinfo);
  bool isnull;
  Datum model = TrainResolved(&in, nullptr, &isnull);
  if (isnull) PG_RETURN_NULL();
  PG_RETURN_DATUM(model);
}
