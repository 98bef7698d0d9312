// dperm's total float8 functions (docs/user-guide.md, "Training on a
// query"): dperm.div, dperm.ln, dperm.log10, dperm.sqrt, dperm.plus,
// dperm.minus and dperm.times return NULL where PostgreSQL's operator or
// function would raise (float.c: division by zero, the log of zero or of a
// negative number, the square root of a negative number, a finite result
// out of range: overflow to infinity, or underflow to zero, from finite
// arguments). They never raise on any argument, so they are declared
// LEAKPROOF (sql/dperm.sql) and an analyst's query may call them on a
// protected relation (query_input.cpp's function rule): an error that
// depends on one row would leak that row. NaN and infinite arguments give
// what the built-in gives (it does not raise on them). STRICT: a NULL
// argument gives NULL without a call.
//
// Plain C functions of doubles: no C++ object, no PostgreSQL call that can
// raise (PG_RETURN_FLOAT8 pallocs nothing on a 64-bit float8-by-value
// build).
#include <cmath>

#include "base/boundary.hpp"

namespace {

// Whether x op y's finite result overflowed or underflowed where PostgreSQL
// raises (float.h: float_overflow_error, float_underflow_error).
bool OutOfRange(double result, double x, double y, bool zero_is_underflow) {
  if (std::isinf(result) && !std::isinf(x) && !std::isinf(y)) return true;
  return zero_is_underflow && result == 0.0;
}

}  // namespace

extern "C" {

PG_FUNCTION_INFO_V1(dperm_div);
PG_FUNCTION_INFO_V1(dperm_ln);
PG_FUNCTION_INFO_V1(dperm_log10);
PG_FUNCTION_INFO_V1(dperm_sqrt);
PG_FUNCTION_INFO_V1(dperm_plus);
PG_FUNCTION_INFO_V1(dperm_minus);
PG_FUNCTION_INFO_V1(dperm_times);

// dperm.div(x, y): x / y; NULL for y = 0 (float8div raises "division by
// zero") and where float8div raises out of range (an infinite quotient of
// finite x and y; a zero quotient of a non-zero x and finite y).
Datum dperm_div(PG_FUNCTION_ARGS) {
  double x = PG_GETARG_FLOAT8(0), y = PG_GETARG_FLOAT8(1);
  if (y == 0.0) PG_RETURN_NULL();
  double q = x / y;
  if (OutOfRange(q, x, y, x != 0.0 && !std::isinf(y))) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(q);
}

// dperm.ln(x): ln x; NULL for x <= 0 (dlog1 raises for zero and negative
// numbers). ln of a finite positive double is finite and never zero-underflows
// except ln 1 = 0, which dlog1 allows.
Datum dperm_ln(PG_FUNCTION_ARGS) {
  double x = PG_GETARG_FLOAT8(0);
  if (x <= 0.0) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(std::log(x));
}

// dperm.log10(x): log10 x; NULL for x <= 0 (dlog10 raises).
Datum dperm_log10(PG_FUNCTION_ARGS) {
  double x = PG_GETARG_FLOAT8(0);
  if (x <= 0.0) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(std::log10(x));
}

// dperm.sqrt(x): the square root; NULL for x < 0 (dsqrt raises).
Datum dperm_sqrt(PG_FUNCTION_ARGS) {
  double x = PG_GETARG_FLOAT8(0);
  if (x < 0.0) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(std::sqrt(x));
}

// dperm.plus(x, y): x + y; NULL where float8pl raises (an infinite sum of
// finite numbers).
Datum dperm_plus(PG_FUNCTION_ARGS) {
  double x = PG_GETARG_FLOAT8(0), y = PG_GETARG_FLOAT8(1);
  double s = x + y;
  if (OutOfRange(s, x, y, false)) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(s);
}

// dperm.minus(x, y): x - y; NULL where float8mi raises.
Datum dperm_minus(PG_FUNCTION_ARGS) {
  double x = PG_GETARG_FLOAT8(0), y = PG_GETARG_FLOAT8(1);
  double s = x - y;
  if (OutOfRange(s, x, y, false)) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(s);
}

// dperm.times(x, y): x * y; NULL where float8mul raises (an infinite product
// of finite numbers; a zero product of non-zero numbers).
Datum dperm_times(PG_FUNCTION_ARGS) {
  double x = PG_GETARG_FLOAT8(0), y = PG_GETARG_FLOAT8(1);
  double p = x * y;
  if (OutOfRange(p, x, y, x != 0.0 && y != 0.0)) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(p);
}

}  // extern "C"
