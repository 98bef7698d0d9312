// The privacy accounting DP-SVRG and DP-SVRG++ share ([WYX17] Algorithms 1
// and 2): the privacy of a noisy variance-reduced inner step and its noise
// calibration (svrg_accounting.cpp); the training loop is svrg_common.hpp.
//
// Neighbouring relation: replace-one (same n, one row changed); n is public.
// Rows are clipped to ||x|| <= feature_bound, so every training row (with its
// intercept column) has norm <= R, and the per-row loss is G-Lipschitz with
// G = plan.L (the loss's, loss_spec.hpp).
//
// WHAT IS RELEASED. Epoch s computes the snapshot gradient v~ = grad F(x~)
// (the mean loss gradient over all n rows, Algorithm 1 line 3) and never
// releases it on its own. Inner step t draws a batch B_t of b rows uniformly
// without replacement (b = 1 in the paper: "pick i_t in [n]") and forms
//   v_t = v~ + h_t + u_t,   h_t = 1/b sum_{i in B_t} [grad f_i(x_{t-1}) - grad f_i(x~)],
//   u_t ~ N(0, sigma^2 I)                                   (Algorithm 1 line 7)
// then x_t = prox_{eta r}(x_{t-1} - eta v_t) (line 8). Everything else (the
// iterates, the snapshot points x~_s = mean of an epoch's iterates, the next
// epoch's start, the output) is a function of the v's and public inputs:
// post-processing. The v's form an adaptive composition (x_{t-1} and x~ are
// functions of earlier v's), so it suffices to bound (v_1, ..., v_K), K the
// number of inner steps of the whole run.
//
// WHY NOT THEOREMS 4.1 / 4.3 AS STATED. They give sigma^2 = c G^2 T m
// ln(1/delta) / (n^2 eps^2) with an unspecified constant c from the moments
// accountant (Abadi et al. 2016, Thm 1), valid only for eps <= c1 T m / n^2
// (at n = 45211 and T m ~ 2e5: eps <= 1e-4 c1). And v_t is not a
// plain subsampled gradient: v~ depends on every row, so replacing one row
// changes v_t at EVERY inner step (by up to 2G/n), not only when that row is
// sampled; when it is sampled, h_t changes as well.
//
// THE SPLIT (dperm's analysis). Write u_t = u1_t + u2_t with independent
// u1_t ~ N(0, f sigma^2 I) and u2_t ~ N(0, (1 - f) sigma^2 I), f in (0, 1):
// the sum has exactly the law of u_t, so v_t = (v~ + u1_t) + (h_t + u2_t) is
// a post-processing of the pair P_t = (v~ + u1_t, h_t + u2_t), and (v_1..v_K)
// is at least as private as (P_1..P_K). Each P_t composes two mechanisms
// with independent randomness:
//  (a) snapshot part v~ + u1_t, a Gaussian mechanism: replacing row k
//      changes v~ by (grad f_k(x~) - grad f'_k(x~))/n, of norm <= 2G/n.
//      RDP alpha (2G/n)^2 / (2 f sigma^2) (Mironov 2017, Prop. 7). Repeating
//      it at every inner step costs K times that; for Gaussians this is
//      exact (m noisy copies of one v~ are worth one copy with variance
//      f sigma^2 / m).
//  (b) sampled part h_t + u2_t: the Gaussian mechanism M(S) = 1/b sum_{i in S}
//      g_i + N(0, (1 - f) sigma^2 I) with g_i = grad f_i(x_{t-1}) -
//      grad f_i(x~), applied to a uniformly random b-subset S of the rows.
//      ||g_i|| <= D (below), so on two subsets differing in one row M moves
//      by at most 2D/b = 2C with C = D/b: the Gaussian mechanism on a batch
//      drawn uniformly without replacement (rate gamma = b/n) under
//      replace-one, with multiplier z2 = sqrt(1 - f) sigma / C over the
//      per-row contribution C (sensitivity 2C: the units of rdp_wor.hpp,
//      as dp_sgd's steps, whose C is L/b). Its RDP is bounded by that of
//      the symmetric dominating pair of Zhu, Dong & Wang 2022 (AISTATS,
//      Prop. 30; Dong, Roth & Su 2022, Thm 4.2), derived in rdp_wor.cpp:
//      RdpWorGaussianTight(b/n, z2, alpha), the pair's RDP capped by WBK
//      2019 Thm 9 and the unsampled 2 alpha / z2^2 (all three are upper
//      bounds on the same divergence, so their minimum is). The pair
//      dominates both orders of every pair of neighbours, so the bound
//      holds at every step whatever the rows and the earlier outputs.
// RDP adds over the two parts and over the K steps (Mironov 2017, Prop. 1:
// adaptive composition; the parts' noises are independent given the past):
//   rho(alpha) = K [alpha (2G/n)^2 / (2 f sigma^2)
//                   + eps_pair(b/n, sqrt(1 - f) sigma b / D, alpha)],
// converted to (epsilon, delta) by Balle et al. 2020, Thm 21. Every f gives
// a valid bound; the plan takes the f whose calibrated sigma is smallest
// (public inputs only: "FINDING f" below), calibrates sigma against exactly
// this curve and stores the curve in Plan::rdp_curve. Putting all the
// noise on either part is no option: the other part would be released
// without noise (rho = infinity). (Part (a) is a plain Gaussian and part
// (b)'s PLD exists (pld_wor.hpp), so a PLD composition would be tighter by
// the RDP conversion's loss; the RDP keeps the split search cheap and is
// what the ledger composes.)
//
// FINDING f. For a given z2 the snapshot part needs the least ratio r =
// sigma1 / (2G/n) with K [alpha / (2 r^2) + eps_pair(z2, alpha)] converting
// to epsilon: a bisection on a closed form. So the search runs over z2
// (one step curve per point, memoised per (gamma, z2)) and minimises the
// total z^2 = (r 2G/(n C))^2 + z2^2, f = 1 - z2^2 / z^2, from just above
// z2_min (where part (b) alone spends epsilon): a grid dense near z2_min
// (the objective has several local minima there, where the conversion's
// best order switches), then golden section; sigma is then calibrated at
// that f (to ~1e-12).
//
// D, THE RANGE OF ONE ROW'S GRADIENT DIFFERENCE g = grad f(x; z) -
// grad f(y; z). Linear models: grad = f'(m) x_z, so g = (f'(m1) - f'(m2)) x_z
// and ||g|| <= R (sup f' - inf f'). Logistic: f' = -y sigmoid(-y m) lies
// between 0 and -y with |y| = 1 (the boundary stores labels as +-1,
// rows.cpp; BasePlan's L = R assumes the same), so D = R = G. Huber:
// f' = clip(m - y, -delta, delta), D = 2 delta R = 2G. Softmax: grad =
// (p - e_y) x^T, g = (p1 - p2) x^T with ||p1 - p2|| <= sqrt(2) for two
// points of the simplex, D = sqrt(2) R = G. The generic bound is 2G
// (||g|| <= ||grad f(x)|| + ||grad f(y)||), which an earlier analysis used; the
// loss-specific D halves the sampled part's sensitivity for logistic and
// softmax and is never above 2G.
//
// REGULARISER. F^r = F + r with F the mean loss and r = l1 ||.||_1 +
// l2/2 ||.||^2 entirely in the proximal step, which is data-independent
// (post-processing). Xiao & Zhang (2014), whose Prox-SVRG Algorithm 1
// follows, let the strong convexity of F^r come from r; so v~ and g_i
// contain loss gradients only, and the smoothness in Theorems 4.2/4.4 is the
// loss's beta.
//
// MINI-BATCHES (a dperm extension). The paper uses b = 1. With b rows the
// inner steps average b rows and (b) uses gamma = b/n, C = D/b.
// Subsampling amplifies only steps that are noisy enough (z of order 1):
// with b = 1 that forces noise of order D on every inner step whatever
// epsilon (a row sampled once must be protected by that one step: with
// delta = 1e-6 the chance that it is ever sampled is far above delta). That
// is why the paper's one-row defaults did worse than the zero model on the
// benchmark's datasets and did not converge even at a huge epsilon (K one-row
// steps cost that much), while their noiseless runs converge
// (bench/reports/algorithms.md). The schedules (dp_svrg.cpp, dp_svrg_pp.cpp) let the step grow with
// b (the inner estimate's variance shrinks by 1/b), so the epochs shorten.
//
// THE BATCH SIZE (SvrgChooseBatch; utility only, public inputs only). A
// noisy prox-SVRG epoch adds about eta dim sigma^2 / (2 (1 - 3a)) to the
// expected error bound (the noise's share of E||v_t - grad F||^2 in the
// proof of Xiao & Zhang 2014, Thm 3.1, with a = 8 L eta / b as in
// dp_svrg.cpp), so the plan predicts the noise error as noise_weight
// sigma^2 dim, noise_weight = eta/(1 - 3a) (DP-SVRG) or eta (DP-SVRG++),
// with sigma the predicted noise of the K steps at that b
// (SvrgPredictedSigma: the split search on its grid with the
// Poisson-subsampled Gaussian's RDP for part (b), a lower bound of the
// pair's, and much cheaper; only the chosen b is calibrated with the
// pair). It tries b = 1, 2, 4, ... while the inner
// steps read at most max(32 n, 2^22) rows, and keeps the b with the least
// predicted error; the prediction ranks the candidates (it overstates the
// error itself). Without the floor (below) the predicted error flattens out
// for large b while the rows read double with b. Taking the smallest b
// within 10% of the least instead saved training time but cost utility on
// the benchmark's datasets (bench/reports/algorithms.md), so the least it
// is.
//
// THE FLOOR THAT WAS. Until part (b) was accounted with WBK 2019
// Thm 9, whose terms j >= 3 carry min{2, (e^{eps(inf)} - 1)^j} = 2 however
// large the noise: K steps cost at least about K gamma^3 alpha^2/3 per
// order, so with many steps and a large b the calibrated sigma jumped to
// the unamplified one and the batch search stopped at small b. The pair's
// RDP has no floor (it falls like gamma^2 alpha / z^2 for large z), so
// sigma(b) falls until the rows budget stops the search (dp_explain shows
// the b and sigma a plan takes; bench/reports/algorithms.md the noise
// before and after).
//
// ACCOUNTANT 'paper'. The theorems' sigma with c = 1 (the mechanisms state
// which); when it is below the calibrated sigma (c = 1 is often far too
// optimistic) the calibrated sigma is used with a note. A larger paper
// sigma keeps the calibrated fraction f, whose curve only decreases as
// sigma grows, so (epsilon, delta) still holds under dperm's accountant.
#pragma once
#include "dperm/util/errors.hpp"

