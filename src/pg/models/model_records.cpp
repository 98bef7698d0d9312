// The ledger writer's record requests for named models (model_records.hpp):
// a version of dperm.models, or an evaluation appended to one, written by
// the writer in a transaction of its own so that it outlives the caller's
// rollback, like a charge. _PG_init registers ServeModelRecord for both
// kinds (RegisterLedgerHandler), so the writer knows no model file.
#include "ledger/charge.hpp"
#include "ledger/ledger_writer.hpp"
#include "models/model_records.hpp"

extern "C" {
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/dsm.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {

// Hands a dperm.models row (as JSON) to the ledger writer, which writes it
// in a transaction of its own; returns the version. Raises if the writer
// could not write it.
int64 SubmitModelRecord(LedgerRequestKind kind, const char* json) {
  if (RecoveryInProgress())
    ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                    errmsg("dperm cannot record a model version during recovery")));
  Size size = offsetof(LedgerRequest, query) + strlen(json) + 1;
  dsm_segment* seg = dsm_create(size, 0);
  LedgerRequest* req = static_cast<LedgerRequest*>(dsm_segment_address(seg));
  memset(req, 0, offsetof(LedgerRequest, query));
  req->magic = kLedgerRequestMagic;
  req->kind = kind;
  req->backend_procno = MyProc->pgprocno;
  req->database = MyDatabaseId;
  strlcpy(req->role, GetUserNameFromId(GetUserId(), false), sizeof req->role);
  req->released_at = GetCurrentTimestamp();
  strcpy(req->query, json);
  // An error or cancel while waiting detaches the segment with the
  // transaction's resources.
  SubmitLedgerRequest(seg, req);
  int status = req->status;
  int sqlstate = req->sqlstate;
  int64 version = req->ledger_id;
  Oid busy = req->busy_relation;
  char* message = pstrdup(req->message);
  dsm_detach(seg);
  if (status == kBusy) RaiseBusy(busy);
  if (status != kCharged)
    ereport(ERROR, (errcode(status == kFailed && sqlstate != 0 ? sqlstate : ERRCODE_INTERNAL_ERROR),
                    errmsg("dperm could not record the model version: %s",
                           message[0] ? message : "the ledger writer exited"),
                    errhint("See the server log.")));
  return version;
}

// The record requests of the ledger writer (ledger_request.hpp): one
// dperm.models row, or an evaluation appended to one, as the bootstrap
// superuser in the writer's own transaction. Version numbers are assigned
// here, per (owner, name), under a lock that serialises writers of
// dperm.models (no untrusted role may take it: it needs UPDATE on the
// table). Roles arrive as OIDs.
void ServeModelRecord(LedgerRequest* req) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(req->query)};
  if (req->kind == kRecordEvaluation) {
    if (SPI_execute_with_args(
            "UPDATE dperm.models m SET evaluation = pg_catalog.jsonb_build_array(r.evaluation)"
            "   OPERATOR(pg_catalog.||) COALESCE(m.evaluation, '[]'::pg_catalog.jsonb)"
            "  FROM pg_catalog.jsonb_to_record($1::pg_catalog.jsonb)"
            "       AS r(name pg_catalog.text, owner pg_catalog.oid, version pg_catalog.int4,"
            "            evaluation pg_catalog.jsonb)"
            " WHERE m.name OPERATOR(pg_catalog.=) r.name AND m.owner OPERATOR(pg_catalog.=) r.owner"
            "   AND m.version OPERATOR(pg_catalog.=) r.version RETURNING m.version",
            1, types, args, nullptr, false, 0) != SPI_OK_UPDATE_RETURNING ||
        SPI_processed != 1)
      elog(ERROR, "the model version to store the evaluation with is gone");
  } else {
    if (SPI_execute("LOCK TABLE dperm.models IN SHARE UPDATE EXCLUSIVE MODE", false, 0) !=
        SPI_OK_UTILITY)
      elog(ERROR, "could not lock dperm.models");
    if (SPI_execute_with_args(
            "INSERT INTO dperm.models (name, version, owner, relation, relation_name, features,"
            "  label, loss, options, status, model, ledger_id, epsilon, delta, rdp, relations,"
            "  trained_by, trained_at, error, error_detail, sqlstate, feature_spec, query,"
            "  query_canonical)"
            " SELECT r.name,"
            "   COALESCE((SELECT pg_catalog.max(m.version) FROM dperm.models m"
            "              WHERE m.name OPERATOR(pg_catalog.=) r.name"
            "                AND m.owner OPERATOR(pg_catalog.=) r.owner), 0) OPERATOR(pg_catalog.+) 1,"
            "   r.owner, r.relation, r.relation_name, r.features, r.label, r.loss, r.options,"
            "   r.status, r.model, r.ledger_id, l.epsilon, l.delta, l.rdp,"
            // and the relations of the row that charged the same release at
            // the row (ledger.charged_with), which the forecast counts too
            "   l.relations OPERATOR(pg_catalog.||) ARRAY(SELECT cr FROM dperm.ledger c,"
            "     pg_catalog.unnest(c.relations) cr WHERE c.charged_with OPERATOR(pg_catalog.=) l.id),"
            "   r.trained_by, r.trained_at, r.error, r.error_detail, r.sqlstate, r.feature_spec, r.query,"
            "   r.query_canonical"
            "  FROM pg_catalog.jsonb_populate_record(NULL::dperm.models, $1::pg_catalog.jsonb) r"
            "  LEFT JOIN dperm.ledger l ON l.id OPERATOR(pg_catalog.=) r.ledger_id"
            " RETURNING version",
            1, types, args, nullptr, false, 0) != SPI_OK_INSERT_RETURNING ||
        SPI_processed != 1)
      elog(ERROR, "could not write dperm.models");
  }
  bool isnull;
  req->ledger_id =
      DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

}  // namespace dperm::pg
