// Feature specs (feature_spec.hpp).
#include "dperm/model/feature_spec.hpp"

#include "dperm/model/auto_domain.hpp"
#include "dperm/util/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace dperm {
namespace {

constexpr size_t kMaxValues = 10000;

[[noreturn]] void BadSpec(const std::string& column, const std::string& why) {
  ThrowInvalid("feature spec: column \"" + column + "\" " + why,
               "Declare each column as {\"bounds\": [lo, hi]}, {\"values\": [...]} or "
               "{\"type\": \"boolean\"}.");
}

// Value i of a "values" array: a string, compared with the column's text
// form, or a JSON boolean, read as "true"/"false" (a boolean's text form).
std::string ValueText(const JsonValue& values, size_t i, const std::string& column,
                      bool* json_boolean) {
  if (!values.IsNumberAt(i) && values.At(i).kind == JsonValue::Kind::kString)
    return values.At(i).string;
  if (!values.IsNumberAt(i) && values.At(i).kind == JsonValue::Kind::kBool) {
    *json_boolean = true;
    return values.At(i).boolean ? "true" : "false";
  }
  BadSpec(column,
          "has a value that is not a string (write numbers as strings, as the column "
          "prints them: \"3\"; booleans as true and false)");
}

// ASCII letters to lower case ("case": "insensitive"); other bytes as they are.
char FoldAscii(char ch) { return ch >= 'A' && ch <= 'Z' ? char(ch - 'A' + 'a') : ch; }

std::string Folded(std::string v) {
  for (char& ch : v) ch = FoldAscii(ch);
  return v;
}

// One declared column (name, its declaration) into `spec`.
void AddColumn(FeatureSpec& spec, const std::string& name, const JsonValue& def,
               size_t known_members) {
  if (name.empty()) ThrowInvalid("feature spec: a column name is empty");
  for (const FeatureColumn& c : spec.columns)
    if (c.name == name) BadSpec(name, "is declared twice");
  FeatureColumn c;
  c.name = name;
  const JsonValue* bounds = def.Find("bounds");
  const JsonValue* values = def.Find("values");
  const JsonValue* type = def.Find("type");
  const JsonValue* label = def.Find("label");
  const JsonValue* case_rule = def.Find("case");
  // The statement of privately chosen bounds (FeatureSpecJson), read back.
  const JsonValue* private_bounds = def.Find("private_bounds");
  if (label != nullptr && (label->kind != JsonValue::Kind::kBool || !label->boolean))
    BadSpec(name, "has \"label\" other than true (leave it out for a feature)");
  if (int(bounds != nullptr) + int(values != nullptr) + int(type != nullptr) != 1 ||
      def.members.size() != known_members + 1 + (label != nullptr ? 1 : 0) +
                                (case_rule != nullptr ? 1 : 0) +
                                (private_bounds != nullptr ? 1 : 0))
    BadSpec(name, "needs exactly one of \"bounds\", \"values\" or \"type\"");
  if (case_rule != nullptr &&
      (values == nullptr || case_rule->kind != JsonValue::Kind::kString ||
       (case_rule->string != "insensitive" && case_rule->string != "exact")))
    BadSpec(name, "has a \"case\" other than \"exact\" or \"insensitive\" beside \"values\"");
  if (label != nullptr && spec.has_label)
    BadSpec(name, "is a second column marked \"label\" (a release has one label)");
  if (spec.has_label && spec.label.name == name) BadSpec(name, "is declared twice");
  // The label's domain is parsed as a feature's, then moved out of the features.
  const size_t names_before = spec.names.size();
  if (private_bounds != nullptr) {
    const JsonValue* e = private_bounds->kind == JsonValue::Kind::kObject
                             ? private_bounds->Find("epsilon")
                             : nullptr;
    if (bounds == nullptr || bounds->kind != JsonValue::Kind::kArray || e == nullptr ||
        e->kind != JsonValue::Kind::kNumber || !(e->number > 0) || !std::isfinite(e->number))
      BadSpec(name, "has \"private_bounds\" without numeric \"bounds\" and an epsilon > 0");
    c.auto_bounds = true;
    c.auto_epsilon = e->number;
  }
  if (values != nullptr && values->kind == JsonValue::Kind::kString && values->string == "auto")
    ThrowInvalid("feature spec: column \"" + name +
                     "\" declares \"values\": \"auto\", which this version does not choose",
                 "Declare its categories: {\"values\": [\"a\", \"b\", ...]}; \"bounds\": "
                 "\"auto\" is supported for a numeric feature.");
  if (bounds != nullptr && bounds->kind == JsonValue::Kind::kString && bounds->string == "auto") {
    if (label != nullptr)
      BadSpec(name, "is the label: its \"bounds\" must be declared (\"auto\" is for features)");
    c.auto_bounds = true;
    c.lo = -1;
    c.hi = 1;
    spec.names.push_back(name);
  } else if (bounds != nullptr) {
    if (bounds->kind != JsonValue::Kind::kArray || bounds->size() != 2 || !bounds->IsNumberAt(0) ||
        !bounds->IsNumberAt(1))
      BadSpec(name, "needs \"bounds\": [lo, hi], two numbers");
    c.lo = bounds->NumberAt(0);
    c.hi = bounds->NumberAt(1);
    if (!std::isfinite(c.lo) || !std::isfinite(c.hi) || !(c.lo < c.hi) ||
        !std::isfinite(c.hi - c.lo))
      BadSpec(name, "needs finite bounds with lo < hi");
    spec.names.push_back(name);
  } else if (values != nullptr) {
    if (values->kind != JsonValue::Kind::kArray || values->size() == 0 ||
        values->size() > kMaxValues)
      BadSpec(name, "needs \"values\": a non-empty array (at most 10000)");
    c.fold_case = case_rule != nullptr && case_rule->string == "insensitive";
    for (size_t i = 0; i < values->size(); i++) {
      std::string v = ValueText(*values, i, name, &c.json_booleans);
      if (v.size() > kMaxValueBytes)
        BadSpec(name, "has a value of more than " + std::to_string(kMaxValueBytes) + " bytes");
      c.max_length = std::max(c.max_length, v.size());
      spec.names.push_back(name + "=" + v);
      if (c.fold_case) c.keys.push_back(Folded(v));
      c.values.push_back(std::move(v));
    }
    // The search index, built once per spec: sorting finds a duplicate
    // in O(k log k) comparisons (not k^2), whatever the values' lengths.
    const std::vector<std::string>& keys = c.fold_case ? c.keys : c.values;
    c.order.resize(c.values.size());
    for (size_t i = 0; i < c.order.size(); i++) c.order[i] = int(i);
    std::sort(c.order.begin(), c.order.end(), [&keys](int a, int b) { return keys[a] < keys[b]; });
    for (size_t i = 1; i < c.order.size(); i++)
      if (keys[c.order[i - 1]] == keys[c.order[i]])
        BadSpec(name, "lists the value \"" + c.values[c.order[i]] + "\" twice" +
                          (c.fold_case ? " (case folded)" : ""));
    c.kind = FeatureColumn::Kind::kValues;
  } else {
    if (type->kind != JsonValue::Kind::kString || type->string != "boolean")
      BadSpec(name, "has an unknown type (only \"boolean\")");
    c.kind = FeatureColumn::Kind::kBoolean;
    spec.names.push_back(name);
  }
  if (label != nullptr) {
    spec.names.resize(names_before);
    spec.has_label = true;
    spec.label = std::move(c);
  } else {
    spec.columns.push_back(std::move(c));
  }
}

}  // namespace

