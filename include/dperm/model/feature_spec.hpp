// A feature spec (docs/design.md section 7): raw columns with public domains,
// encoded the same way in the training scan and at prediction.
//   {"age": {"bounds": [18, 80]}, "home": {"values": ["owner", "rent"]},
//    "vip": {"type": "boolean"}}
// * bounds [lo, hi] (finite, lo < hi): v -> 2 (v - lo)/(hi - lo) - 1 clamped
//   to [-1, 1]; NULL, NaN or text that is not a number -> 0 (the middle of
//   the declared range), +-inf -> +-1;
// * values [v1, ...] (strings, or JSON booleans for a boolean column,
//   read as "true"/"false"; compared with the column's text form, byte for
//   byte, unless "case": "insensitive" folds ASCII letters on both sides):
//   one coordinate per value, 1 for the row's value, 0 elsewhere; an
//   unknown value or NULL -> all zeros;
// * type boolean: 1 for true, 0 for false or NULL.
// Each column adds at most 1 to the squared norm, so every encoded row has
// norm <= sqrt(columns): the release's feature_bound, public with d (the
// spec's encoded coordinates). Columns are encoded in the spec's order: an
// array of columns [{"column": "age", "bounds": [18, 80]}, ...] keeps the
// order written; an object's is its key order as given (jsonb stores keys
// sorted by length, then bytes: that order is what a stored object keeps).
// Nothing here reads a row to choose a bound.
//
// One column may be marked "label": true beside its domain: the label of
// the release, not a feature (it adds nothing to d or the bound). Its domain
// says how it is read (EncodeLabel): logistic takes "values": [negative,
// positive] or "type": "boolean"; softmax "values": the classes in index
// order; Huber "bounds": the target range, scaled to [-1, 1] for training
// and the model mapped back to it (RescaleTargetModel).
#pragma once
#include "dperm/util/errors.hpp"

#include <string>
#include <vector>

namespace dperm {

struct FeatureColumn {
  enum class Kind { kBounds, kValues, kBoolean };
  std::string name;
  Kind kind = Kind::kBounds;
  double lo = 0, hi = 1;            // kBounds
  std::vector<std::string> values;  // kValues, as text
  // kValues: the indices of `values` in byte order (the index EncodeRow
  // searches, built once by ParseFeatureSpec) and the longest value's bytes.
  std::vector<int> order;
  size_t max_length = 0;
  // kValues: "case": "insensitive" (ASCII letters folded to lower case on
  // both sides; `keys` the folded values the index sorts and matches), and
  // whether a value was written as a JSON boolean (the seam refuses those
  // on a column that is not boolean).
  bool fold_case = false;
  std::vector<std::string> keys;
  bool json_booleans = false;
  // kBounds: "bounds": "auto" (auto_domain.hpp): lo and hi are unknown until
  // the release's domain step chooses them privately (ResolveAutoBounds);
  // once chosen, auto_epsilon > 0 is the epsilon they took, stated with
  // them ("private_bounds": {"epsilon": e, "quantiles": [q_lo, q_hi]}).
  bool auto_bounds = false;
  double auto_epsilon = 0;
};

// The most bytes of a spec's JSON (a named model stores it with each
// version: what a role sends the ledger writer stays bounded).
constexpr size_t kMaxSpecBytes = 1 << 20;

// The most bytes of one declared value of a "values" column (a longer one
// is refused: kInvalidParameter): what the encoder reads of a row's value
// is at most this + 1.
constexpr size_t kMaxValueBytes = 1024;

// The most bytes of a "bounds" value the encoder reads: a numeral longer
// than this is read from its first kMaxNumberText bytes (an integer part of
// more than 309 digits is infinite for a double either way, and fraction
// digits this far out are below a double's precision).
constexpr size_t kMaxNumberText = 1024;

// The bytes of a value of `col` the encoder reads (its text is read no
// further): the longest declared value + 1 ("values": a longer value
// matches none), kMaxNumberText ("bounds"), 5 ("type": "boolean").
size_t ReadLimit(const FeatureColumn& col) noexcept;

struct FeatureSpec {
  std::vector<FeatureColumn> columns;  // the features, in encoding order
  bool has_label = false;
  FeatureColumn label;  // has_label: the column marked "label"

