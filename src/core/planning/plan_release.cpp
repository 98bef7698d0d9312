// Planning a release from public inputs: the default l2 and algorithm, and
// the plan of the chosen mechanism, in memory or by passes (plan_release.hpp).
#include "dperm/planning/plan_release.hpp"

#include "dperm/losses/loss.hpp"
#include "dperm/release/decision.hpp"
#include "dperm/release/offset.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/losses/softmax.hpp"
#include "dperm/planning/unit_curve_plan.hpp"
#include "dperm/planning/unit_level.hpp"
#include "dperm/rows/exact_sum.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace dperm {

namespace {

// Small l2 for a logistic model: objective perturbation (its noise is damped
// by the data's curvature, output perturbation's is not) when n l2 <=
// kObjectiveNL2 -- where output perturbation's noise, ~1/(n l2), leaves
// bolton a near-constant model (bench/reports/heldout.md)
// -- and its fixed schedule stays within kObjectiveWork per-row gradients.
// The cap was 2e8 with Nesterov's schedule (up to 0.6.0); ITEM
// (objective_perturbation_solver.cpp) reaches the same certificate in 0.43-0.44 of
// its steps on the held-out sets, and 8e7 keeps the default's choice: on a
// grid of d in [1, 100], epsilon in [0.05, 4], delta in {0, 1e-6} and n from
// 500 to 2e7 (steps of 1.2x), 92 of 5,562 objective cells, at 23,000 to
// 250,000 rows, go back to bolton or dp_gd and no cell gains objective (9e7
// would move 25 the other way, BANK at epsilon = 2 among them); the
// held-out sets of docs/heldout.md (their 70% splits) and the whole of BANK
// choose as before, each release in under half the time. At 8e7 row
// gradients a release takes one to two seconds.
const double kObjectiveNL2 = 100;
const double kObjectiveWork = 8e7;

// At delta = 0 the cap is at least the n l2 of DefaultL2's window rule,
// kDefaultL2PureWindow sqrt(d) / epsilon (plan_release.hpp), so that the
// default's own l2 gets objective there.
double ObjectiveNL2Cap(const Options& o, int d) {
  if (o.delta > 0) return kObjectiveNL2;
  return std::max(kObjectiveNL2,
                  kDefaultL2PureWindow * std::sqrt(double(std::max(d, 1))) / o.epsilon);
}

bool ObjectiveForSmallL2(LossKind loss, const Options& o, int64_t n, int d) {
  if (loss != LossKind::kLogistic || o.l1 > 0 || !(o.l2 > 0)) return false;
  // The slack absorbs the rounding of n * (c sqrt(d) / (n epsilon)).
  if (double(n) * o.l2 > ObjectiveNL2Cap(o, d) * (1 + 1e-9)) return false;
  Options chosen = o;
  chosen.algorithm = Algorithm::kObjective;
  chosen.has_algorithm = true;
  try {
    const Plan p = PlanFor(Algorithm::kObjective, chosen, loss, n, d);
    return double(p.gradient_evaluations) <= kObjectiveWork;
  } catch (const Error&) {
    return false;  // e.g. epsilon below what its Jacobian term allows
  }
}

// The mechanism's options of an in-memory release: epsilon minus the
// shares of stages 0 and 2 (offset.hpp, decision.hpp).
Options StagedOptions(const Options& o, LossKind loss, int64_t n) {
  const OffsetPlan offset = PlanOffset(o, loss, n);
  return MechanismOptions(o, offset, PlanDecision(o, loss, n, offset));
}

// Whether `intercept` was given (else its default: the private offset, stage 0).
bool InterceptGiven(const Options& o) {
  const OptionSpec* spec = FindOption("intercept");
  return spec != nullptr && OptionGiven(o, *spec);
}

// DefaultL2's rule; *fitted_intercept says whether it took the pure window
// or blend rule, which fit the intercept as a coordinate unless `intercept`
// was given (plan_release.hpp, kDefaultL2PureWindow, kPureBlendNEPerD).
double ChooseDefaultL2(LossKind loss, const Options& o, int64_t n, int d, bool streaming,
                       std::string* why, bool* fitted_intercept);

// The options a default release is planned with: DefaultL2's l2 when
// neither l2 nor the algorithm was given (a given algorithm keeps l2 = 0,
// the setting its own analysis and tests describe), with *rule saying how.
Options WithDefaultL2(const Options& given, LossKind loss, int64_t n, int d, bool streaming,
                      std::string* rule) {
  if (given.has_l2 || given.has_algorithm || given.l2_auto) return given;
  Options o = given;
  bool fitted_intercept = false;
  o.l2 = ChooseDefaultL2(loss, given, n, d, streaming, rule, &fitted_intercept);
  o.has_l2 = true;  // fixed from here on: a plan's options re-plan to the same l2
  if (fitted_intercept) o.intercept_offset = false;  // kept by a re-plan too
  return o;
}

}  // namespace

