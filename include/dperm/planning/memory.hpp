// A release's memory estimate, from public quantities only: what the
// boundary checks against dperm.max_release_memory before the charge
// (54000) and dp_explain shows.
#pragma once
#include "dperm/plan/l2_selection.hpp"
#include "dperm/plan/plan.hpp"

namespace dperm {

// The peak memory, in bytes, of training by the plan besides the rows
// themselves (dperm.max_buffer bounds those): one formula over the
// algorithm's state sizes, from public quantities only (n, d, K, options).
//   8 (V dim + Q dim^2 + A n + P) + T dim
// V = spec.model_vectors + kSharedModelVectors (the objective's gradient,
// the returned coefficients, the noise); Q = spec.model_matrices;
// A = spec.row_arrays, 0 when
// streaming (no rows in memory; a pass's state is O(dim)); P = the largest
// block of a full pass (loss.hpp: at most kFullPassBlockWork margins, or
// max(K, kFullPassBlockWork) softmax scores) plus a softmax row's scratch,
// kFullPassBlockWork + 3 K values; T =
// kModelTextBytes per coefficient (the released model's JSON and Datum).
// The boundary refuses a release above dperm.max_release_memory before it
// is charged (54000), and dp_explain shows the figure.
constexpr int kSharedModelVectors = 4;
constexpr double kModelTextBytes = 64;
double ReleaseMemoryBytes(const Plan& plan, bool streaming);

// The peak memory of TrainL2Selection besides the rows (ReleaseMemoryBytes,
// above): its copy of the rows split in two parts and the
// permutation, 8 (n (d + 1) + n) bytes, the candidates' coefficients, and
// the largest candidate's training.
double SelectionMemoryBytes(const L2Selection& selection);

}  // namespace dperm
