// Feature specs (feature_spec.hpp): parsing, the public shape a spec
// declares, and the encoding of values that are not what the spec expects.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "dperm/model/feature_spec.hpp"
#include "dperm/model/model.hpp"
#include "dperm/util/json.hpp"

namespace {

TEST(FeatureSpec, DeclaresDimensionNamesAndBound) {
  const dperm::FeatureSpec s = dperm::ParseFeatureSpec(
      R"({"age": {"bounds": [18, 80]}, "home": {"values": ["owner", "rent", "other"]}, "vip": {"type": "boolean"}})");
  ASSERT_EQ(s.dimension(), 5);
  EXPECT_EQ(s.names,
            (std::vector<std::string>{"age", "home=owner", "home=rent", "home=other", "vip"}));
  EXPECT_DOUBLE_EQ(s.norm_bound, std::sqrt(3.0));
}

TEST(FeatureSpec, EncodesWithinTheBoundWhateverTheValues) {
  const dperm::FeatureSpec s = dperm::ParseFeatureSpec(
      R"({"x": {"bounds": [-5, 5]}, "c": {"values": ["a", "b"]}, "f": {"type": "boolean"}})");
  const char* rows[][3] = {{"5", "a", "t"},
                           {"-5", "b", "f"},
                           {"1e308", "zz", "true"},
                           {"-Infinity", "", "x"},
                           {"NaN", nullptr, "t"},
                           {"not a number", "a", nullptr},
                           {nullptr, nullptr, nullptr},
                           {" 2", "b", "f"}};
  for (auto& row : rows) {
    double out[4];
    dperm::EncodeRow(s, row, out);
    double norm = 0;
    for (double v : out) {
      EXPECT_TRUE(std::isfinite(v));
      norm += v * v;
    }
    EXPECT_LE(std::sqrt(norm), s.norm_bound * (1 + 1e-15));
  }
  double out[4];
  const char* top[] = {"5", "a", "t"};
  dperm::EncodeRow(s, top, out);
  EXPECT_EQ(std::vector<double>(out, out + 4), (std::vector<double>{1, 1, 0, 1}));
  const char* middle[] = {"0", "zz", nullptr};
  dperm::EncodeRow(s, middle, out);
  EXPECT_EQ(std::vector<double>(out, out + 4), (std::vector<double>{0, 0, 0, 0}));
  const char* clipped[] = {"-1e308", "b", "f"};
  dperm::EncodeRow(s, clipped, out);
  EXPECT_EQ(std::vector<double>(out, out + 4), (std::vector<double>{-1, 0, 1, 0}));
}

TEST(FeatureSpec, RefusesMalformedSpecs) {
  for (const char* bad :
       {"[]", "{}", R"({"a": 1})", R"({"a": {}})", R"({"a": {"bounds": [1]}})",
        R"({"a": {"bounds": [2, 1]}})", R"({"a": {"bounds": [0, 1e400]}})",
        R"({"a": {"values": []}})", R"({"a": {"values": [1]}})", R"({"a": {"values": ["x", "x"]}})",
        R"({"a": {"values": ["x", "y", "x"]}})", R"({"a": {"values": ["x", "y", "y"]}})",
        R"({"a": {"type": "int"}})", R"({"a": {"bounds": [0, 1], "type": "boolean"}})",
        R"({"": {"type": "boolean"}})", R"({"y": {"type": "boolean", "label": true}})",
        R"({"a": {"type": "boolean"}, "y": {"type": "boolean", "label": false}})",
        R"({"a": {"type": "boolean"}, "y": {"label": true}})",
        R"({"a": {"type": "boolean", "label": true}, "y": {"type": "boolean", "label": true}})"})
    EXPECT_THROW(dperm::ParseFeatureSpec(bad), dperm::Error) << bad;
}

// The column marked "label" is not a feature: d, the names and the row
// bound are the other columns'.
TEST(FeatureSpec, TheLabelIsNotAFeature) {
  const dperm::FeatureSpec s = dperm::ParseFeatureSpec(
      R"({"age": {"bounds": [18, 80]}, "bad": {"values": ["0", "1"], "label": true}, "vip": {"type": "boolean"}})");
  ASSERT_TRUE(s.has_label);
  EXPECT_EQ(s.label.name, "bad");
  EXPECT_EQ(s.names, (std::vector<std::string>{"age", "vip"}));
  EXPECT_EQ(s.columns.size(), 2u);
  EXPECT_DOUBLE_EQ(s.norm_bound, std::sqrt(2.0));
  EXPECT_FALSE(dperm::ParseFeatureSpec(R"({"age": {"bounds": [18, 80]}})").has_label);
}

TEST(FeatureSpec, EncodesLabelsByTheirDomain) {
  const dperm::FeatureSpec v = dperm::ParseFeatureSpec(
      R"({"x": {"type": "boolean"}, "y": {"values": ["no", "yes", "maybe"], "label": true}})");
  EXPECT_EQ(dperm::EncodeLabel(v.label, "no"), 0);
  EXPECT_EQ(dperm::EncodeLabel(v.label, "yes"), 1);
  EXPECT_EQ(dperm::EncodeLabel(v.label, "maybe"), 2);
  EXPECT_TRUE(std::isnan(dperm::EncodeLabel(v.label, "Yes")));  // compared exactly
  EXPECT_TRUE(std::isnan(dperm::EncodeLabel(v.label, nullptr)));
  const dperm::FeatureSpec b = dperm::ParseFeatureSpec(
      R"({"x": {"type": "boolean"}, "y": {"bounds": [10, 20], "label": true}})");
  EXPECT_EQ(dperm::EncodeLabel(b.label, "10"), -1);
  EXPECT_EQ(dperm::EncodeLabel(b.label, "17.5"), 0.5);
  EXPECT_EQ(dperm::EncodeLabel(b.label, "1e9"), 1);
  EXPECT_EQ(dperm::EncodeLabel(b.label, "-Infinity"), -1);
  EXPECT_TRUE(std::isnan(dperm::EncodeLabel(b.label, "NaN")));
  EXPECT_TRUE(std::isnan(dperm::EncodeLabel(b.label, "x")));
  const dperm::FeatureSpec t = dperm::ParseFeatureSpec(
      R"({"x": {"type": "boolean"}, "y": {"type": "boolean", "label": true}})");
  EXPECT_EQ(dperm::EncodeLabel(t.label, "t"), 1);
  EXPECT_EQ(dperm::EncodeLabel(t.label, "f"), 0);
  EXPECT_TRUE(std::isnan(dperm::EncodeLabel(t.label, nullptr)));
}

// A Huber model on targets scaled from [lo, hi] predicts, mapped back, the
// target in its own units: c + r (w.x + b) = (r w).x + (r b + c).
TEST(FeatureSpec, RescalesAHuberModelToTheLabelsUnits) {
  const std::string scaled =
      R"({"format": "dperm.model/1", "loss": "huber", "coefficients": [0.5, -0.25], "intercept": 0.1,)"
      R"( "preprocessing": {"feature_bound": 1, "fit_intercept": true, "huber_delta": 0.1, "target_bound": 1},)"
      R"( "offset": 0.02, "d": 2})";
  const std::string out = dperm::RescaleTargetModel(scaled, 10, 20);
  const dperm::JsonValue m = dperm::ParseJson(out);
  EXPECT_EQ(m.Find("coefficients")->numbers, (std::vector<double>{2.5, -1.25}));
  EXPECT_DOUBLE_EQ(m.Find("intercept")->number, 15.5);
  EXPECT_DOUBLE_EQ(m.Find("offset")->number, 15.1);
  EXPECT_EQ(m.Find("target_bounds")->numbers, (std::vector<double>{10, 20}));
  EXPECT_EQ(m.Find("preprocessing")->Find("huber_delta")->number, 0.1);
  const std::string no_intercept =
      R"({"loss": "huber", "coefficients": [1, 2], "intercept": null})";
  EXPECT_THROW(dperm::RescaleTargetModel(no_intercept, 10, 20), dperm::Error);
  EXPECT_EQ(dperm::ParseJson(dperm::RescaleTargetModel(no_intercept, -3, 3))
                .Find("coefficients")
                ->numbers,
            (std::vector<double>{3, 6}));
  // Huge declared bounds: the products saturate at +-1e300 instead of
  // overflowing to a value the model's JSON cannot hold (an error that
  // would depend on the coefficients, i.e. on the rows).
  const dperm::JsonValue huge = dperm::ParseJson(dperm::RescaleTargetModel(scaled, -1e308, 1e308));
  EXPECT_EQ(huge.Find("coefficients")->numbers, (std::vector<double>{1e300, -1e300}));
  EXPECT_EQ(huge.Find("intercept")->number, 1e300);
}

// Issue 44, item 7: a value's length does not multiply the categories'
// work. The index finds what a linear scan finds; a value longer than every
// category matches none without being read past max_length + 1 bytes.
TEST(FeatureSpec, MatchesValuesByTheIndexInBoundedTime) {
  std::string json = R"({"c": {"values": [)";
  const int k = 10000;
  for (int i = 0; i < k; i++)
    json += (i > 0 ? ", \"" : "\"") + std::to_string(i * 7919 % 100003) + "\"";
  json += "]}, \"y\": {\"values\": [\"no\", \"yes\"], \"label\": true}}";
  const dperm::FeatureSpec s = dperm::ParseFeatureSpec(json);
  ASSERT_EQ(s.dimension(), k);
  EXPECT_EQ(dperm::ReadLimit(s.columns[0]), 7u);  // the longest value has 6 digits
  // a spec of more than kMaxSpecBytes is refused
  EXPECT_THROW(dperm::ParseFeatureSpec("{\"a\": {\"values\": [\"" + std::string(1000, 'v') +
                                       "\"]}, \"b\": " + std::string(dperm::kMaxSpecBytes, ' ') +
                                       "{\"type\": \"boolean\"}}"),
               dperm::Error);
  // a declared value of more than kMaxValueBytes is refused
  EXPECT_NO_THROW(
      dperm::ParseFeatureSpec("{\"a\": {\"values\": [\"" + std::string(1024, 'v') + "\"]}}"));
  EXPECT_THROW(
      dperm::ParseFeatureSpec("{\"a\": {\"values\": [\"" + std::string(1025, 'v') + "\"]}}"),
      dperm::Error);
  std::vector<double> out(k);
  for (int i : {0, 1, 17, k - 1}) {
    const std::string v = std::to_string(i * 7919 % 100003);
    const char* row[] = {v.c_str()};
    dperm::EncodeRow(s, row, out.data());
    for (int j = 0; j < k; j++) EXPECT_EQ(out[j], j == i ? 1.0 : 0.0);
  }
  for (const char* miss : {"", "x", "100004", "7919 "}) {
    const char* row[] = {miss};
    dperm::EncodeRow(s, row, out.data());
    for (double v : out) EXPECT_EQ(v, 0.0);
  }
  // 40 MB value: one row in well under a second (linear scan: k strlens of 40 MB).
  std::string big(40u << 20, '7');
  const char* row[] = {big.c_str()};
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 100; r++) dperm::EncodeRow(s, row, out.data());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  for (double v : out) EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(std::isnan(dperm::EncodeLabel(s.label, big.c_str())));
  EXPECT_EQ(dperm::EncodeLabel(s.label, "yes"), 1);
  EXPECT_EQ(dperm::EncodeLabel(s.label, "no"), 0);
  // A numeral is read to kMaxNumberText bytes: 1 then 2000 zeros is still
  // beyond every bound, a long fraction still its value.
  const dperm::FeatureSpec b = dperm::ParseFeatureSpec(R"({"x": {"bounds": [-5, 5]}})");
  const std::string huge = "1" + std::string(2000, '0');
  const std::string fraction = "2.5" + std::string(5000, '0');
  double x;
  const char* r1[] = {huge.c_str()};
  dperm::EncodeRow(b, r1, &x);
  EXPECT_EQ(x, 1);
  const char* r2[] = {fraction.c_str()};
  dperm::EncodeRow(b, r2, &x);
  EXPECT_EQ(x, 0.5);
}

