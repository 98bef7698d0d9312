// A released model: its JSON text form and prediction.
#pragma once
#include "dperm/core.hpp"
#include "dperm/plan.hpp"

#include <string>
#include <vector>

namespace dperm {

// What the release knows beyond the plan and the coefficients; plain
// pointers into memory the boundary owns.
struct ModelMeta {
  const char* created_at = "";          // ISO 8601, UTC
  const char* options_json = "{}";      // the options exactly as given
  const char* const* feature_names = nullptr;  // d names, or nullptr
  bool seeded = false;                  // a fixed seed: not private
};

// The model as JSON (DESIGN.md section 1, dp_model). `w` holds the d feature
// weights followed by the intercept when the plan fits one.
std::string ModelJson(const Plan& plan, const std::vector<double>& w,
                      const ModelMeta& meta);

// Prediction with the training preprocessing: the row is clipped exactly as
// training rows were, then the margin <coef, x> + intercept is turned into a
// probability (logistic) or returned as is (Huber). `scratch` holds d doubles.
double Predict(LossKind loss, const double* coef, int d, double intercept,
               double feature_bound, const double* x, double* scratch) noexcept;

}  // namespace dperm
