//===- SampleDecode.h - `sample` one position at a time (a KV cache) -*- C++ -*-===//
//
// Runs @decode (passes/DecodeStep.cpp): each call computes the logits of one
// position from the token there and the caches of the positions before it,
// and returns the caches with that row written; they are copied back into
// the next call's cache arguments on the device. The sampler feeds it what
// the full window would hold (tools/runner/SampleRun.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_RUNNER_SAMPLEDECODE_H
#define EINC_TOOLS_RUNNER_SAMPLEDECODE_H

#include "runtime/core/Executor.h"

#include <string>
#include <vector>

namespace einc::runner {

class DecodeSession {
public:
  /// `ex` runs @decode; `contextName` is @forward's context input (the
  /// decode step's input of that name takes the one token).
  static einrt::Expected<DecodeSession> open(einrt::Executor &ex, const std::string &contextName);

  /// The logits after the tokens of `window` (positions 0..n-1): only the
  /// tokens past what the caches hold already are run (all of them when
  /// the caches hold another prefix). Every row of a batch gets the same
  /// tokens; the logits are row 0's.
  einrt::Status logitsAfter(const std::vector<int32_t> &window, std::vector<double> &logits);

private:
  einrt::Executor *ex = nullptr;
  size_t tokenArg = 0, posArg = 0;
  std::vector<std::pair<size_t, size_t>> caches; // (argument buffer, result buffer)
  size_t logitsBuffer = 0;
  std::vector<int32_t> held; // the tokens the caches hold, by position
};

} // namespace einc::runner

#endif // EINC_TOOLS_RUNNER_SAMPLEDECODE_H
