// TEST-ONLY WHITE-BOX AUDIT SEAM (issue 44 item 13: "an auditor with the
// power to see a factor of two"). Nothing in production sets it: every
// Plan is made with Plan::audit_seam = nullptr (plan.hpp), no SQL entry
// point or serialised plan carries it, and with it null each release site
// below costs one pointer test and behaves exactly as before (same draws
// from the rng, same arithmetic). Only bench/lib/audit_whitebox.hpp,
// test/unit/test_audit.cpp and test/unit/test_objective_audit_seam.cpp point
// it at a seam, on their own copy of a plan.
//
// Why. An empirical audit through real loss rows can only show the privacy
// loss of the pair those rows attain, and for six mechanisms no pair of real
// rows attains the sensitivity the noise is calibrated for
// (bench/reports/audit.md, "What cannot be flagged"). The privacy proofs
// never use the loss beyond its bounds, so a canary that attains the bounds
// through an adversarial per-row oracle is inside the proofs' assumptions,
// and an auditor that reads a noisy intermediate release (not only the
// final w) measures a valid lower bound on the mechanism's epsilon as
// planned: the final w is post-processing of the sequence of releases, and
// the plan charges the sequence.
//
// Two hooks, both optional, both called on the training thread (an audit
// running releases on several threads must make them thread-safe):
//  * oracle: called with a release site's noiseless value just before its
//    noise is drawn (kObjectiveLinear: with the drawn linear term b, see
//    there), and the rows the value is computed over; it may add to
//    the value the difference between its own contribution for rows it
//    owns and their real one. Contract (what keeps it inside the proof):
//    each per-row term it substitutes obeys the bound the site's
//    sensitivity derivation assumes (listed per site below).
//  * observe: called with the value as released (noise added, snapped) and
//    the scale sigma of the noise that was added to it.
#pragma once
#include <cstdint>
#include <functional>

namespace dperm {

enum class AuditSite : int {
  // RunSvrg (svrg_common.cpp), every inner step: the snapshot part
  // v~ = 1/n sum_i grad f_i(x~) (rows = nullptr, count = n), noise
  // sigma_1 = SvrgPartSigma(sigma, f, true). Bound: ||grad f_i|| <= L.
  kSvrgSnapshot = 0,
  // RunSvrg, every inner step: the sampled part
  // 1/b sum_{i in B} (grad f_i(x) - grad f_i(x~)) (rows = the batch,
  // count = b), noise sigma_2 = SvrgPartSigma(sigma, f, false). Bounds:
  // ||grad f_i|| <= L at x and at x~, ||grad f_i(x) - grad f_i(x~)|| <= D
  // (SvrgRowRange), with grad f_i(x~) the same value as in kSvrgSnapshot of
  // the same epoch.
  kSvrgSampled = 1,
  // ReleaseMoments (ssp.cpp): the packed sums v = (gamma b, u(A)) over all
  // rows (rows = nullptr, count = n), noise plan.noise_scale. Per-row
  // bounds (ssp.cpp, THE RELEASE): ||t|| <= R, |f'(0, y)| <= L / R.
  kSspMoments = 2,
  // ReleaseCurvatureSums (dp_newton.cpp), pass k: the packed sums
  // (gamma b, u(A)) at w_k over all rows (rows = nullptr, count = n), noise
  // sigma_k. Per-row bounds (dp_newton.cpp, THE SENSITIVITY): |f'| ||t|| <= L,
  // 0 <= f'' ||t||^2 <= beta.
  kNewtonPass = 3,
  // ObjectivePerturbation::Train (objective_perturbation.cpp) and
  // ObjectiveApprox::Train (objective_approx.cpp), once per release, just
  // after b is drawn: value = b (rows = nullptr, count = n), the coefficients
  // of P's linear term <b, w>/n; no observe (the statistic is read from the
  // release w itself). A row whose loss is linear, f_c(w) = <a_c, w>, enters
  // F = 1/n sum f_i + l2/2 ||w||^2 as <a_c, w>/n: exactly (up to one
  // rounding) as a_c added to b, in P's value, gradient and Hessian (0)
  // alike, at every w and for both solvers (ITEM's full gradients; SVRG's
  // snapshot gradients, while its per-row differences of a linear row are 0).
  // The oracle adds sum a_c over the slots it owns, whose real rows must
  // contribute nothing (features 0 and no intercept column: a constant
  // value, gradient 0, Hessian 0), so that a_c is the slot's whole loss.
  // Bound (objective_perturbation.cpp, THE AUDIT CANARY): ||a_c|| <= L,
  // a_c = (L/R) x with ||x|| = R (a generalised linear row phi(<w, x>),
  // phi(m) = (L/R) m: convex, |phi'| R = L, phi'' = 0).
  kObjectiveLinear = 4,
};
// The number of sites (Neighbours::site_shift in the audit harness).
inline constexpr int kAuditSites = 5;

struct AuditSeam {
  std::function<void(AuditSite site, const int64_t* rows, int64_t count, double* value, int size)>
      oracle;
  std::function<void(AuditSite site, const double* value, int size, double sigma)> observe;
};

// The two hooks at one release site; a null seam (every production plan)
// does nothing.
inline void AuditOracle(const AuditSeam* seam, AuditSite site, const int64_t* rows, int64_t count,
                        double* value, int size) {
  if (seam != nullptr && seam->oracle) seam->oracle(site, rows, count, value, size);
}
inline void AuditObserve(const AuditSeam* seam, AuditSite site, const double* value, int size,
                         double sigma) {
  if (seam != nullptr && seam->observe) seam->observe(site, value, size, sigma);
}

}  // namespace dperm