FeatureSpec ParseFeatureSpec(const std::string& json) {
  if (json.size() > kMaxSpecBytes)
    ThrowInvalid("a feature spec must have at most " + std::to_string(kMaxSpecBytes) +
                 " bytes of JSON");
  const JsonValue root = ParseJson(json);
  FeatureSpec spec;
  if (root.kind == JsonValue::Kind::kObject && !root.members.empty()) {
    for (const auto& [name, def] : root.members) {
      if (def.kind != JsonValue::Kind::kObject) BadSpec(name, "must be declared by an object");
      AddColumn(spec, name, def, 0);
    }
  } else if (root.kind == JsonValue::Kind::kArray && root.size() > 0) {
    // The array form: the columns in the order written (jsonb keeps an
    // array's order, not an object's).
    spec.declared_order = true;
    for (size_t i = 0; i < root.size(); i++) {
      const JsonValue* column = root.IsNumberAt(i) || root.At(i).kind != JsonValue::Kind::kObject
                                    ? nullptr
                                    : root.At(i).Find("column");
      if (column == nullptr || column->kind != JsonValue::Kind::kString)
        ThrowInvalid("feature spec: element " + std::to_string(i + 1) +
                         " of the array is not an object with a \"column\" name",
                     "Write [{\"column\": \"age\", \"bounds\": [18, 80]}, ...].");
      AddColumn(spec, column->string, root.At(i), 1);
    }
  } else {
    ThrowInvalid("a feature spec must be a non-empty JSON object or array of columns");
  }
  if (spec.columns.empty())
    ThrowInvalid("a feature spec needs at least one feature besides its label");
  spec.norm_bound = std::sqrt(double(spec.columns.size()));
  return spec;
}

