// Unit tests of released models (include/dperm/model/model.hpp): the JSON text
// and prediction with the training preprocessing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dperm/util/interrupt.hpp"
#include "dperm/util/json.hpp"
#include "dperm/model/model.hpp"
#include "dperm/losses/softmax.hpp"
#include "dperm/planning/plan_release.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::LossKind;
using dperm::ModelJson;
using dperm::ModelMeta;
using dperm::Options;
using dperm::Plan;

Plan MakePlan(LossKind loss, bool fit_intercept, int d, int classes = 0) {
  Options o;
  o.epsilon = 1.5;
  o.delta = 1e-6;
  o.l2 = 0.1;
  o.fit_intercept = fit_intercept;
  o.feature_bound = 2;
  o.classes = classes;
  return dperm::PlanRelease(o, loss, 123, d);
}

// A small JSON syntax checker (RFC 8259 values; numbers via strtod).
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  bool Valid() {
    Space();
    if (!Value()) return false;
    Space();
    return i_ == s_.size();
  }

 private:
  void Space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) i_++;
  }
  bool Literal(const char* word) {
    size_t len = std::strlen(word);
    if (s_.compare(i_, len, word) != 0) return false;
    i_ += len;
    return true;
  }
  bool String() {
    if (s_[i_] != '"') return false;
    for (i_++; i_ < s_.size(); i_++) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        i_++;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        i_++;
        if (i_ >= s_.size() || std::strchr("\"\\/bfnrtu", s_[i_]) == nullptr) return false;
      }
    }
    return false;
  }
  bool Number() {
    const char* start = s_.c_str() + i_;
    if (!(*start == '-' || std::isdigit(static_cast<unsigned char>(*start)))) return false;
    char* end = nullptr;
    std::strtod(start, &end);
    if (end == start) return false;
    i_ += static_cast<size_t>(end - start);
    return true;
  }
  bool Value() {
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') return Container('}', true);
    if (c == '[') return Container(']', false);
    if (c == '"') return String();
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    return Number();
  }
  bool Container(char close, bool object) {
    i_++;
    Space();
    if (i_ < s_.size() && s_[i_] == close) {
      i_++;
      return true;
    }
    for (;;) {
      Space();
      if (object) {
        if (i_ >= s_.size() || !String()) return false;
        Space();
        if (i_ >= s_.size() || s_[i_] != ':') return false;
        i_++;
        Space();
      }
      if (!Value()) return false;
      Space();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == close) {
        i_++;
        return true;
      }
      if (s_[i_] != ',') return false;
      i_++;
    }
  }
  const std::string& s_;
  size_t i_ = 0;
};

// The numbers of the array after `"key":`.
std::vector<double> JsonNumberArray(const std::string& json, const std::string& key) {
  std::vector<double> out;
  std::string needle = "\"" + key + "\":[";
  size_t at = json.find(needle);
  EXPECT_NE(at, std::string::npos) << key;
  if (at == std::string::npos) return out;
  const char* p = json.c_str() + at + needle.size();
  while (*p != ']') {
    char* end = nullptr;
    out.push_back(std::strtod(p, &end));
    if (end == p) {
      ADD_FAILURE() << "not a number at " << p;
      break;
    }
    p = end;
    if (*p == ',') p++;
  }
  return out;
}

