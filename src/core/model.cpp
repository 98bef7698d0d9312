// Model JSON and prediction.
#include "dperm/model.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/interrupt.hpp"
#include "dperm/json.hpp"
#include "dperm/rows.hpp"
#include "dperm/softmax.hpp"

namespace dperm {
namespace {

// Writing a number takes about a microsecond (shortest round-trip form), so
// a model of 10^7 coordinates takes seconds: check for a pending cancel
// every few thousand numbers.
void NumberChecked(JsonWriter& j, double v, size_t& written) {
  if ((++written & 4095) == 0) CheckInterrupt();
  j.Number(v);
}

}  // namespace

std::string ModelJson(const Plan& plan, const std::vector<double>& w,
                      const ModelMeta& meta) {
  JsonWriter j;
  j.BeginObject();
  j.Key("format").String("dperm.model/1");
  j.Key("loss").String(LossName(plan.loss));
  j.Key("algorithm").String(AlgorithmName(plan.algorithm));
  size_t written = 0;
  if (plan.loss == LossKind::kSoftmax) {
    // K blocks of (d weights, intercept when fitted), class after class.
    const int per_class = plan.d + (plan.options.fit_intercept ? 1 : 0);
    j.Key("classes").Integer(plan.classes);
    j.Key("coefficients").BeginArray();
    for (int k = 0; k < plan.classes; k++) {
      j.BeginArray();
      for (int i = 0; i < plan.d; i++) NumberChecked(j, w[size_t(k) * per_class + i], written);
      j.EndArray();
    }
    j.EndArray();
    j.Key("intercept");
    if (plan.options.fit_intercept) {
      j.BeginArray();
      for (int k = 0; k < plan.classes; k++)
        NumberChecked(j, w[size_t(k) * per_class + plan.d], written);
      j.EndArray();
    } else {
      j.Null();
    }
  } else {
    j.Key("coefficients").BeginArray();
    for (int i = 0; i < plan.d; i++) NumberChecked(j, w[i], written);
    j.EndArray();
    j.Key("intercept");
    if (plan.options.fit_intercept)
      j.Number(w[plan.d]);
    else
      j.Null();
  }
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
  j.Key("target_bound").Number(plan.options.target_bound);
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

void PredictSoftmax(const double* w, int classes, int d, bool fit_intercept,
                    double feature_bound, const double* x, double* scratch,
                    double* proba) noexcept {
  ClipRow(x, d, feature_bound, scratch);
  const int per_class = d + (fit_intercept ? 1 : 0);
  const double kMaxScore = 1e300;  // exp(s - max) stays well defined
  for (int k = 0; k < classes; k++) {
    const double* wk = w + size_t(k) * per_class;
    double s = fit_intercept ? wk[d] : 0.0;
    for (int i = 0; i < d; i++) s += wk[i] * scratch[i];
    proba[k] = std::isnan(s) ? -kMaxScore : std::clamp(s, -kMaxScore, kMaxScore);
  }
  SoftmaxInPlace(proba, classes);
}

int ArgMax(const double* values, int n) noexcept {
  int best = 0;
  for (int k = 1; k < n; k++)
    if (values[k] > values[best]) best = k;
  return best;
}

}  // namespace dperm
