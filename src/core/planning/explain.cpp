// dp_explain (explain.hpp): the plan with what it costs under each
// accountant dperm has and its memory; l2 => 'auto''s selection.
#include "dperm/planning/explain.hpp"
#include "dperm/accounting/pld_wor.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/accounting/budget.hpp"
#include "dperm/util/json.hpp"
#include "dperm/accounting/pld.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/algorithms/svrg_common.hpp"
#include "dperm/planning/memory.hpp"
#include "dperm/planning/release_curve.hpp"

namespace dperm {
namespace {

// "options": every key of the option table with the value the plan used
// (OptionSpec::read; null: not given and the plan chooses).
std::string OptionsJson(const Options& o) {
  JsonWriter j;
  j.BeginObject();
  for (const OptionSpec& s : OptionTable()) {
    const OptionEntry e = s.read(o);
    j.Key(s.key);
    switch (e.kind) {
      case OptionEntry::Kind::kNumber:
        if (s.type == OptionSpec::Type::kInteger) j.Integer(static_cast<long long>(e.number));
        else j.Number(e.number);
        break;
      case OptionEntry::Kind::kBool: j.Bool(e.boolean); break;
      case OptionEntry::Kind::kString: j.String(e.text); break;
      default: j.Null(); break;
    }
  }
  j.EndObject();
  return j.str();
}

// "options_given": the keys the caller gave, in table order.
std::string OptionsGivenJson(const Options& o) {
  JsonWriter j;
  j.BeginArray();
  for (const OptionSpec& s : OptionTable())
    if (OptionGiven(o, s)) j.String(s.key);
  j.EndArray();
  return j.str();
}

std::string AccountingJson(const Plan& p) {
  const double delta = p.options.delta;
  // The curve includes stages 0 and 2 (offset.hpp, decision.hpp); the other
  // figures are the mechanism's at its share, plus theirs by basic composition.
  std::vector<double> curve = ReleaseRdpCurve(p);
  const double e0 = StagesEpsilon(p);
  JsonWriter j;
  j.BeginObject();
  if (curve.empty()) {
    // (epsilon, delta)-DP by the mechanism's own theorem; no RDP curve.
    j.Key("noise_multiplier").Null();
    j.Key("epsilon_at_delta").BeginObject();
    j.Key("mechanism").Number(TotalEpsilon(p));
    j.EndObject();
  } else if (p.noisy_steps > 0) {
    j.Key("noise_multiplier").Number(p.noise_multiplier);
    j.Key("epsilon_at_delta").BeginObject();
    j.Key("rdp").Number(RdpToEpsilon(LedgerOrders(), curve, delta));
    // Full batch: each step is a plain Gaussian of sensitivity 2C, i.e. the
    // PLD accountant's rate-1 mechanism with multiplier z/2. Sampling
    // without replacement has no PLD accountant in dperm.
    // The PLD accountant models the continuous Gaussian; a snapped plan
    // (discrete Gaussian, p.grid > 0) is accounted by its RDP curve only
    // (CKS20 Thm 14).
    if (p.sampling == Sampling::kFullBatch && p.rdp_curve.empty() && !(p.grid > 0))
      j.Key("pld").Number(e0 + EpsilonPoissonSubsampledGaussianPld(1.0, p.noise_multiplier / 2,
                                                                   p.noisy_steps, delta));
    // Rounded exact Gaussian steps (noise.hpp) calibrated by the
    // without-replacement pair's PLD (PlanGradientNoise): that PLD's epsilon,
    // which the plan meets; the ledger's curve ("rdp") converts above it.
    // Same grid width as the calibration; a PLD too wide to compute (the
    // plan then calibrated by the pair's RDP) is left out.
    if (p.noise_bits > 0 && p.mechanism_fields.Get(kNoiseFraction) == 0 &&
        p.options.epsilon <= kWorPldMaxEpsilon) {
      try {
        const double pld = EpsilonWorGaussianPld(p.sampling_rate, p.noise_multiplier, p.noisy_steps,
                                                 delta, 1e-3 * std::min(1.0, p.options.epsilon));
        j.Key("pld").Number(e0 + pld);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kInvalidParameter) throw;
      }
    }
    j.EndObject();
  } else if (p.noise == NoiseKind::kGaussian) {
    double multiplier = p.noise_scale / p.sensitivity;  // sigma / Delta
    j.Key("noise_multiplier").Number(multiplier);
    j.Key("epsilon_at_delta").BeginObject();
    // One Gaussian release: exact epsilon by the analytic formula (the plan
    // calibrated it), by RDP (Mironov 2017, Prop. 7 + improved conversion)
    // and by PLD (a Poisson rate of 1 is the plain Gaussian mechanism). A
    // mechanism with its own curve (e.g. objective perturbation) is not a
    // plain Gaussian release: only its curve speaks for it.
    // The analytic and PLD figures are exact for the continuous Gaussian
    // only; a snapped release (discrete Gaussian) is stated by its RDP curve
    // (CKS20 Thm 14), which is what calibrated it.
    const bool plain = p.rdp_curve.empty() && !(p.grid > 0);
    if (plain)
      j.Key("analytic")
          .Number(e0 + (p.accountant == Accountant::kTight
                            ? p.options.epsilon
                            : GaussianEpsilon(multiplier, delta, 1.0)));
    j.Key("rdp").Number(RdpToEpsilon(LedgerOrders(), curve, delta));
    if (plain)
      j.Key("pld").Number(e0 + EpsilonPoissonSubsampledGaussianPld(1.0, multiplier, 1, delta));
    j.EndObject();
  } else {
    j.Key("noise_multiplier").Null();
    j.Key("epsilon_at_delta").BeginObject();
    j.Key("pure").Number(TotalEpsilon(p));  // epsilon-DP: any delta
    j.EndObject();
  }
  j.Key("rdp_orders").BeginArray();
  for (double a : LedgerOrders()) j.Number(a);
  j.EndArray();
  if (curve.empty()) {
    j.Key("rdp").Null();
  } else {
    j.Key("rdp").BeginArray();
    for (double r : curve) j.Number(r);
    j.EndArray();
  }
  j.EndObject();
  return j.str();
}

}  // namespace