double JsonNumber(const std::string& json, const std::string& key) {
  std::string needle = "\"" + key + "\":";
  size_t at = json.find(needle);
  EXPECT_NE(at, std::string::npos) << key;
  if (at == std::string::npos) return NAN;
  return std::strtod(json.c_str() + at + needle.size(), nullptr);
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The model JSON is valid JSON, carries the coefficients and intercept
// exactly (they read back as the same doubles), the feature names, the
// options text, and says "private": false for a seeded release.
TEST(ModelJson, CoefficientsInterceptNamesSeeded) {
  Plan p = MakePlan(LossKind::kLogistic, true, 3);
  std::vector<double> w = {0.1, -2.5e-7, 1.0 / 3.0, -0.75};
  const char* names[] = {"age", "income \"net\"", "tenure"};
  ModelMeta meta;
  meta.created_at = "2026-01-02T03:04:05Z";
  meta.options_json = "{\"epsilon\": 1.5, \"seed\": 7}";
  meta.feature_names = names;
  meta.seeded = true;
  std::string json = ModelJson(p, w, meta);
  EXPECT_TRUE(JsonChecker(json).Valid()) << json;
  std::vector<double> coef = JsonNumberArray(json, "coefficients");
  ASSERT_EQ(coef.size(), 3u);
  for (int i = 0; i < 3; i++) EXPECT_EQ(coef[i], w[i]) << i;
  EXPECT_EQ(JsonNumber(json, "intercept"), w[3]);
  EXPECT_TRUE(Contains(json, "\"feature_names\":[\"age\",\"income \\\"net\\\"\",\"tenure\"]"))
      << json;
  EXPECT_TRUE(Contains(json, "\"private\":false")) << json;
  EXPECT_TRUE(Contains(json, "\"seeded\":true")) << json;
  EXPECT_TRUE(Contains(json, "\"loss\":\"logistic\""));
  EXPECT_TRUE(Contains(json, "\"options\":{\"epsilon\": 1.5, \"seed\": 7}"));
  EXPECT_TRUE(Contains(json, "\"created_at\":\"2026-01-02T03:04:05Z\""));
  EXPECT_EQ(JsonNumber(json, "epsilon"), 1.5);
  EXPECT_EQ(JsonNumber(json, "n"), 123.0);
  EXPECT_EQ(JsonNumber(json, "sensitivity"), p.sensitivity);
  EXPECT_EQ(JsonNumber(json, "noise_scale"), p.noise_scale);
  EXPECT_EQ(JsonNumber(json, "feature_bound"), 2.0);
}

// Without intercept the intercept is null and there are d coefficients;
// without names there is no feature_names key; an unseeded release is
// "private": true.
TEST(ModelJson, NoInterceptNoNamesPrivate) {
  Plan p = MakePlan(LossKind::kHuber, false, 2);
  std::vector<double> w = {-1e-300, 12345.678};
  ModelMeta meta;
  std::string json = ModelJson(p, w, meta);
  EXPECT_TRUE(JsonChecker(json).Valid()) << json;
  std::vector<double> coef = JsonNumberArray(json, "coefficients");
  ASSERT_EQ(coef.size(), 2u);
  EXPECT_EQ(coef[0], w[0]);
  EXPECT_EQ(coef[1], w[1]);
  EXPECT_TRUE(Contains(json, "\"intercept\":null")) << json;
  EXPECT_FALSE(Contains(json, "feature_names"));
  EXPECT_TRUE(Contains(json, "\"private\":true"));
  EXPECT_TRUE(Contains(json, "\"seeded\":false"));
  EXPECT_TRUE(Contains(json, "\"loss\":\"huber\""));
}

// A query's input (dperm.train_query): the JSON states n as the noisy size,
// with the epsilon that released it (part of "epsilon"); a release that is
// not from a query says neither.
TEST(ModelJson, QueryInputStatesNoisyN) {
  Plan p = MakePlan(LossKind::kLogistic, true, 2);
  std::vector<double> w = {0.5, -0.5, 0.25};
  ModelMeta meta;
  std::string plain = ModelJson(p, w, meta);
  EXPECT_FALSE(Contains(plain, "n_noisy")) << plain;
  meta.n_noisy = true;
  meta.unit_count_epsilon = 0.125;
  std::string json = ModelJson(p, w, meta);
  EXPECT_TRUE(JsonChecker(json).Valid()) << json;
  EXPECT_TRUE(Contains(json, "\"n_noisy\":true")) << json;
  EXPECT_EQ(JsonNumber(json, "n_epsilon"), 0.125);
  EXPECT_EQ(JsonNumber(json, "n"), 123.0);
  EXPECT_TRUE(Contains(json, "\"privacy_unit\":\"row\"")) << json;
}

// Non-finite coefficients (impossible from training, but the writer must not
// emit invalid JSON) become null.
TEST(ModelJson, NonFiniteBecomesNull) {
  Plan p = MakePlan(LossKind::kLogistic, true, 1);
  std::vector<double> w = {std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()};
  std::string json = ModelJson(p, w, ModelMeta());
  EXPECT_TRUE(JsonChecker(json).Valid()) << json;
  EXPECT_TRUE(Contains(json, "\"coefficients\":[null]"));
  EXPECT_TRUE(Contains(json, "\"intercept\":null"));
}

// x clipped to the bound, computed here: x * bound/||x|| when ||x|| > bound,
// NaN entries 0 first.
std::vector<double> ReferenceClip(std::vector<double> x, double bound) {
  double sq = 0;
  for (double& v : x) {
    if (std::isnan(v)) v = 0;
    sq += v * v;
  }
  double norm = std::sqrt(sq);
  if (norm > bound)
    for (double& v : x) v *= bound / norm;
  return x;
}

double Margin(const std::vector<double>& coef, const std::vector<double>& x, double b) {
  double m = b;
  for (size_t i = 0; i < x.size(); i++) m += coef[i] * x[i];
  return m;
}

// Predict = sigmoid(<coef, clip(x)> + b) for logistic and the margin itself
// for Huber, with x clipped to the feature bound as in training.
TEST(Predict, MatchesClippedMargin) {
  std::mt19937_64 gen(3);
  std::normal_distribution<double> normal(0, 1);
  int clipped = 0;
  for (int trial = 0; trial < 500; trial++) {
    int d = 1 + trial % 6;
    double bound = 0.5 + (trial % 4);
    std::vector<double> coef(d), x(d), scratch(d);
    for (double& v : coef) v = 2 * normal(gen);
    for (double& v : x) v = 2 * normal(gen);
    double b = normal(gen);
    std::vector<double> cx = ReferenceClip(x, bound);
    if (cx != x) clipped++;
    double m = Margin(coef, cx, b);
    double tol = 1e-12 * (1 + std::fabs(m));
    EXPECT_NEAR(
        dperm::Predict(LossKind::kHuber, coef.data(), d, b, bound, x.data(), scratch.data()), m,
        tol);
    EXPECT_NEAR(
        dperm::Predict(LossKind::kLogistic, coef.data(), d, b, bound, x.data(), scratch.data()),
        1 / (1 + std::exp(-m)), 1e-12);
  }
  EXPECT_GT(clipped, 100);  // clipping was exercised
}

// A worked example: x = (3, 4, NaN), bound 1 -> (0.6, 0.8, 0); coef
// (0.5, -1, 2), intercept 0.3 -> margin 0.3 - 0.8 + 0.3 = -0.2.
TEST(Predict, WorkedExample) {
  double coef[] = {0.5, -1.0, 2.0};
  double x[] = {3.0, 4.0, std::numeric_limits<double>::quiet_NaN()};
  double scratch[3];
  EXPECT_NEAR(dperm::Predict(LossKind::kHuber, coef, 3, 0.3, 1.0, x, scratch), -0.2, 1e-14);
  EXPECT_NEAR(dperm::Predict(LossKind::kLogistic, coef, 3, 0.3, 1.0, x, scratch),
              1 / (1 + std::exp(0.2)), 1e-15);
  // The input row is left untouched (clipping goes to the scratch buffer).
  EXPECT_EQ(x[0], 3.0);
  EXPECT_EQ(x[1], 4.0);
}

// Extreme margins give probabilities 1 and 0, never NaN; infinite features
// are clipped to the sphere rather than producing inf.
TEST(Predict, ExtremeMarginsStayFinite) {
  double coef[] = {1e3};
  double x_pos[] = {1.0}, x_neg[] = {-1.0}, x_inf[] = {std::numeric_limits<double>::infinity()};
  double scratch[1];
  EXPECT_EQ(dperm::Predict(LossKind::kLogistic, coef, 1, 0, 1.0, x_pos, scratch), 1.0);
  double low = dperm::Predict(LossKind::kLogistic, coef, 1, 0, 1.0, x_neg, scratch);
  EXPECT_TRUE(std::isfinite(low));
  EXPECT_GE(low, 0.0);
  EXPECT_LT(low, 1e-300);
  EXPECT_NEAR(dperm::Predict(LossKind::kHuber, coef, 1, 5, 2.0, x_inf, scratch), 2005, 1e-10);
}

// The text between the brackets of the array after `"key":` (nested arrays
// included), e.g. "[1,2],[3,4]".
std::string JsonArrayText(const std::string& json, const std::string& key) {
  std::string needle = "\"" + key + "\":[";
  size_t at = json.find(needle);
  EXPECT_NE(at, std::string::npos) << key;
  if (at == std::string::npos) return "";
  size_t start = at + needle.size(), i = start;
  for (int depth = 1; i < json.size(); i++) {
    if (json[i] == '[') depth++;
    if (json[i] == ']' && --depth == 0) break;
  }
  return json.substr(start, i - start);
}

// Numbers of a comma-separated list.
std::vector<double> Numbers(const std::string& text) {
  std::vector<double> out;
  const char* p = text.c_str();
  while (*p != '\0') {
    char* end = nullptr;
    out.push_back(std::strtod(p, &end));
    if (end == p) {
      ADD_FAILURE() << "not a number at " << p;
      break;
    }
    p = end;
    if (*p == ',') p++;
  }
  return out;
}

// A softmax model's JSON: "classes": K, "coefficients" as K arrays of d
// numbers (class k's block of w without its intercept), "intercept" as the
// K intercepts; the plan carries the classes too.
TEST(ModelJson, SoftmaxShape) {
  const int d = 2, classes = 3;
  Plan p = MakePlan(LossKind::kSoftmax, true, d, classes);
  ASSERT_EQ(p.dim, classes * (d + 1));
  // w = K blocks of (d weights, intercept): w_k = (10k + 1, 10k + 2), b_k = 10k + 0.5.
  std::vector<double> w;
  for (int k = 0; k < classes; k++) {
    w.push_back(10 * k + 1);
    w.push_back(10 * k + 2);
    w.push_back(10 * k + 0.5);
  }
  const char* names[] = {"a", "b"};
  ModelMeta meta;
  meta.feature_names = names;
  std::string json = ModelJson(p, w, meta);
  EXPECT_TRUE(JsonChecker(json).Valid()) << json;
  EXPECT_TRUE(Contains(json, "\"loss\":\"softmax\""));
  EXPECT_TRUE(Contains(json, "\"classes\":3,\"coefficients\":[[1,2],[11,12],[21,22]]")) << json;
  EXPECT_EQ(JsonArrayText(json, "coefficients"), "[1,2],[11,12],[21,22]");
  std::vector<double> intercept = Numbers(JsonArrayText(json, "intercept"));
  EXPECT_EQ(intercept, (std::vector<double>{0.5, 10.5, 20.5}));
  EXPECT_TRUE(Contains(json, "\"feature_names\":[\"a\",\"b\"]"));
  EXPECT_EQ(JsonNumber(json, "d"), 2.0);
  // The plan's own copy of K.
  EXPECT_TRUE(Contains(json, "\"d\":2,\"classes\":3,\"dim\":9")) << json;
}

// Without intercept: K arrays of d coefficients and "intercept": null.
TEST(ModelJson, SoftmaxNoIntercept) {
  Plan p = MakePlan(LossKind::kSoftmax, false, 2, 2);
  std::vector<double> w = {1.5, -2, 0.25, 3};
  std::string json = ModelJson(p, w, ModelMeta());
  EXPECT_TRUE(JsonChecker(json).Valid()) << json;
  EXPECT_TRUE(
      Contains(json, "\"classes\":2,\"coefficients\":[[1.5,-2],[0.25,3]],\"intercept\":null"))
      << json;
}

// Binary models keep their JSON exactly: no "classes" key, flat
// coefficients, a number as intercept, in the order of dperm 0.1.0.
TEST(ModelJson, BinaryShapeUnchanged) {
  Plan p = MakePlan(LossKind::kLogistic, true, 2);
  std::vector<double> w = {1, 2, 3};
  std::string json = ModelJson(p, w, ModelMeta());
  EXPECT_TRUE(Contains(json,
                       "{\"format\":\"dperm.model/1\",\"loss\":\"logistic\","
                       "\"algorithm\":\"output_gd\",\"coefficients\":[1,2],\"intercept\":3,"
                       "\"epsilon\":1.5,"))
      << json;
  EXPECT_FALSE(Contains(json, "\"classes\""));
}

// Reference softmax prediction computed here: clip, scores, then
// exp(s_k - max) / sum.
std::vector<double> ReferenceSoftmax(const std::vector<double>& w, int classes, int d,
                                     bool fit_intercept, double bound,
                                     const std::vector<double>& x) {
  std::vector<double> cx = ReferenceClip(x, bound), s(classes);
  const int c = d + (fit_intercept ? 1 : 0);
  for (int k = 0; k < classes; k++) {
    s[k] = fit_intercept ? w[k * c + d] : 0;
    for (int i = 0; i < d; i++) s[k] += w[k * c + i] * cx[i];
  }
  double top = *std::max_element(s.begin(), s.end()), sum = 0;
  for (double& v : s) sum += (v = std::exp(v - top));
  for (double& v : s) v /= sum;
  return s;
}

// PredictSoftmax: the probabilities of the reference, summing to 1, with
// the row clipped as in training; ArgMax picks the most likely class.
TEST(PredictSoftmax, MatchesReferenceAndSumsToOne) {
  std::mt19937_64 gen(9);
  std::normal_distribution<double> normal(0, 1);
  int clipped = 0;
  for (int trial = 0; trial < 300; trial++) {
    int d = 1 + trial % 5, classes = 2 + trial % 4;
    bool fit_intercept = trial % 3 != 0;
    double bound = 0.5 + (trial % 3);
    int c = d + (fit_intercept ? 1 : 0);
    std::vector<double> w(size_t(classes) * c), x(d), scratch(d), proba(classes);
    for (double& v : w) v = 2 * normal(gen);
    for (double& v : x) v = 2 * normal(gen);
    if (ReferenceClip(x, bound) != x) clipped++;
    dperm::PredictSoftmax(w.data(), classes, d, fit_intercept, bound, x.data(), scratch.data(),
                          proba.data());
    std::vector<double> ref = ReferenceSoftmax(w, classes, d, fit_intercept, bound, x);
    double sum = 0;
    for (int k = 0; k < classes; k++) {
      EXPECT_NEAR(proba[k], ref[k], 1e-12);
      sum += proba[k];
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    int best = dperm::ArgMax(proba.data(), classes);
    EXPECT_EQ(best, int(std::max_element(ref.begin(), ref.end()) - ref.begin()));
  }
  EXPECT_GT(clipped, 60);
}

// A worked example: x = (3, 4) clipped to (0.6, 0.8); classes scored
// w_0 = (1, 0), b_0 = 0 -> 0.6; w_1 = (0, 1), b_1 = 0 -> 0.8; w_2 = 0,
// b_2 = 0.7 -> 0.7. Probabilities e^s / sum; class 1 wins.
TEST(PredictSoftmax, WorkedExample) {
  double w[] = {1, 0, 0, 0, 1, 0, 0, 0, 0.7};
  double x[] = {3, 4}, scratch[2], proba[3];
  dperm::PredictSoftmax(w, 3, 2, true, 1.0, x, scratch, proba);
  double sum = std::exp(0.6) + std::exp(0.8) + std::exp(0.7);
  EXPECT_NEAR(proba[0], std::exp(0.6) / sum, 1e-15);
  EXPECT_NEAR(proba[1], std::exp(0.8) / sum, 1e-15);
  EXPECT_NEAR(proba[2], std::exp(0.7) / sum, 1e-15);
  EXPECT_EQ(dperm::ArgMax(proba, 3), 1);
  EXPECT_EQ(x[0], 3.0);  // the input is untouched
  // Ties go to the first class.
  double tie[] = {0.25, 0.375, 0.375};
  EXPECT_EQ(dperm::ArgMax(tie, 3), 1);
}

// Huge coefficients of a hand-written model (scores overflowing to +-inf or
// NaN) still give finite probabilities that sum to 1.
TEST(PredictSoftmax, HugeScoresStayFinite) {
  const double big = 1e308;
  double w[] = {big, big, -big, -big, 0, 0};  // no intercept, d = 2, K = 3
  double x[] = {0.6, 0.8}, scratch[2], proba[3];
  dperm::PredictSoftmax(w, 3, 2, false, 1e10, x, scratch, proba);
  double sum = 0;
  for (double v : proba) {
    EXPECT_TRUE(std::isfinite(v));
    sum += v;
  }
  EXPECT_NEAR(sum, 1.0, 1e-15);
  EXPECT_EQ(dperm::ArgMax(proba, 3), 0);
  double nan_w[] = {big, -big, 0, 0, 1, 1};  // class 0 scores inf - inf = NaN
  double y[] = {1e10, 1e10};
  dperm::PredictSoftmax(nan_w, 3, 2, false, 1e10, y, scratch, proba);
  sum = 0;
  for (double v : proba) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-15);
  EXPECT_EQ(dperm::ArgMax(proba, 3), 2);
}

// Writing a large model checks for a pending cancel every 4096 numbers
// (writing 10^7 numbers takes seconds): with the probe reporting an
// interrupt, 5000 coefficients throw kCancelled and 100 do not reach a check.
TEST(ModelJson, LargeModelsCheckForInterrupts) {
  dperm::SetInterruptProbe([] { return true; });
  ModelMeta meta;
  Plan small = MakePlan(LossKind::kLogistic, true, 100);
  EXPECT_NO_THROW(ModelJson(small, std::vector<double>(101, 0.5), meta));
  Plan large = MakePlan(LossKind::kLogistic, true, 5000);
  Plan many_classes = MakePlan(LossKind::kSoftmax, true, 1, 3000);  // 6000 numbers
  for (const Plan* p : {&large, &many_classes}) {
    dperm::testing::ExpectError(dperm::ErrorKind::kCancelled,
                                [&] { ModelJson(*p, std::vector<double>(p->dim, 0.5), meta); });
  }
  dperm::SetInterruptProbe(nullptr);
}

}  // namespace

