// The release pipeline (docs/design.md sections 3 and 4): every model dperm
// releases, in memory or by passes, goes through Release below, in order:
//   1. public checks: feature_names against d; the plan, from the options,
//      n and d only (in memory: PlanInMemoryRelease, which also plans
//      l2 => 'auto'; by passes: PlanStreamingRelease); its memory estimate
//      against dperm.max_release_memory. Each refusal costs nothing.
//   2. charge: one ledger row for the plan (ChargeRelease), unless
//      dperm.train charged the same plan before reading the first row.
//   3. key: 32 bytes of pg_strong_random, or the superuser-only seed.
//   4. train (C++ phase): over the rows, or by passes whose PostgreSQL calls
//      run under CallPostgres; any failure is raised after the key is wiped
//      (RunKeyed), and is paid for: the charge is already committed.
//   5. model: the JSON and the dp_model.
#include "dperm/accounting/budget.hpp"
#include "dperm/model/evaluate.hpp"
#include "dperm/model/model.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/release/select_l2.hpp"
#include "dperm/release/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/release/unit_level.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <ctime>

#include "charge.hpp"
#include "model_type.hpp"
#include "settings.hpp"
#include "privacy_unit.hpp"
#include "progress.hpp"
#include "relations.hpp"
#include "release.hpp"
#include "streaming.hpp"
#include "internal_sql.hpp"

extern "C" {
#include "port.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {
namespace {

// The key of a release's noise, drawn in the PostgreSQL phase before any
// C++ object lives: 32 bytes of pg_strong_random, or the superuser-only
// seed (docs/design.md section 4: a seeded release says so).
struct NoiseKey {
  uint8 bytes[32];
  bool seeded;
  uint64 seed;
};
NoiseKey DrawNoiseKey(bool seeded, uint64 seed) {
  NoiseKey key;
  key.seeded = seeded;
  key.seed = seed;
  memset(key.bytes, 0, sizeof key.bytes);
  if (!seeded && !pg_strong_random(key.bytes, sizeof key.bytes))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("could not generate a random key for the noise")));
  return key;
}

// The generator of `key` (C++ phase).
dperm::SecureRng NoiseRng(const NoiseKey& key) {
  if (key.seeded) return dperm::SecureRng::FromSeed(key.seed);
  std::array<uint8_t, 32> k;
  std::memcpy(k.data(), key.bytes, sizeof key.bytes);
  return dperm::SecureRng(k);
}

// Erases a key once its release has trained or failed.
void WipeNoiseKey(NoiseKey* key) { explicit_bzero(key->bytes, sizeof key->bytes); }

// The failed-release path, in one place: runs `body(rng)` (phase 2) with
// the generator of `key`, then wipes the key whatever happened, then
// raises any failure (a core exception, or a PostgreSQL error a pass raised
// through CallPostgres, re-raised as it was) once no C++ frame is left.
// After the charge every such failure is paid for: nothing here depends on
// whether the release was charged.
template <typename Body>
void RunKeyed(NoiseKey* key, Body&& body) {
  CoreError failure;
  CaptureCore([&] {
    dperm::SecureRng rng = NoiseRng(*key);
    body(rng);
  }, &failure);
  WipeNoiseKey(key);
  if (failure.raised) ReportCoreError(failure);
}

// Step 1: the checks of public inputs (feature_names against d), the plan
// (in memory or by passes) and its memory refusal, before anything is
// charged.
void PlanStep(const Options& o, LossKind loss, int64 n, int d, bool streaming,
              PgBox<dperm::InMemoryRelease>* planned) {
  if (o.n_feature_names >= 0 && o.n_feature_names != d)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("feature_names has %d names, but the rows have %d features",
                           o.n_feature_names, d)));
  RunCore([&] {
    if (!streaming) {
      planned->Emplace(dperm::PlanInMemoryRelease(o, loss, n, d));
    } else {
      dperm::InMemoryRelease& p = planned->Emplace();
      p.plan = dperm::PlanStreamingRelease(o, loss, n, d);
      p.curve = dperm::ReleaseRdpCurve(p.plan);
      p.memory = dperm::ReleaseMemoryBytes(p.plan, true);
    }
  });
  CheckReleaseMemory((*planned)->memory, "the release");
}