namespace {

void WriteColumn(JsonWriter& j, const FeatureColumn& c, bool label) {
  j.BeginObject();
  j.Key("column").String(c.name.c_str());
  switch (c.kind) {
    case FeatureColumn::Kind::kBounds:
      if (c.auto_bounds && c.auto_epsilon == 0) {
        j.Key("bounds").String("auto");
        break;
      }
      j.Key("bounds").BeginArray();
      j.Number(c.lo);
      j.Number(c.hi);
      j.EndArray();
      if (c.auto_bounds) {
        // Chosen privately (auto_domain.hpp), at this epsilon: part of the
        // model's "epsilon".
        j.Key("private_bounds").BeginObject();
        j.Key("epsilon").Number(c.auto_epsilon);
        j.Key("quantiles").BeginArray();
        j.Number(kAutoLowQuantile);
        j.Number(kAutoHighQuantile);
        j.EndArray();
        j.EndObject();
      }
      break;
    case FeatureColumn::Kind::kValues:
      j.Key("values").BeginArray();
      for (const std::string& v : c.values) j.String(v.c_str());
      j.EndArray();
      if (c.fold_case) j.Key("case").String("insensitive");
      break;
    case FeatureColumn::Kind::kBoolean: j.Key("type").String("boolean"); break;
  }
  if (label) j.Key("label").Bool(true);
  j.EndObject();
}

}  // namespace

std::string FeatureSpecJson(const FeatureSpec& spec) {
  JsonWriter j;
  j.BeginArray();
  for (const FeatureColumn& c : spec.columns) WriteColumn(j, c, false);
  if (spec.has_label) WriteColumn(j, spec.label, true);
  j.EndArray();
  return j.str();
}

void ResolveAutoBounds(FeatureSpec* spec, size_t column, double lo, double hi, double epsilon) {
  FeatureColumn& c = spec->columns.at(column);
  if (!c.auto_bounds || !(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi) || !(epsilon > 0))
    ThrowInvalid("internal: auto bounds resolved on a declared column or with lo >= hi");
  c.lo = lo;
  c.hi = hi;
  c.auto_epsilon = epsilon;
}

RawModel ToRawUnits(const FeatureSpec& spec, const double* w, double intercept, double noise) {
  RawModel r;
  r.intercept = intercept;
  double shift_sq = 1;  // 1 + sum c^2: the intercept's own noise and the shifted ones
  for (const FeatureColumn& col : spec.columns) {
    const size_t j = r.coefficients.size();
    if (col.kind == FeatureColumn::Kind::kBounds) {
      // z = a x + c on [lo, hi] (EncodeRow); halved first, as TargetMapOf,
      // so that no finite bounds overflow.
      const double half = col.hi / 2 - col.lo / 2;
      const double a = 1 / half, c = -(col.lo / 2 + col.hi / 2) / half;
      r.coefficients.push_back(a * w[j]);
      r.noise.push_back(a * noise);
      r.intercept += c * w[j];
      shift_sq += c * c;
    } else {
      const size_t k = col.kind == FeatureColumn::Kind::kValues ? col.values.size() : 1;
      for (size_t i = 0; i < k; i++) {
        r.coefficients.push_back(w[j + i]);
        r.noise.push_back(noise);
      }
    }
  }
  r.intercept_noise = noise * std::sqrt(shift_sq);
  return r;
}

size_t ReadLimit(const FeatureColumn& col) noexcept {
  switch (col.kind) {
    case FeatureColumn::Kind::kValues: return col.max_length + 1;
    case FeatureColumn::Kind::kBounds: return kMaxNumberText;
    case FeatureColumn::Kind::kBoolean: return 5;
  }
  return 0;
}