// ---- reading the JSON back (ParseModelJson, beside ModelJson)

// ModelJson then ParseModelJson gives back the fields dp_model keeps, bit
// for bit (numbers are written in their shortest round-trip form).
TEST(ParseModelJson, RoundTripsEveryShape) {
  struct Case {
    LossKind loss;
    bool intercept;
    int classes;
  };
  const Case cases[] = {{LossKind::kLogistic, true, 0},
                        {LossKind::kLogistic, false, 0},
                        {LossKind::kHuber, true, 0},
                        {LossKind::kSoftmax, true, 3},
                        {LossKind::kSoftmax, false, 2}};
  const int d = 4;
  const char* names[d] = {"age", "bmi", "caf\xC3\xA9", "q\"uote"};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(dperm::LossName(c.loss)) + (c.intercept ? " +b" : " -b"));
    Plan p = MakePlan(c.loss, c.intercept, d, c.classes);
    const int per_class = d + (c.intercept ? 1 : 0);
    const size_t size = c.classes > 0 ? size_t(c.classes) * per_class : size_t(per_class);
    std::vector<double> w(size);
    for (size_t i = 0; i < size; i++) w[i] = std::ldexp(double(i) - 2.5, -int(i)) / 3.0;
    ModelMeta meta;
    meta.feature_names = names;
    dperm::ModelFields f = dperm::ParseModelJson(ModelJson(p, w, meta), 1 << 20);
    EXPECT_EQ(f.loss, c.loss);
    EXPECT_EQ(f.classes, c.classes);
    EXPECT_EQ(f.d, d);
    EXPECT_EQ(f.fit_intercept, c.intercept);
    EXPECT_EQ(f.feature_bound, p.options.feature_bound);
    EXPECT_EQ(f.huber_delta, p.options.huber_delta);
    std::vector<double> expected = w;
    if (c.classes == 0 && !c.intercept) expected.push_back(0);  // binary: d + 1 values
    EXPECT_EQ(f.w, expected);
  }
}

