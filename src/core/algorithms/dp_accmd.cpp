// DP-AccMD (Wang, Ye & Xu, "Differentially Private ERM Revisited: Faster and
// More General", NIPS 2017 -- seed 003 -- Section 5, Algorithm 3):
// accelerated mirror descent (linear coupling) over C = {||w||_1 <= radius}
// with noisy full gradients, for high-dimensional data. From y_0 = z_0 = 0:
//   alpha_{k+1} = (k+2)/(4 L_C),  tau_k = 1/(2 alpha_{k+1} L_C) = 2/(k+2)
//   x_{k+1} = tau_k z_k + (1 - tau_k) y_k
//   g_{k+1} = grad F(x_{k+1}) + b_{k+1},  b_{k+1} ~ N(0, sigma^2 I)
//   y_{k+1} = argmin_{y in C} L_C/2 ||y - x_{k+1}||_C^2 + <g_{k+1}, y - x_{k+1}>
//   z_{k+1} = argmin_{z in C} B_w(z, z_k) + alpha_{k+1} <g_{k+1}, z - z_k>
// and release y_T.
//
// Neighbouring relation: replace-one; n public.
//
// Privacy. Each step releases one full-batch mean gradient of the loss plus
// N(0, sigma^2 I); a row moves that mean by at most 2L/n (replace-one, L the
// per-row Lipschitz constant, the paper's G). Everything else (the l2 term's
// gradient l2 x, both argmins, the coupling) is post-processing of those T
// releases. So the release is T adaptive full-batch Gaussian steps:
// PlanGradientNoise with batch_size = n and noisy_steps = T (RDP, Mironov
// 2017 Props. 1 and 7; WBK Thm 9 reduces to the plain Gaussian at rate 1).
// Theorem 5.3: sigma^2 = c G^2 T ln(1/delta)/(n^2 eps^2) with c unstated;
// accountant 'paper' uses c = 1, raised to the calibrated sigma when that
// would not reach (eps, delta).
// Deviation: the extracted Algorithm 3 writes the y-step with the exact
// gradient grad F(x_{k+1}); that would make y_T (the output) depend on the
// data without noise. dperm feeds the same noisy g_{k+1} to both steps,
// which is what the privacy theorem's T Gaussian releases cover.
//
// Norms and constants. ||v||_C = ||v||_1/radius (the Minkowski norm of C,
// Def. 5.1), dual ||v||_C* = radius ||v||_inf. F is beta-smooth in l2 (dperm
// beta, the paper's L; plus l2 when the l2 option is set), and ||v||_2 <=
// ||v||_1 = radius ||v||_C, so F is L_C = (beta + l2) radius^2 -smooth
// w.r.t. ||.||_C (Lemma 5.1 with the ball's l2 radius in place of its
// diameter ||C||_2 = 2 radius: tighter by 4, equally valid for a centrally
// symmetric C). L_C only sets step sizes, never the noise.
// The y-step is therefore argmin_{||y||_1 <= radius} (beta + l2)/2
// ||y - x||_1^2 + <g, y>, solved exactly by L1QuadraticStep (below).
//
// Mirror map: w(x) = k/(2 (p-1)) ||x/radius||_p^2 with p = 1 + 1/ln(dim)
// (p = 2 when that exceeds 2, i.e. dim <= 7) and k = dim^(2 (1 - 1/p)).
// 1/2 ||u||_p^2 is (p-1)-strongly convex w.r.t. ||.||_p for p in (1, 2]
// (Ball, Carlen & Lieb 1994), and ||u||_1 <= dim^(1-1/p) ||u||_p (Hoelder),
// so k/(2 (p-1)) ||u||_p^2 is 1-strongly convex w.r.t. ||u||_1, i.e. w is
// 1-strongly convex w.r.t. ||x||_C (u = x/radius). With p = 1 + 1/ln(dim),
// k = exp(2 ln dim/(1 + ln dim)) < e^2. B_w(x*, 0) = w(x*) <= range =
// k/(2 (p-1)) over C (||u||_p <= ||u||_1 <= 1), about e^2 ln(dim)/2.
//
// T (Theorem 5.4, constants 1): the noisy linear coupling's error is about
// L_C B/T^2 + T sigma^2 W/L_C with W = E(max_{w in C} <w, v>)^2 =
// O(G_C^2 + ||C||_2^2) (Lemma 5.2); with sigma^2 ~ G^2 T ln(1/delta)/(n eps)^2
// the two balance at T = sqrt(L_C sqrt(B) n eps / (G sqrt(ln(1/delta)) sqrt(W))),
// which gives Theorem 5.4's bound sqrt(B) sqrt(G_C^2 + ||C||_2^2) G
// sqrt(ln(1/delta))/(n eps) and its n^1.5 gradient complexity. dperm takes
// B = range, G_C = radius sqrt(2 ln(2 dim)) (>= radius E||v||_inf, the
// Gaussian width of the L1 ball) and ||C||_2 = 2 radius. `iterations`
// overrides T.
//
// Options: l1 is refused (the constraint replaces it); batch_size (full
// batch by Theorem 5.3), ls_sigma and step_size (the steps follow L_C) are
// refused. l2 is allowed: F + l2/2 ||w||^2 is still convex and
// (beta + l2)-smooth over C, which is all Theorem 5.4 uses of F (its
// Lipschitz constant on C only changes the utility bound, to G + l2 radius),
// and the l2 gradient is data-independent, so privacy is unchanged. The
// ball constrains every coordinate, intercepts included (like l1 and l2).
//
// radius: the option, or kDefaultRadius = 10 (below) with a note in the plan.
#include "dperm/algorithms/dp_accmd.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "dperm/plan/plan_noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"