// One release; `rows` (in memory) or `passes` (streaming) feeds it.
Datum Release(const ReleaseRequest& r, const double* rows, const PassSource* passes) {
  const Options& o = r.parsed->options;
  // 1. Every error up to the charge needs only public inputs (the options,
  // n and d) and costs nothing; after it, every outcome is paid for.
  PgBox<dperm::InMemoryRelease> planned(CurrentMemoryContext);
  PlanStep(o, r.loss, r.n, r.d, passes != nullptr, &planned);
  const dperm::Plan* plan = &planned->plan;

  // 2. The charge, before any row is read for training: one charge, whatever
  // the number of passes.
  if (r.reports) {
    ProgressSetAlgorithm(plan->algorithm);
    // Every streaming mechanism (AlgorithmSpec::streams, StreamingAlgorithms():
    // output_gd, dp_gd, dp_accmd, dp_newton) takes one pass per iteration:
    // a full-batch gradient, or dp_newton's curvature sums.
    if (passes != nullptr) ProgressSetPassesPlanned(plan->iterations);
    ProgressSetPhase(ProgressPhase::kCharging);
  }
  if (r.precharged) {
    // dperm.train charged this release before the first row was read, from
    // the n it counted in the same snapshot (in memory: the aggregate's n
    // is checked against it; by passes n is the one planned).
    // (No count in the message: after the charge, an error names nothing
    // internal. A unit-level read yields units * k slots by construction.)
    if (passes == nullptr && r.n != g_release.n)
      ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                      errmsg("dperm.train read another number of rows than it planned"),
                      errhint("The release was charged. Please report this as a bug.")));
  } else {
    ChargeRelease(PlanCharge(*plan, o, planned->curve, {r.unit_column, r.unit_rows}),
                  r.relations, r.n_relations);
  }
  if (r.reports) {
    ProgressSetPhase(ProgressPhase::kTraining);
    // In memory, pass of passes_planned shows the training loop's iterations.
    if (passes == nullptr) ProgressStartIterations();
  }
  PassQuery* query = passes != nullptr ? PreparePasses(*passes, *plan) : nullptr;

  // 3. The key, and what the model's JSON says about the release.
  NoiseKey key = DrawNoiseKey(o.has_seed, o.seed);
  dperm::ModelMeta meta;
  meta.created_at = NowIso8601();
  meta.options_json = JsonbText(r.options);
  meta.feature_names = r.parsed->feature_names;
  meta.seeded = o.has_seed;
  if (r.unit_column != nullptr) {
    // Stated per unit (unit_level.hpp); epsilon and delta as given.
    meta.unit_column = r.unit_column;
    meta.unit_rows = r.unit_rows;
    meta.units = r.n / r.unit_rows;
    meta.unit_count_epsilon = r.unit_count_epsilon;
  }

  // 4. Training.
  PgBox<std::vector<double>> w(CurrentMemoryContext);
  PgBox<std::string> json(CurrentMemoryContext);
  PgBox<std::string> selection_json(CurrentMemoryContext);
  RunKeyed(&key, [&](dperm::SecureRng& rng) {
    std::vector<double> offset;  // b0 of stage 0 (offset.hpp), recorded in the JSON
    dperm::ModelMeta m = meta;   // a copy: m.offset points into this scope
    m.offset = &offset;
    if (passes != nullptr) {
      w.Emplace(TrainByPasses(*plan, query, rng));
      json.Emplace(dperm::ModelJson(*plan, *w, m));
    } else if (o.l2_auto) {
      dperm::L2SelectionResult s = dperm::TrainL2Selection(planned->selection, rows, rng);
      selection_json.Emplace(dperm::L2SelectionJson(planned->selection, &s));
      m.l2_selection_json = selection_json->c_str();
      m.release_epsilon = o.epsilon + r.unit_count_epsilon;
      m.release_delta = o.delta;
      offset = std::move(s.offset);
      w.Emplace(std::move(s.w));
      json.Emplace(dperm::ModelJson(planned->selection.candidates[size_t(s.chosen)], *w, m));
    } else {
      w.Emplace(dperm::TrainModel(*plan, rows, rng, &offset));
      json.Emplace(dperm::ModelJson(*plan, *w, m));
    }
  });
  if (query != nullptr) EndPasses(query, *plan);

  // 5. The model.
  return MakeModelDatum(r.loss, r.d, plan->classes, o.fit_intercept, o.feature_bound,
                        plan->options.huber_delta, w->data(), json->c_str());
}

}  // namespace

void CheckReleasePlan(const ParsedOptions& parsed, LossKind loss, int64 n, int d, bool streaming) {
  PgBox<dperm::InMemoryRelease> planned(CurrentMemoryContext);
  PlanStep(parsed.options, loss, n, d, streaming, &planned);
}

void PrechargeInMemory(const ParsedOptions& parsed, LossKind loss, int64 n, int d,
                       const Oid* relations, int n_relations, const PrivacyUnit& unit) {
  PgBox<dperm::InMemoryRelease> planned(CurrentMemoryContext);
  PlanStep(parsed.options, loss, n, d, false, &planned);
  ProgressSetPhase(ProgressPhase::kCharging);
  ChargeRelease(PlanCharge(planned->plan, parsed.options, planned->curve, unit), relations,
                n_relations);
}

Datum ReleaseFromRows(const ReleaseRequest& request, const double* rows) {
  return Release(request, rows, nullptr);
}

Datum ReleaseFromPasses(const ReleaseRequest& request, const PassSource& passes) {
  return Release(request, nullptr, &passes);
}


