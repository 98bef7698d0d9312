// Model JSON and prediction.
#include "dperm/model/model.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/util/interrupt.hpp"
#include "dperm/util/json.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/losses/softmax.hpp"

namespace dperm {
namespace {

// Writing a number is slow (the shortest round-trip form), so a model of
// 10^7 coordinates takes long: check for a pending cancel every few
// thousand numbers.
void NumberChecked(JsonWriter& j, double v, size_t& written) {
  if ((++written & 4095) == 0) CheckInterrupt();
  j.Number(v);
}

}  // namespace

std::string ModelJson(const Plan& plan, const std::vector<double>& w, const ModelMeta& meta) {
  JsonWriter j;
  j.BeginObject();
  j.Key("format").String("dperm.model/1");
  j.Key("loss").String(LossName(plan.loss));
  j.Key("algorithm").String(AlgorithmName(plan.algorithm));
  size_t written = 0;
  if (LossIsMulticlass(plan.loss)) {
    // K blocks of (d weights, intercept when fitted), class after class.
    const int per_class = plan.d + (plan.options.fit_intercept ? 1 : 0);
    j.Key("classes").Integer(plan.classes);
    j.Key("coefficients").BeginArray();
    for (int k = 0; k < plan.classes; k++) {
      j.BeginArray();
      for (int i = 0; i < plan.d; i++) NumberChecked(j, w[size_t(k) * per_class + i], written);
      j.EndArray();
    }
    j.EndArray();
    j.Key("intercept");
    if (plan.options.fit_intercept) {
      j.BeginArray();
      for (int k = 0; k < plan.classes; k++)
        NumberChecked(j, w[size_t(k) * per_class + plan.d], written);
      j.EndArray();
    } else {
      j.Null();
    }
  } else {
    j.Key("coefficients").BeginArray();
    for (int i = 0; i < plan.d; i++) NumberChecked(j, w[i], written);
    j.EndArray();
    j.Key("intercept");
    if (plan.options.fit_intercept) j.Number(w[plan.d]);
    else j.Null();
  }
  if (meta.feature_names != nullptr) {
    j.Key("feature_names").BeginArray();
    for (int i = 0; i < plan.d; i++) j.String(meta.feature_names[i]);
    j.EndArray();
  }
  const bool selected = meta.l2_selection_json != nullptr;
  j.Key("epsilon").Number(selected ? meta.release_epsilon
                                   : ReleaseEpsilon(plan) + meta.unit_count_epsilon +
                                         meta.domain_epsilon);
  if (meta.domain_epsilon > 0) j.Key("domain_epsilon").Number(meta.domain_epsilon);
  j.Key("delta").Number(selected ? meta.release_delta : ReleaseDelta(plan));
  j.Key("n").Integer(plan.n);
  if (meta.n_noisy) {
    // A query's input: n is the noisy size, released with n_epsilon (part
    // of "epsilon"), never the exact number of rows the query selects.
    j.Key("n_noisy").Bool(true);
    j.Key("n_epsilon").Number(meta.unit_count_epsilon);
  }
  if (meta.group_by != nullptr) {
    // One group of a declared domain (parallel composition): n above is the
    // group's own noisy size.
    j.Key("group").BeginObject();
    j.Key("by").String(meta.group_by);
    j.Key("key").String(meta.group_key != nullptr ? meta.group_key : "");
    j.Key("groups").Integer(meta.groups);
    j.EndObject();
  }
  j.Key("d").Integer(plan.d);
  j.Key("neighbors").String(NeighborsName(plan.neighbors));
  j.Key("privacy_unit");
  if (meta.unit_column == nullptr) {
    j.String("row");
  } else {
    // epsilon and delta above are per unit; the plan's are per row slot.
    j.BeginObject();
    j.Key("column").String(meta.unit_column);
    j.Key("max_rows_per_unit").Integer(meta.unit_rows);
    j.Key("units").Integer(meta.units);
    j.Key("units_epsilon").Number(meta.unit_count_epsilon);
    // A public number of units (the budget's declaration): no count was
    // released, and the release is private against one unit replaced.
    j.Key("units_public").Bool(meta.units_public);
    j.EndObject();
  }
  j.Key("mechanism").String(NoiseName(plan.noise));
  j.Key("sensitivity").Number(plan.sensitivity);
  j.Key("noise_scale").Number(plan.noise_scale);
  j.Key("private").Bool(!meta.seeded);
  j.Key("seeded").Bool(meta.seeded);
  j.Key("preprocessing").BeginObject();
  j.Key("feature_bound").Number(plan.options.feature_bound);
  j.Key("fit_intercept").Bool(plan.options.fit_intercept);
  j.Key("huber_delta").Number(plan.options.huber_delta);
  j.Key("target_bound").Number(plan.options.target_bound);
  j.EndObject();
  // The private offset b0 (offset.hpp), already inside "intercept": one
  // number (K for softmax), null without stage 0.
  j.Key("offset");
  if (meta.offset == nullptr || meta.offset->empty()) {
    j.Null();
  } else if (LossIsMulticlass(plan.loss)) {
    j.BeginArray();
    for (double b : *meta.offset) j.Number(b);
    j.EndArray();
  } else {
    j.Number((*meta.offset)[0]);
  }
  j.Key("plan").Raw(PlanJson(plan).c_str());
  if (selected) j.Key("l2_selection").Raw(meta.l2_selection_json);
  j.Key("options").Raw(meta.options_json);
  j.Key("created_at").String(meta.created_at);
  j.EndObject();
  return j.str();
}

namespace {

// Reading the model JSON: ModelJson's fields, each checked for its kind.

[[noreturn]] void BadModel(const std::string& why) {
  throw Error(ErrorKind::kInvalidText, "invalid dp_model: " + why);
}

std::string Quoted(const char* key) { return std::string("\"") + key + "\""; }

const JsonValue& AsObject(const JsonValue* v, const char* what) {
  if (v == nullptr || v->kind != JsonValue::Kind::kObject)
    BadModel(Quoted(what) + " must be an object");
  return *v;
}

const JsonValue& AsArray(const JsonValue* v, const char* what) {
  if (v == nullptr || v->kind != JsonValue::Kind::kArray)
    BadModel(Quoted(what) + " must be an array");
  return *v;
}

// A finite double: 1e400 is an error naming the field; 1e-400 reads as 0.
double Finite(double x, const char* key) {
  if (!std::isfinite(x)) BadModel(Quoted(key) + " is out of range for type double precision");
  return x;
}

double NumberField(const JsonValue* v, const char* key) {
  if (v == nullptr || v->kind != JsonValue::Kind::kNumber)
    BadModel(Quoted(key) + " must be a number");
  return Finite(v->number, key);
}

// Element i of an array that must be a number.
double NumberElement(const JsonValue& array, size_t i, const char* key) {
  if (!array.IsNumberAt(i)) return NumberField(&array.At(i), key);
  return Finite(array.NumberAt(i), key);
}

void CheckCount(int64_t count, int64_t max_coefficients) {
  if (count > max_coefficients)
    throw Error(ErrorKind::kLimitExceeded,
                "dp_model with " + std::to_string(count) + " coefficients is too large");
}

// K blocks of (d weights, intercept when fitted). Every row's shape is
// checked before the coefficients are copied. Sets f->d and f->w.
void ReadSoftmaxCoefficients(const JsonValue& j, int64_t max_coefficients, ModelFields* f) {
  const int classes = f->classes;
  const JsonValue& coef = AsArray(j.Find("coefficients"), "coefficients");
  if (int64_t(coef.size()) != classes)
    BadModel(Quoted("coefficients") + " must hold " + std::to_string(classes) +
             " arrays, one per class");
  const JsonValue* intercept =
      f->fit_intercept ? &AsArray(j.Find("intercept"), "intercept") : nullptr;
  if (intercept != nullptr && int64_t(intercept->size()) != classes)
    BadModel(Quoted("intercept") + " must hold " + std::to_string(classes) +
             " numbers, one per class");
  std::vector<const JsonValue*> rows(classes);
  for (int k = 0; k < classes; k++) {
    rows[k] = &AsArray(coef.IsNumberAt(k) ? nullptr : &coef.At(k), "coefficients");
    if (k == 0) f->d = int(rows[0]->size());
    else if (int(rows[k]->size()) != f->d)
      BadModel("every class needs the same number of coefficients");
  }
  const int per_class = f->d + (f->fit_intercept ? 1 : 0);
  if (per_class < 1) BadModel("a model without features needs an intercept");
  CheckCount(int64_t(classes) * per_class, max_coefficients);
  f->w.resize(size_t(classes) * per_class);
  for (int k = 0; k < classes; k++) {
    double* block = f->w.data() + size_t(k) * per_class;
    CheckInterrupt();
    for (int i = 0; i < f->d; i++) block[i] = NumberElement(*rows[k], i, "coefficients");
    if (f->fit_intercept) block[f->d] = NumberElement(*intercept, k, "intercept");
  }
}

// feature_names, when present and not null: d strings (dp_coefficients
// still reads any shape, for models stored before this check).
void CheckFeatureNames(const JsonValue& j, int d) {
  const JsonValue* names = j.Find("feature_names");
  if (names == nullptr || names->kind == JsonValue::Kind::kNull) return;
  const JsonValue& a = AsArray(names, "feature_names");
  if (int64_t(a.size()) != d)
    BadModel(Quoted("feature_names") + " must hold " + std::to_string(d) +
             " names, one per feature");
  for (size_t i = 0; i < a.size(); i++)
    if (a.IsNumberAt(i) || a.At(i).kind != JsonValue::Kind::kString)
      BadModel(Quoted("feature_names") + " must hold strings");
}

}  // namespace

ModelFields ParseModelJson(const std::string& text, int64_t max_coefficients) {
  const JsonValue j = ParseJson(text);
  if (j.kind != JsonValue::Kind::kObject) BadModel("not a JSON object");
  ModelFields f;
  const JsonValue* loss = j.Find("loss");
  if (loss == nullptr || loss->kind != JsonValue::Kind::kString)
    BadModel(Quoted("loss") + " must be a string");
  // The loss by its name (losses.def).
  bool known = false;
  std::vector<std::string> names;
  for (LossKind k : AllLosses()) {
    names.push_back(Quoted(LossName(k)));
    if (loss->string == LossName(k)) f.loss = k, known = true;
  }
  if (!known) BadModel(Quoted("loss") + " must be " + JoinNames(names, " or "));
  const JsonValue& pre = AsObject(j.Find("preprocessing"), "preprocessing");
  f.feature_bound = NumberField(pre.Find("feature_bound"), "feature_bound");
  f.huber_delta = NumberField(pre.Find("huber_delta"), "huber_delta");
  if (!(f.feature_bound > 0) || !(f.huber_delta > 0))
    BadModel("feature_bound and huber_delta must be positive");
  const JsonValue* fit = pre.Find("fit_intercept");
  if (fit == nullptr || fit->kind != JsonValue::Kind::kBool)
    BadModel(Quoted("fit_intercept") + " must be a boolean");
  f.fit_intercept = fit->boolean;
  // "offset": absent or null (models before it, no stage 0), a number, or
  // (softmax) one number per class.
  if (const JsonValue* off = j.Find("offset");
      off != nullptr && off->kind != JsonValue::Kind::kNull) {
    if (off->kind == JsonValue::Kind::kNumber) {
      f.offset.push_back(NumberField(off, "offset"));
    } else {
      const JsonValue& a = AsArray(off, "offset");
      for (size_t i = 0; i < a.size(); i++) f.offset.push_back(NumberElement(a, i, "offset"));
    }
  }
  if (LossIsMulticlass(f.loss)) {
    const JsonValue* k = j.Find("classes");
    if (k == nullptr || k->kind != JsonValue::Kind::kNumber)
      BadModel(Quoted("classes") + " must be a number");
    if (!(k->number >= 2 && k->number <= kMaxModelClasses) || k->number != std::floor(k->number))
      BadModel(Quoted("classes") + " must be an integer between 2 and " +
               std::to_string(kMaxModelClasses));
    f.classes = int(k->number);
    ReadSoftmaxCoefficients(j, max_coefficients, &f);
  } else {
    const JsonValue& coef = AsArray(j.Find("coefficients"), "coefficients");
    f.d = int(coef.size());
    CheckCount(f.d, max_coefficients);
    f.w.resize(size_t(f.d) + 1);
    for (int i = 0; i < f.d; i++) {
      if ((i & 4095) == 4095) CheckInterrupt();
      f.w[i] = NumberElement(coef, i, "coefficients");
    }
    f.w[f.d] = f.fit_intercept ? NumberField(j.Find("intercept"), "intercept") : 0;
  }
  const size_t offsets = LossIsMulticlass(f.loss) ? size_t(f.classes) : 1;
  if (!f.offset.empty() && f.offset.size() != offsets)
    BadModel(Quoted("offset") + " must hold " + std::to_string(offsets) + " numbers");
  CheckFeatureNames(j, f.d);
  const JsonValue* selection = j.Find("l2_selection");
  if (selection != nullptr && selection->kind != JsonValue::Kind::kNull) {
    const JsonValue& sel = AsObject(selection, "l2_selection");
    f.l2_selected = true;
    f.chosen_l2 = NumberField(sel.Find("chosen_l2"), "chosen_l2");
    const JsonValue* priv = sel.Find("private");
    if (priv == nullptr || priv->kind != JsonValue::Kind::kBool || !priv->boolean)
      BadModel(Quoted("l2_selection") + " must say \"private\": true");
  }
  return f;
}

double Predict(LossKind loss, const double* coef, int d, double intercept, double feature_bound,
               const double* x, double* scratch) noexcept {
  ClipRow(x, d, feature_bound, scratch);
  double m = intercept;
  for (int i = 0; i < d; i++) m += coef[i] * scratch[i];
  if (LossLink(loss) == Link::kIdentity) return m;
  return m >= 0 ? 1 / (1 + std::exp(-m)) : std::exp(m) / (1 + std::exp(m));
}

void PredictSoftmax(const double* w, int classes, int d, bool fit_intercept, double feature_bound,
                    const double* x, double* scratch, double* proba) noexcept {
  ClipRow(x, d, feature_bound, scratch);
  const int per_class = d + (fit_intercept ? 1 : 0);
  const double kMaxScore = 1e300;  // exp(s - max) stays well defined
  for (int k = 0; k < classes; k++) {
    const double* wk = w + size_t(k) * per_class;
    double s = fit_intercept ? wk[d] : 0.0;
    for (int i = 0; i < d; i++) s += wk[i] * scratch[i];
    proba[k] = std::isnan(s) ? -kMaxScore : std::clamp(s, -kMaxScore, kMaxScore);
  }
  SoftmaxInPlace(proba, classes);
}

int ArgMax(const double* values, int n) noexcept {
  int best = 0;
  for (int k = 1; k < n; k++)
    if (values[k] > values[best]) best = k;
  return best;
}

}  // namespace dperm