double DefaultL2(LossKind loss, const Options& o, int64_t n, int d, bool streaming,
                 std::string* why) {
  return ChooseDefaultL2(loss, o, n, d, streaming, why, nullptr);
}

namespace {

double ChooseDefaultL2(LossKind loss, const Options& o, int64_t n, int d, bool streaming,
                       std::string* why, bool* fitted_intercept) {
  const double ne = double(std::max<int64_t>(n, 1)) * o.epsilon;  // public: n, epsilon
  double l2 = 0;
  std::string rule;
  if (o.l1 > 0) {
    rule = "l1 given: no l2 (the lasso as asked)";
  } else if (streaming) {
    rule =
        "streaming: 0 (output_gd, the streaming default at l2 > 0, lost to dp_gd at l2 = 0 "
        "by held-out accuracy)";
  } else if (loss == LossKind::kSoftmax) {
    rule =
        "softmax: 0 (dp_gd at l2 = 0 beat bolton and dp_gd at l2 > 0 by held-out "
        "accuracy, bench/reports/heldout_softmax.md)";
  } else if (loss == LossKind::kLogistic) {
    // Objective perturbation's l2 (DefaultAlgorithm then picks objective):
    // Gaussian b at delta > 0, the Gamma-norm b at delta = 0. Where it does
    // not run, dp_gd at l2 = 0 (delta > 0) or bolton's l2 (delta = 0).
    // The noise's norm: ~ sqrt(d)/epsilon for the Gaussian b, d/epsilon for
    // the Gamma-norm b (E||b|| = dim theta), so l2 ~ ||b||/n keeps b's
    // displacement ||b||/(n l2) the same at every n, d and epsilon.
    const bool pure = !(o.delta > 0);
    const double dims = double(std::max(d, 1));
    // delta = 0: the objective rule 0.2 d / (n epsilon) from n epsilon =
    // 300 d (kPureBlendNEPerD), the window rule 4.5 sqrt(d) / (n epsilon)
    // below 100 d (down to 5 d), and between them a geometric blend of the
    // two constants, so that l2 is continuous at both edges (plan_release.hpp).
    // Below 5 d the objective rule's l2 exceeds its cap: bolton's rule.
    const double objective_ne =
        dims * kDefaultL2PureObjective / kDefaultL2PureObjectiveMax;  // 100 d
    const bool window = pure && ne < objective_ne && ne >= kPureWindowNEPerD * dims;
    const bool blend = pure && ne >= objective_ne && ne < kPureBlendNEPerD * dims;
    const double window_scale = kDefaultL2PureWindow * std::sqrt(dims);
    const double objective_scale =
        kDefaultL2PureObjective * dims;  // the Gamma-norm b's norm ~ d / epsilon
    const double t =
        blend ? std::log(ne / objective_ne) / std::log(kPureBlendNEPerD * dims / objective_ne) : 0;
    const double scale = !pure    ? kDefaultL2Objective * std::sqrt(dims)
                         : window ? window_scale
                         : blend  ? std::pow(window_scale, 1 - t) * std::pow(objective_scale, t)
                                  : objective_scale;
    // (the window's and the blend's l2 are at most 4.5 / (5 sqrt(d)) and
    // max(4.5 sqrt(d), 0.2 d) / (100 d), below kDefaultL2Max)
    const double cap = window || blend ? kDefaultL2Max
                       : pure          ? kDefaultL2PureObjectiveMax
                                       : kDefaultL2ObjectiveMax;
    const double candidate = std::max(kDefaultL2Min, scale / ne);
    Options at = o;
    at.l2 = candidate;
    const bool fitted = (window || blend) && !InterceptGiven(o);
    if (fitted) at.intercept_offset = false;  // as WithDefaultL2 plans it
    const std::string formula =
        (!pure    ? "logistic, delta > 0: " + FormatNumber(kDefaultL2Objective) + " sqrt(d)"
         : window ? "logistic, delta = 0, 5 d <= n epsilon < 100 d: " +
                        FormatNumber(kDefaultL2PureWindow) + " sqrt(d)"
         : blend ? "logistic, delta = 0, 100 d <= n epsilon < " + FormatNumber(kPureBlendNEPerD) +
                       " d: (" + FormatNumber(kDefaultL2PureWindow) + " sqrt(d))^(1 - t) (" +
                       FormatNumber(kDefaultL2PureObjective) + " d)^t"
                 : "logistic, delta = 0: " + FormatNumber(kDefaultL2PureObjective) + " d") +
        " / (n epsilon) = " + FormatNumber(candidate) + " with d = " + std::to_string(d) +
        ", n epsilon = " + FormatNumber(ne) +
        (blend ? ", t = log(n epsilon / (100 d)) / log(" + FormatNumber(kPureBlendNEPerD / 100) +
                     ") = " + FormatNumber(t)
               : "");
    // bolton's l2 (delta = 0): its noise ~ 1/(n l2 epsilon).
    const double output_l2 = std::min(kDefaultL2Max, kDefaultL2Output / ne);
    const std::string fallback = pure ? "l2 = min(" + FormatNumber(kDefaultL2Output) +
                                            " / (n epsilon), " + FormatNumber(kDefaultL2Max) +
                                            ") = " + FormatNumber(output_l2) + " (bolton's rule)"
                                      : "0 (dp_gd)";
    if (candidate > cap) {
      rule = formula + " > " + FormatNumber(cap) + ": " + fallback +
             " (objective needing more l2 than that lost to it)";
      l2 = pure ? output_l2 : 0;
    } else if (ObjectiveForSmallL2(loss, StagedOptions(at, loss, n), n, d)) {
      l2 = candidate;
      rule = formula + " (objective" +
             (fitted ? ", the intercept fitted as a coordinate: no stage 0" : "") + ")";
      if (fitted_intercept != nullptr) *fitted_intercept = fitted;
    } else {
      rule = formula +
             ", where objective does not run (n l2 above its cap, its work cap or its "
             "epsilon floor): " +
             fallback;
      l2 = pure ? output_l2 : 0;
    }
  } else if (!(o.delta > 0) || ne < kHuberBoltonNE) {
    const double shrink = std::max(1.0, kHuberShrinkNEPerD * std::max(d, 1) / ne);
    l2 = std::min(kDefaultL2Max, kDefaultL2Huber / ne * shrink);
    rule =
        std::string("huber, ") +
        (o.delta > 0 ? "delta > 0 and n epsilon < " + FormatNumber(kHuberBoltonNE) : "delta = 0") +
        ": min(" + FormatNumber(kDefaultL2Huber) + " / (n epsilon) max(1, " +
        FormatNumber(kHuberShrinkNEPerD) + " d / (n epsilon)), " + FormatNumber(kDefaultL2Max) +
        ") = " + FormatNumber(l2) + " with d = " + std::to_string(d) +
        ", n epsilon = " + FormatNumber(ne) + " (bolton, shrinking toward the private mean)";
  } else {
    rule = "huber, delta > 0 and n epsilon >= " + FormatNumber(kHuberBoltonNE) + ": 0 (dp_gd)";
  }
  if (why != nullptr) *why = "default l2 for " + rule + " (docs/user-guide.md, Choosing l2)";
  return l2;
}

}  // namespace

