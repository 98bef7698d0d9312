// Unit tests of option validation (include/dperm/options/options.hpp, ParseOptions).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dperm/options/options.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::OptionEntry;
using dperm::Options;
using dperm::testing::NumberOption;
using Kind = OptionEntry::Kind;

OptionEntry Str(const char* key, const char* v) {
  OptionEntry e;
  e.key = key;
  e.kind = Kind::kString;
  e.text = v;
  return e;
}
OptionEntry Bool(const char* key, bool v) {
  OptionEntry e;
  e.key = key;
  e.kind = Kind::kBool;
  e.boolean = v;
  return e;
}
OptionEntry Null(const char* key) {
  OptionEntry e;
  e.key = key;
  e.kind = Kind::kNull;
  return e;
}
OptionEntry Array(const char* key, const std::vector<const char*>& items) {
  OptionEntry e;
  e.key = key;
  e.kind = Kind::kStringArray;
  e.n_items = static_cast<int>(items.size());
  e.items = items.data();
  return e;
}
OptionEntry Other(const char* key) {
  OptionEntry e;
  e.key = key;
  e.kind = Kind::kOther;
  return e;
}

Options Parse(const std::vector<OptionEntry>& entries) {
  return dperm::ParseOptions(entries.data(), static_cast<int>(entries.size()));
}

// Asserts that the entries are rejected (kInvalidParameter) with a message
// containing `needle` and a hint containing `hint_part`.
void ExpectRejected(const std::vector<OptionEntry>& entries, const std::string& needle,
                    const std::string& hint_part = "") {
  dperm::testing::ExpectInvalid([&] { Parse(entries); }, needle, hint_part);
}

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// With only epsilon given every other option has its documented default.
TEST(ParseOptions, Defaults) {
  Options o = Parse({NumberOption("epsilon", 0.5)});
  EXPECT_EQ(o.epsilon, 0.5);
  EXPECT_EQ(o.delta, 0.0);
  EXPECT_EQ(o.algorithm, dperm::Algorithm::kOutputGd);
  EXPECT_EQ(o.l2, 0.0);
  EXPECT_EQ(o.l1, 0.0);
  EXPECT_TRUE(o.fit_intercept);
  EXPECT_EQ(o.feature_bound, 1.0);
  EXPECT_EQ(o.huber_delta, 0.0);  // not given: derived from target_bound
  EXPECT_EQ(o.target_bound, 1.0);
  EXPECT_EQ(dperm::HuberDelta(o), 0.1);
  EXPECT_EQ(o.radius, 0.0);
  EXPECT_EQ(o.iterations, 0);
  EXPECT_EQ(o.step_size, 0.0);
  EXPECT_EQ(o.batch_size, 0);
  EXPECT_LT(o.ls_sigma, 0.0);
  EXPECT_EQ(o.accountant, dperm::Accountant::kTight);
  EXPECT_EQ(o.neighbors, dperm::Neighbors::kReplaceOne);
  EXPECT_FALSE(o.has_seed);
  EXPECT_FALSE(o.has_dataset);
  EXPECT_EQ(o.n_feature_names, -1);
}

// Every option given is read into its field.
TEST(ParseOptions, ReadsEveryOption) {
  std::vector<const char*> names = {"age", "income"};
  Options o = Parse(
      {NumberOption("epsilon", 2), NumberOption("delta", 1e-6), Str("algorithm", "output_gd"),
       NumberOption("l2", 0.1), NumberOption("l1", 0.01), Bool("fit_intercept", false),
       NumberOption("feature_bound", 3), NumberOption("huber_delta", 0.5),
       NumberOption("target_bound", 6), NumberOption("radius", 4), NumberOption("iterations", 250),
       NumberOption("step_size", 0.7), NumberOption("batch_size", 64),
       NumberOption("ls_sigma", 0.2), Str("accountant", "paper"), Str("neighbors", "replace_one"),
       Str("dataset", "bank"), NumberOption("seed", 42), Array("feature_names", names)});
  EXPECT_EQ(o.epsilon, 2.0);
  EXPECT_EQ(o.delta, 1e-6);
  EXPECT_EQ(o.l2, 0.1);
  EXPECT_EQ(o.l1, 0.01);
  EXPECT_FALSE(o.fit_intercept);
  EXPECT_EQ(o.feature_bound, 3.0);
  EXPECT_EQ(o.huber_delta, 0.5);
  EXPECT_EQ(o.target_bound, 6.0);
  EXPECT_EQ(dperm::HuberDelta(o), 0.5);  // a given huber_delta wins
  EXPECT_DOUBLE_EQ(
      dperm::HuberDelta(Parse({NumberOption("epsilon", 1), NumberOption("target_bound", 6)})), 0.6);
  EXPECT_EQ(o.radius, 4.0);
  EXPECT_EQ(o.iterations, 250);
  EXPECT_EQ(o.step_size, 0.7);
  EXPECT_EQ(o.batch_size, 64);
  EXPECT_EQ(o.ls_sigma, 0.2);
  EXPECT_EQ(o.accountant, dperm::Accountant::kPaper);
  EXPECT_TRUE(o.has_dataset);
  EXPECT_TRUE(o.has_seed);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.n_feature_names, 2);
  // Accountant "tight" by name, and the option order does not matter.
  o = Parse({Str("accountant", "tight"), NumberOption("epsilon", 1)});
  EXPECT_EQ(o.accountant, dperm::Accountant::kTight);
  EXPECT_EQ(o.epsilon, 1.0);
}

