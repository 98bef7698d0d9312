// dp_coefficients: a dp_model's coefficients as rows, named by the model's
// feature_names (model_type.hpp has the layout); a model trained through a
// feature spec read per unit of each raw column (dperm::ToRawUnits).
#include "dperm/model/feature_spec.hpp"

#include <string>
#include <vector>

#include "types/model_type.hpp"

extern "C" {
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
}

using dperm::LossKind;
using namespace dperm::pg;

namespace {

// Member `key` of the model's JSON object, or nullptr.
JsonbValue* ModelMember(Jsonb* j, const char* key) {
  if (!JB_ROOT_IS_OBJECT(j) || JB_ROOT_IS_SCALAR(j)) return nullptr;
  return getKeyJsonValueFromContainer(&j->root, key, int(strlen(key)), nullptr);
}

// The rows dp_coefficients lists: per block (one, or one per softmax
// class) the intercept when fitted, then the d weights, each with its noise
// scale; raw: through the model's "feature_spec" (ToRawUnits, post-processing).
struct CoefficientRows {
  std::vector<double> weights, noise;               // blocks * d
  std::vector<double> intercepts, intercept_noise;  // blocks
  std::vector<std::string> names;                   // d, from the spec; empty: feature_names
};

}  // namespace

// dp_coefficients(model, scale => 'raw' | 'encoded'): one row per
// coefficient, the intercept first; a softmax model lists class 0's
// intercept and terms, then class 1's, ... A model trained through a feature
// spec ("feature_spec" in its JSON) is read, by default, per unit of each
// raw column: a "bounds" column's weight times 2/(hi - lo), the intercept
// shifted to match (raw columns at their values, not at the encoding's
// [-1, 1]); one-hot levels (column=value) and booleans stay as they are.
// 'encoded' lists the weights the mechanism released. noise_scale is the
// model's stated noise scale mapped the same way (NULL when it states
// none). Post-processing of the release: reads no row, charges nothing.
// The class column exists from 0.4.0, scale and noise_scale from 0.7.0;
// under an older catalog the rows are listed without them (encoded).
DPERM_FUNCTION(dp_coefficients) {
  ModelDatum* m = GetModel(fcinfo, 0);
  bool raw = true;
  if (PG_NARGS() > 1) {
    const char* scale = text_to_cstring(PG_GETARG_TEXT_PP(1));
    if (strcmp(scale, "encoded") == 0) raw = false;
    else if (strcmp(scale, "raw") != 0)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("scale must be 'raw' or 'encoded', not \"%s\"", scale)));
  } else {
    raw = false;
  }
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  bool has_class = rsinfo->setDesc->natts >= 3;
  bool has_noise = rsinfo->setDesc->natts >= 4;
  bool softmax = dperm::LossIsMulticlass(static_cast<LossKind>(m->loss));  // per class
  if (softmax && !has_class)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dp_coefficients of a softmax model needs dperm 0.4.0"),
                    errhint("Run ALTER EXTENSION dperm UPDATE.")));
  // The names, if feature_names is an array (input checks it is one of d
  // strings; a model stored before that check may hold anything there).
  Jsonb* j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(ModelJsonText(m))));
  JsonbValue* names = ModelMember(j, "feature_names");
  JsonbContainer* names_a =
      names != nullptr && names->type == jbvBinary && JsonContainerIsArray(names->val.binary.data)
          ? names->val.binary.data
          : nullptr;
  int n_names = names_a != nullptr ? int(JsonContainerSize(names_a)) : 0;
  JsonbValue* noise_v = ModelMember(j, "noise_scale");
  const bool noise_known = noise_v != nullptr && noise_v->type == jbvNumeric;
  const double noise = noise_known ? DatumGetFloat8(DirectFunctionCall1(
                                         numeric_float8, NumericGetDatum(noise_v->val.numeric)))
                                   : 0;
  JsonbValue* spec_v = raw ? ModelMember(j, "feature_spec") : nullptr;
  const char* spec_text =
      spec_v != nullptr && spec_v->type == jbvBinary
          ? JsonbToCString(nullptr, spec_v->val.binary.data, int(spec_v->val.binary.len))
          : nullptr;

  // Binary: one block of (d weights) with m->intercept; softmax: K blocks of
  // (d weights, intercept when fitted).
  const int blocks = softmax ? ModelClasses(m) : 1;
  const int per_class = softmax ? m->d + (m->fit_intercept ? 1 : 0) : m->d;
  const int d = m->d;
  const bool fit_intercept = m->fit_intercept;
  const double intercept = m->intercept;
  const double* coef = m->coef;
  PgBox<CoefficientRows> rows(CurrentMemoryContext);
  RunCore([&] {
    CoefficientRows& r = rows.Emplace();
    dperm::FeatureSpec spec;
    if (spec_text != nullptr) {
      spec = dperm::ParseFeatureSpec(spec_text);
      if (spec.dimension() != d)
        dperm::ThrowInvalid("the model's feature_spec encodes " + std::to_string(spec.dimension()) +
                            " features, but the model has " + std::to_string(d));
      r.names = spec.names;
    }
    for (int k = 0; k < blocks; k++) {
      const double* w = coef + size_t(k) * size_t(per_class);
      const double b = !fit_intercept ? 0 : softmax ? w[d] : intercept;
      if (spec_text != nullptr) {
        dperm::RawModel raw_model = dperm::ToRawUnits(spec, w, b, noise);
        r.weights.insert(r.weights.end(), raw_model.coefficients.begin(),
                         raw_model.coefficients.end());
        r.noise.insert(r.noise.end(), raw_model.noise.begin(), raw_model.noise.end());
        r.intercepts.push_back(raw_model.intercept);
        r.intercept_noise.push_back(raw_model.intercept_noise);
      } else {
        r.weights.insert(r.weights.end(), w, w + d);
        r.noise.insert(r.noise.end(), size_t(d), noise);
        r.intercepts.push_back(b);
        r.intercept_noise.push_back(noise);
      }
    }
  });
  if (spec_text != nullptr && !fit_intercept)
    for (int k = 0; k < blocks; k++)
      if (rows->intercepts[k] != 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("a model without intercept cannot be read in the raw columns' units"),
                 errhint("Its bounds columns' centres move into an intercept it lacks; use "
                         "scale => 'encoded'.")));
  Datum* terms = static_cast<Datum*>(palloc(sizeof(Datum) * (d + 1)));
  for (int i = 0; i < d; i++) {
    if (!rows->names.empty()) {
      terms[i] = CStringGetTextDatum(rows->names[i].c_str());
      continue;
    }
    JsonbValue* name = i < n_names ? getIthJsonbValueFromContainer(names_a, uint32(i)) : nullptr;
    terms[i] =
        name != nullptr && name->type == jbvString
            ? PointerGetDatum(cstring_to_text_with_len(name->val.string.val, name->val.string.len))
            : CStringGetTextDatum(psprintf("x%d", i + 1));
  }
  Datum intercept_term = CStringGetTextDatum("intercept");
  Datum values[4];
  bool nulls[4] = {false, false, !softmax, !noise_known};
  for (int k = 0; k < blocks; k++) {
    values[2] = Int32GetDatum(k);
    if (fit_intercept) {
      values[0] = intercept_term;
      values[1] = Float8GetDatum(rows->intercepts[k]);
      values[3] = Float8GetDatum(rows->intercept_noise[k]);
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    for (int i = 0; i < d; i++) {
      values[0] = terms[i];
      values[1] = Float8GetDatum(rows->weights[size_t(k) * size_t(d) + size_t(i)]);
      values[3] = Float8GetDatum(rows->noise[size_t(k) * size_t(d) + size_t(i)]);
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  }
  (void)has_noise;
  return (Datum)0;
}
