//===- StatusTesting.h - GoogleTest assertions on Status and Expected -*- C++ -*-===//
//
// How a test checks a call that returns an einrt::Status or Expected<T>
// (runtime/base/Status.h):
//
//   EINC_ASSERT_OK(ex.run());                          // fatal on failure
//   EINC_EXPECT_OK(ex.setArgument(0, v.data(), v.size())) << "argument 0";
//   EINC_ASSERT_OK_AND_ASSIGN(Executor ex, Executor::create(p, device));
//   EINC_ASSERT_OK_AND_ASSIGN(loss, ex.readScalar(0)); // into an existing variable
//   EINC_EXPECT_STATUS(readGemmTable(path), StatusCode::Corrupt, "checksum");
//   EINC_EXPECT_STATUS_EQ(gemmLibrary("mkl"), StatusCode::Invalid,
//                         "no GEMM library named 'mkl' (openblas, blis)"); // the whole message
//   EINC_EXPECT_NOT_OK(createCudaDevice({}));          // any failure will do
//
// A failure prints the expression, the Status's code and its message, e.g.
//
//   ex.run() failed: [corrupt] 'x.bin': checksum mismatch
//
// The *_OK and *_STATUS macros take a Status or an Expected<T> and, like
// gtest's, accept `<< more` text. The ASSERT_ forms return from the
// function, so they belong in a test body or a void helper. In gtest's
// other assertions a Status prints as "[code] message", a StatusCode as its
// name.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_STATUSTESTING_H
#define EINC_TEST_UNIT_STATUSTESTING_H

#include "runtime/base/Status.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace einrt {
// Found by argument-dependent lookup: how gtest prints these values.
inline void PrintTo(StatusCode code, std::ostream *os) { *os << statusCodeName(code); }
inline void PrintTo(const Status &status, std::ostream *os) {
  if (status.ok())
    *os << "ok";
  else
    *os << "[" << statusCodeName(status.code()) << "] " << status.message();
}
} // namespace einrt

namespace einc_testing {

inline const einrt::Status &statusOf(const einrt::Status &status) { return status; }
template <class T> const einrt::Status &statusOf(const einrt::Expected<T> &result) {
  return result.status();
}

inline std::string describe(const einrt::Status &status) {
  return ::testing::PrintToString(status);
}

/// gtest predicate formatter: success when `value` is ok. `text` names the
/// expression in the failure (EINC_ASSERT_OK_AND_ASSIGN passes the original
/// one; the value it checks is a temporary).
template <class S>
::testing::AssertionResult isOkNamed(const char *, const char *, const char *text, const S &value) {
  const einrt::Status &status = statusOf(value);
  if (status.ok())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text << " failed: " << describe(status);
}
template <class S>::testing::AssertionResult isOk(const char *text, const S &value) {
  return isOkNamed(text, text, text, value);
}

/// Whether `status` failed with `code`, its message containing `part` ("" is
/// in any message), or equal to it when `whole`; else why not.
inline ::testing::AssertionResult failedWith(const char *text, const einrt::Status &status,
                                             einrt::StatusCode code, const std::string &part,
                                             bool whole) {
  bool matches =
      whole ? status.message() == part : status.message().find(part) != std::string::npos;
  if (!status.ok() && status.code() == code && matches)
    return ::testing::AssertionSuccess();
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << text << " was expected to fail: [" << einrt::statusCodeName(code) << "]";
  if (whole)
    failure << " with the message \"" << part << "\"";
  else if (!part.empty())
    failure << " with a message containing \"" << part << "\"";
  return failure << "\n  it returned: " << describe(status);
}

/// gtest predicate formatters for EINC_EXPECT_STATUS and _STATUS_EQ.
template <class S>
::testing::AssertionResult failsWith(const char *text, const char *, const char *, const S &value,
                                     einrt::StatusCode code, const std::string &part) {
  return failedWith(text, statusOf(value), code, part, false);
}
template <class S>
::testing::AssertionResult failsWithMessage(const char *text, const char *, const char *,
                                            const S &value, einrt::StatusCode code,
                                            const std::string &message) {
  return failedWith(text, statusOf(value), code, message, true);
}

/// gtest predicate formatter: success when `value` is a failure of any kind.
template <class S>::testing::AssertionResult isNotOk(const char *text, const S &value) {
  if (!statusOf(value).ok())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text << " was expected to fail, and it succeeded";
}

} // namespace einc_testing

#define EINC_EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::einc_testing::isOk, expr)
#define EINC_ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::einc_testing::isOk, expr)

#define EINC_EXPECT_NOT_OK(expr) EXPECT_PRED_FORMAT1(::einc_testing::isNotOk, expr)
#define EINC_ASSERT_NOT_OK(expr) ASSERT_PRED_FORMAT1(::einc_testing::isNotOk, expr)

/// `expr` fails with `code` and a message containing `part`.
#define EINC_EXPECT_STATUS(expr, code, part)                                                       \
  EXPECT_PRED_FORMAT3(::einc_testing::failsWith, expr, code, part)
#define EINC_ASSERT_STATUS(expr, code, part)                                                       \
  ASSERT_PRED_FORMAT3(::einc_testing::failsWith, expr, code, part)
/// `expr` fails with `code` and exactly `message`.
#define EINC_EXPECT_STATUS_EQ(expr, code, message)                                                 \
  EXPECT_PRED_FORMAT3(::einc_testing::failsWithMessage, expr, code, message)

#define EINC_STATUS_TESTING_CONCAT_(a, b) a##b
#define EINC_STATUS_TESTING_NAME_(line) EINC_STATUS_TESTING_CONCAT_(eincExpected_, line)

/// Asserts that the Expected `expr` holds a value and moves it into `lhs`,
/// a variable or a declaration (`auto ex`, `Executor ex`). It is several
/// statements: braces around it where it is the body of an if or a loop.
#define EINC_ASSERT_OK_AND_ASSIGN(lhs, expr)                                                       \
  EINC_ASSERT_OK_AND_ASSIGN_IMPL_(EINC_STATUS_TESTING_NAME_(__LINE__), lhs, expr)
#define EINC_ASSERT_OK_AND_ASSIGN_IMPL_(result, lhs, expr)                                         \
  auto result = (expr);                                                                            \
  ASSERT_PRED_FORMAT2(::einc_testing::isOkNamed, #expr, result);                                   \
  lhs = result.take()

#endif // EINC_TEST_UNIT_STATUSTESTING_H
