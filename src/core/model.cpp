// Model JSON and prediction.
#include "dperm/model.hpp"

#include <cmath>

#include "dperm/json.hpp"
#include "dperm/rows.hpp"

namespace dperm {

std::string ModelJson(const Plan& plan, const std::vector<double>& w,
                      const ModelMeta& meta) {
  JsonWriter j;
  j.BeginObject();
  j.Key("format").String("dperm.model/1");
  j.Key("loss").String(LossName(plan.loss));
  j.Key("algorithm").String(AlgorithmName(plan.algorithm));
  j.Key("coefficients").BeginArray();
  for (int i = 0; i < plan.d; i++) j.Number(w[i]);
  j.EndArray();
  j.Key("intercept");
  if (plan.options.fit_intercept)
    j.Number(w[plan.d]);
  else
    j.Null();
  if (meta.feature_names != nullptr) {
    j.Key("feature_names").BeginArray();
    for (int i = 0; i < plan.d; i++) j.String(meta.feature_names[i]);
    j.EndArray();
  }
  j.Key("epsilon").Number(plan.options.epsilon);
  j.Key("delta").Number(plan.options.delta);
  j.Key("n").Integer(plan.n);
  j.Key("d").Integer(plan.d);
  j.Key("neighbors").String(NeighborsName(plan.neighbors));
  j.Key("mechanism").String(NoiseName(plan.noise));
  j.Key("sensitivity").Number(plan.sensitivity);
  j.Key("noise_scale").Number(plan.noise_scale);
  j.Key("private").Bool(!meta.seeded);
  j.Key("seeded").Bool(meta.seeded);
  j.Key("preprocessing").BeginObject();
  j.Key("feature_bound").Number(plan.options.feature_bound);
  j.Key("fit_intercept").Bool(plan.options.fit_intercept);
  j.Key("huber_delta").Number(plan.options.huber_delta);
  j.EndObject();
  j.Key("plan").Raw(PlanJson(plan).c_str());
  j.Key("options").Raw(meta.options_json);
  j.Key("created_at").String(meta.created_at);
  j.EndObject();
  return j.str();
}

double Predict(LossKind loss, const double* coef, int d, double intercept,
               double feature_bound, const double* x, double* scratch) noexcept {
  ClipRow(x, d, feature_bound, scratch);
  double m = intercept;
  for (int i = 0; i < d; i++) m += coef[i] * scratch[i];
  if (loss == LossKind::kHuber) return m;
  return m >= 0 ? 1 / (1 + std::exp(-m)) : std::exp(m) / (1 + std::exp(m));
}

}  // namespace dperm