#include <cstdint>
#include <vector>

namespace dperm {

// The public quantities that fix the privacy of K noisy inner steps
// v = grad F(x~) + (1/b) sum_{i in batch} [grad f_i(x) - grad f_i(x~)] + u,
// u ~ N(0, sigma^2 I), split as u = u1 + u2 with Var u1 = f sigma^2 and
// Var u2 = (1 - f) sigma^2.
struct SvrgSteps {
  int64_t n = 0;                    // rows
  int64_t batch = 1;                // b: rows per inner step, uniformly without replacement
  int64_t steps = 0;                // K: noisy inner steps over the whole run
  double snapshot_sensitivity = 0;  // 2G/n: replace-one change of grad F(x~)
  double row_range = 0;             // D: max ||grad f_i(x) - grad f_i(y)|| for one row
};

// One sampled step's RDP on LedgerOrders() at multiplier z2 = sigma2 / C
// (C = D/b, the per-row contribution; a replaced row moves the batch mean
// by 2C): RdpWorGaussianTight(b/n, z2, alpha), the dominating pair of Zhu,
// Dong & Wang 2022, Prop. 30 (rdp_wor.hpp), memoised per (gamma, z2).
std::vector<double> SvrgSampledStepRdp(double gamma, double z2);

// The RDP curve on LedgerOrders() of the K steps at total noise sigma and
// snapshot fraction f in (0, 1): K [alpha (2G/n)^2 / (2 f sigma^2)
// (Mironov 2017, Prop. 7) + SvrgSampledStepRdp(b/n, sqrt(1 - f) sigma b / D)]
// (composition: Mironov 2017, Prop. 1).
std::vector<double> SvrgRdpCurve(const SvrgSteps& s, double sigma, double fraction);

// The smallest sigma (to ~1e-12 relative, never below) whose SvrgRdpCurve
// at `fraction` converts to epsilon at delta (Balle et al. 2020, Thm 21).
double SvrgCalibrateSigma(const SvrgSteps& s, double fraction, double epsilon, double delta);

// The fraction f minimising SvrgCalibrateSigma (a search over the sampled
// part's multiplier, svrg_accounting.cpp), and SvrgCalibrateSigma there.
struct SvrgSplit {
  double fraction = 0;
  double sigma = 0;
};
SvrgSplit SvrgOptimalSplit(const SvrgSteps& s, double epsilon, double delta);

// The batch search's prediction of SvrgOptimalSplit's sigma (utility only):
// the same search on its grid only, with the Poisson-subsampled Gaussian's
// RDP (cheaper; a lower bound of the step's RDP) in place of
// SvrgSampledStepRdp: a little below the calibrated sigma (or a hair above
// it, the grid being coarser than the search).
double SvrgPredictedSigma(const SvrgSteps& s, double epsilon, double delta);

}  // namespace dperm
