// The audit harness's white-box canaries (audit_harness.hpp; the seam is
// include/dperm/algorithms/audit_seam.hpp).
#pragma once

#include "audit_neighbours.hpp"

namespace dperm::audit {

// ---------------------------------------------------------------------------
// White-box canaries (Case::white_box; issue 44 item 13). For four
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
// The statistic: each observed release z (noise sigma) is added into a tap
// as z / sigma^2, per release site (svrg: snapshot part, then sampled
// part; ssp, dp_newton: the packed sums). With a constant shift per release,
// sum_k z_k / sigma_k^2 is sufficient for the Gaussian likelihood ratio, and
// the pilot's Fisher discriminant on the tap (PilotMeans) weights the sites.

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
    snprintf(buf, sizeof buf, "oracle: grad f(x) = +%g e1, grad f(x~) = -%g e1 (D = %g, L = %g)", D / 2,
             D / 2, D, L);
    pair.row_d = buf;
    snprintf(buf, sizeof buf, "oracle: grad f(x) = -%g e1, grad f(x~) = +%g e1; per step the parts move by %.4g (of 2L/n) and %.4g (of 2D/b)",
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
      snprintf(buf, sizeof buf, "oracle: t = (%.4g, %.4g), f' = %g (cos = %.4g)", tp[0], tp[1], L / R, s);
      pair.row_dp = buf;
    } else {
      const double beta = plan.beta, g2 = gamma * gamma * L * L, b2 = beta * beta;
      const double u = std::min(g2 / (2 * b2), 1 / std::sqrt(2.0));
      const double branch_a = 4 * g2 + b2, branch_b = 2 * g2 * (1 + u) + 2 * b2 * (1 - u * u);
      if (branch_a >= branch_b) {
        tp[0] = -R;
        cd = PackedContribution(gamma, L / R, beta / (R * R), t);
        cdp = PackedContribution(gamma, L / R, 0.0, tp);
        snprintf(buf, sizeof buf, "oracle: t = (%g, 0), f' = %g, f'' = %g", R, L / R, beta / (R * R));
        pair.row_d = buf;
        snprintf(buf, sizeof buf, "oracle: t = (%g, 0), f' = %g, f'' = 0", -R, L / R);
        pair.row_dp = buf;
      } else {
        tp[0] = -u * R, tp[1] = std::sqrt(1 - u * u) * R;
        cd = PackedContribution(gamma, L / R, beta / (R * R), t);
        cdp = PackedContribution(gamma, L / R, beta / (R * R), tp);
        snprintf(buf, sizeof buf, "oracle: t = (%g, 0), f' = %g, f'' = %g", R, L / R, beta / (R * R));
        pair.row_d = buf;
        snprintf(buf, sizeof buf, "oracle: t = (%.4g, %.4g), f' = %g, f'' = %g", tp[0], tp[1], L / R,
                 beta / (R * R));
        pair.row_dp = buf;
      }
    }
    double shift = 0;
    for (size_t j = 0; j < cd.size(); j++) shift += (cd[j] - cdp[j]) * (cd[j] - cdp[j]);
    pair.oracle_shift = double(k) * std::sqrt(shift);
    const AuditSite want = plan.algorithm == Algorithm::kSsp ? AuditSite::kSspMoments : AuditSite::kNewtonPass;
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
inline double WhiteBoxEpsilon(const Plan& plan, const Neighbours& pair, double delta) {
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
    for (int64_t i = begin; i < end; i++) {
      if (plan.audit_seam != nullptr) WhiteBoxTap().clear();
      std::vector<double> w = TrainModel(plan, rows.data(), rng);
      if (plan.audit_seam != nullptr) w = WhiteBoxTap();  // the observed releases, not w
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
