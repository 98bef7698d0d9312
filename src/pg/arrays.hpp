// float8[] and oid[] values from C arrays (arrays.cpp).
#pragma once

#include "boundary.hpp"

namespace dperm::pg {

// A float8[] or oid[] value of n elements (palloc'd).
Datum Float8ArrayDatum(const double* values, int n);
Datum OidArrayDatum(const Oid* oids, int n);

}  // namespace dperm::pg
