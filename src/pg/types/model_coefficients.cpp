// dp_coefficients: a dp_model's coefficients as rows, named by the model's
// feature_names (model_type.hpp has the layout).
#include "types/model_type.hpp"

extern "C" {
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
}

using dperm::LossKind;
using namespace dperm::pg;

// dp_coefficients(model): one row per coefficient, the intercept first; a
// softmax model lists class 0's intercept and terms, then class 1's, ...
// The class column (NULL for binary models) exists from 0.4.0; under an
// older catalog (two columns) binary models are listed without it.
DPERM_FUNCTION(dp_coefficients) {
  ModelDatum* m = GetModel(fcinfo, 0);
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  bool has_class = rsinfo->setDesc->natts >= 3;
  bool softmax = dperm::LossIsMulticlass(static_cast<LossKind>(m->loss));  // per class
  if (softmax && !has_class)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dp_coefficients of a softmax model needs dperm 0.4.0"),
                    errhint("Run ALTER EXTENSION dperm UPDATE.")));
  // The names, if feature_names is an array (input checks it is one of d
  // strings; a model stored before that check may hold anything there).
  Jsonb* j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(ModelJsonText(m))));
  JsonbValue* names = JB_ROOT_IS_OBJECT(j) && !JB_ROOT_IS_SCALAR(j)
                          ? getKeyJsonValueFromContainer(&j->root, "feature_names", 13, nullptr)
                          : nullptr;
  JsonbContainer* names_a =
      names != nullptr && names->type == jbvBinary && JsonContainerIsArray(names->val.binary.data)
          ? names->val.binary.data
          : nullptr;
  int n_names = names_a != nullptr ? int(JsonContainerSize(names_a)) : 0;
  Datum* terms = static_cast<Datum*>(palloc(sizeof(Datum) * (m->d + 1)));
  for (int i = 0; i < m->d; i++) {
    JsonbValue* name = i < n_names ? getIthJsonbValueFromContainer(names_a, uint32(i)) : nullptr;
    terms[i] =
        name != nullptr && name->type == jbvString
            ? PointerGetDatum(cstring_to_text_with_len(name->val.string.val, name->val.string.len))
            : CStringGetTextDatum(psprintf("x%d", i + 1));
  }
  Datum intercept_term = CStringGetTextDatum("intercept");
  Datum values[3];
  bool nulls[3] = {false, false, !softmax};
  // Binary: one block of (d weights) with m->intercept; softmax: K blocks of
  // (d weights, intercept when fitted).
  int blocks = softmax ? ModelClasses(m) : 1;
  int per_class = softmax ? m->d + (m->fit_intercept ? 1 : 0) : m->d;
  for (int k = 0; k < blocks; k++) {
    const double* w = m->coef + Size(k) * per_class;
    values[2] = Int32GetDatum(k);
    if (m->fit_intercept) {
      values[0] = intercept_term;
      values[1] = Float8GetDatum(softmax ? w[m->d] : m->intercept);
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    for (int i = 0; i < m->d; i++) {
      values[0] = terms[i];
      values[1] = Float8GetDatum(w[i]);
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  }
  return (Datum)0;
}
