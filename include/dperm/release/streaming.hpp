// Streaming training (docs/design.md section 5): full-batch algorithms
// whose every read of the data is a sum over all rows at one model w, taken
// by one pass of a per-pass aggregate with a plain float8[] state, so that
// memory does not grow with n and parallel workers share each pass.
//
// A pass returns [rows, sum_i f_i(w), sum_i grad f_i(w)] over the training
// rows, each clipped and labelled exactly as the in-memory aggregate stores
// them under dperm.train (rows.hpp); a curvature pass (dp_newton) returns
// the packed sums of gamma f' t and f'' t t^T instead of the gradient. The
// mechanism is the same code as in memory (Mechanism::Train over an
// Objective): PassObjective answers LossValue, LossGradient and
// CurvatureSums with one pass each, so a seeded streaming model equals the
// in-memory one (the sums are exact on the same grid in both, and the
// margins and loss derivatives are the same functions).
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/losses/objective.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

#include <cstdint>
#include <vector>

namespace dperm {

class LossSpec;

// What a pass needs besides w: the public shape and options of the release.
struct PassSpec {
  LossKind loss = LossKind::kLogistic;
  int d = 0;
  bool fit_intercept = true;
  double feature_bound = 1;
  double huber_delta = 1;   // the plan's effective huber_delta
  double target_bound = 1;  // Huber targets are clipped to [-B, B] (rows.hpp)
  int classes = 0;          // multi-class losses: K; 0 for binary models
  // The loss's table entry, whose RowKernel a pass calls per row (set by
  // PassSpecFor and DecodePassSpec; LossSpecFor(loss) when null).
  const LossSpec* loss_spec = nullptr;
  // Whether the pass sums the loss values too. Gradient-only passes (every
  // pass of output_gd, dp_gd and dp_accmd) skip the loss's exp/log per row
  // and leave the loss sum 0.
  bool with_loss = true;
  // The grid of the exact sums (exact_sum.hpp): plan.sum_grid, a power of
  // two, and its reciprocal (a curvature pass: the grid it was asked for).
  double sum_grid = 0;
  double sum_inv = 0;
  // > 0: a curvature pass (dp_newton; margin losses only, no loss sum):
  // the state sums each row's packed values (packed_row.hpp) with gradient
  // weight gamma = curvature_weight, g = gamma f'(m, y) and c = f''(m, y),
  // instead of its gradient. 0: a gradient pass.
  double curvature_weight = 0;
  // Model coordinates: max(K, 1) (d + fit_intercept).
  int dim() const;
  // Sums in the state: dim, or PackedCount(dim) for a curvature pass.
  int sums() const;
};

// The spec of a plan's release.
PassSpec PassSpecFor(const Plan& plan);

// The spec as the float8[] the per-pass aggregates take, and back (false
// when the values are not a valid spec).
const int kPassSpecSize = 10;
const int kPassSpecIndexWithLoss = 7;   // where EncodePassSpec puts with_loss
const int kPassSpecIndexSumGrid = 8;    // log2 of sum_grid
const int kPassSpecIndexCurvature = 9;  // curvature_weight
void EncodePassSpec(const PassSpec& spec, double* out);
bool DecodePassSpec(const double* in, int size, PassSpec* spec);

// A pass's state, format 2 (every value a float8, so that PostgreSQL's
// parallel workers and Citus ship it as they ship any float8[]):
//   [0] rows read, [1] the format tag kPassStateFormat, [2] rows added since
//   the limbs were last normalised (< kLimbWindow), [3] the loss sum (0
//   unless spec.with_loss; a plain float sum: no streaming mechanism
//   releases anything computed from it), then the exact sums as limbs
//   (exact_sum.hpp): spec.sums() low limbs, then as many high limbs. Sum
//   j is sum_grid (lo_j + 2^32 hi_j), exact, whatever the order of the
//   rows and the split into partial states.
const double kPassStateFormat = 2;
const int kPassStateHeader = 4;
inline int PassStateSize(const PassSpec& spec) { return kPassStateHeader + 2 * spec.sums(); }

// Prepares a zeroed state of PassStateSize values (writes the format tag).
void PassInitState(double* state) noexcept;
// Whether `state` (size values) is a well-formed pass state: the tag, the
// counts and integer-valued limbs in range.
bool PassStateValid(const double* state, int size) noexcept;
// The state's sums, sum_grid times each one's exact integer sum, rounded
// once (spec.sums() values: the gradient, or a curvature pass's packed sums).
void PassStateSums(const PassSpec& spec, const double* state, double* sums) noexcept;

// Adds one training row to `state`: x holds the d features already clipped
// (ClipRow), `label` the stored label (+1/-1, Huber target, or class index
// in 0 .. K-1). `scratch` holds max(K, 1) doubles. No allocation, no throw.
void PassAddRow(const PassSpec& spec, const double* w, const double* x, double label, double* state,
                double* scratch) noexcept;

// PassAddRow of the row ClipRow makes of `raw` (d features as read, NULL
// elements as NaN): a row inside the bound is read in place (ClippedRow);
// any other is clipped into x_scratch (d doubles) first. No allocation, no
// throw.
void PassAddRawRow(const PassSpec& spec, const double* w, const double* raw, double label,
                   double* state, double* x_scratch, double* scratch) noexcept;

// Adds m records to `state`: record i, at records + i (d + 1), is a row's
// d features already clipped (ClipRow) followed by its stored label -- the
// in-memory aggregate's layout. The rows are split into RowParts parts
// (row_parts.hpp) whose states are merged exactly: the gradient sums equal
// m PassAddRow calls' (the loss sum, a plain float sum, may differ in its
// last bits). May throw (memory).
void PassAddRecords(const PassSpec& spec, const double* w, const double* records, int64_t m,
                    double* state);

// Combine: into += from, exact (the limbs carry, the counts add). Both
// must be valid states of `size` values; false (into unchanged) otherwise.
bool PassCombine(double* into, const double* from, int size) noexcept;

// Runs one pass of `spec` (the release's, with with_loss and
// curvature_weight set for this pass) at w and fills `state`
// (PassStateSize(spec) values, initialised). Implemented by the boundary
// (an SPI query of the per-pass aggregate); may throw.
class PassRunner {
 public:
  virtual ~PassRunner() = default;
  virtual void Run(const PassSpec& spec, const Eigen::VectorXd& w, double* state) = 0;
};

// The regularised empirical risk F of the plan, every loss value,
// gradient or curvature sum read by one pass. Methods that need single
// rows or the Hessian (AddRowGradients, LossHessian) are not streamable
// and throw.
class PassObjective final : public Objective {
 public:
  PassObjective(const Plan& plan, PassRunner& runner);
  int dim() const override { return spec_.dim(); }
  Eigen::Index n() const override { return n_; }
  double LossValue(const Eigen::VectorXd& w) const override;
  Eigen::VectorXd LossGradient(const Eigen::VectorXd& w) const override;
  void AddRowGradients(const Eigen::VectorXd& w, const int64_t* rows, int64_t m,
                       Eigen::VectorXd& sum) const override;
  Eigen::MatrixXd LossHessian(const Eigen::VectorXd& w) const override;
  Eigen::VectorXd CurvatureSums(const Eigen::VectorXd& w, double gamma, double grid) const override;
  int64_t passes() const { return passes_; }

 private:
  // One pass of `spec` at w into state_ (resized to its state), checked to
  // have read all n rows.
  void Pass(const PassSpec& spec, const Eigen::VectorXd& w) const;
  PassSpec spec_;
  Eigen::Index n_;
  PassRunner* runner_;
  mutable std::vector<double> state_;
  mutable int64_t passes_ = 0;
};

// Whether an algorithm reads the data only through full-batch loss values
// and gradients, so that it can stream (AlgorithmSpec::streams).
bool SupportsStreaming(Algorithm algorithm);

// Trains by the plan, every gradient a pass of `runner`; *passes is set to
// the number of passes run.
std::vector<double> TrainStreaming(const Plan& plan, PassRunner& runner, SecureRng& rng,
                                   int64_t* passes);

}  // namespace dperm
