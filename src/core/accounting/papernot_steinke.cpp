// The RDP of the best of K runs, K truncated negative binomial (Papernot &
// Steinke 2022; papernot_steinke.hpp).
#include "dperm/accounting/papernot_steinke.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/util/errors.hpp"

namespace dperm {

double TruncatedNegativeBinomialMean(double gamma, double eta) {
  if (!(gamma > 0 && gamma <= 1) || !(eta > -1)) ThrowInvalid("TNB: gamma in (0, 1], eta > -1");
  if (gamma == 1) return 1;
  if (eta == 0) return (1 / gamma - 1) / std::log(1 / gamma);
  return eta * (1 - gamma) / (gamma * (1 - std::pow(gamma, eta)));
}

double TruncatedNegativeBinomialGamma(double mu, double eta) {
  if (!(mu >= 1)) ThrowInvalid("TNB: the mean must be >= 1");
  double lo = 0, hi = 1;  // mean(lo) = inf > mu >= mean(hi) = 1
  for (int i = 0; i < 200; i++) {
    const double mid = (lo + hi) / 2;
    if (mid <= lo || mid >= hi) break;
    (TruncatedNegativeBinomialMean(mid, eta) >= mu ? lo : hi) = mid;
  }
  return lo > 0 ? lo : hi;
}

std::vector<double> PapernotSteinkeRdp(const std::vector<double>& orders,
                                       const std::vector<double>& rdp, double mu, double eta) {
  const double gamma = TruncatedNegativeBinomialGamma(mu, eta);
  const double mean = TruncatedNegativeBinomialMean(gamma, eta);
  // (1 + eta) min_lhat [(1 - 1/lhat) eps(lhat) + log(1/gamma)/lhat]
  double c = INFINITY;
  for (size_t j = 0; j < orders.size(); j++)
    c = std::min(c, (1 - 1 / orders[j]) * rdp[j] + std::log(1 / gamma) / orders[j]);
  c *= 1 + eta;
  std::vector<double> out(orders.size());
  for (size_t i = 0; i < orders.size(); i++) out[i] = rdp[i] + c + std::log(mean) / (orders[i] - 1);
  // RDP is non-decreasing in the order: a higher order's bound holds below.
  for (size_t i = orders.size(); i-- > 1;)
    if (orders[i - 1] <= orders[i]) out[i - 1] = std::min(out[i - 1], out[i]);
  return out;
}

}  // namespace dperm
