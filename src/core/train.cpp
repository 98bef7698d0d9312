// Planning and training entry points.
#include "dperm/train.hpp"

#include "dperm/mechanism.hpp"

namespace dperm {

Plan PlanRelease(const Options& options, LossKind loss, int64_t n, int d) {
  return MechanismFor(options.algorithm).MakePlan(options, loss, n, d);
}

std::vector<double> TrainModel(const Plan& plan, const double* rows,
                               SecureRng& rng) {
  const Eigen::Index stride = plan.d + 1;
  FeatureMap x(rows, plan.n, plan.d, Eigen::OuterStride<>(stride));
  LabelMap y(rows + plan.d, plan.n, Eigen::InnerStride<>(stride));
  std::unique_ptr<Loss> loss = MakeLoss(plan.loss, plan.options);
  Objective objective(*loss, x, y, plan.options.fit_intercept, plan.mu);
  Eigen::VectorXd w = MechanismFor(plan.algorithm).Train(plan, objective, rng);
  return std::vector<double>(w.data(), w.data() + w.size());
}

}  // namespace dperm