Algorithm DefaultAlgorithm(LossKind loss, const Options& o, int64_t n, int d, std::string* why) {
  const char* model = LossName(loss);
  Algorithm a;
  std::string rule;
  if (o.l1 > 0) {
    a = Algorithm::kDpGd;
    rule = "l1 > 0: dp_gd, the proximal method with the lowest excess risk";
  } else if (ObjectiveForSmallL2(loss, o, n, d)) {
    a = Algorithm::kObjective;
    rule =
        "n l2 <= " + FormatNumber(ObjectiveNL2Cap(o, d)) + ": objective" +
        (o.delta > 0 ? "" : " (pure: Gamma-norm b)") +
        ", whose noise the data's curvature damps (the best held-out accuracy and AUC at small l2 "
        "in the benchmark)";
  } else if (o.l2 > 0) {
    a = Algorithm::kBolton;
    rule = "l2 > 0: bolton, the lowest excess risk in the benchmark";
  } else if (o.delta > 0) {
    a = Algorithm::kDpGd;
    rule = "l2 = 0 and delta > 0: dp_gd, the lowest excess risk in the benchmark";
  } else {
    a = Algorithm::kOutputGd;
    rule = "l2 = 0 and delta = 0: output_gd (pure epsilon-DP)";
  }
  if (why != nullptr)
    *why = std::string("default for ") + model + " with " + rule +
           " (docs/user-guide.md, Choosing an algorithm)";
  return a;
}

