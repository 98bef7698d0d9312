// Feature specs (feature_spec.hpp): parsing, the public shape a spec
// declares, and the encoding of values that are not what the spec expects.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dperm/model/feature_spec.hpp"

namespace {

TEST(FeatureSpec, DeclaresDimensionNamesAndBound) {
  const dperm::FeatureSpec s = dperm::ParseFeatureSpec(
      R"({"age": {"bounds": [18, 80]}, "home": {"values": ["owner", "rent", "other"]}, "vip": {"type": "boolean"}})");
  ASSERT_EQ(s.dimension(), 5);
  EXPECT_EQ(s.names, (std::vector<std::string>{"age", "home=owner", "home=rent", "home=other", "vip"}));
  EXPECT_DOUBLE_EQ(s.norm_bound, std::sqrt(3.0));
}

TEST(FeatureSpec, EncodesWithinTheBoundWhateverTheValues) {
  const dperm::FeatureSpec s = dperm::ParseFeatureSpec(
      R"({"x": {"bounds": [-5, 5]}, "c": {"values": ["a", "b"]}, "f": {"type": "boolean"}})");
  const char* rows[][3] = {{"5", "a", "t"},        {"-5", "b", "f"},       {"1e308", "zz", "true"},
                           {"-Infinity", "", "x"}, {"NaN", nullptr, "t"},  {"not a number", "a", nullptr},
                           {nullptr, nullptr, nullptr}, {" 2", "b", "f"}};
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
  for (const char* bad : {"[]", "{}", R"({"a": 1})", R"({"a": {}})", R"({"a": {"bounds": [1]}})",
                          R"({"a": {"bounds": [2, 1]}})", R"({"a": {"bounds": [0, 1e400]}})",
                          R"({"a": {"values": []}})", R"({"a": {"values": [1]}})",
                          R"({"a": {"values": ["x", "x"]}})", R"({"a": {"type": "int"}})",
                          R"({"a": {"bounds": [0, 1], "type": "boolean"}})", R"({"": {"type": "boolean"}})"})
    EXPECT_THROW(dperm::ParseFeatureSpec(bad), dperm::Error) << bad;
}

}  // namespace
