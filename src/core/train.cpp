// Planning and training entry points.
#include "dperm/train.hpp"

#include "dperm/mechanism.hpp"
#include "dperm/softmax.hpp"

namespace dperm {

Plan PlanRelease(const Options& options, LossKind loss, int64_t n, int d) {
  return MechanismFor(options.algorithm).MakePlan(options, loss, n, d);
}

namespace {

// A LinearObjective that owns its loss (the holder base is built first).
struct LossHolder {
  std::unique_ptr<Loss> loss;
};
class OwningLinearObjective : private LossHolder, public LinearObjective {
 public:
  OwningLinearObjective(std::unique_ptr<Loss> f, FeatureMap x, LabelMap y,
                        bool fit_intercept, double l2, double l1)
      : LossHolder{std::move(f)}, LinearObjective(*loss, x, y, fit_intercept, l2, l1) {}
};

}  // namespace

std::unique_ptr<Objective> MakeObjective(const Plan& plan, const double* rows) {
  const Eigen::Index stride = plan.d + 1;
  FeatureMap x(rows, plan.n, plan.d, Eigen::OuterStride<>(stride));
  LabelMap y(rows + plan.d, plan.n, Eigen::InnerStride<>(stride));
  if (plan.loss == LossKind::kSoftmax)
    return std::make_unique<SoftmaxObjective>(x, y, plan.classes,
                                              plan.options.fit_intercept, plan.mu,
                                              plan.options.l1);
  return std::make_unique<OwningLinearObjective>(MakeLoss(plan.loss, plan.options), x, y,
                                                 plan.options.fit_intercept, plan.mu,
                                                 plan.options.l1);
}

std::vector<double> TrainModel(const Plan& plan, const double* rows,
                               SecureRng& rng) {
  std::unique_ptr<Objective> objective = MakeObjective(plan, rows);
  Eigen::VectorXd w = MechanismFor(plan.algorithm).Train(plan, *objective, rng);
  return std::vector<double>(w.data(), w.data() + w.size());
}

}  // namespace dperm
