// The share of a release's epsilon that releases its number of units
// (docs/design.md section 4): a unit-level dperm.train and every
// dperm.train_query first release the number of units (rows, for a query
// on a relation without a unit) with pure epsilon_c-DP, then plan the model
// at epsilon - epsilon_c. One rule for dperm.train, dperm.train_query and
// dperm.explain_query, so the three agree; the ledger records its outcome,
// which dperm.retraining_forecast composes.
//
// The rule, from public inputs only (the release's epsilon and a public
// estimate of the number of units: the option units_estimate, which the
// caller states; never the data):
//
//   epsilon_c = min(epsilon / 10, max(epsilon / 100, C / N))
//
//   with N the estimate and C = 100 sqrt(2) ~ 141.4; without an estimate
//   epsilon_c = epsilon / 10 (dperm 0.7.0's share). The intercept offset's
//   share shrinks with n the same way (offset.hpp, PlanOffset: min(epsilon/10,
//   4 Delta/sqrt(n))); a count needs less, since its error is absolute.
//
// Why epsilon_c at that share is precise enough. The count is the discrete
// Laplace of scale b ~ 1/epsilon_c (sensitivity 1: one unit added or
// removed; Dwork & Roth 2014, Thm 3.6, its discrete form Ghosh, Roughgarden
// & Sundararajan 2012), standard deviation sqrt(2) b. The model uses the
// noisy count m for two things only: n = m k, which normalises the
// objective (the average loss against the l2 term) and sizes the plan
// (iterations, steps, the sensitivities that divide by n); and the read,
// which takes m units (a random subset if fewer than exist, public dummy
// units if more). A relative error r of n moves the normalised objective's
// balance and every 1/n constant by a factor 1 +- r, and the expected share
// of dummy slots by at most about r; at r ~ 1 % the model is not
// measurably different (the l2 grid and the default rules move n by far
// more). So the count needs relative standard deviation sqrt(2)/(epsilon_c
// N) <= 1 %: epsilon_c >= 100 sqrt(2) / N = C / N (times Delta_1, 1 plus
// the discrete Laplace's grid, at most 1.25: a percent or so). The cap (a tenth, the
// old share) holds on small tables where C / N is larger: there the count
// takes what it took before. The floor (a hundredth) bounds the harm of an
// estimate far too large (the count's error is then at most sqrt(2) 100 /
// epsilon units): it costs the model at most 1 % of epsilon more than the
// rule would have needed. The estimate is the caller's statement, so a
// wrong one changes the model's precision, never its privacy: the split is
// a function of public inputs, and the release is (epsilon_c + (epsilon -
// epsilon_c))-DP whatever the split (basic composition, Dwork & Roth 2014,
// Thm 3.16).
//
// A budget that declares its number of units public (dperm.set_budget(...,
// units => N)) releases no count: epsilon_c = 0 (privacy_unit.hpp of the
// boundary states the argument).
#pragma once
#include <cstdint>

namespace dperm {

constexpr double kUnitCountMaxShare = 0.1;   // epsilon_c <= epsilon / 10 (no estimate: = )
constexpr double kUnitCountMinShare = 0.01;  // epsilon_c >= epsilon / 100 with an estimate
// C: epsilon_c >= C / N keeps the count's relative standard deviation
// sqrt(2) / (epsilon_c N) at or below 1 %.
constexpr double kUnitCountPerUnit = 141.42135623730951;  // 100 sqrt(2)

// epsilon_c for a release at `epsilon` whose number of units is estimated
// publicly as `units_estimate` (0: no estimate; a tenth). Exact split:
// epsilon - (epsilon - epsilon_c) == epsilon_c (Sterbenz: the model's part
// lies in [epsilon/2, epsilon]), so the two parts sum to epsilon exactly.
// 0 when epsilon is not positive.
double UnitCountEpsilon(double epsilon, int64_t units_estimate);

// The rule as text (static), for dperm.explain_query.
const char* UnitCountRule(int64_t units_estimate);

}  // namespace dperm
