//===- SampleDecode.cpp - `sample` one position at a time (a KV cache) ----===//
#include "SampleDecode.h"

#include <algorithm>

namespace einc::runner {

einrt::Expected<DecodeSession> DecodeSession::open(einrt::Executor &ex,
                                                   const std::string &contextName) {
  const einrt::Program &p = ex.program();
  DecodeSession s;
  s.ex = &ex;
  bool token = false, pos = false;
  std::vector<std::string> cacheNames;
  std::vector<size_t> cacheArgs;
  for (size_t i = 0; i < p.arguments.size(); ++i) {
    const einrt::Buffer &b = p.buffers[p.arguments[i]];
    if (b.name == contextName)
      s.tokenArg = i, token = true;
    else if (b.name == "pos")
      s.posArg = i, pos = true;
    else if (b.name.rfind("cache.", 0) == 0)
      cacheNames.push_back(b.name), cacheArgs.push_back(size_t(p.arguments[i]));
  }
  if (!token || !pos || p.results.empty())
    return einrt::Status::invalid("@decode has no input " + contextName + " and pos");
  s.logitsBuffer = size_t(p.results[0]);
  for (size_t c = 0; c < cacheNames.size(); ++c) {
    auto r = std::find(p.resultNames.begin(), p.resultNames.end(), cacheNames[c]);
    if (r == p.resultNames.end())
      return einrt::Status::invalid("@decode returns no " + cacheNames[c]);
    s.caches.push_back({cacheArgs[c], size_t(p.results[r - p.resultNames.begin()])});
  }
  return s;
}

einrt::Status DecodeSession::logitsAfter(const std::vector<int32_t> &window,
                                         std::vector<double> &logits) {
  bool prefix = held.size() < window.size() && std::equal(held.begin(), held.end(), window.begin());
  if (!prefix) { // another window: start over
    held.clear();
    for (auto [arg, result] : caches)
      if (einrt::Status z = ex->zeroBuffer(arg); !z.ok())
        return z;
  }
  for (size_t at = held.size(); at < window.size(); ++at) {
    // Every row of a batch the same token (as the window's rows are).
    std::vector<int32_t> tokens(size_t(ex->elementCount(ex->program().arguments[tokenArg])),
                                window[at]);
    int32_t position = int32_t(at);
    if (einrt::Status s = ex->setArgument(tokenArg, tokens.data(), tokens.size()); !s.ok())
      return s;
    if (einrt::Status s = ex->setArgument(posArg, &position, 1); !s.ok())
      return s;
    if (einrt::Status s = ex->run(); !s.ok())
      return s;
    for (auto [arg, result] : caches)
      if (einrt::Status s = ex->copyFrom(arg, *ex, result); !s.ok())
        return s;
    held.push_back(window[at]);
  }
  einrt::Expected<std::vector<double>> read = ex->read(logitsBuffer);
  if (!read.ok())
    return read.status();
  logits = read.take();
  logits.resize(size_t(ex->shape(logitsBuffer).back())); // row 0
  return einrt::Status();
}

} // namespace einc::runner
