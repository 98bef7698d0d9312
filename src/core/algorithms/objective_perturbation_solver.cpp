// Objective perturbation's solver (objective_perturbation.cpp has the
// mechanism, its plan and its privacy; objective_perturbation_rdp.cpp the
// RDP curve): the perturbed objective P(w) = F(w) + lambda ||w||^2 +
// <b, w>/n and ITEM's fixed schedule on it.
//
// Solver, with a running time that does not depend on the data (a
// solver that stops at a gradient test runs longer on some
// tables than on their neighbours, and its time is observable). P is
// mu_P = (2 lambda + l2)-strongly convex and S = (beta + mu_P)-smooth.
// dperm runs ITEM, the information-theoretic exact method of Taylor &
// Drori ("An optimal gradient method for smooth strongly convex
// minimization", Math. Program. 199, 2023), from w = 0 for exactly T steps
// -- one full gradient each, step 1/S, coefficients from a scalar
// recursion in q = mu_P/S alone, no line search, no test -- and releases
// z_T. Their Theorem 3: ||z_T - w*||^2 <= ||z_0 - w*||^2/(1 + q A_T), with
// A_T the recursion's T-th term (about (1 - sqrt q)^(-2T)/sqrt q); no
// first-order method has a better worst case on this class (their Sec. 4),
// and it needs about half the steps of Nesterov's constant-momentum scheme
// (Bubeck 2015, Thm 3.18, which dperm ran before 0.7.0: ||y_T - w*||^2 <=
// (1 + S/mu_P) ||w*||^2 exp(-T/sqrt k)). ||z_0 - w*|| = ||w*|| <=
// ||grad P(0)||/mu_P (strong convexity), and grad P(0) = grad F(0) + b/n
// has norm <= G := L + ||b||/n. T must not depend on b either: given the
// output w*, b = g_S(w*) is a function of the data, so a count that
// revealed ||b|| would reveal ||g_S(w*)||. The exact sampler never returns
// a coordinate beyond 256 sigma (exact_normal.hpp), so ||b|| <= 256 sigma
// sqrt(dim) for every b it returns. With G0 = L + 256 sigma sqrt(dim)/n and
// the distance target D = tol/mu_P,
//   T = the smallest N with 1 + q A_N >= (G0/(mu_P D))^2 = (G0/tol)^2
// guarantees ||z_T - w*(b)|| <= D = tol/mu_P, tol = 1e-10 (L + sigma
// sqrt(dim)/n) (the scale of P's gradient terms, a public number), for
// every table and every b (in exact arithmetic). Which sums matter: the
// released z_T is not a sum, and the privacy of w* (its curve) uses
// no computed sum at all; the sums over rows enter only through each full
// gradient of the solver, hence only through the distance D. They are
// exact on the plan's grid (exact_sum.hpp), so each computed gradient is
// within sqrt(dim) sum_grid <= sqrt(dim) 2^-45 L of the exact one whatever
// n and the row order, against tol >= 1e-10 L (a float sum's error was up
// to n u L: 11 tol at n = 10^7). A proven bound on how ITEM
// carries such per-step errors (or the other floating-point steps')
// into z_T is not part of this argument, as before. T depends on (L, beta, l2,
// lambda, sigma, n, dim) only; the plan reports it as `iterations` and T n
// as `gradient_evaluations`, and Train does exactly that work on every
// table. What still depends on the data is the latency of single
// floating-point operations (exp, division, exact zeros and denormals in
// the loss's gradient): a residual channel, not a count, which
// bench/scripts/time/objective_timing.cpp measures (bench/reports/timing.md).
// (dperm 0.4.0 used damped Newton with Armijo backtracking for dim <= 64,
// which is faster (bench/reports/timing.md) but stopped at a gradient test
// and has no public iteration bound for the logistic loss, which is not
// self-concordant.)
#include "dperm/algorithms/objective_perturbation.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/util/errors.hpp"
#include "dperm/util/interrupt.hpp"