  std::vector<std::string> names;  // encoded coordinates: "age", "home=owner", ...
  double norm_bound = 0;           // sqrt(columns)
  bool declared_order = false;     // written as an array: columns in the order written
  int dimension() const { return static_cast<int>(names.size()); }
  // The columns declared "bounds": "auto" and not yet chosen.
  int auto_columns() const {
    int k = 0;
    for (const FeatureColumn& c : columns) k += c.auto_bounds && c.auto_epsilon == 0 ? 1 : 0;
    return k;
  }
};

// Parses and checks a spec (kInvalidParameter naming the column and why).
// A feature's "bounds": "auto" parses to an unchosen auto column (lo, hi
// placeholders [-1, 1]: EncodeRow must not see it before ResolveAutoBounds);
// "bounds": "auto" on the label and "values": "auto" are refused.
FeatureSpec ParseFeatureSpec(const std::string& json);

// The spec as its array form, columns in encoding order (the label last,
// with "label": true): what a model trained through it states as
// "feature_spec" (ParseFeatureSpec reads it back to the same encoding).
std::string FeatureSpecJson(const FeatureSpec& spec);

// A linear model on a spec's encoding read per unit of each raw column
// (post-processing: dp_coefficients). A "bounds" column's coordinate is
// z = a x + c with a = 2/(hi - lo), c = -(lo + hi)/(hi - lo) (EncodeRow,
// inside the bounds), so w z = (a w) x + c w: its raw coefficient is a w
// and c w moves to the intercept; one-hot and boolean coordinates are 0/1
// indicators and stay as they are. `noise` is the noise scale of each
// encoded coordinate: a bounds coefficient's scales by a, and the raw
// intercept's is noise sqrt(1 + sum c^2) for independent per-coordinate
// noise (the intercept's own and every shifted coordinate's).
struct RawModel {
  std::vector<double> coefficients, noise;  // d each, in encoding order
  double intercept = 0, intercept_noise = 0;
};
RawModel ToRawUnits(const FeatureSpec& spec, const double* w, double intercept, double noise);

// `spec` with auto column i's bounds chosen: [lo, hi] at `epsilon`
// (stated with the model by FeatureSpecJson).
void ResolveAutoBounds(FeatureSpec* spec, size_t column, double lo, double hi, double epsilon);

// Writes the encoded row to out[0..dimension): `texts[c]` is column c's value
// as text, or nullptr for NULL. Never fails on a value. Its time per row is
// bounded by the spec, whatever the values' lengths: it reads at most
// ReadLimit bytes of each value, and matches a "values" column's value by a
// binary search of its declared values (at most log2(k) + 1 comparisons of
// at most max_length + 1 bytes), then writes the column's k coordinates.
void EncodeRow(const FeatureSpec& spec, const char* const* texts, double* out) noexcept;

// The label value of a row read through `label`'s domain (`text` its text
// form, nullptr for NULL): "values" -> the value's index (logistic: 0 for
// the negative, 1 for the positive); "type": "boolean" -> 1 or 0; "bounds"
// -> 2 (y - lo)/(hi - lo) - 1 clamped to [-1, 1]. NaN for NULL, an unknown
// value or text that is not a number: the caller imputes it as the
// aggregates impute a NULL label. Never fails on a value.
double EncodeLabel(const FeatureColumn& label, const char* text) noexcept;

// The affine map from a "bounds" label's scaled target back to its units:
// y = centre + half_range * scaled, centre = (lo + hi)/2, half_range =
// (hi - lo)/2 (halved first: no overflow for finite bounds).
struct TargetMap {
  double centre, half_range;
};
inline TargetMap TargetMapOf(double lo, double hi) { return {lo / 2 + hi / 2, hi / 2 - lo / 2}; }

// A Huber model trained on targets scaled by a "bounds" label [lo, hi],
// mapped back to the label's units (post-processing of the release):
// coefficients times half_range and the intercept half_range b + centre
// (the offset likewise), each clamped to +-1e300 so that no model overflows
// to a value its JSON cannot hold (whatever the coefficients, i.e. the
// rows), and "target_bounds": [lo, hi] stated. kInvalidParameter when the
// model fits no intercept and centre != 0 (public: the options).
std::string RescaleTargetModel(const std::string& model_json, double lo, double hi);

// A model trained through `spec` with the spec stated beside it as
// "feature_spec" (FeatureSpecJson; replaced if present): what
// dp_coefficients reads the raw columns' units and the declared order from.
std::string WithFeatureSpec(const std::string& model_json, const FeatureSpec& spec);

}  // namespace dperm
