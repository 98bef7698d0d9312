// Training a planned release over rows in memory (train_model.hpp).
#include "dperm/release/train_model.hpp"

#include "dperm/algorithms/registry.hpp"
#include "dperm/losses/loss.hpp"
#include "dperm/losses/softmax.hpp"
#include "dperm/release/decision.hpp"
#include "dperm/release/offset.hpp"

#include <memory>
#include <vector>

namespace dperm {
namespace {

// A LinearObjective that owns its loss (the holder base is built first).
struct LossHolder {
  std::unique_ptr<Loss> loss;
};
class OwningLinearObjective : private LossHolder, public LinearObjective {
 public:
  OwningLinearObjective(std::unique_ptr<Loss> f, FeatureMap x, LabelMap y, bool fit_intercept,
                        double l2, double l1)
      : LossHolder{std::move(f)}, LinearObjective(*loss, x, y, fit_intercept, l2, l1) {}
};

}  // namespace

std::unique_ptr<Objective> MakeObjective(const Plan& plan, const double* rows,
                                         const std::vector<double>& offset) {
  const Eigen::Index stride = plan.d + 1;
  FeatureMap x(rows, plan.n, plan.d, Eigen::OuterStride<>(stride));
  LabelMap y(rows + plan.d, plan.n, Eigen::InnerStride<>(stride));
  if (LossIsMulticlass(plan.loss)) {  // a class label: its own objective (softmax.hpp)
    auto f = std::make_unique<SoftmaxObjective>(x, y, plan.classes, plan.options.fit_intercept,
                                                plan.mu, plan.options.l1);
    if (!offset.empty()) f->SetOffset(offset);
    f->SetSumGrid(plan.sum_grid);  // exact sums (exact_sum.hpp)
    return f;
  }
  std::unique_ptr<Loss> loss = MakeLoss(plan.loss, plan.options);
  if (!offset.empty()) loss = ShiftLoss(std::move(loss), offset[0]);
  auto f = std::make_unique<OwningLinearObjective>(
      std::move(loss), x, y, plan.options.fit_intercept, plan.mu, plan.options.l1);
  f->SetSumGrid(plan.sum_grid);  // exact sums (exact_sum.hpp)
  return f;
}

std::vector<double> TrainModel(const Plan& plan, const double* rows, SecureRng& rng,
                               std::vector<double>* offset_out) {
  // Stage 0, then the mechanism on the shifted loss (offset.hpp), then stage 2.
  const std::vector<double> b0 = ReleaseOffset(plan, rows, rng);
  std::unique_ptr<Objective> objective = MakeObjective(plan, rows, b0);
  Eigen::VectorXd w = MechanismFor(plan.algorithm).Train(plan, *objective, rng);
  std::vector<double> out(w.data(), w.data() + w.size());
  AddOffset(plan, b0, out);
  // Stage 2 (decision.hpp): the intercept minus the private threshold.
  if (plan.decision.epsilon > 0)
    out[size_t(plan.d)] -= ReleaseDecisionThreshold(plan, rows, out, rng);
  if (offset_out != nullptr) *offset_out = b0;
  return out;
}

}  // namespace dperm
