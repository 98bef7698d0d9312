// What a loss owns: the public constants the privacy analysis uses (L, beta,
// the zero model's loss bound, the range of a row's gradient), its margin
// loss, the per-row kernel of a streaming pass, and the statistic of its
// intercept offset. One spec per line of
// losses.def, defined once in the loss's own file as LossSpecOf<LossKind::kX>();
// planning code asks LossSpecFor(loss) instead of switching on the loss.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/options/options.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace dperm {

class Loss;

// A loss's public parameters in a release: the plan's options (after
// BasePlan, with the effective huber_delta) or a streaming pass's spec.
struct LossParams {
  double huber_delta = 1;   // Huber: the effective delta (HuberDelta)
  double target_bound = 1;  // Huber: targets are clipped to [-B, B] (rows.hpp)
  int classes = 0;          // multi-class losses: K; 0 for a margin loss
};
LossParams LossParamsOf(const Options& options);

// The public constants of w -> f(w; x, y) over every row whose training
// vector (the clipped features and the intercept column) has norm <= R:
// they depend on public options only, never on the rows (docs/design.md
// section 4).
struct LossConstants {
  double L = 0;     // Lipschitz: ||grad f_i(w)|| <= L for every w and row
  double beta = 0;  // smoothness: grad f_i is beta-Lipschitz in w
  // >= F(0) = 1/n sum_i f_i(0), the mean loss of the zero model (every
  // regulariser is 0 there), hence >= F(0) - F* (losses are >= 0).
  double zero_model_bound = 0;
  // >= ||grad f_i(w) - grad f_i(w')|| for every w, w' and row.
  double gradient_range = 0;
};

// Stage 0 of a release that fits an intercept (release/offset.hpp): a
// statistic S of the labels, released with pure epsilon0-DP, and the offset
// b0 it gives the intercept. The loss says what is summed and how b0
// follows; offset.cpp owns the mechanism (budget share, grid, noise) and
// derives the sensitivity from this contract: every row adds one value
// u in [0, 1] to one of the sums (offset.cpp clamps it there), S being the
// sums times RowRange. Replace-one then moves one sum by <= 1, or, for a
// histogram, two sums by <= 1 each.
class OffsetStatistic {
 public:
  virtual ~OffsetStatistic() = default;
  // The plan's and dp_explain's description: what S is and b0's formula.
  virtual const char* Text() const = 0;
  // One sum per class (K = params.classes), or one sum.
  virtual bool Histogram() const = 0;
  // Every row adds exactly 0 or 1: counts, exact in doubles.
  virtual bool Counts() const = 0;
  // One row's range in S's units (S = the sums of u times this).
  virtual double RowRange(const LossParams&) const { return 1; }
  // >= |b0| for every value of the sums (a public clamp).
  virtual double Bound(const LossParams& params, int64_t n) const = 0;
  // The row's u in [0, 1] and, in *sum, the index of the sum it adds to;
  // any label (NaN included) gives a defined result.
  virtual double Row(const LossParams& params, double label, int* sum) const noexcept = 0;
  // b0 (one per sum) from the noisy S over n rows: post-processing (n is
  // public, docs/design.md section 4).
  virtual std::vector<double> FromSums(const LossParams& params, const std::vector<double>& sums,
                                       int64_t n) const = 0;
};

// l2 => 'auto''s score of one validation row (release/select_l2.cpp): the
// selection releases each candidate's sum of scores with noise scaled to
// Bound, and keeps the best.
class ValidationScore {
 public:
  virtual ~ValidationScore() = default;
  // What the score counts, for dp_explain and the model.
  virtual const char* Text() const = 0;
  // Every row's score lies in [0, Bound] whatever the model (select_l2.cpp
  // clamps it there): one row's range, a public bound.
  virtual double Bound(const LossParams& params) const = 0;
  // Every score is 0 or 1: counts, exact in doubles.
  virtual bool Counts() const = 0;
  virtual bool LowerIsBetter() const = 0;
  // The score of a row from its scores s_k = <w_k, x> (+ b_k) (one for a
  // margin loss, K for a multi-class loss) and its label.
  virtual double Row(const LossParams& params, const double* scores,
                     double label) const noexcept = 0;
};

class LossSpec {
 public:
  virtual ~LossSpec() = default;
  virtual LossKind kind() const = 0;
  // The constants for the release's parameters and row bound R (derived
  // beside each loss, with the paper it follows).
  virtual LossConstants Constants(const LossParams& params, double R) const = 0;
  // The margin loss f(m, y) a LinearObjective sums; nullptr for a
  // multi-class loss (its objective is its own, e.g. softmax.hpp).
  virtual std::unique_ptr<Loss> MakeMarginLoss(const LossParams& params) const = 0;
  // The streaming pass's per-row kernel (release/streaming.cpp): the row's
  // scores s_k = <w_k, x> (+ b_k) in `scores` (one for a margin loss, K for
  // a multi-class loss) are replaced by df/ds_k; returns f(s, label) when
  // with_loss, else 0. No allocation, no throw.
  virtual double RowKernel(const LossParams& params, double* scores, double label,
                           bool with_loss) const noexcept = 0;
  // A streaming curvature pass's second derivative f''(m, label) of the
  // margin loss (dp_newton, streaming.cpp): the bits its margin loss's
  // Curvature gives. Multi-class losses have no margin curvature: 0 here,
  // and DecodePassSpec refuses a curvature pass for them. No throw.
  virtual double RowCurvature(const LossParams&, double /*margin*/,
                              double /*label*/) const noexcept {
    return 0;
  }
  // What its margin loss's curvature f''(m, y) allows, for the mechanisms
  // that use it (AlgorithmSpec::loss_needs, registry.hpp). Both false by
  // default (a multi-class loss, or a loss that does not say): those
  // mechanisms refuse it.
  // f'' is continuous in m: the loss is twice differentiable (objective
  // perturbation's Assumption 5.1, Bassily et al. 2019; dp_newton's passes).
  virtual bool SmoothCurvature() const { return false; }
  // f''(m, y) is the same for every label y: one curvature f''(0) for every
  // row (ssp's quadratic approximation at margin 0).
  virtual bool LabelFreeCurvature() const { return false; }
  // The intercept offset's statistic; nullptr (the default): no offset
  // stage, the intercept is trained as one more weight.
  virtual const OffsetStatistic* Offset() const { return nullptr; }
  // l2 => 'auto''s validation score; nullptr (the default): l2 => 'auto'
  // is refused for this loss.
  virtual const ValidationScore* Score() const { return nullptr; }
};

// Defined once per loss, in its own file (losses.def).
template <LossKind K>
const LossSpec& LossSpecOf();

const LossSpec& LossSpecFor(LossKind loss);

// LossSpecFor(loss).Constants for the options as the plan stores them.
LossConstants LossConstantsFor(LossKind loss, const Options& options, double R);

}  // namespace dperm
