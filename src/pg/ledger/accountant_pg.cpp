// The accountant in SQL: Poisson sampling, add/remove neighbours, L2
// sensitivity 1 unless stated (the setting of the accounting reference
// vectors the unit tests read).
#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/accounting/pld.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/planning/unit_level.hpp"

#include <cmath>

#include "base/arrays.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
}

namespace dperm::pg {
namespace {

enum class Accounting { kRdp, kPld };

Accounting ParseAccountant(FunctionCallInfo fcinfo, int arg) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(arg));
  if (strcmp(name, "rdp") == 0) return Accounting::kRdp;
  if (strcmp(name, "pld") == 0) return Accounting::kPld;
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("unknown accountant \"%s\"", name),
           errhint("Valid accountants: rdp (Renyi DP), pld (privacy loss distribution).")));
  pg_unreachable();
}

// The values of a one-dimensional float8[] without NULLs, palloc'd.
double* ReadDoubles(ArrayType* array, const char* what, int* n) {
  if (ARR_NDIM(array) > 1)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("%s must be a one-dimensional array", what)));
  if (ARR_HASNULL(array))
    ereport(ERROR,
            (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not contain NULL", what)));
  *n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
  double* out = static_cast<double*>(palloc(sizeof(double) * Max(*n, 1)));
  memcpy(out, ARR_DATA_PTR(array), sizeof(double) * *n);
  return out;
}

// Epsilon of `steps` Poisson-subsampled Gaussian steps by the accountant.
double Epsilon(Accounting a, double q, double sigma, int64 steps, double delta) {
  return a == Accounting::kRdp ? EpsilonPoissonSubsampledGaussianRdp(q, sigma, steps, delta)
                               : EpsilonPoissonSubsampledGaussianPld(q, sigma, steps, delta);
}

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.gaussian_sigma(epsilon, delta, sensitivity): analytic Gaussian
// mechanism (Balle & Wang 2018, Theorem 8).
DPERM_FUNCTION(dperm_gaussian_sigma) {
  double eps = PG_GETARG_FLOAT8(0), delta = PG_GETARG_FLOAT8(1), sens = PG_GETARG_FLOAT8(2);
  double sigma = 0;
  RunCore([&] { sigma = dperm::AnalyticGaussianSigma(eps, delta, sens); });
  PG_RETURN_FLOAT8(sigma);
}

// dperm.rdp_subsampled_gaussian(q, noise_multiplier, steps, orders) -> rdp[]
// (Mironov, Talwar, Zhang 2019; composition adds, Mironov 2017 Prop. 1).
DPERM_FUNCTION(dperm_rdp_subsampled_gaussian) {
  double q = PG_GETARG_FLOAT8(0), sigma = PG_GETARG_FLOAT8(1);
  int64 steps = PG_GETARG_INT64(2);
  int n;
  double* orders = ReadDoubles(PG_GETARG_ARRAYTYPE_P(3), "orders", &n);
  double* out = static_cast<double*>(palloc(sizeof(double) * Max(n, 1)));
  RunCore([&] {
    if (!(q > 0 && q <= 1)) dperm::ThrowInvalid("q must be in (0, 1]");
    if (steps < 1) dperm::ThrowInvalid("steps must be at least 1");
    std::vector<double> curve = dperm::RdpPoissonSubsampledGaussianCurve(
        q, sigma, steps, std::vector<double>(orders, orders + n));
    std::copy(curve.begin(), curve.end(), out);
  });
  return Float8ArrayDatum(out, n);
}

// dperm.rdp_to_epsilon(orders, rdp, delta): improved conversion, best order
// (Balle et al. 2020, Thm 21).
DPERM_FUNCTION(dperm_rdp_to_epsilon) {
  int n_orders, n_rdp;
  double* orders = ReadDoubles(PG_GETARG_ARRAYTYPE_P(0), "orders", &n_orders);
  double* rdp = ReadDoubles(PG_GETARG_ARRAYTYPE_P(1), "rdp", &n_rdp);
  double delta = PG_GETARG_FLOAT8(2);
  if (n_orders != n_rdp)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("orders has %d elements and rdp has %d", n_orders, n_rdp)));
  double eps = 0;
  RunCore([&] {
    eps = dperm::RdpToEpsilon(std::vector<double>(orders, orders + n_orders),
                              std::vector<double>(rdp, rdp + n_rdp), delta);
  });
  PG_RETURN_FLOAT8(eps);
}

// dperm.epsilon_subsampled_gaussian(q, noise_multiplier, steps, delta, accountant)
DPERM_FUNCTION(dperm_epsilon_subsampled_gaussian) {
  double q = PG_GETARG_FLOAT8(0), sigma = PG_GETARG_FLOAT8(1);
  int64 steps = PG_GETARG_INT64(2);
  double delta = PG_GETARG_FLOAT8(3);
  Accounting a = ParseAccountant(fcinfo, 4);
  double eps = 0;
  RunCore([&] { eps = Epsilon(a, q, sigma, steps, delta); });
  PG_RETURN_FLOAT8(eps);
}

// dperm.calibrate_noise_multiplier(q, steps, epsilon, delta, accountant): the
// smallest noise multiplier whose accounted epsilon is <= the target.
DPERM_FUNCTION(dperm_calibrate_noise_multiplier) {
  double q = PG_GETARG_FLOAT8(0);
  int64 steps = PG_GETARG_INT64(1);
  double target = PG_GETARG_FLOAT8(2), delta = PG_GETARG_FLOAT8(3);
  Accounting a = ParseAccountant(fcinfo, 4);
  double sigma = 0;
  RunCore([&] {
    // Validate once here, so that errors name the arguments, not sigma.
    Epsilon(a, q, 1.0, steps, delta);
    sigma = dperm::CalibrateNoiseMultiplier(
        [&](double s) { return Epsilon(a, q, s, steps, delta); }, target);
  });
  PG_RETURN_FLOAT8(sigma);
}

// dperm.unit_release_at_row(epsilon, delta) -> (epsilon, delta, rdp): what a
// release that is (epsilon, delta)-DP per privacy unit (its count and model
// together, as the ledger charges it) costs a budget that protects rows
// (UnitReleaseAtRow: group privacy over the two units a replaced row
// touches); rdp NULL when it has no curve. The ledger writer charges the
// same numbers; dperm.retraining_forecast uses them for such budgets.
DPERM_FUNCTION(dperm_unit_release_at_row) {
  double epsilon = PG_GETARG_FLOAT8(0);
  double delta = PG_GETARG_FLOAT8(1);
  if (!(epsilon >= 0 && std::isfinite(epsilon)) || !(delta >= 0 && delta < 1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("epsilon must be finite and >= 0, and delta in [0, 1)")));
  TupleDesc desc;
  if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
    elog(ERROR, "dperm.unit_release_at_row must return a record");
  desc = BlessTupleDesc(desc);
  PgBox<dperm::ReleaseCost> row(CurrentMemoryContext);
  RunCore([&] { row.Emplace(dperm::UnitReleaseAtRow(epsilon, delta)); });
  Datum values[3] = {
      Float8GetDatum(row->epsilon), Float8GetDatum(row->delta),
      row->curve.empty() ? (Datum)0 : Float8ArrayDatum(row->curve.data(), int(row->curve.size()))};
  bool nulls[3] = {false, false, row->curve.empty()};
  PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
