// Helpers shared by the unit tests of objective perturbation and its
// efficient and pure versions (test_objective_perturbation.cpp,
// test_objective_perturbation_plan.cpp, test_objective_pure.cpp): options,
// logistic rows and neighbours, the paper's step count and RDP curve written
// out independently of src/core, the exact minimiser (Newton) and an
// objective that counts the work a mechanism asks of it.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/algorithms/mechanism.hpp"
#include "dperm/algorithms/objective_perturbation.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/release/train_model.hpp"
#include "test_helpers.hpp"

namespace dperm::testing::objective {

inline Options ObjOpts(Algorithm a, double epsilon, double delta, double l2 = 0,
                       Accountant accountant = Accountant::kTight) {
  Options o = dperm::testing::Opts(epsilon, delta, l2, true, accountant);
  o.algorithm = a;
  return o;
}

// Logistic rows (features clipped to norm 1, then a +-1 label).
inline std::vector<double> LogisticRows(int n, int d, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unif(0, 1);
  std::vector<double> truth(d + 1);
  for (double& v : truth) v = normal(gen);
  std::vector<double> rows(size_t(n) * (d + 1)), raw(d);
  for (int i = 0; i < n; i++) {
    for (double& v : raw) v = 0.8 * normal(gen);
    double* r = &rows[size_t(i) * (d + 1)];
    dperm::ClipRow(raw.data(), d, 1.0, r);
    double m = 0.2 * truth[d];
    for (int j = 0; j < d; j++) m += truth[j] * r[j];
    r[d] = unif(gen) < 1 / (1 + std::exp(-4 * m)) ? 1.0 : -1.0;
  }
  return rows;
}

// ITEM's step count written out here (Taylor & Drori 2023, Thm 3): the
// smallest N with 1 + q A_N >= ratio^2, A_0 = 0, A_{t+1} = ((1 + q) A_t +
// 2 (1 + sqrt((1 + A_t)(1 + q A_t))))/(1 - q)^2.
inline int64_t ItemSteps(double q, double ratio) {
  long double a = 0;
  int64_t n = 0;
  while (1 + q * a < (long double)ratio * ratio) {
    a = ((1 + q) * a + 2 * (1 + std::sqrt((1 + a) * (1 + q * a)))) / ((1 - q) * (1 - q));
    n++;
  }
  return n;
}

// log E[exp(t R)], R ~ Rayleigh, by Simpson's rule on the density r e^{-r^2/2}
// (independent of the closed form in the library).
inline double RayleighMgfNumeric(double t) {
  const double hi = t + 40;
  const int steps = 20000;
  const double h = hi / steps;
  double sum = 0;
  for (int i = 0; i <= steps; i++) {
    double r = i * h;
    double f = r * std::exp(t * r - r * r / 2);
    sum += (i == 0 || i == steps ? 1 : (i % 2 ? 4 : 2)) * f;
  }
  return std::log(sum * h / 3);
}

// The RDP curve written from the derivation: eps_J + kappa^2/2 +
// log E[exp((alpha-1) kappa R)]/(alpha-1) (+ alpha ratio^2/2).
inline std::vector<double> Curve(double kappa, double eps_j, double ratio) {
  std::vector<double> c;
  for (double a : dperm::LedgerOrders())
    c.push_back(eps_j + kappa * kappa / 2 + RayleighMgfNumeric((a - 1) * kappa) / (a - 1) +
                a * ratio * ratio / 2);
  return c;
}

// rows with the last one replaced by a random point on the unit sphere,
// labelled +1 on odd trials and -1 on even ones (a replace-one neighbour).
inline std::vector<double> WithLastRowReplaced(const std::vector<double>& rows, int n, int d,
                                               std::mt19937_64& gen, int trial,
                                               Eigen::VectorXd* x_out = nullptr) {
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> other = rows;
  Eigen::VectorXd x(d);
  for (int j = 0; j < d; j++) x(j) = normal(gen);
  x /= x.norm();
  for (int j = 0; j < d; j++) other[size_t(n - 1) * (d + 1) + j] = x(j);
  other[size_t(n - 1) * (d + 1) + d] = trial % 2 ? 1.0 : -1.0;
  if (x_out != nullptr) *x_out = x;
  return other;
}

// log det of a symmetric positive definite matrix (Cholesky).
inline double LogDet(const Eigen::MatrixXd& h) {
  return 2 * h.llt().matrixL().toDenseMatrix().diagonal().array().log().sum();
}

// The minimiser by damped Newton on F + lambda||w||^2 + <b, w>/n built
// independently: an objective with l2 + 2 lambda, plus the linear term.
inline Eigen::VectorXd NewtonMinimiser(const dperm::Objective& f, const Eigen::VectorXd& b_over_n) {
  Eigen::VectorXd w = Eigen::VectorXd::Zero(f.dim());
  auto value = [&](const Eigen::VectorXd& v) { return f.Value(v) + b_over_n.dot(v); };
  for (int it = 0; it < 200; it++) {
    Eigen::VectorXd g = f.Gradient(w) + b_over_n;
    if (g.norm() < 1e-14) break;
    Eigen::VectorXd step = f.Hessian(w).partialPivLu().solve(g);
    double t = 1, fw = value(w);
    if (g.norm() > 1e-6)
      while (value(w - t * step) > fw - 1e-4 * t * g.dot(step) && t > 1e-10) t /= 2;
    w -= t * step;
  }
  return w;
}

struct Perturbed {
  std::unique_ptr<dperm::Objective> f;        // the plan's objective (l2 only)
  std::unique_ptr<dperm::Objective> f_total;  // with l2 + 2 lambda
  Perturbed(const Plan& p, const std::vector<double>& rows) {
    f = dperm::MakeObjective(p, rows.data());
    Plan q = p;
    q.mu = p.mu + 2 * p.mechanism_fields.Get(dperm::kObjectiveLambda);
    f_total = dperm::MakeObjective(q, rows.data());
  }
};

inline Eigen::VectorXd Train(const Plan& p, const std::vector<double>& rows, uint64_t seed) {
  SecureRng rng = SecureRng::FromSeed(seed);
  std::vector<double> w = dperm::TrainModel(p, rows.data(), rng);
  return Eigen::Map<Eigen::VectorXd>(w.data(), static_cast<Eigen::Index>(w.size()));
}

// An objective that counts the work asked of it: per-row gradients (a
// full gradient counts n), loss values and Hessians. Wrapped around the
// table's objective, it measures what the mechanisms' Train really does.
class CountingObjective final : public dperm::Objective {
 public:
  explicit CountingObjective(const dperm::Objective& f) : Objective(f.l2(), f.l1()), f_(f) {}
  int dim() const override { return f_.dim(); }
  Eigen::Index n() const override { return f_.n(); }
  double LossValue(const Eigen::VectorXd& w) const override {
    values++;
    return f_.LossValue(w);
  }
  Eigen::VectorXd LossGradient(const Eigen::VectorXd& w) const override {
    full_gradients++;
    row_gradients += f_.n();
    return f_.LossGradient(w);
  }
  void AddRowGradients(const Eigen::VectorXd& w, const int64_t* rows, int64_t m,
                       Eigen::VectorXd& sum) const override {
    row_gradients += m;
    f_.AddRowGradients(w, rows, m, sum);
  }
  Eigen::MatrixXd LossHessian(const Eigen::VectorXd& w) const override {
    hessians++;
    return f_.LossHessian(w);
  }
  mutable int64_t values = 0, full_gradients = 0, row_gradients = 0, hessians = 0;

