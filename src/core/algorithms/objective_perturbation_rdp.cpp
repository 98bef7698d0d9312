// Objective perturbation's privacy, accountant => 'tight' (dperm's
// analysis; objective_perturbation.cpp has the mechanism, the paper's
// accountant and the solver): the release's RDP curve and its calibration.
//
// Privacy, accountant => 'tight' (dperm's analysis, the KST12 argument made
// exact for generalised linear models). For W = R^dim the minimiser w of P
// and the noise determine each other: b = g_S(w) := -sum_i grad f_i(w) -
// n (2 lambda + l2) w, a C^1 bijection of R^dim (P is strongly convex and
// C^2). So the density of the output is p_S(w) = phi_sigma(g_S(w))
// |det J_S(w)| with J_S = sum_i Hess f_i(w) + n (2 lambda + l2) I. For S, S'
// differing in row k (f_k vs f'_k), write A = sum_{i != k} Hess f_i +
// n (2 lambda + l2) I >= n (2 lambda + l2) I; with rank-1 Hessians
// c x x^T, c ||x||^2 <= beta:
//   det(A + c x x^T)/det(A) = 1 + c x^T A^-1 x  in [1, 1 + beta/(n (2 lambda + l2))],
// so |log det J_S(w) - log det J_S'(w)| <= eps_J := log(1 + beta/(n (2 lambda + l2))).
// The noise part: g_S'(w) - g_S(w) = s(w) := grad f_k(w) - grad f'_k(w) =
// f'(<w,x>, y) x - f'(<w,x'>, y') x' lies in the fixed plane V = span{x, x'}
// and ||s|| <= 2L. With b = g_S(w) ~ N(0, sigma^2 I) under S:
//   log phi(b)/phi(b + s) = (2 <b, s> + ||s||^2)/(2 sigma^2)
//                        <= kappa R + kappa^2/2,   kappa = 2L/sigma,
// where R = ||P_V b||/sigma ~ chi with 2 degrees of freedom (Rayleigh)
// (maximise over ||s|| <= 2L in V). Hence the privacy loss Z of S vs S'
// satisfies Z <= eps_J + kappa R + kappa^2/2 pointwise, in both directions,
// and the Renyi divergence of order alpha is at most
//   eps(alpha) = eps_J + kappa^2/2 + log E[exp((alpha-1) kappa R)]/(alpha-1),
//   E[exp(t R)] = 1 + t sqrt(2 pi) exp(t^2/2) Phi(t)     (Rayleigh MGF).
// This is the release's RDP curve (has_rdp = true): sigma is the smallest
// one whose curve converts to (eps, delta) (Balle et al. 2020, Thm 21), and
// the ledger composes the same curve. (For eps = 1, delta = 1e-5 it gives
// sigma = 9.1 L against Algorithm 2's 10.7 L.) This argument is why the
// refused losses matter (objective_perturbation.cpp): it needs C^2 losses (change of variables) and
// rank-1 Hessians (the determinant bound).
#include "dperm/algorithms/objective_perturbation.hpp"

#include <cmath>
#include <functional>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/accounting/rdp.hpp"

namespace dperm {

double LogRayleighMgf(double t) {
  if (!(t > 0)) return 0;
  // E[exp(tR)] = 1 + t sqrt(2 pi) exp(t^2/2) Phi(t), Phi(t) = erfc(-t/sqrt 2)/2.
  const double root_two_pi = std::sqrt(2 * M_PI);
  const double phi = 0.5 * std::erfc(-t / std::sqrt(2.0));
  if (t < 5) return std::log1p(t * root_two_pi * std::exp(t * t / 2) * phi);
  return t * t / 2 + std::log(std::exp(-t * t / 2) + t * root_two_pi * phi);
}

double ObjectivePerturbationRdp(double kappa, double jacobian_epsilon, double order) {
  double t = (order - 1) * kappa;
  return jacobian_epsilon + kappa * kappa / 2 + LogRayleighMgf(t) / (order - 1);
}

std::vector<double> ObjectivePerturbationCurve(double kappa, double jacobian_epsilon,
                                               double output_ratio) {
  const std::vector<double>& orders = LedgerOrders();
  std::vector<double> curve(orders.size());
  for (size_t i = 0; i < orders.size(); i++) {
    curve[i] = ObjectivePerturbationRdp(kappa, jacobian_epsilon, orders[i]);
    // The output noise: a Gaussian release, Mironov 2017 Prop. 7, composed
    // adaptively with the minimiser (Prop. 1).
    if (output_ratio > 0) curve[i] += orders[i] * output_ratio * output_ratio / 2;
  }
  return curve;
}

double CalibrateObjectiveKappa(const Plan& p, double jacobian_epsilon, double output_share,
                               double delta) {
  const Options& o = p.options;
  auto epsilon_of = [&](double z) {  // z = sigma/(2L) = 1/kappa
    double kappa = 1 / z;
    return RdpToEpsilon(LedgerOrders(),
                        ObjectivePerturbationCurve(kappa, jacobian_epsilon, output_share * kappa),
                        delta);
  };
  // With vanishing noise the curve tends to eps_J at every order.
  // The conversion (orders up to 256) then still costs about
  // (log(1/delta) - log 256)/255 on top of eps_J.
  std::vector<double> floor(LedgerOrders().size(), jacobian_epsilon);
  double least = RdpToEpsilon(LedgerOrders(), floor, delta);
  if (!(least < o.epsilon))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small for algorithm " +
                     AlgorithmName(p.algorithm) +
                     ": its RDP curve has the constant Jacobian term " +
                     "log(1 + beta/(n (2 lambda + l2))) = " + FormatNumber(jacobian_epsilon) +
                     ", so even without noise it converts to epsilon " + FormatNumber(least) +
                     " at delta " + FormatNumber(delta),
                 "Use a larger epsilon, delta or l2, or another algorithm.");
  return 1 / CalibrateNoiseMultiplier(epsilon_of, o.epsilon);
}

}  // namespace dperm
