// A released model: its JSON text form and prediction.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/plan/plan.hpp"

#include <string>
#include <vector>

namespace dperm {

// What the release knows beyond the plan and the coefficients; plain
// pointers into memory the boundary owns.
struct ModelMeta {
  const char* created_at = "";                  // ISO 8601, UTC
  const char* options_json = "{}";              // the options exactly as given
  const char* const* feature_names = nullptr;   // d names, or nullptr
  bool seeded = false;                          // a fixed seed: not private
  const std::vector<double>* offset = nullptr;  // b0 of stage 0 (offset.hpp), or nullptr
  // l2 => 'auto' (select_l2.hpp): the selection's JSON, kept as
  // "l2_selection", and the release's (epsilon, delta), which replace the
  // chosen candidate's in "epsilon" and "delta"; nullptr: no selection.
  const char* l2_selection_json = nullptr;
  double release_epsilon = 0;
  double release_delta = 0;
  // A unit-level release (unit_level.hpp): the unit's column (nullptr: the
  // row), its k and the number of units, stated as "privacy_unit"; its
  // (epsilon, delta) are the plan's ReleaseEpsilon/ReleaseDelta (or, with a
  // selection, release_epsilon and release_delta: both per unit).
  const char* unit_column = nullptr;
  int64_t unit_rows = 0;
  int64_t units = 0;              // the released (noisy) number of units
  double unit_count_epsilon = 0;  // the epsilon that released it, part of "epsilon"
  // The epsilon a feature spec's auto domains took (auto_domain.hpp), part
  // of "epsilon" and stated as "domain_epsilon" (0: none).
  double domain_epsilon = 0;
  // The budget declared the number of units public (dperm.set_budget units
  // => N): `units` is N, read without a count, stated as "units_public".
  bool units_public = false;
  // A query's input (dperm.train_query): n is the released noisy size (units
  // times k, or rows at the row), stated as "n_noisy": true and
  // "n_epsilon" (the unit_count_epsilon that released it).
  bool n_noisy = false;
  // One group of dperm.train_query_groups: the query's output column, this
  // model's key (its text) and the number of declared groups, stated as
  // "group": {"by", "key", "groups"}; group_by nullptr: no group.
  const char* group_by = nullptr;
  const char* group_key = nullptr;
  int64_t groups = 0;
};

// The model as JSON (docs/design.md section 1, dp_model). `w` holds the d feature
// weights followed by the intercept when the plan fits one. A softmax model
// holds plan.classes such blocks, class after class (softmax.hpp), and its
// JSON says "classes": K, "coefficients": K arrays of d numbers, and
// "intercept": K numbers (null without intercept); binary models have no
// "classes" key.
std::string ModelJson(const Plan& plan, const std::vector<double>& w, const ModelMeta& meta);

// What a model's JSON states for prediction: the fields ModelJson writes
// that dp_model keeps in binary form. `w` has ModelJson's layout, except
// that a binary model always holds d + 1 values (the intercept last, 0 when
// not fitted).
struct ModelFields {
  LossKind loss = LossKind::kLogistic;
  int classes = 0;  // softmax: K >= 2; binary models: 0
  int d = 0;
  bool fit_intercept = false;
  double feature_bound = 0;
  double huber_delta = 0;
  // "l2_selection" (l2 => 'auto'): whether l2 was chosen privately, and
  // the chosen value (0 when not).
  bool l2_selected = false;
  double chosen_l2 = 0;
  std::vector<double> w;
  std::vector<double> offset;  // "offset" (b0, already in the intercept); empty: none
};

// Most classes a model may have (the limit of the classes option).
const int kMaxModelClasses = 100000;

// Reads a model's JSON text (ModelJson's inverse for ModelFields; dump and
// restore, casts, binary COPY). Every field is checked for its kind, range
// and shape; "feature_names", when present and not null, must hold d
// strings. Throws Error(kInvalidText, "invalid dp_model: ...") naming the
// field, Error(kLimitExceeded) when the coefficients pass max_coefficients
// (checked before they are copied), and ParseJson's error for text that is
// not JSON.
ModelFields ParseModelJson(const std::string& text, int64_t max_coefficients);

// Prediction with the training preprocessing: the row is clipped exactly as
// training rows were, then the margin <coef, x> + intercept goes through the
// loss's link (losses.def): a probability (Link::kSigmoid) or the margin as
// is (Link::kIdentity). `scratch` holds d doubles.
double Predict(LossKind loss, const double* coef, int d, double intercept, double feature_bound,
               const double* x, double* scratch) noexcept;

// Class probabilities of a softmax model with the training preprocessing:
// the row is clipped as training rows were, then proba = softmax(s) with
// s_k = <w_k, x> + b_k. `w` holds `classes` blocks of d weights followed by
// the intercept when fit_intercept (the layout of softmax.hpp). `scratch`
// holds d doubles and `proba` `classes`. Scores are clamped to +-1e300 (a
// NaN score counts as -1e300) so that a hand-written model with huge
// coefficients still gives probabilities that sum to 1.
void PredictSoftmax(const double* w, int classes, int d, bool fit_intercept, double feature_bound,
                    const double* x, double* scratch, double* proba) noexcept;

// The index of the largest of n >= 1 values, the first one on ties.
int ArgMax(const double* values, int n) noexcept;

}  // namespace dperm