namespace {

// A bounds column's value scaled to [-1, 1] and clamped; NaN for NULL or
// text that is not a number. Reads at most kMaxNumberText bytes.
double ScaledBounded(const FeatureColumn& col, const char* text) noexcept {
  if (text == nullptr) return NAN;
  char buffer[kMaxNumberText + 1];
  const size_t n = strnlen(text, kMaxNumberText);
  std::memcpy(buffer, text, n);
  buffer[n] = '\0';
  char* end = nullptr;
  const double x = std::strtod(buffer, &end);
  if (end == buffer || *end != '\0' || std::isnan(x)) return NAN;
  const double scaled = 2 * ((x - col.lo) / (col.hi - col.lo)) - 1;
  return std::isnan(scaled) ? NAN : std::min(1.0, std::max(-1.0, scaled));
}

// The index of `text` among the declared values of `col`, or -1: reads at
// most max_length + 1 bytes of it (a longer value matches none) and
// compares it with log2(k) + 1 of them (the sorted index `order`).
int ValueIndex(const FeatureColumn& col, const char* text) noexcept {
  if (text == nullptr) return -1;
  const size_t n = strnlen(text, col.max_length + 1);
  if (n > col.max_length) return -1;
  char folded[kMaxValueBytes + 1];
  if (col.fold_case)
    for (size_t i = 0; i < n; i++) folded[i] = FoldAscii(text[i]);
  const std::string_view v(col.fold_case ? folded : text, n);
  const std::vector<std::string>& keys = col.fold_case ? col.keys : col.values;
  size_t lo = 0, hi = col.order.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int cmp = std::string_view(keys[col.order[mid]]).compare(v);
    if (cmp == 0) return col.order[mid];
    if (cmp < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

bool IsTrue(const char* text) noexcept {
  return text != nullptr && (std::strcmp(text, "t") == 0 || std::strcmp(text, "true") == 0);
}

}  // namespace

void EncodeRow(const FeatureSpec& spec, const char* const* texts, double* out) noexcept {
  size_t j = 0;
  for (size_t c = 0; c < spec.columns.size(); c++) {
    const FeatureColumn& col = spec.columns[c];
    const char* text = texts[c];
    switch (col.kind) {
      case FeatureColumn::Kind::kBounds: {
        const double v = ScaledBounded(col, text);
        out[j++] = std::isnan(v) ? 0 : v;
        break;
      }
      case FeatureColumn::Kind::kValues: {
        const int hit = ValueIndex(col, text);
        for (size_t i = 0; i < col.values.size(); i++) out[j + i] = int(i) == hit ? 1.0 : 0.0;
        j += col.values.size();
        break;
      }
      case FeatureColumn::Kind::kBoolean: out[j++] = IsTrue(text) ? 1.0 : 0.0; break;
    }
  }
}

double EncodeLabel(const FeatureColumn& label, const char* text) noexcept {
  switch (label.kind) {
    case FeatureColumn::Kind::kBounds: return ScaledBounded(label, text);
    case FeatureColumn::Kind::kValues: {
      const int index = ValueIndex(label, text);
      return index < 0 ? NAN : double(index);
    }
    case FeatureColumn::Kind::kBoolean:
      if (text == nullptr) return NAN;
      return IsTrue(text) ? 1.0 : 0.0;
  }
  return NAN;
}

std::string RescaleTargetModel(const std::string& model_json, double lo, double hi) {
  JsonValue m = ParseJson(model_json);
  const TargetMap map = TargetMapOf(lo, hi);
  const double c = map.centre, r = map.half_range;
  const auto saturated = [](double v) { return std::min(1e300, std::max(-1e300, v)); };
  bool intercept = false;
  for (auto& [key, v] : m.members) {
    if (key == "coefficients") {
      for (double& w : v.numbers) w = saturated(r * w);
    } else if ((key == "intercept" || key == "offset") && v.kind == JsonValue::Kind::kNumber) {
      v.number = saturated(r * v.number + c);
      intercept = intercept || key == "intercept";
    }
  }
  if (!intercept && c != 0)
    ThrowInvalid("a label with bounds [lo, hi] needs fit_intercept unless lo = -hi",
                 "The model maps its targets back to [lo, hi] through its intercept.");
  JsonValue bounds;
  bounds.kind = JsonValue::Kind::kArray;
  bounds.numbers = {lo, hi};
  m.members.emplace_back("target_bounds", std::move(bounds));
  JsonWriter j;
  WriteJson(j, m);
  return j.str();
}

std::string WithFeatureSpec(const std::string& model_json, const FeatureSpec& spec) {
  JsonValue m = ParseJson(model_json);
  if (m.kind != JsonValue::Kind::kObject) ThrowInvalid("a model's JSON must be an object");
  JsonValue stated = ParseJson(FeatureSpecJson(spec));
  bool replaced = false;
  for (auto& [key, v] : m.members)
    if (key == "feature_spec") {
      v = stated;
      replaced = true;
    }
  if (!replaced) m.members.emplace_back("feature_spec", std::move(stated));
  JsonWriter j;
  WriteJson(j, m);
  return j.str();
}

}  // namespace dperm
