// Private hyperparameter selection by a random number of runs (Papernot &
// Steinke 2022): the RDP of the best of K runs, K truncated negative
// binomial. dperm's l2 => 'auto' does not use it (select_l2.hpp says why);
// it is the comparison point the benchmark and docs/accountant.md quote.
#pragma once
#include <vector>

namespace dperm {

// Papernot & Steinke 2022, Thm 2 (truncated negative binomial K with shape
// eta in (-1, inf) \ {0}... eta = 0 the logarithmic law, and mean mu >= 1):
// if one run is (lambda, eps(lambda))-RDP at every order of `orders`, the
// best of K runs is (lambda, eps'(lambda))-RDP with
//   eps'(lambda) = eps(lambda) + (1 + eta) min_lhat [(1 - 1/lhat) eps(lhat)
//                  + log(1/gamma)/lhat] + log(mu)/(lambda - 1),
// gamma the TNB parameter of mean mu (TruncatedNegativeBinomialGamma), the
// minimum over lhat in `orders`, then made non-decreasing in lambda (RDP is
// monotone in the order). The comparison point of docs/accountant.md.
std::vector<double> PapernotSteinkeRdp(const std::vector<double>& orders,
                                       const std::vector<double>& rdp, double mu, double eta);

// E[K] of the truncated negative binomial law of P&S Definition 1:
// eta (1 - gamma)/(gamma (1 - gamma^eta)) for eta != 0, and
// (1/gamma - 1)/log(1/gamma) for eta = 0 (the logarithmic law).
double TruncatedNegativeBinomialMean(double gamma, double eta);
// The gamma in (0, 1] of mean mu (bisection; the returned gamma's mean is
// >= mu, the conservative side).
double TruncatedNegativeBinomialGamma(double mu, double eta);

}  // namespace dperm