Plan PlanRelease(const Options& given, LossKind loss, int64_t n, int d) {
  // l2 => 'auto' is planned by PlanL2Selection (plan_l2_selection.hpp), which
  // plans each candidate here with a number for l2.
  if (given.l2_auto)
    throw Error(ErrorKind::kInternal, "PlanRelease: l2 => 'auto' is planned by PlanL2Selection");
  // Stage 0 (offset.hpp): the private offset takes epsilon0; the mechanism
  // is planned at epsilon - epsilon0 with the same delta.
  std::string l2_rule;
  const Options resolved = WithDefaultL2(given, loss, n, d, false, &l2_rule);
  const OffsetPlan offset = PlanOffset(resolved, loss, n);
  const DecisionPlan decision = PlanDecision(resolved, loss, n, offset);
  const Options options = MechanismOptions(resolved, offset, decision);
  Plan p;
  if (options.has_algorithm) {
    p = PlanFor(options.algorithm, options, loss, n, d);
  } else {
    Options chosen = options;
    std::string why;
    chosen.algorithm = DefaultAlgorithm(loss, options, n, d, &why);
    chosen.has_algorithm = true;
    p = PlanFor(chosen.algorithm, chosen, loss, n, d);
    p.algorithm_rule = why;
  }
  p.offset = offset;
  p.decision = decision;
  p.l2_rule = l2_rule;
  return p;
}

bool NewtonStreamsByDefault(LossKind loss, int64_t n, int d, const Options& options) {
  const double dim = double(d) + (options.fit_intercept ? 1 : 0);
  return loss == LossKind::kLogistic && options.l1 == 0 && options.l2 == 0 && d >= 1 &&
         dim <= kNewtonDefaultMaxDim && n >= kNewtonDefaultMinRows &&
         double(n) * options.epsilon / (double(d) * double(d)) >= kNewtonDefaultMinRatio;
}

