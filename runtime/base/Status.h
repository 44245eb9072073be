//===- Status.h - What a fallible call returns: ok, or why not -*- C++ -*-===//
//
// The runtime's one error type (and the tools' beside it): a call that can
// fail returns a Status, or an Expected<T> when it also has a value, instead
// of a bool with a `std::string &error` out-parameter. Both are
// [[nodiscard]]: a failure cannot be dropped by accident.
//
// A Status is ok, or carries a code and one line of text for the user: the
// message says what went wrong in the user's terms (`cannot read 'x.bin':
// No such file or directory`), and the code says what kind of failure it is
// so that a caller can act on it (an out-of-memory load suggests a smaller
// batch; a missing GPU is not a corrupt file) without parsing the text.
// Context is added on the way up with withContext(): "cannot run @forward: "
// + the inner message.
//
// Plain C++ (no LLVM): the runtime, the runner and compiled executables use
// it; in the compiler, llvm::Expected stays where LLVM already is.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_STATUS_H
#define EINC_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace einrt {

/// What kind of failure a Status is.
enum class StatusCode : unsigned char {
  Ok,
  Invalid,     // the input is wrong: a flag, a setting, a Program, a file's content
  NotFound,    // a file, a function or a symbol that is not there
  OutOfMemory, // more memory than the host or the device has free
  Unavailable, // a device or a library this machine lacks (no GPU, no NCCL)
  Corrupt,     // data that fails its checks: a checksum, a truncated file
  Io,          // the file system refused: a read, a write, a rename, a full disk
  Internal,    // a bug in einc: what the compiler promised does not hold
};

/// "invalid", "not found", ...: for logs and tests.
const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  /// A failure of `code` (not Ok) saying `message` (not empty).
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {
    assert(code != StatusCode::Ok && !message_.empty() && "a failure says what failed");
  }

  static Status success() { return Status(); }
  /// The common failure: the input is wrong.
  static Status invalid(std::string message) {
    return Status(StatusCode::Invalid, std::move(message));
  }
  static Status internal(std::string message) {
    return Status(StatusCode::Internal, std::move(message));
  }

  bool ok() const { return code_ == StatusCode::Ok; }
  StatusCode code() const { return code_; }
  /// "" when ok.
  const std::string &message() const { return message_; }

  /// The same failure, its message after `context` ("cannot run @f: " +
  /// message); an ok Status stays ok.
  Status withContext(const std::string &context) && {
    if (!ok())
      message_ = context + message_;
    return std::move(*this);
  }
  Status withContext(const std::string &context) const & {
    return Status(*this).withContext(context);
  }

  /// Marks a failure as seen where it is deliberately dropped (a cleanup
  /// after an earlier failure).
  void ignore() const {}

private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

/// A value, or the Status saying why there is none.
template <class T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  /// A failure (not ok).
  Expected(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "an Expected without a value says why");
  }

  bool ok() const { return value_.has_value(); }
  /// The failure (success when there is a value).
  const Status &status() const { return status_; }
  Status takeStatus() { return std::move(status_); }

  T &operator*() {
    assert(ok());
    return *value_;
  }
  const T &operator*() const {
    assert(ok());
    return *value_;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }
  /// Moves the value out.
  T take() {
    assert(ok());
    return std::move(*value_);
  }

private:
  std::optional<T> value_;
  Status status_;
};

inline const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok:
    return "ok";
  case StatusCode::Invalid:
    return "invalid";
  case StatusCode::NotFound:
    return "not found";
  case StatusCode::OutOfMemory:
    return "out of memory";
  case StatusCode::Unavailable:
    return "unavailable";
  case StatusCode::Corrupt:
    return "corrupt";
  case StatusCode::Io:
    return "i/o";
  case StatusCode::Internal:
    return "internal";
  }
  return "?";
}

} // namespace einrt

/// Returns the Status of `expr` from the enclosing function when it failed.
#define EINRT_TRY(expr)                                                                            \
  do {                                                                                             \
    if (::einrt::Status einrtTryStatus_ = (expr); !einrtTryStatus_.ok())                           \
      return einrtTryStatus_;                                                                      \
  } while (false)

#endif // EINC_RUNTIME_STATUS_H
