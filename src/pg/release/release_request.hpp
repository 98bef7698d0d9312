// The request of one release (docs/design.md sections 3 and 4): everything
// a model release needs besides its rows, all public, built once at its SQL
// entry point -- an in-memory aggregate's first row (aggregate.cpp) or
// dperm.train (train_pg.cpp) -- and carried unchanged through the pipeline:
// plan -> charge -> key -> train -> model -> ledger (release.cpp). No
// release state travels any other way (no global across an SPI call).
#pragma once

#include "dperm/options/options.hpp"

#include "base/boundary.hpp"
#include "ledger/charge.hpp"
#include "types/options_pg.hpp"
#include "guard/privacy_unit.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

struct ReleaseRequest {
  LossKind loss;
  // The options, parsed once. A unit-level release's are the model's:
  // epsilon less the count's share, and k (UnitModelOptions).
  ParsedOptions parsed;
  Jsonb* options;        // the same, as the model's JSON records them
  Oid role;              // the releasing role: the ledger records it
  const Oid* relations;  // what the release is charged to
  int n_relations;
  bool strict;                // charged to a budgeted or protected relation: d declared
  int d;                      // the public d
  int64 n;                    // the rows: dperm.train's count (units * k for a unit),
                              // an aggregate's rows read
  PrivacyUnit unit;           // the unit the rows were bounded to (column nullptr: the row)
  double unit_count_epsilon;  // the share of epsilon that released the number of units
  // The share of epsilon the feature spec's auto domains take (auto_domain.hpp;
  // 0: none): the options' epsilon is the model's, the charge is both.
  double domain_epsilon;
  bool charged;               // charged whole with its count before the count read a row
                              // (a unit-level release: ReleaseUnitCount)
  bool reports;               // writes its phases to dperm.progress
  bool query_input;           // dperm.train_query: n is the noisy size of a query's input
  // dperm.train_query_groups (train_query_groups.cpp): one group of a
  // declared domain. The statement was charged once (ChargeUnitRelease)
  // before any group's count read a row, so ReleaseUnitCount charges
  // nothing; the model states its group (ModelMeta::group_by).
  bool count_charged;
  const char* group_by;   // the query's output column, or nullptr
  const char* group_key;  // this group's key, as text
  int64 groups;           // the number of declared groups
  // Told what became of the release's charge (charge.hpp), or nullptr: a
  // named model's run (RunVersion) owns it and records a charged run that
  // failed. Set by the caller of the pipeline; ChargeRelease fills it.
  ChargeOutcome* outcome;
};

}  // namespace dperm::pg
