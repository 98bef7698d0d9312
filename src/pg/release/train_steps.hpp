// The steps of dperm.train (train_pg.cpp) that dperm.train_query
// (train_query.cpp) shares: the request, the count, the mode, the release.
#pragma once

#include "release/release_request.hpp"
#include "release/train_input.hpp"

namespace dperm::pg {

// The rows a release reads: a FROM item, and its features and label as
// SQL of its columns.
struct TrainSource {
  const char* from;
  const char* features;
  const char* label;
};

// Step 3: the request from public inputs only (every refusal costs
// nothing): the options parsed once, the `dataset` they name (*dataset).
ReleaseRequest RequestFor(const TrainInput& in, Oid* dataset);

// Step 4: n and d as the reader; a unit-level release (r->unit.column set)
// first releases its number of units, charged whole (ReleaseUnitCount), and
// reads units * k slots of `in.qualified` (UnitBoundedSource).
TrainSource CountRows(const TrainInput& in, ReleaseRequest* r);

// Step 5: in memory or streaming, from n and d only (public).
bool ChooseStreaming(const TrainInput& in, const ReleaseRequest& r, bool* distributed);

// Step 6: the release pipeline on the rows of `source`, read as the reader.
Datum ReleaseRows(const TrainInput& in, const ReleaseRequest& r, const TrainSource& source,
                  bool streaming, bool distributed);

// Steps 4 to 6 in a row: the count, the mode, the release. Returns the
// model (in the current, SPI, memory context), or *isnull when n is 0
// (nothing read, nothing released).
Datum CountAndRelease(const TrainInput& in, ReleaseRequest* r, bool* isnull);

// dperm.train on a resolved input (ResolveInput, ResolveTrainInput): who
// reads, the request (its charge told to `outcome`, nullptr: nobody), the
// count, the mode, the release. Returns the model, or *isnull for an empty
// relation (nothing charged).
Datum TrainResolved(TrainInput* in, ChargeOutcome* outcome, bool* isnull);

// dperm.explain (explain_train.cpp): who reads and the request (steps 2 and
// 3: the charge's relations, the unit, the count's share of epsilon and the
// model's options), every refusal dperm.train makes before its count, with
// no row read and nothing charged.
ReleaseRequest RequestBeforeCount(TrainInput* in);

}  // namespace dperm::pg
