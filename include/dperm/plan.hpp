// A Plan turns options and the public size (n, d) into everything training
// will do: iterations, step size, sensitivity, noise. dp_explain prints it;
// the mechanism follows it. Nothing in a Plan depends on the data.
#pragma once
#include "dperm/core.hpp"
#include "dperm/options.hpp"

#include <cstdint>
#include <string>

namespace dperm {

enum class NoiseKind {
  kGaussian,       // (epsilon, delta)-DP: N(0, sigma^2 I)
  kLaplaceVector,  // epsilon-DP: density ~ exp(-||z|| / scale), scale = Delta/eps
};
const char* NoiseName(NoiseKind noise);

struct Plan {
  LossKind loss = LossKind::kLogistic;
  Algorithm algorithm = Algorithm::kOutputGd;
  Accountant accountant = Accountant::kTight;
  Neighbors neighbors = Neighbors::kReplaceOne;
  Options options;

  int64_t n = 0;       // rows: public under replace-one neighbours
  int d = 0;           // features per row
  int dim = 0;         // model coordinates: d + fit_intercept
  double R = 0;        // bound on a training row's norm, intercept column included
  double L = 0;        // Lipschitz constant of the per-row loss in w
  double beta = 0;     // smoothness of the per-row loss in w
  double mu = 0;       // strong convexity: the l2 option

  double step_size = 0;
  double max_step_size = 0;  // the largest step the sensitivity analysis covers
  int64_t iterations = 0;
  double norm_bound = 0;     // D, the bound on ||w_hat|| used to choose T
  std::string iterations_rule;

  double sensitivity = 0;    // L2 sensitivity of the noiseless output
  std::string sensitivity_rule;
  NoiseKind noise = NoiseKind::kGaussian;
  double noise_scale = 0;    // sigma (Gaussian) or Delta/epsilon (Laplace vector)
  std::string noise_rule;
  double expected_noise_sq = 0;  // E ||z||^2
  std::string note;          // anything the user should know (capped T, ...)
};

// The plan as a JSON object (a model's "plan"). `extra_key`, when given,
// adds one more member whose value is the serialised JSON `extra_json`.
std::string PlanJson(const Plan& plan, const char* extra_key = nullptr,
                     const char* extra_json = nullptr);

// dp_explain's answer: the plan plus its "accounting": the noise multiplier,
// the release's RDP curve on the ledger's orders, and epsilon at the
// requested delta under each accountant (analytic Gaussian, RDP, PLD).
std::string ExplainJson(const Plan& plan);

// E||z||^2 of the noise: dim sigma^2 for Gaussian noise; dim (dim + 1) scale^2
// for the Laplace-vector noise, whose radius is Gamma(dim, scale).
double ExpectedNoiseSq(NoiseKind noise, int dim, double scale);

}  // namespace dperm