 private:
  const dperm::Objective& f_;
};

struct Work {
  int64_t values, full_gradients, row_gradients, hessians;
  bool operator==(const Work& o) const {
    return values == o.values && full_gradients == o.full_gradients &&
           row_gradients == o.row_gradients && hessians == o.hessians;
  }
};

// Trains `mechanism` by `plan` on rows through a CountingObjective.
inline Work Count(const dperm::Mechanism& mechanism, const Plan& plan,
                  const std::vector<double>& rows, uint64_t seed, Eigen::VectorXd* w = nullptr) {
  auto f = dperm::MakeObjective(plan, rows.data());
  CountingObjective counting(*f);
  SecureRng rng = SecureRng::FromSeed(seed);
  Eigen::VectorXd out = mechanism.Train(plan, counting, rng);
  if (w != nullptr) *w = out;
  return {counting.values, counting.full_gradients, counting.row_gradients, counting.hessians};
}

// A neighbouring pair crafted to converge at very different speeds (issue
// 10, item 8): S holds pairs (x, +1), (x, -1), so grad F(0) = 0 and, with
// the noise off, the minimiser is 0 (a solver with a gradient test stops at
// once); S' flips one label (a replaced row), which moves the minimiser
// far from 0. The mechanisms must do the same work on both, the plan's.
inline std::vector<double> SymmetricRows(int pairs, int d, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> rows, raw(d), x(d);
  for (int i = 0; i < pairs; i++) {
    for (double& v : raw) v = normal(gen);
    dperm::ClipRow(raw.data(), d, 1.0, x.data());
    for (double label : {1.0, -1.0}) {
      rows.insert(rows.end(), x.begin(), x.end());
      rows.push_back(label);
    }
  }
  return rows;
}

}  // namespace dperm::testing::objective
