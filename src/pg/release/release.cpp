// The release pipeline (docs/design.md sections 3 and 4): every model dperm
// releases, in memory or by passes, goes through Release below, in order,
// from one request built at its SQL entry point (release_request.hpp):
//   1. public checks: feature_names against d; the plan, from the options,
//      n and d only (in memory: PlanInMemoryRelease, which also plans
//      l2 => 'auto'; by passes: PlanReleaseByPasses), made once; its
//      memory estimate against dperm.max_release_memory. Each refusal costs
//      nothing.
//   2. charge: one ledger row for the plan (ChargeRelease), unless the
//      release was charged whole with its count (a unit-level release).
//      dperm.train's rows are read only now (ReadCharged), so that
//      whatever the read raises is paid for.
//   3. key: 32 bytes of pg_strong_random, or the superuser-only seed.
//   4. train (C++ phase): over the rows, or by passes whose PostgreSQL calls
//      run under CallPostgres; any failure is raised after the key is wiped
//      (RunKeyed), and is paid for: the charge is already committed.
//   5. model: the JSON and the dp_model.
#include "dperm/accounting/budget.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/model/model.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/planning/release_plan.hpp"
#include "dperm/release/select_l2.hpp"
#include "dperm/release/train_model.hpp"

#include <cmath>
#include <ctime>

#include "ledger/charge.hpp"
#include "types/model_type.hpp"
#include "release/noise_key.hpp"
#include "base/settings.hpp"
#include "release/progress.hpp"
#include "release/release.hpp"

extern "C" {
#include "utils/guc.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {
namespace {

// Refuses (54000; nothing is charged) a release whose training needs about
// `bytes` (an estimate from public quantities only) when that is more than
// dperm.max_release_memory.
void CheckReleaseMemory(double bytes) {
  const double limit = static_cast<double>(g_max_release_memory_kb) * 1024;
  if (!(bytes > limit)) return;
  ereport(
      ERROR,
      (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
       errmsg("the release needs about %.0f MB of memory, more than dperm.max_release_memory (%s)",
              ceil(bytes / (1024 * 1024)),
              GetConfigOptionByName("dperm.max_release_memory", nullptr, false)),
       errdetail("The estimate (memory_bytes in dp_explain) counts the training's vectors of "
                 "the model's dimension, its per-row arrays and its work blocks, from n, d, "
                 "the classes and the options only. Nothing was charged."),
       errhint("Use fewer classes or features, another algorithm (dp_explain shows each "
               "one's memory_bytes), or ask a superuser to raise dperm.max_release_memory.")));
}

// Step 1: the checks of public inputs (feature_names against d), the plan
// (in memory or by passes) and its memory refusal, before anything is
// charged.
void PlanStep(const ReleaseRequest& r, bool streaming, PgBox<dperm::ReleasePlan>* planned) {
  const Options& o = r.parsed.options;
  if (o.n_feature_names >= 0 && o.n_feature_names != r.d)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("feature_names has %d names, but the rows have %d features",
                           o.n_feature_names, r.d)));
  RunCore([&] {
    if (!streaming) {
      planned->Emplace(dperm::PlanInMemoryRelease(o, r.loss, r.n, r.d));
    } else {
      planned->Emplace(dperm::PlanReleaseByPasses(o, r.loss, r.n, r.d));
    }
  });
  CheckReleaseMemory((*planned)->memory);
}

// dperm.train's read in memory, after the charge: the rows once, into the
// buffer the aggregates fill (dperm.progress: pass 1 of 1).
void ReadCharged(const ReleaseRequest& r, const ReleaseInput& in) {
  if (r.reports) {
    ProgressSetPassesPlanned(1);
    ProgressSetPhase(ProgressPhase::kReadingRows);
    ProgressStartPass();
  }
  ReadRows(*in.read, in.rows, r.reports);
  if (r.reports) ProgressEndPass(in.rows->n);
  if (in.rows->over_buffer) RaiseBufferRefusal();  // more rows than counted (as the aggregate)
  // The count and the read share one snapshot. (No count in the message:
  // after the charge, an error names nothing internal. A unit-level read
  // yields units * k slots by construction.)
  if (in.rows->n != r.n)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("dperm.train read another number of rows than it planned"),
                    errhint("The release was charged. Please report this as a bug.")));
}