SumsRelease ReleaseSums(const SumsRequest& r, ReadSums read, void* arg) {
  // Step 2: a pure epsilon-DP release (discrete Laplace), charged on its
  // curve before a row is read.
  double* curve = static_cast<double*>(palloc(sizeof(double) * 64));
  int n_curve = 0;
  RunCore([&] {
    std::vector<double> c = dperm::PureDpRdpCurve(r.epsilon);
    n_curve = static_cast<int>(c.size());
    for (int i = 0; i < n_curve && i < 64; i++) curve[i] = c[i];
  });
  ChargeRequest charge = {r.algorithm, r.mechanism, r.loss,
                          NeighborsOf({r.unit_column, r.unit_rows}), r.epsilon, 0,
                          r.n, r.d, curve, n_curve, r.seeded, {r.unit_column, r.unit_rows},
                          0, 0, nullptr, 0};

  SumsRelease out;
  if (!r.precharged) out.ledger_id = ChargeRelease(charge, r.relations, r.n_relations);
  double sums[2] = {0, 0};
  read(arg, sums);
  // Steps 3 and 4.
  NoiseKey key = DrawNoiseKey(r.seeded, r.seed);
  RunKeyed(&key, [&](dperm::SecureRng& rng) {
    std::vector<double> s(sums, sums + r.count);
    std::vector<double> bounds(r.bounds, r.bounds + r.count);
    dperm::NoisySums noisy = dperm::ReleaseBoundedSums(s, bounds, r.noise_epsilon, rng, r.slack);
    for (int i = 0; i < r.count; i++) out.values[i] = noisy.values[i];
    out.scale = noisy.scale;
    out.grid = noisy.grid;
  });
  return out;
}

namespace {

// ReleaseUnitCount's read: the exact number of units.
void ReadUnitCount(void* arg, double* sums) {
  const UnitCountRequest* r = static_cast<const UnitCountRequest*>(arg);
  RunInternalSql(r->reader, r->count_sql, 0, nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
  bool isnull;
  sums[0] = double(DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)));
}

}  // namespace

int64 ReleaseUnitCount(const UnitCountRequest& r) {
  // The one charge of the whole release (unit_level.hpp), before the count
  // reads a row: admitted or refused as a whole.
  PgBox<dperm::UnitReleaseCost> cost(CurrentMemoryContext);
  RunCore([&] { cost.Emplace(dperm::UnitReleaseCharge(r.epsilon, r.model_epsilon, r.model_delta)); });
  const dperm::ReleaseCost& unit = cost->unit;
  const dperm::ReleaseCost& row = cost->row;
  ChargeRequest charge = {r.algorithm,
                          "unit count (discrete Laplace), then the model: one charge",
                          r.loss, NeighborsOf({r.unit_column, r.unit_rows}), unit.epsilon,
                          unit.delta, 0, r.d, unit.curve.empty() ? nullptr : unit.curve.data(),
                          static_cast<int>(unit.curve.size()), r.seeded,
                          {r.unit_column, r.unit_rows}, row.epsilon, row.delta,
                          row.curve.empty() ? nullptr : row.curve.data(),
                          static_cast<int>(row.curve.size())};
  ChargeRelease(charge, r.relations, r.n_relations);
  const double bounds[1] = {1};
  // The count is an integer below 2^53: exact in a double; one grid step.
  SumsRequest sums = {"unit count", "discrete Laplace on the number of units", r.loss, r.epsilon,
                      r.seeded, r.seed, 0, r.d, r.relations, r.n_relations, 1, bounds,
                      std::ldexp(1.0, -40), r.unit_column, r.unit_rows, r.epsilon,
                      /*precharged=*/true};
  SumsRelease released = ReleaseSums(sums, ReadUnitCount, const_cast<UnitCountRequest*>(&r));
  const double units = std::round(released.values[0]);
  return units > 0 ? static_cast<int64>(std::min(units, 9.0e15)) : 0;
}

// ISO 8601 UTC time of the release.
char* NowIso8601() {
  time_t now = timestamptz_to_time_t(GetCurrentTimestamp());
  struct tm parts;
  gmtime_r(&now, &parts);
  char* out = static_cast<char*>(palloc(32));
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return out;
}

void CheckReleaseMemory(double bytes, const char* what) {
  const double limit = static_cast<double>(g_max_release_memory_kb) * 1024;
  if (!(bytes > limit)) return;
  ereport(ERROR,
          (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
           errmsg("%s needs about %.0f MB of memory, more than dperm.max_release_memory (%s)",
                  what, ceil(bytes / (1024 * 1024)),
                  GetConfigOptionByName("dperm.max_release_memory", nullptr, false)),
           errdetail("The estimate (memory_bytes in dp_explain) counts the training's vectors of "
                     "the model's dimension, its per-row arrays and its work blocks, from n, d, "
                     "the classes and the options only. Nothing was charged."),
           errhint("Use fewer classes or features, another algorithm (dp_explain shows each "
                   "one's memory_bytes), or ask a superuser to raise dperm.max_release_memory.")));
}

}  // namespace dperm::pg
