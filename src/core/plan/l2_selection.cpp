// l2 => 'auto''s selection as JSON (l2_selection.hpp).
#include "dperm/plan/l2_selection.hpp"

#include "dperm/util/json.hpp"

namespace dperm {

std::string L2SelectionJson(const L2Selection& s, const L2SelectionResult* r) {
  JsonWriter j;
  j.BeginObject();
  j.Key("method").String("split: candidates on the training part, noisy validation scores");
  j.Key("grid").BeginArray();
  for (double l2 : s.grid) j.Number(l2);
  j.EndArray();
  if (r != nullptr) {
    j.Key("chosen_l2").Number(s.grid[size_t(r->chosen)]);
    j.Key("private").Bool(true);
  }
  j.Key("n_train").Integer(s.n_train);
  j.Key("n_valid").Integer(s.n_valid);
  j.Key("score").String(s.score);
  j.Key("score_bound").Number(s.score_bound);
  j.Key("candidate_epsilon").Number(s.candidate_epsilon);
  j.Key("score_epsilon").Number(s.score_epsilon);
  j.Key("score_noise").String(s.score_multiplier > 0 ? "discrete Gaussian" : "discrete Laplace");
  if (s.score_multiplier > 0) j.Key("score_noise_multiplier").Number(s.score_multiplier);
  j.Key("epsilon").Number(s.options.epsilon);
  j.Key("delta").Number(s.options.delta);
  j.Key("epsilon_at_delta").Number(s.epsilon_at_delta);
  j.Key("calibration").String(s.rule.c_str());
  j.Key("candidate_algorithms").BeginArray();
  for (const Plan& p : s.candidates) j.String(AlgorithmName(p.algorithm));
  j.EndArray();
  if (r != nullptr) {
    j.Key("noisy_scores").BeginArray();
    for (double v : r->noisy_scores) j.Number(v);
    j.EndArray();
  }
  j.EndObject();
  return j.str();
}

}  // namespace dperm
