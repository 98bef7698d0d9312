// Named models' catalog (model_registry.cpp): a model's specification, and
// how a name resolves to one role's model for the caller.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "access/htup.h"
#include "access/tupdesc.h"
}

namespace dperm::pg {

// The specification of a model: what retrain trains again.
struct ModelSpec {
  const char* name;
  Oid owner;  // the role the model belongs to
  Oid relid;
  const char* relation_name;  // schema.name when recorded (for messages once dropped)
  const char* features;
  const char* label;
  const char* loss;
  const char* options;  // jsonb text
  const char* feature_spec =
      nullptr;  // jsonb text of the feature spec (nullptr: features is a column)
  // A model on a query (dperm.train_model_query; nullptr: on the relation):
  // the text as its creator wrote it, and the canonical text each run
  // validates again and reads (features and label name its output columns).
  const char* query_text = nullptr;
  const char* query = nullptr;
};

// Refuses (42710) a new version of the caller's model `spec.name` whose
// relation, columns, loss or query differ from its latest version's:
// versions of one name stay comparable. Options may change.
void CheckSameSpecification(const ModelSpec& spec);

// Refuses named models on a catalog from before 0.7.0 (owners stored by
// name), which this library would misread until ALTER EXTENSION UPDATE.
void RequireModelCatalog();

// Refuses a model name of no bytes or more than 200.
void CheckModelName(const char* name);

// Column `column` of an SPI row as text copied into `context`, or nullptr.
char* CopyValue(MemoryContext context, HeapTuple row, TupleDesc desc, int column);

// The name of role `role`, or its OID in digits once it is dropped.
const char* RoleName(Oid role);

// The latest version of the model `name` resolves to (or of `owner`'s
// model `name` when `owner` is valid) for an operation only its owner may
// run: 42704 if the caller sees no such model, 42501 if it does not act for
// the owner.
ModelSpec OwnedModel(const char* name, const char* operation, Oid owner = InvalidOid);

// The schema of an installed extension, or nullptr. Needs SPI.
char* ExtensionSchema(const char* extension, MemoryContext context);

}  // namespace dperm::pg
