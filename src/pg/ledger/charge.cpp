// Charging a release to the privacy ledger: the request a release hands to
// the ledger writer, and the answer it raises or returns.
//
// Why a writer of its own (docs/design.md section 3, item 4): the final function
// of a parallel plan runs while the leader is in parallel mode, where
// PostgreSQL refuses writes; and a row written in the caller's transaction
// would vanish on ROLLBACK although the client has seen the model. The
// writer commits the charge before the model is computed, so neither
// happens. Its transaction (budget check and ledger row) is in ledger.cpp;
// the transport in ledger_writer.cpp.
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

#include "ledger/charge.hpp"
#include "ledger/ledger_writer.hpp"
#include "guard/relation_access.hpp"
#include "guard/relations.hpp"

extern "C" {
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/dsm.h"
#include "mb/pg_wchar.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {

namespace {

// SQLSTATE of a refused release: class DP (dperm), "budget exceeded".
const int kBudgetExceeded = MAKE_SQLSTATE('D', 'P', '0', '0', '1');

void CopyText(char* dst, size_t size, const char* src) {
  strlcpy(dst, src != nullptr ? src : "", size);
}

}  // namespace

char* CappedText(const char* text, int max_bytes) {
  if (text == nullptr) return pstrdup("");
  const size_t len = strlen(text);
  if (len <= static_cast<size_t>(max_bytes)) return pstrdup(text);
  // pg_mbcliplen: the longest prefix of whole characters in the database
  // encoding, so the stored text is valid (no split UTF-8 sequence).
  int keep = pg_mbcliplen(text, max_bytes, max_bytes);
  return psprintf("%.*s%s%zu bytes]", keep, text, kTruncatedMarker, len);
}

void RaiseBusy(Oid relation) {
  if (OidIsValid(relation) && BudgetChangedHere(relation))
    ereport(ERROR, (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
                    errmsg("the privacy budget of relation %s was changed by this transaction, "
                           "which has not committed",
                           RelationNameForMessage(relation)),
                    errdetail("A release is charged in a transaction of its own, which cannot "
                              "see or wait for this one. Nothing was charged and no model was "
                              "computed."),
                    errhint("Commit the dperm.set_budget first, then release.")));
  if (OidIsValid(relation))
    ereport(ERROR,
            (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
             errmsg("the privacy budget of relation %s is locked by an uncommitted transaction",
                    RelationNameForMessage(relation)),
             errdetail("The release waited up to dperm.ledger_wait_timeout (%d ms) for the "
                       "budget row. Nothing was charged and no model was computed.",
                       g_ledger_wait_timeout_ms),
             errhint("If this transaction changed the budget with dperm.set_budget, commit it "
                     "first; otherwise retry once the transaction that holds it has ended.")));
  ereport(ERROR,
          (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
           errmsg("a dperm catalog row this release needs is locked by an uncommitted transaction"),
           errdetail("The release waited up to dperm.ledger_wait_timeout (%d ms). Nothing was "
                     "charged and no model was computed.",
                     g_ledger_wait_timeout_ms),
           errhint("Retry once the transaction that holds it has ended.")));
  pg_unreachable();
}

void RaiseNoTurn(Oid relation) {
  ereport(ERROR, (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
                  errmsg("other releases charged to relation %s were ahead of this one for longer "
                         "than dperm.ledger_wait_timeout",
                         RelationNameForMessage(relation)),
                  errdetail("Releases charged to the same relation are charged one at a time, in "
                            "the order they ask. This one waited %d ms for its turn. Nothing was "
                            "charged and no model was computed.",
                            g_ledger_wait_timeout_ms),
                  errhint("Retry, or raise dperm.ledger_wait_timeout.")));
  pg_unreachable();
}

ChargeRequest PlanCharge(const dperm::Plan& plan, const dperm::Options& o,
                         const std::vector<double>& curve, const PrivacyUnit& unit, Oid role) {
  return {role, dperm::AlgorithmName(plan.algorithm), dperm::NoiseName(plan.noise),
          dperm::LossName(plan.loss), NeighborsOf(unit), o.epsilon, o.delta, plan.n, plan.d,
          curve.empty() ? nullptr : curve.data(), static_cast<int>(curve.size()), o.has_seed, unit,
          // A unit-level plan is charged whole with its count
          // (ReleaseUnitCount), which states its cost at the row; the writer
          // refuses a unit-level charge without one.
          0, 0, nullptr, 0};
}

int64 ChargeRelease(const ChargeRequest& charge, const Oid* relations, int n_relations,
                    ChargeOutcome* outcome) {
  const double* rdp = charge.rdp;
  int n_rdp = charge.n_rdp;
  // A standby cannot write the ledger, so it cannot release.
  if (RecoveryInProgress())
    ereport(ERROR,
            (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
             errmsg("dperm cannot release a model during recovery"),
             errhint("Every release is charged to the ledger first; train on the primary.")));
  if (n_rdp > kMaxOrders) elog(ERROR, "too many Renyi orders in a ledger curve");
  // The client's text, capped (kMaxLedgerQueryBytes): the request, the
  // writer's work and the ledger row do not grow with what a role sends.
  const char* query = LedgerQueryText(debug_query_string);
  Size size = offsetof(LedgerRequest, query) + strlen(query) + 1;
  dsm_segment* seg = dsm_create(size, 0);
  LedgerRequest* req = static_cast<LedgerRequest*>(dsm_segment_address(seg));
  memset(req, 0, size);
  req->magic = kLedgerRequestMagic;
  req->backend_procno = MyProc->pgprocno;
  req->database = MyDatabaseId;
  Oid role = charge.role;
  CopyText(req->role, sizeof req->role, GetUserNameFromId(role, false));
  req->role_id = role;
  req->released_at = GetCurrentTimestamp();
  CopyText(req->algorithm, sizeof req->algorithm, charge.algorithm);
  CopyText(req->mechanism, sizeof req->mechanism, charge.mechanism);
  CopyText(req->loss, sizeof req->loss, charge.loss);
  CopyText(req->neighbors, sizeof req->neighbors, charge.neighbors);
  // A query's row unit (privacy_unit.hpp) is the row: every budget is
  // charged the release's own cost, as for a row-level release.
  const bool at_unit = charge.unit.column != nullptr && !charge.unit.row;
  CopyText(req->unit, sizeof req->unit, at_unit ? charge.unit.column : "");
  req->unit_rows = at_unit ? charge.unit.max_rows : 0;
  req->epsilon = charge.epsilon;
  req->delta = charge.delta;
  req->n = charge.n;
  req->d = charge.d;
  req->seeded = charge.seeded;
  req->n_relations = n_relations;
  memcpy(req->relations, relations, sizeof(Oid) * n_relations);
  req->n_rdp = n_rdp;
  if (n_rdp > 0) memcpy(req->rdp, rdp, sizeof(double) * n_rdp);
  if (charge.n_row_rdp > kMaxOrders) elog(ERROR, "too many Renyi orders in a ledger curve");
  req->row_epsilon = charge.row_epsilon;
  req->row_delta = charge.row_delta;
  req->n_row_rdp = charge.n_row_rdp;
  if (charge.n_row_rdp > 0) memcpy(req->row_rdp, charge.row_rdp, sizeof(double) * charge.n_row_rdp);
  strcpy(req->query, query);

  // The writer answers in the segment; an error or cancel while waiting
  // detaches it with the transaction's resources (and leaves the charge in
  // doubt: the writer may have committed it).
  if (outcome != nullptr) outcome->in_doubt = true;
  SubmitLedgerRequest(seg, req);
  if (outcome != nullptr) outcome->in_doubt = false;

  int result = req->status;
  int sqlstate = req->sqlstate;
  int64 id = req->ledger_id;
  Oid busy = req->busy_relation;
  char* message = pstrdup(req->message);
  char* detail = pstrdup(req->detail);
  char* hint = pstrdup(req->hint);
  dsm_detach(seg);
  if (result == kRefused) {
    // The writer's detail quotes what the relation has spent, which counts
    // every role's releases: only for a role that may see every relation
    // charged (a view's reader may not see the tables it reads).
    bool visible = true;
    for (int i = 0; i < n_relations && visible; i++) visible = MaySeeRelation(relations[i], role);
    if (!visible)
      detail = psprintf(
          "The release asks for epsilon = %g and delta = %g, more than the budget "
          "has left.",
          charge.epsilon, charge.delta);
    ereport(ERROR, (errcode(kBudgetExceeded), errmsg("%s", message), errdetail("%s", detail),
                    errhint("%s", hint)));
  }
  if (result == kBusy) RaiseBusy(busy);
  if (result == kNoTurn) RaiseNoTurn(busy);
  if (result == kFailed)
    ereport(ERROR, (errcode(sqlstate), errmsg("dperm ledger writer failed: %s", message),
                    errhint("The release was not charged and no model was computed.")));
  if (result != kCharged)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("the dperm ledger writer exited without recording the release"),
                    errhint("See the server log. No model was computed.")));
  if (outcome != nullptr) outcome->ledger_id = id;
  return id;
}

}  // namespace dperm::pg