namespace dperm {

PerturbedObjective::PerturbedObjective(const Objective& f, double lambda, Eigen::VectorXd b)
    : f_(f), lambda_(lambda), b_over_n_(std::move(b)) {
  b_over_n_ /= double(f.n());
}

double PerturbedObjective::Value(const Eigen::VectorXd& w) const {
  return f_.Value(w) + lambda_ * w.squaredNorm() + b_over_n_.dot(w);
}

Eigen::VectorXd PerturbedObjective::Gradient(const Eigen::VectorXd& w) const {
  Eigen::VectorXd g = f_.Gradient(w);
  g += 2 * lambda_ * w + b_over_n_;
  return g;
}

Eigen::MatrixXd PerturbedObjective::Hessian(const Eigen::VectorXd& w) const {
  Eigen::MatrixXd h = f_.Hessian(w);
  h.diagonal().array() += 2 * lambda_;
  return h;
}

namespace {

// ITEM's scalar sequence (Taylor & Drori 2023, Algorithm (ITEM)): A_0 = 0,
// A_{t+1} = ((1 + q) A_t + 2 (1 + sqrt((1 + A_t)(1 + q A_t))))/(1 - q)^2,
// q = mu/S. Public: it depends on q alone.
double NextItemWeight(double a, double q) {
  return ((1 + q) * a + 2 * (1 + std::sqrt((1 + a) * (1 + q * a)))) / ((1 - q) * (1 - q));
}

// Beyond this many steps the plan takes the closed-form bound below instead
// of running the recursion (a schedule that long never finishes anyway).
constexpr double kCountedSteps = 1e8;

}  // namespace

int64_t AcceleratedSteps(double strong, double smooth, double gradient_bound, double distance) {
  // Taylor & Drori 2023, Theorem 3: ||z_N - w*||^2 <= ||z_0 - w*||^2/(1 + q A_N),
  // and ||z_0 - w*|| <= G/mu (strong convexity). T is the smallest N with
  // 1 + q A_N >= (G/(mu D))^2.
  const double q = strong / smooth;
  const double ratio = gradient_bound / (strong * distance);
  const double target = ratio * ratio;
  if (!(target > 1)) return 0;
  // A_{t+1} >= A_t/(1 - sqrt q)^2 + 2/(1 - q)^2 (sqrt((1 + A)(1 + q A)) >=
  // sqrt(q) A), so A_N >= 2 (1 - sqrt q)^(-2 (N - 1)) and
  // N = 1 + ceil(log(target/(2 q))/(-2 log(1 - sqrt q))) steps are enough.
  const double enough =
      1 + std::ceil(std::max(0.0, std::log(target / (2 * q))) / (-2 * std::log1p(-std::sqrt(q))));
  if (!(enough < 1e15))
    ThrowInvalid("the solver's step count overflows", "Use a larger l2 or epsilon.");
  if (enough > kCountedSteps) return static_cast<int64_t>(enough);
  double a = 0;
  int64_t steps = 0;
  while (1 + q * a < target) {
    a = NextItemWeight(a, q);
    steps++;
  }
  return steps;
}

Eigen::VectorXd MinimisePerturbed(const PerturbedObjective& f, double smooth, int64_t steps,
                                  const Eigen::VectorXd& start) {
  // ITEM, the information-theoretic exact method (Taylor & Drori 2023):
  //   y_t = (1 - beta_t) z_t + beta_t x_t,      x_{t+1} = y_t - grad P(y_t)/S,
  //   z_{t+1} = (1 - q delta_t) z_t + q delta_t y_t - (delta_t/S) grad P(y_t),
  // beta_t = A_t/((1 - q) A_{t+1}), delta_t = ((1 - q)^2 A_{t+1} - (1 + q) A_t)/
  // (2 (1 + q + q A_t)), x_0 = z_0 = start; it releases z_T. Exactly `steps`
  // gradients; nothing here reads a value to decide what next.
  const double q = f.strong_convexity() / smooth;
  Eigen::VectorXd x = start, z = start, y(f.dim()), g(f.dim());
  double a = 0;
  for (int64_t t = 0; t < steps; t++) {
    if ((t & 15) == 0) CheckInterrupt();
    ReportIterations(t, steps);
    const double a_next = NextItemWeight(a, q);
    const double beta = a / ((1 - q) * a_next);
    const double delta = ((1 - q) * (1 - q) * a_next - (1 + q) * a) / (2 * (1 + q + q * a));
    y = (1 - beta) * z + beta * x;
    g = f.Gradient(y);
    x = y - g / smooth;
    z = (1 - q * delta) * z + (q * delta) * y - (delta / smooth) * g;
    a = a_next;
  }
  ReportIterations(steps, steps);
  return z;
}

}  // namespace dperm
