// The seam between PostgreSQL and the C++ core (docs/style.md, "One seam").
// Errors cross it in two directions, each in one place here.
//
// C++ -> PostgreSQL. Every SQL-callable function has three phases: (1) read
// and validate its arguments with PostgreSQL calls; (2) call the core inside
// RunCore or CaptureCore, which catch every C++ exception and record it as a
// plain CoreError; (3) report the recorded error with ereport, or build the
// result Datums. No ereport and no PostgreSQL call that can raise runs while
// a C++ object with a destructor is alive: such objects live only inside
// RunCore's lambda, or in PostgreSQL memory with a reset callback that
// destroys them (PgBox). DPERM_FUNCTION catches whatever still escapes.
//
// PostgreSQL -> C++. Where the core calls back into PostgreSQL (a streaming
// pass run through SPI from inside the training loop), an ereport would
// longjmp over the C++ frames and skip their destructors. CallPostgres runs
// such a call under PG_TRY in a frame that holds no C++ object, deeper than
// every RAII object it protects (pg_duckdb's PostgresFunctionGuard); an
// error is copied and flushed, then thrown as a PostgresError, so the C++
// frames unwind normally. RunCore/CaptureCore record it in the CoreError,
// and ReportCoreError re-raises the original error (its SQLSTATE, message,
// detail and context) once the catch has closed and no C++ frame is left.
// After a caught PostgreSQL error nothing but unwinding and re-raising may
// happen: the transaction is aborted by the re-raise.
//
// Core headers must be included before this file: they refuse to compile
// once PostgreSQL's headers are in.
#pragma once

#include <new>
#include <utility>

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "utils/memutils.h"
}

namespace dperm::pg {

// An error captured from the core, in plain storage.
// postgres_error is set when the exception was a PostgresError (a
// PostgreSQL error caught by CallPostgres): then it is re-raised as it was.
struct CoreError {
  bool raised = false;
  int sqlstate = 0;
  char message[1024] = {0};
  char hint[512] = {0};
  ErrorData* postgres_error = nullptr;
};

// A PostgreSQL error caught by CallPostgres, carried through the C++ frames
// as an exception (trivially destructible: it owns nothing; the ErrorData
// lives in the memory context that was current when CallPostgres began).
struct PostgresError {
  ErrorData* data;
};

// Fills `error` from the exception being handled (call only inside catch).
void CaptureCurrentException(CoreError* error) noexcept;

// Raises `error` as a PostgreSQL ERROR if it is set: a PostgreSQL error
// caught by CallPostgres as it was (ReThrowError), else the core's. Safe
// because the caller holds no C++ objects with destructors (phase 3).
void ReportCoreError(const CoreError& error);

// Runs `call` (a PostgreSQL call that may raise) from inside C++ code and
// returns nullptr, or the copied error it raised (flushed, in the memory
// context current on entry). The longjmp of an error unwinds only `call`'s
// own frames and this one, which hold no object with a destructor: `call`
// must keep it that way (plain data and PostgreSQL calls only).
template <typename Call>
ErrorData* CallPostgresCatching(Call&& call) {
  MemoryContext volatile caller = CurrentMemoryContext;
  ErrorData* volatile error = nullptr;
  PG_TRY();
  { call(); }
  PG_CATCH();
  {
    MemoryContextSwitchTo(caller);
    error = CopyErrorData();
    FlushErrorState();
  }
  PG_END_TRY();
  return error;
}

// CallPostgresCatching for a caller inside RunCore/CaptureCore: a
// PostgreSQL error becomes a PostgresError exception, which the C++ frames
// unwind through and ReportCoreError re-raises at the boundary.
template <typename Call>
void CallPostgres(Call&& call) {
  ErrorData* error = CallPostgresCatching(call);
  if (error != nullptr) throw PostgresError{error};
}

// Runs `body` (phase 2) and reports any exception once the catch has closed.
// Only the lambda's own locals may own resources; captures are references.
template <typename Body>
void RunCore(Body&& body) {
  CoreError error;
  try {
    body();
  } catch (...) {
    CaptureCurrentException(&error);
  }
  if (error.raised) ReportCoreError(error);
}

// Runs `body` (phase 2) and records any exception in `error` without
// reporting it; returns whether the body completed. The caller reports later.
template <typename Body>
bool CaptureCore(Body&& body, CoreError* error) {
  try {
    body();
    return true;
  } catch (...) {
    CaptureCurrentException(error);
    return false;
  }
}

// A C++ object kept in a PostgreSQL memory context across phases: the memory
// is allocated in phase 1, the object built in phase 2 (Emplace), and its
// destructor runs when the context is reset or deleted, so an ereport that
// unwinds past it with longjmp leaks nothing.
template <typename T>
class PgBox {
 public:
  // Phase 1: reserve memory (may raise; no object exists yet).
  explicit PgBox(MemoryContext context)
      : memory_(MemoryContextAlloc(context, sizeof(T))),
        callback_(static_cast<MemoryContextCallback*>(
            MemoryContextAlloc(context, sizeof(MemoryContextCallback)))),
        context_(context) {}
  // Phase 2: construct. MemoryContextRegisterResetCallback cannot raise.
  template <typename... Args>
  T& Emplace(Args&&... args) {
    object_ = new (memory_) T(std::forward<Args>(args)...);
    callback_->func = &PgBox::Destroy;
    callback_->arg = object_;
    MemoryContextRegisterResetCallback(context_, callback_);
    return *object_;
  }
  T* get() const { return object_; }
  T& operator*() const { return *object_; }
  T* operator->() const { return object_; }

 private:
  static void Destroy(void* arg) { static_cast<T*>(arg)->~T(); }
  void* memory_;
  MemoryContextCallback* callback_;
  MemoryContext context_;
  T* object_ = nullptr;
};

}  // namespace dperm::pg

// Declares an SQL-callable function with C linkage. The body is a plain
// function; any exception that escapes it (a bug: bodies use RunCore) is
// caught in the wrapper and raised as an internal error after the catch.
// The CoreError (1.5 kB) is a function-local static, zeroed once: a local
// one would be zeroed on every call, a measurable share of a streaming pass
// (the per-row transitions are DPERM_FUNCTIONs). A backend is single-threaded and
// the error is reset right before it is filled and reported right after,
// with nothing in between that could enter another DPERM_FUNCTION.
#define DPERM_FUNCTION(name)                           \
  static Datum name##_body(PG_FUNCTION_ARGS);          \
  extern "C" {                                         \
  PG_FUNCTION_INFO_V1(name);                           \
  Datum name(PG_FUNCTION_ARGS) {                       \
    static ::dperm::pg::CoreError error_;              \
    bool failed_ = false;                              \
    Datum result_ = (Datum)0;                          \
    try {                                              \
      result_ = name##_body(fcinfo);                   \
    } catch (...) {                                    \
      failed_ = true;                                  \
      error_ = ::dperm::pg::CoreError();               \
      ::dperm::pg::CaptureCurrentException(&error_);   \
    }                                                  \
    if (failed_) ::dperm::pg::ReportCoreError(error_); \
    return result_;                                    \
  }                                                    \
  }                                                    \
  static Datum name##_body(PG_FUNCTION_ARGS)
