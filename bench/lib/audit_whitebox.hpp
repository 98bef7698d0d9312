// The audit harness's white-box canaries (audit_harness.hpp; the seam is
// include/dperm/algorithms/audit_seam.hpp).
#pragma once

#include "audit_neighbours.hpp"

namespace dperm::audit {

// ---------------------------------------------------------------------------
// White-box canaries (Case::white_box; issue 44 item 13). For six
// mechanisms no pair of real loss rows moves the noised quantities by the
// sensitivity their noise is calibrated for (bench/reports/audit.md, "What
// cannot be flagged"), so the black-box canary above cannot show a factor of
// two. Their privacy proofs use the loss only through per-row bounds, so a
// per-row oracle that attains those bounds is inside the proofs'
// assumptions; and the auditor reads the noisy releases themselves
// (Plan::audit_seam, dperm/algorithms/audit_seam.hpp: test-only, null in
// every production plan): w is post-processing of them, and the plan
// charges them, so an epsilon_lb on the releases is a lower bound on the
// mechanism's epsilon as planned.
//
// The data are n inert rows (features 0, no intercept column: every real
// per-row term is 0 at every w, for Huber (target 0) and logistic alike);
// the last k rows are the canary's slots, whose terms the oracle of each
// side substitutes. Constants, all from the plan (L, R, beta, D, gamma):
//  * dp_svrg, dp_svrg_pp (Huber; svrg_common.cpp, PlanSvrgNoise): the proof
//    bounds ||grad f_i|| <= L (snapshot part: a replaced row moves
//    v~ = 1/n sum grad f_i(x~) by <= 2L/n) and ||grad f_i(x) - grad f_i(x~)||
//    <= D = SvrgRowRange (sampled part: <= 2D/b). Oracle on side s = +1 (D)
//    / -1 (D'): grad f_c(x) = s (D/2) e_1, grad f_c(x~) = -s (D/2) e_1, both
//    of norm D/2 <= L (Huber: D = 2 huber_delta R = 2L, equality). Then in
//    every inner step the snapshot part moves by 2 (D/2)/n = 2L/n and the
//    sampled part by 2D/b: both parts' full sensitivities (up to the sums'
//    rounding slack), in a fixed direction, independent of x.
//  * ssp (logistic; ssp.cpp, THE RELEASE): per row ||t|| <= R, |f'(0, y)|
//    <= L/R, and the packed (gamma f' t, u(t t^T)). The attaining pair:
//    t = R e_1, t' = R (s e_1 + sqrt(1 - s^2) e_2), f' = f'' = L/R on both
//    sides, s = max(-1, -gamma^2 L^2 / (2 R^4)) (the derivation's s* with
//    a = b' = R, c = c' = L/R), ||Delta v||^2 = gamma^2 L^2 (2 - 2 s) +
//    2 R^4 (1 - s^2): at |s*| <= 1 exactly the plan's 2 gamma^2 L^2 + 2 R^4 +
//    gamma^4 L^4 / (2 R^4).
//  * dp_newton (logistic; dp_newton.cpp, THE SENSITIVITY): per row
//    |f'| ||t|| <= L, 0 <= f'' ||t||^2 <= beta, packed (gamma f' t,
//    u(f'' t t^T)). The attaining pair, the larger of the derivation's two
//    branches: (A) t = R e_1 with f' = L/R, f'' = beta/R^2 against t' = -t
//    with f' = L/R, f'' = 0: ||Delta v||^2 = 4 gamma^2 L^2 + beta^2; (B) the
//    angle u* = min(gamma^2 L^2 / (2 beta^2), 1/sqrt 2), t' = R (-u* e_1 +
//    sqrt(1 - u*^2) e_2), f' = L/R and f'' = beta/R^2 on both sides:
//    2 gamma^2 L^2 (1 + u*) + 2 beta^2 (1 - u*^2). The same contribution in
//    every pass (the bounds hold at every w_k).
//  * objective, objective_approx (logistic; objective_perturbation.cpp, THE
//    AUDIT CANARY): the proofs (Bassily et al. 2019, Assumption 5.1 and
//    Theorem 5.2 = KST12 Thm 2; dperm's tight curve; CMS11 Thm 9 at
//    delta = 0) bound a row by ||grad f_i|| <= L, convexity and a rank-1
//    Hessian of curvature <= beta. Oracle on side s: the slot's loss is the
//    linear f_c(w) = s (L/R) <R e_1, w> (gradient s L e_1, Hessian 0), added
//    to the linear term b (AuditSite::kObjectiveLinear). The two sides'
//    gradients are 2L apart at every w, the gap the noise is calibrated
//    for (a logistic pair reaches L). With inert rows P is quadratic and the
//    released w = -(b + k s L e_1)/(n mu_P) + the solver's residual + the
//    output noise: linear in b.
// The statistic: each observed release z (noise sigma) is added into a tap
// as z / sigma^2, per release site (svrg: snapshot part, then sampled
// part; ssp, dp_newton: the packed sums). With a constant shift per release,
// sum_k z_k / sigma_k^2 is sufficient for the Gaussian likelihood ratio, and
// the pilot's Fisher discriminant on the tap (PilotMeans) weights the sites.
// Objective perturbation has no intermediate release (its seam has no
// observer): the statistic is the pilot's Fisher discriminant on the
// released w itself, which carries the whole shift (w is linear in b).

// The per-thread tap of the white-box observer (MapReleases clears it
// before each release and reads it after).
inline std::vector<double>& WhiteBoxTap() {
  thread_local std::vector<double> tap;
  return tap;
}

// The packed row (gamma c t, u(h t t^T)) of ssp / dp_newton (ssp.cpp's
// packing: the dim gradient entries, then per j the diagonal entry and the
// off-diagonal ones times sqrt 2).
inline std::vector<double> PackedContribution(double gamma, double c, double h,
                                              const std::vector<double>& t) {
  const int dim = int(t.size());
  std::vector<double> v;
  for (int j = 0; j < dim; j++) v.push_back(gamma * c * t[size_t(j)]);
  for (int j = 0; j < dim; j++) {
    v.push_back(h * t[size_t(j)] * t[size_t(j)]);
    for (int k = j + 1; k < dim; k++) v.push_back(std::sqrt(2.0) * h * t[size_t(j)] * t[size_t(k)]);
  }
  return v;
}

// A case of AlgorithmCase made white-box: the oracle canary on inert rows
// (no conditioned base), n = 50 (dp_svrg: its 20), and for objective and
// objective_approx l2 = 1 in place of 0.1 (a public option; the black-box
// canary needed 0.1, AlgorithmCase says why): the Jacobian term
// log(1 + beta/(n l2)) falls from 0.049 to 0.005 of epsilon = 1, which
// leaves more of it to the Gaussian part the linear canary attains (its
// exact pair epsilon at noise / 2: 1.63 -> 1.71 for objective), and the
// solvers need 13 ITEM steps instead of 36 (objective_approx: SVRG epochs
// of ~63 inner steps instead of ~175). Their statistic is Gaussian (w is
// linear in b), so the test's threshold comes from GaussianModelTest.
inline Case WhiteBoxCase(Case c) {
  const Algorithm a = c.options.algorithm;
  c.white_box = true;
  c.conditioned_base = 0;
  c.n = a == Algorithm::kDpSvrg ? 20 : 50;
  if (a == Algorithm::kObjective || a == Algorithm::kObjectiveApprox) {
    c.options.l2 = 1;
    c.gaussian_statistic = true;  // w is linear in b (above): GaussianModelTest
  }
  c.name += " (white box)";
  return c;
}

inline Neighbours WhiteBoxNeighbours(const Plan& plan, int64_t k = 1) {
  const int stride = plan.d + 1, dim = plan.dim;
  if (plan.options.fit_intercept || dim < 2)
    throw Error(ErrorKind::kInternal, "white-box audit: needs dim >= 2 and no intercept column");
  Neighbours pair;
  pair.rows_d.assign(size_t(plan.n) * stride, 0.0);  // inert: features 0 (Huber target 0)
  if (plan.loss == LossKind::kLogistic)
    for (int64_t i = 0; i < plan.n; i++) pair.rows_d[size_t(i) * stride + plan.d] = 1.0;
  pair.rows_dp = pair.rows_d;
  const int64_t first_canary = plan.n - k;  // rows [n - k, n): the unit's slots
  const double L = plan.L, R = plan.R;
  char buf[400];
  if (plan.algorithm == Algorithm::kDpSvrg || plan.algorithm == Algorithm::kDpSvrgPp) {
    const double D = SvrgRowRange(plan);
    if (D / 2 > L * (1 + 1e-12)) throw Error(ErrorKind::kInternal, "white-box svrg: D/2 > L");
    for (double side : {1.0, -1.0}) {
      auto seam = std::make_shared<AuditSeam>();
      seam->oracle = [=](AuditSite site, const int64_t* rows, int64_t count, double* value, int) {
        if (site == AuditSite::kSvrgSnapshot) {
          value[0] += double(k) * (-side * D / 2) / double(count);  // k slots' grad f_c(x~)
        } else if (site == AuditSite::kSvrgSampled) {
          int64_t in = 0;
          for (int64_t i = 0; i < count; i++) in += rows[i] >= first_canary;
          value[0] += double(in) * (side * D) / double(count);  // grad f_c(x) - grad f_c(x~)
        }
      };
      seam->observe = [dim](AuditSite site, const double* value, int size, double sigma) {
        std::vector<double>& tap = WhiteBoxTap();
        if (tap.size() < size_t(2 * dim)) tap.resize(size_t(2 * dim), 0.0);
        const size_t at = site == AuditSite::kSvrgSampled ? size_t(dim) : 0;
        for (int j = 0; j < size; j++) tap[at + size_t(j)] += value[j] / (sigma * sigma);
      };
      (side > 0 ? pair.seam_d : pair.seam_dp) = seam;
    }
    // Per step: snapshot part 2 k (D/2)/n, sampled part 2 k D / b (full batch).
    const double snap = 2 * double(k) * (D / 2) / double(plan.n);
    const double samp = 2 * double(k) * D / double(plan.batch_size);
    pair.oracle_shift = std::sqrt(snap * snap + samp * samp);
    pair.site_shift[int(AuditSite::kSvrgSnapshot)] = snap;
    pair.site_shift[int(AuditSite::kSvrgSampled)] = samp;
    snprintf(buf, sizeof buf, "oracle: grad f(x) = +%g e1, grad f(x~) = -%g e1 (D = %g, L = %g)",
             D / 2, D / 2, D, L);
    pair.row_d = buf;
    snprintf(
        buf, sizeof buf,
        "oracle: grad f(x) = -%g e1, grad f(x~) = +%g e1; per step the parts move by %.4g (of 2L/n) and %.4g (of 2D/b)",
        D / 2, D / 2, snap, samp);
    pair.row_dp = buf;
  } else if (plan.algorithm == Algorithm::kSsp || plan.algorithm == Algorithm::kDpNewton) {
    const double gamma = plan.mechanism_fields.Get(kMomentWeight);
    std::vector<double> t(size_t(dim), 0.0), tp(size_t(dim), 0.0);
    t[0] = R;
    std::vector<double> cd, cdp;
    if (plan.algorithm == Algorithm::kSsp) {
      const double s = std::max(-1.0, -gamma * gamma * L * L / (2 * R * R * R * R));
      tp[0] = R * s, tp[1] = R * std::sqrt(1 - s * s);
      cd = PackedContribution(gamma, L / R, 1.0, t);
      cdp = PackedContribution(gamma, L / R, 1.0, tp);
      snprintf(buf, sizeof buf, "oracle: t = (%g, 0), f' = %g", R, L / R);
      pair.row_d = buf;
      snprintf(buf, sizeof buf, "oracle: t = (%.4g, %.4g), f' = %g (cos = %.4g)", tp[0], tp[1],
               L / R, s);
      pair.row_dp = buf;
    } else {
      const double beta = plan.beta, g2 = gamma * gamma * L * L, b2 = beta * beta;
      const double u = std::min(g2 / (2 * b2), 1 / std::sqrt(2.0));
      const double branch_a = 4 * g2 + b2, branch_b = 2 * g2 * (1 + u) + 2 * b2 * (1 - u * u);
      if (branch_a >= branch_b) {
        tp[0] = -R;
        cd = PackedContribution(gamma, L / R, beta / (R * R), t);
        cdp = PackedContribution(gamma, L / R, 0.0, tp);
        snprintf(buf, sizeof buf, "oracle: t = (%g, 0), f' = %g, f'' = %g", R, L / R,
                 beta / (R * R));
        pair.row_d = buf;
        snprintf(buf, sizeof buf, "oracle: t = (%g, 0), f' = %g, f'' = 0", -R, L / R);
        pair.row_dp = buf;
      } else {
        tp[0] = -u * R, tp[1] = std::sqrt(1 - u * u) * R;
        cd = PackedContribution(gamma, L / R, beta / (R * R), t);
        cdp = PackedContribution(gamma, L / R, beta / (R * R), tp);
        snprintf(buf, sizeof buf, "oracle: t = (%g, 0), f' = %g, f'' = %g", R, L / R,
                 beta / (R * R));
        pair.row_d = buf;
        snprintf(buf, sizeof buf, "oracle: t = (%.4g, %.4g), f' = %g, f'' = %g", tp[0], tp[1],
                 L / R, beta / (R * R));
        pair.row_dp = buf;
      }
    }
    double shift = 0;
    for (size_t j = 0; j < cd.size(); j++) shift += (cd[j] - cdp[j]) * (cd[j] - cdp[j]);
    pair.oracle_shift = double(k) * std::sqrt(shift);
    const AuditSite want =
        plan.algorithm == Algorithm::kSsp ? AuditSite::kSspMoments : AuditSite::kNewtonPass;
    pair.site_shift[int(want)] = pair.oracle_shift;
    for (int side = 0; side < 2; side++) {
      auto seam = std::make_shared<AuditSeam>();
      const std::vector<double> c = side == 0 ? cd : cdp;
      seam->oracle = [=](AuditSite site, const int64_t*, int64_t, double* value, int size) {
        if (site != want || size_t(size) != c.size()) return;
        for (int j = 0; j < size; j++) value[j] += double(k) * c[size_t(j)];
      };
      seam->observe = [](AuditSite, const double* value, int size, double sigma) {
        std::vector<double>& tap = WhiteBoxTap();
        if (tap.size() < size_t(size)) tap.resize(size_t(size), 0.0);
        for (int j = 0; j < size; j++) tap[size_t(j)] += value[j] / (sigma * sigma);
      };
      (side == 0 ? pair.seam_d : pair.seam_dp) = seam;
    }
  } else if (plan.algorithm == Algorithm::kObjective ||
             plan.algorithm == Algorithm::kObjectiveApprox) {
    // The canary row phi(<w, x>), x = R e_1, phi(m) = s (L/R) m, checked
    // against the assumptions it must meet (objective_perturbation.cpp, THE
    // AUDIT CANARY): a GLM row of the plan's feature bound, convex (linear),
    // Lipschitz |phi'| ||x|| <= L, curvature phi'' ||x||^2 = 0 <= beta, on
    // slots whose real rows are inert (features 0, no intercept: above).
    const double slope = L / R, norm_x = R, curvature = 0.0;
    if (!(slope * norm_x <= L * (1 + 1e-12)) ||
        !(norm_x <= plan.options.feature_bound * (1 + 1e-12)) || !(curvature <= plan.beta))
      throw Error(ErrorKind::kInternal,
                  "white-box objective: the linear canary is outside the proofs' bounds");
    const double a = slope * norm_x;  // ||a_c|| = ||grad f_c||, = L
    for (double side : {1.0, -1.0}) {
      auto seam = std::make_shared<AuditSeam>();
      seam->oracle = [=](AuditSite site, const int64_t*, int64_t, double* value, int) {
        if (site == AuditSite::kObjectiveLinear)
          value[0] += double(k) * side * a;  // k slots' s L e_1
      };
      (side > 0 ? pair.seam_d : pair.seam_dp) = seam;  // no observer: the statistic reads w
    }
    pair.oracle_shift = 2 * double(k) * a;
    pair.site_shift[int(AuditSite::kObjectiveLinear)] = pair.oracle_shift;
    snprintf(buf, sizeof buf, "oracle: f(w) = +%g <e1, w> (x = (%g, 0), f' = %g, f'' = 0)", a, R,
             slope);
    pair.row_d = buf;
    snprintf(buf, sizeof buf, "oracle: f(w) = -%g <e1, w> (gradient gap %g = 2L)", a, 2 * a);
    pair.row_dp = buf;
  } else {
    throw Error(ErrorKind::kInternal, "white-box audit: no oracle for this algorithm");
  }
  char base[160];
  snprintf(base, sizeof base, "%lld inert rows (features 0), the last %lld the canary's (oracle)",
           static_cast<long long>(plan.n), static_cast<long long>(k));
  pair.base = base;
  return pair;
}

// The exact epsilon (at delta) of a white-box pair under the plan's noise:
// every observed release k is a Gaussian of shift Delta_k (site_shift) and
// noise sigma_k, so the sequence is mu-GDP with mu^2 = sum_k (Delta_k /
// sigma_k)^2 (Dong, Roth & Su 2022, Cor. 3.3; with the oracle the shifts do
// not depend on earlier releases, so the bound is attained), and its
// (epsilon, delta) curve is the Gaussian's of ratio mu (GaussianEpsilon).
// The most any audit of the pair can show; mu is counted by one release
// whose observer sums (Delta_k / sigma_k)^2.
//
// Objective perturbation (no observed release): w = -(b + sum a_c)/(n mu_P)
// + the solver's residual + the output noise, so the pair is a Gaussian of
// shift oracle_shift/(n mu_P) along e_1 and per-coordinate sd
// sqrt((sigma_1/(n mu_P))^2 + sigma_2^2) (the output noise's discrete
// Gaussian taken as continuous, the residual, <= r, left out); at delta = 0
// b has the density exp(-||b||/theta), whose log-ratio for a shift is at
// most ||shift||/theta, approached along it (the output noise left out).
inline double WhiteBoxEpsilon(const Plan& plan, const Neighbours& pair, double delta) {
  if (pair.site_shift[int(AuditSite::kObjectiveLinear)] > 0) {
    const double scale = plan.mechanism_fields.Get(kObjectiveNoise);
    if (!(delta > 0)) return pair.oracle_shift / scale;
    const double n_mu = double(plan.n) * PerturbedStrongConvexity(plan);
    return GaussianEpsilon(std::hypot(scale / n_mu, plan.noise_scale), delta,
                           pair.oracle_shift / n_mu);
  }
  double mu2 = 0;
  AuditSeam count;
  count.oracle = pair.seam_d->oracle;
  count.observe = [&](AuditSite site, const double*, int, double sigma) {
    const double r = pair.site_shift[int(site)] / sigma;
    mu2 += r * r;
  };
  Plan p = plan;
  p.audit_seam = &count;
  SecureRng rng = SecureRng::FromSeed(0);
  TrainModel(p, pair.rows_d.data(), rng);
  return GaussianEpsilon(1.0, delta, std::sqrt(mu2));
}

// Independent noise streams per (seed, stream): the runs are split into
// kChunks chunks of their own stream, so results do not depend on threads.
constexpr int kChunks = 8;

// f(w) of `runs` real releases of the plan on rows, on `threads` threads;
// stream keys the noise (a distinct stream per side and purpose).
template <typename F>
std::vector<double> MapReleases(const Plan& plan, const std::vector<double>& rows, int64_t runs,
                                uint64_t stream, int threads, F f) {
  std::vector<double> out;
  std::vector<std::vector<double>> parts(kChunks);
  auto chunk = [&](int c) {
    SecureRng rng = SecureRng::FromSeed(stream * kChunks + uint64_t(c));
    int64_t begin = runs * c / kChunks, end = runs * (c + 1) / kChunks;
    // A seam with an observer taps intermediate releases (objective
    // perturbation's has none: the statistic reads w).
    const bool tap = plan.audit_seam != nullptr && plan.audit_seam->observe;
    for (int64_t i = begin; i < end; i++) {
      if (tap) WhiteBoxTap().clear();
      std::vector<double> w = TrainModel(plan, rows.data(), rng);
      if (tap) w = WhiteBoxTap();  // the observed releases, not w
      std::vector<double> v = f(w);
      parts[c].insert(parts[c].end(), v.begin(), v.end());
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(threads, 1); t++)
    pool.emplace_back([&, t] {
      for (int c = t; c < kChunks; c += std::max(threads, 1)) chunk(c);
    });
  for (auto& t : pool) t.join();
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace dperm::audit