// The array form keeps the order written; the stated spec reads back to
// the same encoding; ToRawUnits undoes the bounds' affine map.
TEST(FeatureSpec, ArrayFormAndRawUnits) {
  const dperm::FeatureSpec s = dperm::ParseFeatureSpec(
      R"([{"column": "z", "bounds": [20, 80]}, {"column": "a", "values": ["x", "Y"], "case": "insensitive"},
          {"column": "b", "type": "boolean"}, {"column": "y", "values": [false, true], "label": true}])");
  EXPECT_TRUE(s.declared_order);
  EXPECT_EQ(s.names, (std::vector<std::string>{"z", "a=x", "a=Y", "b"}));
  EXPECT_TRUE(s.label.json_booleans);
  EXPECT_EQ(s.label.values, (std::vector<std::string>{"false", "true"}));
  const dperm::FeatureSpec back = dperm::ParseFeatureSpec(dperm::FeatureSpecJson(s));
  EXPECT_EQ(back.names, s.names);
  EXPECT_TRUE(back.columns[1].fold_case);
  std::vector<double> out(4);
  const char* row[] = {"50", "y", "true"};
  dperm::EncodeRow(back, row, out.data());
  EXPECT_EQ(out, (std::vector<double>{0, 0, 1, 1}));
  // margin w.z + b at raw x equals the raw model's at x (inside the bounds).
  const double w[] = {0.6, -0.2, 0.3, 0.1};
  const dperm::RawModel r = dperm::ToRawUnits(s, w, 0.25, 0.5);
  EXPECT_DOUBLE_EQ(r.coefficients[0], 0.6 * 2 / 60);
  EXPECT_DOUBLE_EQ(r.intercept, 0.25 - 0.6 * 100 / 60);
  EXPECT_DOUBLE_EQ(r.noise[0], 0.5 * 2 / 60);
  EXPECT_DOUBLE_EQ(r.noise[1], 0.5);
  EXPECT_DOUBLE_EQ(r.intercept_noise, 0.5 * std::sqrt(1 + (100.0 / 60) * (100.0 / 60)));
  for (double x : {20.0, 33.0, 80.0}) {
    const std::string text = std::to_string(x);
    const char* raw_row[] = {text.c_str(), "x", "false"};
    dperm::EncodeRow(s, raw_row, out.data());
    double encoded = 0.25;
    for (int j = 0; j < 4; j++) encoded += w[j] * out[j];
    EXPECT_NEAR(encoded, r.intercept + r.coefficients[0] * x + r.coefficients[1], 1e-12);
  }
  EXPECT_THROW(dperm::ParseFeatureSpec(R"([{"bounds": [0, 1]}])"), dperm::Error);
  EXPECT_THROW(dperm::ParseFeatureSpec(R"({"a": {"values": ["A", "a"], "case": "insensitive"}})"),
               dperm::Error);
}

}  // namespace