// The text a hand-written or damaged model may hold: each refusal names the
// field, as dp_model's input function reports it (22P02, or 54000 for size).
TEST(ParseModelJson, RefusesMalformedFields) {
  const std::string pre =
      R"("preprocessing":{"feature_bound":1,"huber_delta":1,"fit_intercept":true})";
  const std::string ok =
      R"({"loss":"logistic",)" + pre + R"(,"coefficients":[1,2],"intercept":0.5})";
  EXPECT_EQ(dperm::ParseModelJson(ok, 100).w, (std::vector<double>{1, 2, 0.5}));
  const std::pair<std::string, std::string> bad[] = {
      {"[1,2]", "not a JSON object"},
      {R"({"loss":"probit",)" + pre + "}", R"("loss" must be "logistic", "huber" or "softmax")"},
      {R"({"loss":"logistic","preprocessing":[]})", R"("preprocessing" must be an object)"},
      {R"({"loss":"logistic",)" + pre + R"(,"coefficients":[1,"2"],"intercept":0})",
       R"("coefficients" must be a number)"},
      {R"({"loss":"logistic",)" + pre + R"(,"coefficients":[1e400],"intercept":0})",
       R"("coefficients" is out of range)"},
      {R"({"loss":"logistic",)" + pre + R"(,"coefficients":[1]})",
       R"("intercept" must be a number)"},
      {R"({"loss":"logistic",)" + pre +
           R"(,"coefficients":[1],"intercept":0,"feature_names":["a","b"]})",
       R"("feature_names" must hold 1 names)"},
      {R"({"loss":"logistic",)" + pre + R"(,"coefficients":[1],"intercept":0,"feature_names":[1]})",
       R"("feature_names" must hold strings)"},
      {R"({"loss":"softmax",)" + pre + R"(,"classes":2.5})",
       R"("classes" must be an integer between 2 and 100000)"},
      {R"({"loss":"softmax",)" + pre +
           R"(,"classes":2,"coefficients":[[1],[1,2]],"intercept":[0,0]})",
       "every class needs the same number"},
      {R"({"loss":"softmax",)" + pre + R"(,"classes":2,"coefficients":[1,2],"intercept":[0,0]})",
       R"("coefficients" must be an array)"},
  };
  for (const auto& [text, message] : bad) {
    SCOPED_TRACE(text);
    dperm::testing::ExpectError(
        dperm::ErrorKind::kInvalidText, [&] { dperm::ParseModelJson(text, 100); },
        "invalid dp_model: " + message);
  }
  dperm::testing::ExpectError(
      dperm::ErrorKind::kLimitExceeded, [&] { dperm::ParseModelJson(ok, 1); },
      "dp_model with 2 coefficients is too large");
}

// jsonb's reading: escapes are decoded, a repeated key keeps its last value,
// -0 is 0 (numeric has no negative zero).
TEST(ParseModelJson, ReadsJsonAsJsonbDoes) {
  const std::string text =
      R"({"loss":"huber","loss":"lo\u0067istic","preprocessing":{"feature_bound":2,"huber_delta":0.5,)"
      R"("fit_intercept":false},"coefficients":[-0, 1.5e-3],"feature_names":["\ud83d\ude00","x"]})";
  dperm::ModelFields f = dperm::ParseModelJson(text, 100);
  EXPECT_EQ(f.loss, LossKind::kLogistic);
  EXPECT_EQ(f.d, 2);
  EXPECT_FALSE(std::signbit(f.w[0]));
  EXPECT_EQ(f.w[1], 1.5e-3);
  EXPECT_EQ(dperm::ParseJson(R"(["\ud83d\ude00"])").At(0).string, "\xF0\x9F\x98\x80");
  dperm::testing::ExpectError(
      dperm::ErrorKind::kInvalidText, [] { dperm::ParseJson("{\"a\":1,}"); }, "invalid JSON");
}
