// Bolt-on private permutation SGD: Wu, Li, Kumar, Chaudhuri, Jha &
// Naughton, "Bolt-on Differential Privacy for Scalable Stochastic Gradient
// Descent-based Analytics" (SIGMOD 2017, arXiv:1606.04722). Passes over one
// random permutation of the rows in consecutive mini-batches, then one noise
// draw on the output, scaled to the L2 sensitivity of the noiseless SGD. See
// bolton.cpp for the sensitivity derivation.
#pragma once
#include "dperm/algorithms/mechanism.hpp"

#include <cstdint>

namespace dperm {

class Bolton final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

// Mini-batches per pass for n rows and nominal batch size b (1 <= b <= n):
// m = floor(n / b). Batch j (0 <= j < m) holds permuted positions
// [BoltonBatchStart(n, m, j), BoltonBatchStart(n, m, j + 1)): the first
// n mod m batches have floor(n/m) + 1 rows, the others floor(n/m) >= b.
int64_t BoltonBatches(int64_t n, int64_t b);
int64_t BoltonBatchStart(int64_t n, int64_t m, int64_t j);

// The step of SGD step t = 1, 2, ...: eta0 when mu = 0; min(eta0, 1/(mu t))
// when mu > 0.
double BoltonStep(double eta0, double mu, int64_t t);

// dperm's L2 sensitivity of `passes` passes of `batches` mini-batch steps
// (smallest batch `min_batch` rows) with the steps of BoltonStep, on
// replace-one neighbours (derivation at the top of bolton.cpp):
// (2 L / min_batch) sum_{j=1..passes} eta_{j m} prod_{s > j m} (1 - mu eta_s).
// mu = 0: 2 L passes eta0 / min_batch. mu > 0: at most 2 L / (mu m min_batch).
double BoltonSensitivity(double L, double mu, double eta0, int64_t passes, int64_t batches,
                         int64_t min_batch);

}  // namespace dperm