namespace dperm {
namespace {

// The L1 radius when the option is not given: a public default, chosen on
// the benchmark's datasets (bench/scripts/algorithms/algorithms.py, bench/reports/algorithms.md):
// 10 keeps most of the gain of a larger radius while bounding the
// smoothness L_C = beta radius^2 that sets the steps.
const double kDefaultRadius = 10.0;
// Above this T a plan is capped (each iteration is a full pass).
const int64_t kMaxDefaultIterations = 100000;
// Bisection steps of the z-step's multiplier.
const int kBisectionSteps = 200;

// ||v||_p computed without overflow: max|v| ||v/max|v|||_p.
double PNorm(const Eigen::VectorXd& v, double p, double* scale_out = nullptr) {
  double s = v.lpNorm<Eigen::Infinity>();
  if (scale_out != nullptr) *scale_out = s;
  if (s == 0) return 0;
  double sum = 0;
  for (Eigen::Index j = 0; j < v.size(); j++) sum += std::pow(std::abs(v(j)) / s, p);
  return s * std::pow(sum, 1 / p);
}

// Keeps a point in C against rounding: scales it back onto the ball.
void KeepInBall(Eigen::VectorXd& v, double radius) {
  double l1 = v.lpNorm<1>();
  if (l1 > radius) v *= radius / l1;
}

}  // namespace

L1Mirror MakeL1Mirror(int dim, double radius) {
  L1Mirror m;
  m.p = dim >= 2 ? std::min(2.0, 1 + 1 / std::log(double(dim))) : 2.0;
  m.k = std::pow(double(dim), 2 * (1 - 1 / m.p));
  m.range = m.k / (2 * (m.p - 1));
  m.coef = m.range / (radius * radius);
  return m;
}

Eigen::VectorXd MirrorGradient(const L1Mirror& m, const Eigen::VectorXd& z) {
  // 2 coef ||z||_p^(2-p) |z_j|^(p-1) sign(z_j) = 2 coef s ||z/s||_p^(2-p)
  // |z_j/s|^(p-1) sign(z_j), s = max|z|.
  Eigen::VectorXd g = Eigen::VectorXd::Zero(z.size());
  double s = z.lpNorm<Eigen::Infinity>();
  if (s == 0) return g;
  double np = PNorm(z / s, m.p);
  double factor = 2 * m.coef * s * std::pow(np, 2 - m.p);
  for (Eigen::Index j = 0; j < z.size(); j++)
    if (z(j) != 0) g(j) = std::copysign(factor * std::pow(std::abs(z(j)) / s, m.p - 1), z(j));
  return g;
}

// The z-step. With u = |z| aligned with sign(theta), the problem is
// min coef ||u||_p^2 - <|theta|, u> over u >= 0, sum u <= radius. KKT: for
// a multiplier nu >= 0, 2 coef ||u||_p^(2-p) u_j^(p-1) = (|theta_j| - nu)_+,
// i.e. u proportional to v(nu) = (|theta| - nu)_+^(q-1), q - 1 = 1/(p-1).
// Writing m = max|theta| - nu and v~ = ((|theta| - nu)_+/m)^(q-1) in [0, 1]:
//  * nu = 0 (constraint slack): u = m v~ / (2 coef ||v~||_p^(2-p)) (the
//    unconstrained minimiser), feasible iff H(0) <= 0 where
//    H(nu) = m sum v~ - 2 coef radius ||v~||_p^(2-p);
//  * otherwise sum u = radius: u = radius v~/sum v~ with H(nu) = 0 (the
//    scale condition, using (q-1)(p-1) = 1). H(0) > 0 and H < 0 as nu ->
//    max|theta| (m -> 0), so bisection finds a root; a root gives a KKT
//    point of this strictly convex problem, hence its unique minimiser.
Eigen::VectorXd MirrorArgmin(const L1Mirror& m, const Eigen::VectorXd& theta, double radius) {
  const Eigen::Index d = theta.size();
  Eigen::VectorXd a = theta.cwiseAbs();
  const double amax = a.maxCoeff();
  Eigen::VectorXd z = Eigen::VectorXd::Zero(d);
  if (!(amax > 0)) return z;
  const double qm1 = 1 / (m.p - 1);
  Eigen::VectorXd v(d);
  // Fills v = v~(nu); returns H(nu) and the sums.
  auto evaluate = [&](double nu, double* sum1, double* normp) {
    double mm = amax - nu;
    for (Eigen::Index j = 0; j < d; j++) {
      double r = (a(j) - nu) / mm;
      v(j) = r > 0 ? std::pow(std::min(r, 1.0), qm1) : 0.0;
    }
    *sum1 = v.sum();
    *normp = PNorm(v, m.p);
    return mm * *sum1 - 2 * m.coef * radius * std::pow(*normp, 2 - m.p);
  };
  double s1 = 0, np = 0;
  if (evaluate(0, &s1, &np) <= 0) {
    double scale = amax / (2 * m.coef * std::pow(np, 2 - m.p));
    for (Eigen::Index j = 0; j < d; j++) z(j) = std::copysign(scale * v(j), theta(j));
    KeepInBall(z, radius);
    return z;
  }
  double lo = 0, hi = amax;
  for (int it = 0; it < kBisectionSteps && hi - lo > 1e-16 * amax; it++) {
    double mid = 0.5 * (lo + hi);
    if (evaluate(mid, &s1, &np) > 0) lo = mid;
    else hi = mid;
  }
  evaluate(0.5 * (lo + hi), &s1, &np);
  for (Eigen::Index j = 0; j < d; j++) z(j) = std::copysign(radius * v(j) / s1, theta(j));
  KeepInBall(z, radius);
  return z;
}

// The y-step: min over ||y||_1 <= radius of a/2 ||y - x||_1^2 + <g, y>.
// Flip coordinates so every g_j = -h_j <= 0 (both norms are invariant), and
// let h* = max h_j at j*, slack s = radius - ||x||_1 >= 0, t = ||y - x||_1.
// Moving y_j costs |dy_j| of t; the useful moves are
//   B: raise y_{j*} (gain h* per unit, uses one unit of slack when moving
//      away from 0) -- raising any other coordinate gains less for the same
//      costs;
//   A_j (x_j < 0): raise y_j towards 0 (gain h_j, frees one unit of slack),
//      capacity |x_j|;
//   C_j (x_j > 0): lower y_j towards 0 (gain -h_j, frees one unit of slack),
//      capacity x_j.
// (This is an exact LP description: every feasible y maps to move amounts
// with the same gain and costs, and every choice of amounts gives a
// feasible y with at least that gain and at most those costs.) With F the
// slack freed -- cheapest first, A and C moves sorted by gain descending,
// Phi(F) their total gain, phi = Phi' -- and push = t - F units of B,
// slack bounds push <= s + F and the problem is
//   min over (t, F) of a/2 t^2 - h* min(t - F, s + F) - Phi(F),
// jointly convex. For fixed F the best t is min(h*/a, s + 2F) (at least F).
// If F >= F_b = max(0, (h*/a - s)/2) then t = h*/a and the derivative in F
// is h* - phi(F) >= 0: no more freeing pays. Below F_b, t = s + 2F and the
// derivative 2a (s + 2F) - h* - phi(F) increases in F: its zero (or the
// kink where it changes sign) is found by one pass over the sorted moves.
Eigen::VectorXd L1QuadraticStep(const Eigen::VectorXd& x, const Eigen::VectorXd& g, double a,
                                double radius) {
  const Eigen::Index d = x.size();
  Eigen::VectorXd flip(d), xs(d), h(d);
  for (Eigen::Index j = 0; j < d; j++) {
    flip(j) = g(j) > 0 ? -1.0 : 1.0;
    h(j) = std::abs(g(j));
    xs(j) = flip(j) * x(j);
  }
  Eigen::Index jstar = 0;
  const double hmax = h.maxCoeff(&jstar);
  if (!(hmax > 0)) return x;
  const double slack = std::max(0.0, radius - x.lpNorm<1>());
  struct Move {
    double rate, cap;
    Eigen::Index j;
  };
  std::vector<Move> moves;
  for (Eigen::Index j = 0; j < d; j++) {
    if (xs(j) < 0) moves.push_back({h(j), -xs(j), j});
    else if (xs(j) > 0) moves.push_back({-h(j), xs(j), j});
  }
  std::stable_sort(moves.begin(), moves.end(),
                   [](const Move& u, const Move& v) { return u.rate > v.rate; });
  const double f_b = std::max(0.0, (hmax / a - slack) / 2);
  double F = 0, start = 0;
  bool found = false;
  for (const Move& mv : moves) {
    if (start >= f_b) {
      F = f_b;
      found = true;
      break;
    }
    if (2 * a * (slack + 2 * start) - hmax - mv.rate >= 0) {  // kink at start
      F = start;
      found = true;
      break;
    }
    double root = (hmax + mv.rate - 2 * a * slack) / (4 * a);
    double end = std::min(start + mv.cap, f_b);
    if (root < end) {
      F = root;
      found = true;
      break;
    }
    if (start + mv.cap >= f_b) {
      F = f_b;
      found = true;
      break;
    }
    start += mv.cap;
  }
  if (!found) F = std::min(start, f_b);  // every freeing move used (or none exists)
  const double t = std::max(F, std::min(hmax / a, slack + 2 * F));
  const double push = t - F;
  Eigen::VectorXd ys = xs;
  double left = F;
  for (const Move& mv : moves) {
    if (!(left > 0)) break;
    double amount = std::min(mv.cap, left);
    ys(mv.j) += xs(mv.j) < 0 ? amount : -amount;  // towards 0
    left -= amount;
  }
  ys(jstar) += push;
  Eigen::VectorXd y = flip.cwiseProduct(ys);
  KeepInBall(y, radius);
  return y;
}

Plan DpAccmd::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  const Algorithm a = Algorithm::kDpAccmd;
  Plan p = BasePlan(options, loss, a, n, d);
  const Options& o = p.options;
  p.radius = o.radius > 0 ? o.radius : kDefaultRadius;
  if (!(o.radius > 0))
    AddNote(p, "radius not given: the L1 ball ||w||_1 <= " + FormatNumber(p.radius) + " is used");
  p.norm_bound = p.radius;
  const L1Mirror mirror = MakeL1Mirror(p.dim, p.radius);
  const double smooth = p.beta + p.mu;
  const double l_c = smooth * p.radius * p.radius;  // smoothness w.r.t. ||.||_C
  p.step_size = 1 / (4 * l_c);                      // alpha_{k+1} = (k+2) step_size
  p.max_step_size = p.step_size;
  if (o.iterations > 0) {
    p.iterations = o.iterations;
    p.iterations_rule = "given";
  } else {
    // Theorem 5.4 with constants 1 (derivation above).
    double width = p.radius * std::sqrt(2 * std::log(2.0 * p.dim));  // G_C
    double diameter = 2 * p.radius;                                  // ||C||_2
    double w_term = width * width + diameter * diameter;
    double t2 = l_c * std::sqrt(mirror.range) * double(n) * o.epsilon /
                (p.L * std::sqrt(std::log(1 / o.delta)) * std::sqrt(w_term));
    p.iterations = CapIterations(p, std::sqrt(t2), kMaxDefaultIterations);
    p.iterations_rule =
        "Theorem 5.4: T = sqrt(L_C sqrt(B_w) n eps / (G sqrt(ln(1/delta)) sqrt(G_C^2 + ||C||_2^2)))";
  }
  p.noisy_steps = p.iterations;
  p.batch_size = n;
  // Theorem 5.3 with c = 1: sigma^2 = G^2 T ln(1/delta) / (n^2 eps^2).
  double paper =
      p.L * std::sqrt(double(p.iterations) * std::log(1 / o.delta)) / (double(n) * o.epsilon);
  PlanGradientNoise(p, paper, "sigma^2 = G^2 T ln(1/delta) / (n^2 epsilon^2) (Theorem 5.3, c = 1)");
  return p;
}