// epsilon is required: absent, or JSON null, is an error naming it.
TEST(ParseOptions, EpsilonRequired) {
  ExpectRejected({}, "epsilon");
  ExpectRejected({NumberOption("l2", 0.1)}, "\"epsilon\" is required");
  ExpectRejected({Null("epsilon")}, "\"epsilon\" is required");
}

// Below dperm::kMinEpsilon a release would show its exact n at no measurable cost
// (docs/user-guide.md, "Trust model"): refused, with the floor in the message.
TEST(Options, EpsilonBelowTheFloorIsRejected) {
  ExpectRejected({NumberOption("epsilon", 1e-150)}, "at least 0.001");
  ExpectRejected({NumberOption("epsilon", dperm::kMinEpsilon * 0.999)}, "epsilon");
  EXPECT_EQ(Parse({NumberOption("epsilon", 1e-3)}).epsilon, 1e-3);
}

// epsilon must be a finite number > 0: 0, negatives, NaN and +-inf fail.
TEST(ParseOptions, EpsilonRange) {
  for (double bad : {0.0, -0.0, -1.0, kNaN, kInf, -kInf})
    ExpectRejected({NumberOption("epsilon", bad)}, "epsilon");
  EXPECT_EQ(Parse({NumberOption("epsilon", dperm::kMinEpsilon)}).epsilon, dperm::kMinEpsilon);
  EXPECT_EQ(Parse({NumberOption("epsilon", 1e6)}).epsilon, 1e6);
}

// delta must lie in [0, 1): 0 and 0.999 pass; 1, negatives, NaN and inf fail.
TEST(ParseOptions, DeltaRange) {
  EXPECT_EQ(Parse({NumberOption("epsilon", 1), NumberOption("delta", 0)}).delta, 0.0);
  EXPECT_EQ(Parse({NumberOption("epsilon", 1), NumberOption("delta", 0.999)}).delta, 0.999);
  for (double bad : {1.0, 1.5, -1e-9, kNaN, kInf})
    ExpectRejected({NumberOption("epsilon", 1), NumberOption("delta", bad)}, "delta");
}

// An unknown key is rejected and the message names that key.
TEST(ParseOptions, UnknownKeyNamed) {
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("epsilom", 1)}, "\"epsilom\"");
  ExpectRejected({NumberOption("epsilon", 1), Bool("learning_rate", true)}, "\"learning_rate\"");
  // Even with a null value: a typo must not pass silently as "default".
  // (A JSON null means "default" only for a known key.)
  ExpectRejected({NumberOption("epsilon", 1), Null("no_such_key")}, "no_such_key");
}

// Values of the wrong JSON type are rejected with the key in the message.
TEST(ParseOptions, WrongTypesRejected) {
  ExpectRejected({Str("epsilon", "1")}, "epsilon");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("fit_intercept", 1)}, "fit_intercept");
  ExpectRejected({NumberOption("epsilon", 1), Str("fit_intercept", "true")}, "fit_intercept");
  ExpectRejected({NumberOption("epsilon", 1), Bool("l2", true)}, "l2");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("accountant", 1)}, "accountant");
  ExpectRejected({NumberOption("epsilon", 1), Str("feature_names", "a")}, "feature_names");
  ExpectRejected({NumberOption("epsilon", 1), Other("delta")}, "delta");
  ExpectRejected({NumberOption("epsilon", 1), Other("iterations")}, "iterations");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("dataset", 3)}, "dataset");
}

// Unknown values of the string-valued options are rejected, naming the value.
TEST(ParseOptions, UnknownChoicesRejected) {
  ExpectRejected({NumberOption("epsilon", 1), Str("algorithm", "dp_sgdx")}, "dp_sgdx");
  ExpectRejected({NumberOption("epsilon", 1), Str("algorithm", "")}, "algorithm");
  ExpectRejected({NumberOption("epsilon", 1), Str("accountant", "rdp")}, "rdp");
  ExpectRejected({NumberOption("epsilon", 1), Str("accountant", "Tight")}, "accountant");
  ExpectRejected({NumberOption("epsilon", 1), Str("neighbors", "add_remove")}, "add_remove");
}

// iterations must be an integer >= 1.
TEST(ParseOptions, IterationsInteger) {
  EXPECT_EQ(Parse({NumberOption("epsilon", 1), NumberOption("iterations", 1)}).iterations, 1);
  EXPECT_EQ(Parse({NumberOption("epsilon", 1), NumberOption("iterations", 5000)}).iterations, 5000);
  for (double bad : {0.0, -3.0, 2.5, 1e-9, kNaN, kInf})
    ExpectRejected({NumberOption("epsilon", 1), NumberOption("iterations", bad)}, "iterations");
}

