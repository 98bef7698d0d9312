// The release pipeline (release.cpp): plan -> charge -> key -> train ->
// model, and the failed-release path, written once for every model dperm
// releases. Its one input is the request (release_request.hpp), built at
// the SQL entry point; the rows come from the aggregate's buffer, from
// dperm.train's read into the same buffer after the charge, or from passes
// (streaming.cpp). dperm.evaluate's noisy sums share the charge, key and
// failure steps (release_sums.hpp).
#pragma once

#include "base/boundary.hpp"
#include "release/release_request.hpp"
#include "release/row_buffer.hpp"
#include "release/row_reader.hpp"
#include "release/streaming.hpp"

namespace dperm::pg {

// Where a release's rows come from: exactly one of
//  * `rows` alone: read already (an aggregate's transition filled them);
//  * `rows` and `read`: read into `rows` after the charge (dperm.train in
//    memory), so that whatever the read raises is paid for; the request's n
//    must be what the read returns;
//  * `passes`: trained by passes (dperm.train's streaming mode, Citus).
// `domains` (nullptr: none): the domain step of a feature spec's auto
// columns (auto_domain_pg.hpp), run right after the charge and before the
// read, which it may rewrite (the rows are then encoded with the chosen
// bounds); the request's domain_epsilon is charged with the model.
struct DomainStep {
  void (*run)(void* context);
  void* context;
};
struct ReleaseInput {
  RowBuffer* rows;
  const RowQuery* read;
  const PassSource* passes;
  const DomainStep* domains;
};

// One release: plans from the request alone (refusing what public inputs
// refuse, the memory estimate against dperm.max_release_memory), charges
// it (unless charged with its count), reads the rows dperm.train reads,
// draws the key, trains, and returns the dp_model. n > 0.
Datum Release(const ReleaseRequest& request, const ReleaseInput& input);

}  // namespace dperm::pg
