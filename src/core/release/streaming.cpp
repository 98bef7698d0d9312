// Per-pass sums and the streaming objective (streaming.hpp).
#include "dperm/release/streaming.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "dperm/rows/exact_sum.hpp"
#include "dperm/rows/packed_row.hpp"
#include "dperm/rows/row_kernels.hpp"
#include "dperm/losses/loss.hpp"
#include "dperm/losses/loss_spec.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/algorithms/ssp.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/rows/row_parts.hpp"

namespace dperm {
namespace {

// Largest d and K a spec may carry (the plans' own caps are lower).
const double kMaxSpecDim = 100000000;

// Adds the gradient c x (and c for the intercept) of a row to the low
// limbs `lo`, each coordinate rounded to the grid (exact_sum.hpp).
inline void AddScaledRow(const PassSpec& s, double c, const double* __restrict x,
                         double* __restrict lo) {
  const double t = c * s.sum_inv;  // exact: sum_inv is a power of two
  LimbAddScaled(lo, t, x, s.d);
  if (s.fit_intercept) lo[s.d] += RoundToGrid(t);
}

// Counts a row's additions to the low limbs, and moves their multiples of
// 2^32 to the high limbs every kLimbWindow rows, so that no low limb
// reaches 2^53 (exact_sum.hpp).
inline void EndRow(const PassSpec& s, double* state) {
  if (++state[2] >= kLimbWindow) {
    const int sums = s.sums();
    LimbNormalise(state + kPassStateHeader, state + kPassStateHeader + sums, sums);
    state[2] = 0;
  }
}

// AddPackedRow's sink over the state's low limbs (exact_sum.hpp): the
// integers ExactSum::AddScaled and Add round to.
struct LimbSink {
  double* lo;
  double inv;
  void AddScaled(int first, double c, const double* x, int d, bool intercept) {
    const double t = c * inv;  // exact: inv is a power of two
    LimbAddScaled(lo + first, t, x, d);
    if (intercept) lo[first + d] += RoundToGrid(t);
  }
  void Add(int j, double v) { lo[j] += RoundToGrid(v * inv); }
};

// <w, x> (+ b): the margin of a binary model, or one class's score, in
// row_kernels.hpp's order (four independent sums: one chain of d dependent
// additions was the latency floor of a pass's per-row work), the in-memory
// objective's order too.
inline double Margin(const PassSpec& s, const double* w, const double* x) {
  double m = FourSumDot(w, x, s.d);
  if (s.fit_intercept) m += w[s.d];
  return m;
}

// The loss's per-row kernel (loss_spec.hpp): the spec's cached table entry.
inline const LossSpec& Kernel(const PassSpec& s) {
  return s.loss_spec != nullptr ? *s.loss_spec : LossSpecFor(s.loss);
}

// The rest of a row's step once its scores (one margin, or K class scores)
// are in `scores`: the loss's kernel turns them into df/ds_k, and each
// class's gradient df/ds_k [x, 1] is added to its limbs; the loss value too
// when the pass sums it.
inline void AddRowScores(const PassSpec& s, const double* x, double label, double* state,
                         double* scores) {
  LossParams params;
  params.huber_delta = s.huber_delta;
  params.target_bound = s.target_bound;
  params.classes = s.classes;
  const double value = Kernel(s).RowKernel(params, scores, label, s.with_loss);
  if (s.with_loss) state[3] += value;
  double* grad = state + kPassStateHeader;
  const int per_class = s.d + (s.fit_intercept ? 1 : 0);
  for (int k = 0; k < std::max(s.classes, 1); k++)
    AddScaledRow(s, scores[k], x, grad + k * per_class);
}

}  // namespace

int PassSpec::dim() const { return (d + (fit_intercept ? 1 : 0)) * std::max(classes, 1); }

int PassSpec::sums() const { return curvature_weight > 0 ? int(PackedCount(dim())) : dim(); }

PassSpec PassSpecFor(const Plan& plan) {
  PassSpec s;
  s.loss = plan.loss;
  s.d = plan.d;
  s.fit_intercept = plan.options.fit_intercept;
  s.feature_bound = plan.options.feature_bound;
  s.huber_delta = plan.options.huber_delta;
  s.target_bound = plan.options.target_bound;
  s.classes = plan.classes;
  s.sum_grid = plan.sum_grid;
  s.sum_inv = 1 / plan.sum_grid;
  s.loss_spec = &LossSpecFor(plan.loss);
  return s;
}

void EncodePassSpec(const PassSpec& s, double* out) {
  out[0] = static_cast<double>(static_cast<int>(s.loss));
  out[1] = s.d;
  out[2] = s.fit_intercept ? 1 : 0;
  out[3] = s.feature_bound;
  out[4] = s.huber_delta;
  out[5] = s.classes;
  out[6] = s.target_bound;
  out[kPassSpecIndexWithLoss] = s.with_loss ? 1 : 0;
  out[kPassSpecIndexSumGrid] = std::ilogb(s.sum_grid);
  out[kPassSpecIndexCurvature] = s.curvature_weight;
}

bool DecodePassSpec(const double* in, int size, PassSpec* s) {
  if (size != kPassSpecSize) return false;
  for (int i = 0; i < size; i++)
    if (!std::isfinite(in[i])) return false;
  if (in[0] < 0 || in[0] >= double(AllLosses().size()) || in[0] != std::floor(in[0])) return false;
  if (in[1] < 0 || in[1] > kMaxSpecDim || in[1] != std::floor(in[1])) return false;
  if (in[2] != 0 && in[2] != 1) return false;
  if (!(in[3] > 0) || !(in[4] > 0) || !(in[6] > 0)) return false;
  if (in[5] < 0 || in[5] > kMaxSpecDim || in[5] != std::floor(in[5])) return false;
  if (in[kPassSpecIndexWithLoss] != 0 && in[kPassSpecIndexWithLoss] != 1) return false;
  // The grid's exponent: an integer whose power of two and its reciprocal
  // are normal doubles.
  const double k = in[kPassSpecIndexSumGrid];
  if (k < -1000 || k > 1000 || k != std::floor(k)) return false;
  s->loss = static_cast<LossKind>(static_cast<int>(in[0]));
  s->d = static_cast<int>(in[1]);
  s->fit_intercept = in[2] == 1;
  s->feature_bound = in[3];
  s->huber_delta = in[4];
  s->classes = static_cast<int>(in[5]);
  s->target_bound = in[6];
  s->with_loss = in[kPassSpecIndexWithLoss] == 1;
  s->sum_grid = std::ldexp(1.0, static_cast<int>(k));
  s->sum_inv = std::ldexp(1.0, -static_cast<int>(k));
  if (LossIsMulticlass(s->loss) != (s->classes >= 2)) return false;
  s->loss_spec = &LossSpecFor(s->loss);
  double dim = (in[1] + in[2]) * std::max(in[5], 1.0);
  if (!(dim >= 1 && dim <= kMaxSpecDim)) return false;
  // A curvature pass: a positive weight, a margin loss, no loss sum, and
  // dp_newton's cap on dim (CheckMomentDim): its state holds PackedCount(dim)
  // sums, 2 MB at the cap.
  const double gamma = in[kPassSpecIndexCurvature];
  if (gamma < 0) return false;
  s->curvature_weight = gamma;
  return gamma == 0 || (s->classes == 0 && !s->with_loss && dim <= kMaxMomentDim);
}

void PassAddRow(const PassSpec& s, const double* w, const double* x, double label, double* state,
                double* scratch) noexcept {
  state[0] += 1;
  if (s.curvature_weight > 0) {
    // gamma f'(m, y) (the kernel's derivative, one rounding of the product)
    // and f''(m, y), as LinearObjective::PackedSums takes them.
    const double m = Margin(s, w, x);
    LossParams params;
    params.huber_delta = s.huber_delta;
    params.target_bound = s.target_bound;
    scratch[0] = m;
    Kernel(s).RowKernel(params, scratch, label, false);
    LimbSink sink{state + kPassStateHeader, s.sum_inv};
    AddPackedRow(sink, s.dim(), x, s.d, s.fit_intercept, s.curvature_weight * scratch[0],
                 Kernel(s).RowCurvature(params, m, label));
    EndRow(s, state);
    return;
  }
  const int per_class = s.d + (s.fit_intercept ? 1 : 0);
  for (int k = 0; k < std::max(s.classes, 1); k++) scratch[k] = Margin(s, w + k * per_class, x);
  AddRowScores(s, x, label, state, scratch);
  EndRow(s, state);
}

void PassAddRawRow(const PassSpec& s, const double* w, const double* raw, double label,
                   double* state, double* x_scratch, double* scratch) noexcept {
  // The row in place when it is inside the bound (ClippedRow's fast path),
  // else its clipped copy in x_scratch.
  PassAddRow(s, w, ClippedRow(raw, s.d, s.feature_bound, x_scratch), label, state, scratch);
}

void PassAddRecords(const PassSpec& s, const double* w, const double* records, int64_t m,
                    double* state) {
  const int64_t stride = s.d + 1;
  // A binary model's gradient-only pass takes a block of rows at a time
  // through the in-memory objective's kernels: RowMargins (Margin's order)
  // and the loss's Derivatives (its RowKernel's bits), then each row's
  // rounded gradient into the limbs as PassAddRow adds it.
  LossParams params;
  params.huber_delta = s.huber_delta;
  params.target_bound = s.target_bound;
  params.classes = s.classes;
  const std::unique_ptr<Loss> loss =
      s.with_loss || s.curvature_weight > 0 ? nullptr : Kernel(s).MakeMarginLoss(params);
  // Blocks of rows that stay in the first-level cache (loss.hpp,
  // FullPassTileRows): the limbs re-read each row after its margin. The
  // rows are added in their order whatever the block: the same limbs.
  const int64_t block = std::max<int64_t>(
      1, std::min<int64_t>(FullPassBlockRows(2 * stride), FullPassTileRows(stride)));
  auto add = [&](int64_t begin, int64_t end, double* into) {
    if (loss == nullptr) {
      std::vector<double> scores(size_t(std::max(s.classes, 1)));
      for (int64_t i = begin; i < end; i++) {
        const double* record = records + i * stride;
        PassAddRow(s, w, record, record[s.d], into, scores.data());
      }
      return;
    }
    std::vector<double> g(size_t(std::min(block, std::max<int64_t>(end - begin, 1))));
    double* grad = into + kPassStateHeader;
    for (int64_t start = begin; start < end; start += block) {
      const int64_t rows = std::min(block, end - start);
      const double* x = records + start * stride;
      RowMargins(x, stride, rows, s.d, w, s.fit_intercept, g.data());
      loss->Derivatives(g.data(), x + s.d, stride, rows, g.data());
      for (int64_t i = 0; i < rows; i++) {
        into[0] += 1;
        AddScaledRow(s, g[size_t(i)], x + i * stride, grad);
        EndRow(s, into);
      }
    }
  };
  // About a multiply-add per feature and class, as CountWork counts.
  const int parts = RowParts(m, uint64_t(s.sums()) + 8);
  if (parts == 1) {
    add(0, m, state);
    return;
  }
  const int size = PassStateSize(s);
  std::vector<std::vector<double>> partial(size_t(parts), std::vector<double>(size_t(size), 0.0));
  ForRowParts(m, parts, [&](int part, int64_t begin, int64_t end) {
    double* into = partial[size_t(part)].data();
    PassInitState(into);
    add(begin, end, into);
  });
  for (const std::vector<double>& p : partial)
    if (!PassCombine(state, p.data(), size))
      throw Error(ErrorKind::kInternal, "PassAddRecords: a part's state did not combine");
}

void PassInitState(double* state) noexcept { state[1] = kPassStateFormat; }

bool PassStateValid(const double* state, int size) noexcept {
  if (size < kPassStateHeader + 2 || (size - kPassStateHeader) % 2 != 0) return false;
  const int sums = (size - kPassStateHeader) / 2;
  if (state[1] != kPassStateFormat) return false;
  const double rows = state[0], pending = state[2];
  if (!(rows >= 0) || !(rows <= double(kMaxLimbRows)) || rows != std::floor(rows)) return false;
  if (!(pending >= 0) || !(pending < kLimbWindow) || pending != std::floor(pending)) return false;
  // state[3], the loss sum, may be anything a sum of losses can be.
  return LimbsValid(state + kPassStateHeader, state + kPassStateHeader + sums, sums);
}

void PassStateSums(const PassSpec& s, const double* state, double* out) noexcept {
  const int sums = s.sums();
  const double* lo = state + kPassStateHeader;
  const double* hi = lo + sums;
  for (int j = 0; j < sums; j++) out[j] = UnitsValue(LimbUnits(lo[j], hi[j]), s.sum_grid);
}

bool PassCombine(double* into, const double* from, int size) noexcept {
  if (!PassStateValid(into, size) || !PassStateValid(from, size)) return false;
  const int sums = (size - kPassStateHeader) / 2;
  if (into[0] + from[0] > double(kMaxLimbRows)) return false;
  into[0] += from[0];
  into[2] = 0;  // LimbCombine normalises
  into[3] += from[3];
  double* lo = into + kPassStateHeader;
  const double* from_lo = from + kPassStateHeader;
  LimbCombine(lo, lo + sums, from_lo, from_lo + sums, sums);
  return true;
}

PassObjective::PassObjective(const Plan& plan, PassRunner& runner)
    : Objective(plan.mu, plan.options.l1), spec_(PassSpecFor(plan)), n_(plan.n), runner_(&runner) {}

void PassObjective::Pass(const PassSpec& spec, const Eigen::VectorXd& w) const {
  CheckInterrupt();
  state_.assign(size_t(PassStateSize(spec)), 0.0);
  PassInitState(state_.data());
  runner_->Run(spec, w, state_.data());
  passes_++;
  // Every pass reads the rows of one snapshot, the n the plan was made for.
  if (state_[0] != static_cast<double>(n_))
    throw Error(ErrorKind::kInternal,
                "a streaming pass read " + std::to_string(static_cast<int64_t>(state_[0])) +
                    " rows, but the release was planned for n = " + std::to_string(n_),
                "Every pass reads the snapshot of the statement; a row-level security policy "
                "whose result changes between passes breaks that.");
  if (!PassStateValid(state_.data(), static_cast<int>(state_.size())))
    throw Error(ErrorKind::kInternal, "a streaming pass returned a malformed state");
}

double PassObjective::LossValue(const Eigen::VectorXd& w) const {
  PassSpec spec = spec_;
  spec.with_loss = true;
  Pass(spec, w);
  return state_[3] / static_cast<double>(n_);
}

Eigen::VectorXd PassObjective::LossGradient(const Eigen::VectorXd& w) const {
  PassSpec spec = spec_;
  spec.with_loss = false;  // a gradient-only pass: no loss value per row
  Pass(spec, w);
  Eigen::VectorXd grad(dim());
  PassStateSums(spec, state_.data(), grad.data());  // the exact sums, rounded once
  grad /= static_cast<double>(n_);
  return grad;
}

Eigen::VectorXd PassObjective::CurvatureSums(const Eigen::VectorXd& w, double gamma,
                                             double grid) const {
  if (!(gamma > 0) || spec_.classes != 0)
    throw Error(ErrorKind::kInternal, "CurvatureSums: a margin loss and a positive weight only");
  PassSpec spec = spec_;
  spec.with_loss = false;
  spec.curvature_weight = gamma;
  spec.sum_grid = grid;
  spec.sum_inv = 1 / grid;  // exact: the grid is a power of two (SumGrid)
  Pass(spec, w);
  Eigen::VectorXd sums(spec.sums());
  PassStateSums(spec, state_.data(), sums.data());
  return sums;
}

void PassObjective::AddRowGradients(const Eigen::VectorXd&, const int64_t*, int64_t,
                                    Eigen::VectorXd&) const {
  throw Error(ErrorKind::kFeatureNotSupported,
              "streaming training reads full-batch sums only, not single rows");
}

Eigen::MatrixXd PassObjective::LossHessian(const Eigen::VectorXd&) const {
  throw Error(ErrorKind::kFeatureNotSupported, "streaming training has no Hessian pass yet");
}

bool SupportsStreaming(Algorithm a) { return SpecFor(a).streams; }

std::vector<double> TrainStreaming(const Plan& plan, PassRunner& runner, SecureRng& rng,
                                   int64_t* passes) {
  if (!SupportsStreaming(plan.algorithm))
    throw Error(ErrorKind::kInternal, "TrainStreaming: the plan's algorithm cannot stream");
  PassObjective objective(plan, runner);
  Eigen::VectorXd w = MechanismFor(plan.algorithm).Train(plan, objective, rng);
  *passes = objective.passes();
  return std::vector<double>(w.data(), w.data() + w.size());
}

}  // namespace dperm
