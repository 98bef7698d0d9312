// Plan helpers shared by every mechanism.
#include "dperm/plan/plan.hpp"

#include "dperm/util/json.hpp"

namespace dperm {

const char* SamplingName(Sampling s) {
  switch (s) {
    case Sampling::kFullBatch: return "full_batch";
    case Sampling::kWithoutReplacement: return "uniform_without_replacement";
    case Sampling::kPermutation: return "permutation";
  }
  return "?";
}

void MechanismFields::Set(const char* key, double value) {
  for (auto& item : items_)
    if (item.first == key) {
      item.second = value;
      return;
    }
  items_.emplace_back(key, value);
}

double MechanismFields::Get(const char* key) const {
  for (const auto& item : items_)
    if (item.first == key) return item.second;
  return 0;
}

double ExpectedNoiseSq(NoiseKind noise, int dim, double scale) {
  double k = dim;
  switch (noise) {
    case NoiseKind::kGaussian:  // discrete Gaussian: Var <= sigma^2 (CKS20 Cor. 9)
      return k * scale * scale;
    case NoiseKind::kLaplaceVector: return k * (k + 1) * scale * scale;
    case NoiseKind::kLaplace:  // discrete Laplace: Var <= 2 scale^2 per coordinate
      return 2 * k * scale * scale;
  }
  return 0;
}

std::string PlanJson(const Plan& p, const std::vector<std::pair<std::string, std::string>>& extra) {
  JsonWriter j;
  j.BeginObject();
  j.Key("algorithm").String(AlgorithmName(p.algorithm));
  if (!p.algorithm_rule.empty()) j.Key("algorithm_rule").String(p.algorithm_rule.c_str());
  j.Key("loss").String(LossName(p.loss));
  j.Key("neighbors").String(NeighborsName(p.neighbors));
  j.Key("accountant").String(AccountantName(p.accountant));
  j.Key("epsilon").Number(ReleaseEpsilon(p));
  j.Key("delta").Number(ReleaseDelta(p));
  if (p.unit_rows > 0) {
    // Group privacy over the unit's k slots (unit_level.hpp): the figures
    // below are the row-level plan's, at (row_epsilon, row_delta).
    j.Key("privacy_unit").BeginObject();
    j.Key("max_rows_per_unit").Integer(p.unit_rows);
    j.Key("units").Integer(p.units);
    j.Key("row_epsilon").Number(TotalEpsilon(p));
    j.Key("row_delta").Number(p.options.delta);
    if (p.unit_zcdp > 0) {
      j.Key("unit_zcdp").Number(p.unit_zcdp);
      j.Key("rule").String(
          "each unit contributes exactly max_rows_per_unit row slots (a uniformly random subset "
          "of its rows, or its rows repeated in turn), so n = units * max_rows_per_unit; a unit's "
          "k slots move every Gaussian output by at most k times a row's sensitivity, so the "
          "per-unit RDP is at most k^2 times the row-level plan's curve, kept under alpha "
          "unit_zcdp, which gives (epsilon, delta) per unit and composes in the ledger");
    } else {
      j.Key("rule").String(
          "each unit contributes exactly max_rows_per_unit row slots (a uniformly random subset "
          "of its rows, or its rows repeated in turn), so n = units * max_rows_per_unit; the "
          "row-level plan at (epsilon / k, delta (e^(epsilon/k) - 1) / (e^epsilon - 1)) is "
          "(epsilon, delta)-DP per unit by group privacy over k slots");
    }
    j.EndObject();
  }
  if (p.offset.epsilon > 0) {
    // Stage 0 (offset.hpp) and the mechanism's share of epsilon.
    j.Key("offset").BeginObject();
    j.Key("epsilon").Number(p.offset.epsilon);
    j.Key("epsilon_rule").String(p.offset.rule.c_str());
    j.Key("statistic").String(p.offset.statistic.c_str());
    j.Key("sensitivity").Number(p.offset.sensitivity);
    j.Key("noise").String(NoiseName(NoiseKind::kLaplace));
    j.Key("noise_scale").Number(p.offset.noise_scale);
    j.Key("grid").Number(p.offset.grid);
    j.Key("bound").Number(p.offset.bound);
    j.Key("mechanism_epsilon").Number(p.options.epsilon);
    j.EndObject();
  }
  if (p.decision.epsilon > 0) {
    // Stage 2 (decision.hpp).
    j.Key("decision").BeginObject();
    j.Key("epsilon").Number(p.decision.epsilon);
    j.Key("rule").String(p.decision.rule.c_str());
    j.Key("noise").String(NoiseName(NoiseKind::kLaplace));
    j.Key("noise_scale").Number(p.decision.noise_scale);
    j.Key("bonus").Number(p.decision.bonus);
    j.Key("thresholds").BeginArray();
    for (double t : p.decision.thresholds) j.Number(t);
    j.EndArray();
    j.EndObject();
  }
  j.Key("n").Integer(p.n);
  j.Key("d").Integer(p.d);
  if (p.classes > 0) j.Key("classes").Integer(p.classes);
  j.Key("dim").Integer(p.dim);
  j.Key("fit_intercept").Bool(p.options.fit_intercept);
  j.Key("feature_bound").Number(p.options.feature_bound);
  if (p.loss == LossKind::kHuber) {  // Huber's own parameter
    j.Key("huber_delta").Number(p.options.huber_delta);
    j.Key("huber_delta_rule").String(p.huber_delta_rule.c_str());
  }
  if (LossLabel(p.loss) == LabelKind::kTarget) j.Key("target_bound").Number(p.options.target_bound);
  j.Key("R").Number(p.R);
  j.Key("L").Number(p.L);
  j.Key("beta").Number(p.beta);
  j.Key("sum_grid").Number(p.sum_grid);
  j.Key("sum_inflation").Number(p.sum_inflation);
  if (!p.l2_rule.empty()) {  // DefaultL2 chose l2 (= mu)
    j.Key("l2").Number(p.options.l2);
    j.Key("l2_rule").String(p.l2_rule.c_str());
  }
  j.Key("mu").Number(p.mu);
  j.Key("strongly_convex").Bool(p.mu > 0);
  j.Key("step_size").Number(p.step_size);
  j.Key("max_step_size").Number(p.max_step_size);
  j.Key("iterations").Integer(p.iterations);
  j.Key("iterations_rule").String(p.iterations_rule.c_str());
  j.Key("norm_bound").Number(p.norm_bound);
  j.Key("sampling").String(SamplingName(p.sampling));
  j.Key("batch_size").Integer(p.batch_size);
  if (p.passes > 0) j.Key("passes").Integer(p.passes);
  if (p.radius > 0) j.Key("radius").Number(p.radius);
  for (const auto& field : p.mechanism_fields.items())
    j.Key(field.first.c_str()).Number(field.second);
  if (p.gradient_evaluations > 0) j.Key("gradient_evaluations").Integer(p.gradient_evaluations);
  j.Key("noisy_steps").Integer(p.noisy_steps);
  if (p.noisy_steps > 0) {
    j.Key("sampling_rate").Number(p.sampling_rate);
    j.Key("noise_multiplier").Number(p.noise_multiplier);
  }
  j.Key("sensitivity").Number(p.sensitivity);
  j.Key("sensitivity_rule").String(p.sensitivity_rule.c_str());
  j.Key("noise").String(NoiseName(p.noise));
  j.Key("noise_scale").Number(p.noise_scale);
  j.Key("noise_rule").String(p.noise_rule.c_str());
  j.Key("expected_noise_norm_sq").Number(p.expected_noise_sq);
  if (p.grid > 0) {
    j.Key("grid").Number(p.grid);
    j.Key("rounding_inflation").Number(p.rounding_inflation);
    j.Key("sampler").String(p.sampler.c_str());
  }
  if (!p.note.empty()) j.Key("note").String(p.note.c_str());
  for (const auto& member : extra) j.Key(member.first.c_str()).Raw(member.second.c_str());
  j.EndObject();
  return j.str();
}

}  // namespace dperm
