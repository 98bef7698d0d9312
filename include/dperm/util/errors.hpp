// dperm core: included first by every header under include/dperm.
//
// The core is plain C++17 and must never see PostgreSQL's headers (docs/style.md,
// "one seam"). Two fences enforce that: the core objects are compiled without
// PostgreSQL's include directory (see the Makefile), and this guard stops a
// translation unit that pulled postgres.h in before any core header.
#pragma once

#if defined(POSTGRES_H) || defined(C_H) || defined(FMGR_H)
#error "dperm core headers must not be combined with PostgreSQL headers outside src/pg"
#endif

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dperm {

// Error classes the boundary maps to SQLSTATEs (src/pg/base/boundary.hpp).
enum class ErrorKind {
  kInvalidParameter,  // a bad option or argument: 22023
  kDataException,     // bad shape of input data: 22000
  kFeatureNotSupported,
  kCancelled,      // an interrupt was pending: 57014
  kInternal,       // a broken invariant: XX000
  kInvalidText,    // a value's text form is malformed: 22P02
  kLimitExceeded,  // larger than the database can hold: 54000
};

// The one exception type the core throws on purpose. `hint` is shown as the
// error's HINT when not empty.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, std::string hint = "")
      : std::runtime_error(message), kind_(kind), hint_(std::move(hint)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& hint() const { return hint_; }

 private:
  ErrorKind kind_;
  std::string hint_;
};

// A number for messages: 6 significant digits in printf's %g form.
std::string FormatNumber(double v);

// The shortest decimal form that reads back as the same double (option
// ranges in messages and in the reference).
std::string ShortestNumber(double v);

[[noreturn]] inline void ThrowInvalid(const std::string& message, const std::string& hint = "") {
  throw Error(ErrorKind::kInvalidParameter, message, hint);
}

}  // namespace dperm
