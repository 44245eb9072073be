//===- StatusOut.h - A Status into a test rig's `std::string` -*- C++ -*-===//
//
// The rigs of a few tests (the trainer's, the distributed sums', loss
// scaling's) collect the first failure's text in a string they report at
// the end; they call Status-returning code through these, at the call site:
//
//   if (!statusOut(ex.run(), error)) return false;
//   if (!statusOut(ex.readScalar(0), loss, error)) return false;
//   std::optional<Executor> ex = statusOut(Executor::create(p, device), error);
//
// The message is the Status's, unchanged. Tests that assert a result use
// StatusTesting.h; the runtime and the tools return Status themselves (this
// was their bridge while issue 28 converted them, folder by folder).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_STATUSOUT_H
#define EINC_TEST_UNIT_STATUSOUT_H

#include "runtime/base/Status.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace einrt {

/// Whether `status` is ok; else its message into `error`.
inline bool statusOut(const Status &status, std::string &error) {
  if (!status.ok())
    error = status.message();
  return status.ok();
}

/// The value into `out`, or the failure's message into `error`.
template <class T, class U> bool statusOut(Expected<T> result, U &out, std::string &error) {
  if (!result.ok()) {
    error = result.status().message();
    return false;
  }
  out = result.take();
  return true;
}

/// The value, or nullopt with the failure's message in `error`.
template <class T> std::optional<T> statusOut(Expected<T> result, std::string &error) {
  if (!result.ok()) {
    error = result.status().message();
    return std::nullopt;
  }
  return result.take();
}

/// A pointer comes back as itself: null with the failure's message in
/// `error`.
template <class T> T *statusOut(Expected<T *> result, std::string &error) {
  if (!result.ok()) {
    error = result.status().message();
    return nullptr;
  }
  return *result;
}
template <class T>
std::shared_ptr<T> statusOut(Expected<std::shared_ptr<T>> result, std::string &error) {
  if (!result.ok()) {
    error = result.status().message();
    return nullptr;
  }
  return result.take();
}
template <class T>
std::unique_ptr<T> statusOut(Expected<std::unique_ptr<T>> result, std::string &error) {
  if (!result.ok()) {
    error = result.status().message();
    return nullptr;
  }
  return result.take();
}

} // namespace einrt

#endif // EINC_TEST_UNIT_STATUSOUT_H