Plan PlanStreamingDefault(const Options& given, LossKind loss, int64_t n, int d) {
  std::string l2_rule;
  const Options options = WithDefaultL2(given, loss, n, d, true, &l2_rule);
  Options chosen = options;
  std::string rule;
  if (options.l1 > 0) {
    chosen.algorithm = Algorithm::kDpGd;
    rule = "l1 > 0: dp_gd, the proximal method (as in memory)";
  } else if (options.l2 > 0) {
    chosen.algorithm = Algorithm::kOutputGd;
    rule =
        "l2 > 0: output_gd (bolton and objective read rows one by one; output_gd's "
        "tight contraction needs few passes)";
  } else if (options.delta > 0 && NewtonStreamsByDefault(loss, n, d, options)) {
    chosen.algorithm = Algorithm::kDpNewton;
    rule = "logistic, l2 = 0, delta > 0, n >= " + std::to_string(kNewtonDefaultMinRows) +
           ", n epsilon/d^2 >= " + FormatNumber(kNewtonDefaultMinRatio) + " and at most " +
           std::to_string(kNewtonDefaultMaxDim) +
           " coordinates: dp_newton (6 passes where dp_gd runs up to 100; less excess risk on "
           "the synthetic rungs measured from 2*10^5 rows up, within 1.12x at 0.5-1*10^5: "
           "docs/scale.md)";
  } else if (options.delta > 0) {
    chosen.algorithm = Algorithm::kDpGd;
    rule = "l2 = 0 and delta > 0: dp_gd (as in memory)";
  } else {
    chosen.algorithm = Algorithm::kOutputGd;
    rule = "l2 = 0 and delta = 0: output_gd (pure epsilon-DP, as in memory)";
  }
  chosen.has_algorithm = true;
  Plan p = PlanFor(chosen.algorithm, chosen, loss, n, d);
  // The cap: a public constant, so the passes do not grow with n. Privacy
  // holds for every T -- each mechanism calibrates its noise (output_gd's
  // sensitivity, dp_gd's per-step sigma) to the T it runs, as for a given
  // `iterations`; a smaller T only trades optimisation error for less noise.
  if (options.iterations <= 0 && p.iterations > kStreamingMaxPasses) {
    const int64_t own = p.iterations;
    const std::string own_rule = p.iterations_rule;
    chosen.iterations = kStreamingMaxPasses;
    p = PlanFor(chosen.algorithm, chosen, loss, n, d);
    p.iterations_rule = "streaming: min(" + own_rule + " = " + std::to_string(own) + ", " +
                        std::to_string(kStreamingMaxPasses) + " passes)";
  }
  p.algorithm_rule = std::string("default for ") + LossName(loss) + " in streaming mode with " +
                     rule + "; at most " + std::to_string(kStreamingMaxPasses) +
                     " passes whatever n (docs/user-guide.md, Scale)";
  p.l2_rule = l2_rule;
  return p;
}

namespace {

// PlanStreamingRelease at the row level.
Plan PlanStreamingRows(const Options& options, LossKind loss, int64_t n, int d) {
  // l2 => 'auto' trains G candidates on a random split of the rows held in
  // memory (select_l2.hpp); streaming passes have no such split.
  // The limbs of the pass state hold sums of fewer rows (exact_sum.hpp).
  if (n >= kMaxLimbRows)
    ThrowInvalid("streaming training takes fewer than " + std::to_string(kMaxLimbRows) +
                 " rows, not " + std::to_string(n));
  if (options.l2_auto)
    ThrowInvalid("l2 => 'auto' cannot train in streaming mode",
                 "It trains every candidate on a random split of the rows in memory; pass "
                 "mode => 'in_memory' if the rows fit in dperm.max_buffer, or a number for l2.");
  if (options.has_algorithm) {
    if (!SupportsStreaming(options.algorithm))
      throw Error(
          ErrorKind::kFeatureNotSupported,
          std::string("algorithm ") + AlgorithmName(options.algorithm) +
              " cannot train in streaming mode: " + SpecFor(options.algorithm).no_streaming,
          "Streaming mode runs " + JoinNames(StreamingAlgorithms(), " and ") +
              " (they read the rows in full passes only); or pass mode => 'in_memory' if the rows "
              "fit in dperm.max_buffer.");
    // No private offset in streaming mode (offset.hpp): its statistic would
    // need a pass of its own, which pass_aggregate does not have yet, so the
    // intercept is fitted as an ordinary coordinate, as up to 0.6.0.
    Options fitted = options;
    fitted.intercept_offset = false;
    return PlanRelease(fitted, loss, n, d);
  }
  // The default plan has no offset stage either; saying so lets output_gd's
  // T use the unshifted bound on ||w_hat|| (output_gd.cpp, PlanTight).
  Options fitted = options;
  fitted.intercept_offset = false;
  return PlanStreamingDefault(fitted, loss, n, d);
}

}  // namespace

Plan PlanStreamingRelease(const Options& given, LossKind loss, int64_t n, int d) {
  // A unit-level release charged by its per-unit curve (unit_level.hpp):
  // the row-level plan under the unit's alpha rho.
  if (UnitCurveApplies(given))
    return PlanUnitByCurve(given,
                           [&](const Options& o) { return PlanStreamingRows(o, loss, n, d); });
  // Otherwise the row-level one at RowLevelOptions' share (group privacy,
  // unit_level.hpp), charged per unit.
  Plan p = PlanStreamingRows(RowLevelOptions(given), loss, n, d);
  StateUnitLevel(given, &p);
  return p;
}

}  // namespace dperm