std::string ExplainJson(const Plan& plan) {
  Options given = plan.options;  // epsilon as given, not the mechanism's share
  given.epsilon = ReleaseEpsilon(plan);
  given.delta = ReleaseDelta(plan);  // per unit for a unit-level plan
  return PlanJson(
      plan, {{"options", OptionsJson(given)},
             {"options_given", OptionsGivenJson(plan.options)},
             {"accounting", AccountingJson(plan)},
             {"memory_bytes",
              std::to_string(static_cast<long long>(std::ceil(ReleaseMemoryBytes(plan, false))))}});
}

std::string ExplainL2Selection(const L2Selection& s) {
  JsonWriter j;
  j.BeginObject();
  j.Key("l2").String("auto");
  j.Key("loss").String(LossName(s.loss));
  j.Key("n").Integer(s.n);
  j.Key("d").Integer(s.d);
  j.Key("memory_bytes").Integer(static_cast<int64_t>(std::ceil(SelectionMemoryBytes(s))));
  j.Key("selection").Raw(L2SelectionJson(s, nullptr).c_str());
  j.Key("accounting").BeginObject();
  j.Key("rdp_orders").BeginArray();
  for (double a : LedgerOrders()) j.Number(a);
  j.EndArray();
  j.Key("rdp").BeginArray();
  for (double v : s.rdp_curve) j.Number(v);
  j.EndArray();
  j.EndObject();
  j.Key("candidates").BeginArray();
  for (const Plan& p : s.candidates) j.Raw(ExplainJson(p).c_str());
  j.EndArray();
  j.EndObject();
  return j.str();
}

}  // namespace dperm