// The other numeric ranges: l2 >= 0, feature_bound > 0, huber_delta > 0,
// step_size > 0, batch_size an integer >= 1.
TEST(ParseOptions, NumericRanges) {
  EXPECT_EQ(Parse({NumberOption("epsilon", 1), NumberOption("l2", 0)}).l2, 0.0);
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("l2", -0.1)}, "l2");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("l2", kInf)}, "l2");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("feature_bound", 0)}, "feature_bound");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("feature_bound", kNaN)},
                 "feature_bound");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("huber_delta", -1)}, "huber_delta");
  for (double bad : {0.0, -1.0, kNaN, kInf, 1e151})
    ExpectRejected({NumberOption("epsilon", 1), NumberOption("target_bound", bad)}, "target_bound");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("target_bound", -2)}, "",
                 "clips targets to [-B, B]");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("step_size", 0)}, "step_size");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("batch_size", 1.5)}, "batch_size");
  ExpectRejected({NumberOption("epsilon", 1), NumberOption("seed", 0.5)}, "seed");
}

// feature_names may not contain "intercept" (it would clash with the
// intercept term) or empty names.
TEST(ParseOptions, FeatureNamesChecked) {
  std::vector<const char*> good = {"a", "b", "c"};
  EXPECT_EQ(Parse({NumberOption("epsilon", 1), Array("feature_names", good)}).n_feature_names, 3);
  std::vector<const char*> with_intercept = {"a", "intercept"};
  ExpectRejected({NumberOption("epsilon", 1), Array("feature_names", with_intercept)}, "intercept");
  std::vector<const char*> with_empty = {"a", ""};
  ExpectRejected({NumberOption("epsilon", 1), Array("feature_names", with_empty)}, "empty");
  std::vector<const char*> with_null = {nullptr};
  ExpectRejected({NumberOption("epsilon", 1), Array("feature_names", with_null)}, "feature_names");
  // "Intercept" in another case or as a prefix is a different name.
  std::vector<const char*> similar = {"intercept_2", "Intercept"};
  EXPECT_EQ(Parse({NumberOption("epsilon", 1), Array("feature_names", similar)}).n_feature_names,
            2);
}

// `intercept`: a release fits the intercept on a private offset unless asked
// for 'fitted' (offset.hpp); code that fills Options directly does not.
TEST(ParseOptions, InterceptOffsetByDefault) {
  EXPECT_TRUE(Parse({NumberOption("epsilon", 1)}).intercept_offset);
  EXPECT_TRUE(Parse({NumberOption("epsilon", 1), Null("intercept")}).intercept_offset);
  EXPECT_TRUE(Parse({NumberOption("epsilon", 1), Str("intercept", "offset")}).intercept_offset);
  EXPECT_FALSE(Parse({NumberOption("epsilon", 1), Str("intercept", "fitted")}).intercept_offset);
  EXPECT_THROW(Parse({NumberOption("epsilon", 1), Str("intercept", "free")}), dperm::Error);
  EXPECT_FALSE(Options().intercept_offset);
}

// A JSON null for a known key means "use the default".
TEST(ParseOptions, NullMeansDefault) {
  Options o = Parse({NumberOption("epsilon", 1), Null("delta"), Null("l2"), Null("fit_intercept"),
                     Null("feature_bound"), Null("iterations"), Null("accountant"), Null("seed"),
                     Null("feature_names")});
  EXPECT_EQ(o.delta, 0.0);
  EXPECT_EQ(o.l2, 0.0);
  EXPECT_TRUE(o.fit_intercept);
  EXPECT_EQ(o.feature_bound, 1.0);
  EXPECT_EQ(o.iterations, 0);
  EXPECT_EQ(o.accountant, dperm::Accountant::kTight);
  EXPECT_FALSE(o.has_seed);
  EXPECT_EQ(o.n_feature_names, -1);
}

// The documented key list is exactly the keys ParseOptions accepts: every key
// of OptionKeys() parses (with a value of its type).
TEST(ParseOptions, EveryDocumentedKeyIsAccepted) {
  std::vector<const char*> names = {"x"};
  for (const std::string& key : dperm::OptionKeys()) {
    OptionEntry e;
    if (key == "algorithm") e = Str(key.c_str(), "output_gd");
    else if (key == "accountant") e = Str(key.c_str(), "paper");
    else if (key == "neighbors") e = Str(key.c_str(), "replace_one");
    else if (key == "intercept") e = Str(key.c_str(), "fitted");
    else if (key == "dataset") e = Str(key.c_str(), "d");
    else if (key == "fit_intercept") e = Bool(key.c_str(), false);
    else if (key == "feature_names") e = Array(key.c_str(), names);
    else if (key == "delta") e = NumberOption(key.c_str(), 0.5);
    else if (key == "classes") e = NumberOption(key.c_str(), 3);
    else e = NumberOption(key.c_str(), 1);
    EXPECT_NO_THROW(Parse({NumberOption("epsilon", 1), e})) << key;
  }
  EXPECT_EQ(dperm::OptionKeys().size(), 24u);
}

}  // namespace
