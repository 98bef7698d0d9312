// Mapping of core exceptions to SQLSTATEs, and the re-raise of a PostgreSQL
// error carried through C++ frames (the catch side of the seam,
// boundary.hpp).
#include "dperm/util/errors.hpp"

#include <cstring>
#include <stdexcept>

#include "base/boundary.hpp"

extern "C" {
#include "miscadmin.h"
#include "utils/elog.h"
}

namespace dperm::pg {
namespace {

void Copy(char* dst, size_t size, const char* src) {
  std::strncpy(dst, src, size - 1);
  dst[size - 1] = '\0';
}

int SqlState(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidParameter: return ERRCODE_INVALID_PARAMETER_VALUE;
    case ErrorKind::kDataException: return ERRCODE_DATA_EXCEPTION;
    case ErrorKind::kFeatureNotSupported: return ERRCODE_FEATURE_NOT_SUPPORTED;
    case ErrorKind::kCancelled: return ERRCODE_QUERY_CANCELED;
    case ErrorKind::kInternal: return ERRCODE_INTERNAL_ERROR;
    case ErrorKind::kInvalidText: return ERRCODE_INVALID_TEXT_REPRESENTATION;
    case ErrorKind::kLimitExceeded: return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
  }
  return ERRCODE_INTERNAL_ERROR;
}

}  // namespace

void CaptureCurrentException(CoreError* error) noexcept {
  error->raised = true;
  try {
    throw;
  } catch (const PostgresError& e) {
    error->postgres_error = e.data;
    error->sqlstate = e.data->sqlerrcode;
    Copy(error->message, sizeof error->message, e.data->message ? e.data->message : "");
  } catch (const Error& e) {
    error->sqlstate = SqlState(e.kind());
    Copy(error->message, sizeof error->message, e.what());
    Copy(error->hint, sizeof error->hint, e.hint().c_str());
  } catch (const std::bad_alloc&) {
    error->sqlstate = ERRCODE_OUT_OF_MEMORY;
    Copy(error->message, sizeof error->message, "out of memory in dperm");
  } catch (const std::invalid_argument& e) {
    error->sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
    Copy(error->message, sizeof error->message, e.what());
  } catch (const std::domain_error& e) {
    error->sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
    Copy(error->message, sizeof error->message, e.what());
  } catch (const std::exception& e) {
    error->sqlstate = ERRCODE_INTERNAL_ERROR;
    Copy(error->message, sizeof error->message, e.what());
  } catch (...) {
    error->sqlstate = ERRCODE_INTERNAL_ERROR;
    Copy(error->message, sizeof error->message, "unknown C++ exception in dperm");
  }
}

void ReportCoreError(const CoreError& error) {
  // A PostgreSQL error, re-raised unchanged now that no C++ frame is left.
  if (error.postgres_error != nullptr) ReThrowError(error.postgres_error);
  if (error.sqlstate == ERRCODE_QUERY_CANCELED)
    CHECK_FOR_INTERRUPTS();  // raises the pending cancel or termination
  ereport(ERROR, (errcode(error.sqlstate), errmsg("%s", error.message),
                  error.hint[0] ? errhint("%s", error.hint) : 0));
}

}  // namespace dperm::pg
