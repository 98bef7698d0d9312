// float8[] and oid[] values from C arrays (arrays.cpp).
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "utils/array.h"
}

namespace dperm::pg {

// A float8[] or oid[] value of n elements (palloc'd).
Datum Float8ArrayDatum(const double* values, int n);
Datum OidArrayDatum(const Oid* oids, int n);

// The first min(elements, limit) elements of a float8[] (any shape, storage
// order; NULL -> NaN) into out[]; returns how many. Reads no element past
// `limit`: a row's cost is bounded by the public d, not its array's length.
int Float8ArrayPrefix(ArrayType* array, int limit, double* out);

}  // namespace dperm::pg
