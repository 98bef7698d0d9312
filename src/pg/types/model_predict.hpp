// Prediction with a dp_model (model_predict.cpp): a call site's decoded
// model and buffers, and the arithmetic of dp_predict, dp_predict_class and
// dp_predict_proba, shared with a named model's dperm.predict.
#pragma once

#include "base/boundary.hpp"
#include "types/model_type.hpp"

namespace dperm::pg {

// A call site's decoded model (fn_extra): a column of models read row by
// row is detoasted (often decompressed) and checked once per distinct
// stored value, not once per row, and the buffers are allocated once.
struct PredictCache {
  Size raw_size;      // the argument as stored: inline, compressed or a TOAST pointer
  char* raw;          // its bytes, to recognise the same value on the next row
  ModelDatum* model;  // detoasted and checked (GetModel)
  double* x;          // the features, d doubles
  double* scratch;    // d + 1 doubles
  double* proba;      // one per class
};

// Decodes `datum` (detoasted and checked, GetModel) into *c, in `mcxt`, with
// its buffers; frees what *c held before.
void LoadModel(PredictCache* c, MemoryContext mcxt, Datum datum);

// The features argument as d doubles (NULL elements become NaN, which
// clipping turns into 0, as in training): the array's own data when it has
// no NULL, else c->x.
const double* PredictFeatures(FunctionCallInfo fcinfo, int arg, PredictCache* c);

// Class probabilities of a classifier into c->proba (PostgreSQL phase:
// Predict and PredictSoftmax are noexcept functions of plain buffers).
// Binary logistic models have two classes, 0 (label false / <= 0) and 1:
// {1 - p, p}.
int ClassProbabilities(PredictCache* c, const double* x);

}  // namespace dperm::pg