// ISO 8601 UTC time of the release ("2026-11-23T14:00:00Z"), palloc'd.
char* NowIso8601() {
  time_t now = timestamptz_to_time_t(GetCurrentTimestamp());
  struct tm parts;
  gmtime_r(&now, &parts);
  char* out = static_cast<char*>(palloc(32));
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return out;
}

// What the model's JSON says about the release besides its plan.
dperm::ModelMeta MetaOf(const ReleaseRequest& r) {
  dperm::ModelMeta meta;
  meta.created_at = NowIso8601();
  meta.options_json = JsonbText(r.options);
  meta.feature_names = r.parsed.feature_names;
  meta.seeded = r.parsed.options.has_seed;
  meta.n_noisy = r.query_input;
  meta.group_by = r.group_by;
  meta.domain_epsilon = r.domain_epsilon;
  meta.group_key = r.group_key;
  meta.groups = r.groups;
  if (r.unit.row) {
    // A query's row unit: the row, with its noisy size (n_epsilon).
    meta.unit_count_epsilon = r.unit_count_epsilon;
  } else if (r.unit.column != nullptr) {
    // Stated per unit (unit_level.hpp); epsilon and delta as given.
    meta.unit_column = r.unit.column;
    meta.unit_rows = r.unit.max_rows;
    meta.units = r.n / r.unit.max_rows;
    meta.unit_count_epsilon = r.unit_count_epsilon;
    meta.units_public = r.unit.public_units > 0;
  }
  return meta;
}

}  // namespace

Datum Release(const ReleaseRequest& r, const ReleaseInput& in) {
  const Options& o = r.parsed.options;
  const PassSource* passes = in.passes;
  // 1. Every error up to the charge needs only public inputs (the options,
  // n and d) and costs nothing; after it, every outcome is paid for.
  PgBox<dperm::ReleasePlan> planned(CurrentMemoryContext);
  PlanStep(r, passes != nullptr, &planned);
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
  if (!r.charged) {
    // The domain step (auto_domain.hpp) is charged in the same row: it is
    // domain_epsilon-DP (pure), and the model is (o.epsilon, o.delta)-DP, so
    // the release is (o.epsilon + domain_epsilon, o.delta)-DP by basic
    // composition (Dwork & Roth 2014, Theorem 3.16); on the RDP curve, an
    // epsilon-DP step is (alpha, epsilon)-RDP at every order (Mironov 2017,
    // Proposition 3) and RDP composes by adding (Proposition 1).
    std::vector<double> curve = planned->curve;
    for (double& c : curve) c += r.domain_epsilon;
    ChargeRequest charge = PlanCharge(*plan, o, curve, r.unit, r.role);
    charge.epsilon = o.epsilon + r.domain_epsilon;  // the epsilon asked (DomainModelOptions)
    ChargeRelease(charge, r.relations, r.n_relations, r.outcome);
  }
  if (in.domains != nullptr) in.domains->run(in.domains->context);
  if (in.read != nullptr) ReadCharged(r, in);
  if (r.reports) {
    ProgressSetPhase(ProgressPhase::kTraining);
    // In memory, pass of passes_planned shows the training loop's iterations.
    if (passes == nullptr) ProgressStartIterations();
  }
  PassQuery* query = passes != nullptr ? PreparePasses(*passes, *plan) : nullptr;
  const double* rows = passes == nullptr ? in.rows->rows : nullptr;

  // 3. The key, and what the model's JSON says about the release.
  NoiseKey key = DrawNoiseKey(o.has_seed, o.seed);
  dperm::ModelMeta meta = MetaOf(r);

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
      m.release_epsilon = o.epsilon + r.unit_count_epsilon + r.domain_epsilon;
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

}  // namespace dperm::pg