Eigen::VectorXd DpAccmd::Train(const Plan& plan, const Objective& objective, SecureRng& rng) const {
  const double radius = plan.radius;
  const L1Mirror mirror = MakeL1Mirror(plan.dim, radius);
  const double smooth = plan.beta + plan.mu;
  const double l_c = smooth * radius * radius;
  Eigen::VectorXd y = Eigen::VectorXd::Zero(plan.dim), z = y, x(plan.dim), g(plan.dim);
  for (int64_t k = 0; k < plan.iterations; k++) {
    if ((k & 15) == 0) CheckInterrupt();
    ReportIterations(k, plan.iterations);
    const double alpha = double(k + 2) / (4 * l_c);
    const double tau = 2.0 / double(k + 2);
    x = tau * z + (1 - tau) * y;
    // The step's one release: the mean gradient plus N(0, sigma^2 I)
    // (Theorem 5.3); the l2 term's gradient is data-independent.
    g = objective.Gradient(x);
    AddPlannedNoise(plan, rng, g.data());  // snapped discrete Gaussian (noise.hpp)
    y = L1QuadraticStep(x, g, smooth, radius);
    z = MirrorArgmin(mirror, MirrorGradient(mirror, z) - alpha * g, radius);
  }
  ReportIterations(plan.iterations, plan.iterations);
  return y;
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kDpAccmd>() {
  static const DpAccmd mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kDpAccmd, mechanism);
    s.model_vectors = 7;  // x, y, z, g and the mirror step's three temporaries
    s.row_arrays = 0;
    s.options = {"radius", "iterations"};
    s.refusals = {{"l1", "its L1-ball constraint (radius) replaces the l1 penalty"},
                  {"batch_size", "it uses the full batch (Theorem 5.3)"},
                  {"step_size", "its steps alpha_k = (k+2)/(4 L_C) follow the smoothness"}};
    s.needs_delta = "it adds Gaussian noise to every step";
    s.streams = true;
    return s;
  }();
  return spec;
}

}  // namespace dperm
