// Charging a release to the ledger (charge.cpp): the request a release sends
// to the ledger writer, and the answer.
#pragma once

#include <vector>

#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

#include "base/boundary.hpp"
#include "guard/privacy_unit.hpp"

namespace dperm::pg {

// What became of a release's charge, for a caller that records the run
// whatever its end (model_versions.cpp's RunVersion: a failed run that was
// charged, or may have been, is a failed version). The caller owns it and
// hands it down with the request (ReleaseRequest::outcome); ChargeRelease
// fills it. It lives in the caller's memory, so it is still valid when an
// error unwinds to the caller's PG_CATCH.
struct ChargeOutcome {
  int64 ledger_id;  // the charge's ledger row (0: none yet)
  bool in_doubt;    // submitted to the ledger writer, no answer back (an
                    // error or cancel while waiting): it may have been written
};

// What a ledger row records about one release.
struct ChargeRequest {
  Oid role;  // the releasing role (the caller of dperm.train, or
             // the current user of an aggregate or dperm.evaluate)
  const char* algorithm;
  const char* mechanism;
  const char* loss;
  const char* neighbors;
  double epsilon;
  double delta;
  int64 n;
  int32 d;
  const double* rdp;  // the release's curve on LedgerOrders(), or nullptr
  int n_rdp;
  bool seeded;
  PrivacyUnit unit;  // the unit the rows were bounded to (column nullptr: the row)
  // A unit-level release's cost at the row (UnitReleaseCharge), charged to
  // every relation of the release whose budget names no unit; unused when
  // unit.column is nullptr.
  double row_epsilon;
  double row_delta;
  const double* row_rdp;
  int n_row_rdp;
};

// Charges a release to the ledger before anything that depends on the rows
// reaches the caller: checks the budgets of `relations`, refuses with an
// ERROR if one would be overspent, and appends the ledger row, in a
// transaction of its own (a background worker), so the charge is atomic
// across sessions and survives a rollback of the caller. Returns the ledger
// row's id. A unit-level release is charged at the unit to the budgets that
// name it (that row's id is returned) and at the row (row_epsilon, ...) to
// every other relation, in a second row of the same transaction whose
// charged_with is the first. `outcome` (nullptr: none) is told the charge:
// in_doubt while the writer has the request, ledger_id once it answers
// charged.
int64 ChargeRelease(const ChargeRequest& charge, const Oid* relations, int n_relations,
                    ChargeOutcome* outcome);

// The ledger row of a planned release by `role`: its algorithm, noise, loss
// and neighbours, the options' (epsilon, delta), the plan's n and d, and
// `curve` (the release's RDP curve on LedgerOrders(); empty for none).
// `unit`: the privacy unit the rows were bounded to (privacy_unit.hpp).
ChargeRequest PlanCharge(const dperm::Plan& plan, const dperm::Options& o,
                         const std::vector<double>& curve, const PrivacyUnit& unit, Oid role);

// The most bytes of the client's query text a ledger row stores
// (dperm.ledger.query): a longer text keeps its first whole characters up
// to this many bytes, then a marker with its full length (CappedText). Bounds the request, the writer's work and the row, whatever a
// role sends (issue 44, item 6).
const int kMaxLedgerQueryBytes = 4096;
constexpr char kTruncatedMarker[] = "... [dperm: truncated from ";

// `text` (nullptr: "") capped at `max_bytes`: a longer text keeps its
// longest prefix of whole characters (database encoding) within max_bytes,
// then kTruncatedMarker, its length in bytes and " bytes]"; palloc'd.
char* CappedText(const char* text, int max_bytes);

// The text a ledger row stores of the client's query `query`:
// CappedText(query, kMaxLedgerQueryBytes).
inline char* LedgerQueryText(const char* query) { return CappedText(query, kMaxLedgerQueryBytes); }

// Raises 55P03 for a request the ledger writer kept answering busy: the
// budget row of `relation` (InvalidOid: another catalog row) is locked by
// an uncommitted transaction, this one's or another's. Nothing was charged.
[[noreturn]] void RaiseBusy(Oid relation);

// Raises 55P03 for a request whose turn on `relation` did not come within
// dperm.ledger_wait_timeout (charges to one relation take turns, first come
// first served: ledger_writer.cpp). Nothing was charged.
[[noreturn]] void RaiseNoTurn(Oid relation);

}  // namespace dperm::pg
