//===- Backend.cpp - The backend registry ---------------------------------===//
#include "runtime/core/Backend.h"

#include "runtime/base/TerminalText.h"

namespace einrt {

#define EINRT_BACKEND(F) const Backend &F();
#include "runtime/core/Backends.def"

Backend::~Backend() = default;

std::string Backend::checkSection(const std::vector<uint8_t> &,
                                  const std::vector<const Program *> &, int64_t) const {
  return std::string(name()) + " has no kernel section";
}

std::string Backend::describeSection(const std::vector<uint8_t> &,
                                     const std::vector<const Program *> &) const {
  return "";
}

const std::vector<const Backend *> &backends() {
  static const std::vector<const Backend *> all = {
#define EINRT_BACKEND(F) &F(),
#include "runtime/core/Backends.def"
  };
  return all;
}

const Backend &defaultBackend() { return *backends().front(); }

const Backend *findBackend(std::string_view name) {
  for (const Backend *b : backends())
    if (name == b->name())
      return b;
  return nullptr;
}

const Backend *backendOfSection(std::string_view section) {
  for (const Backend *b : backends())
    if (*b->kernelSection() && section == b->kernelSection())
      return b;
  return nullptr;
}

std::string backendNames() {
  std::string out;
  for (const Backend *b : backends())
    out += (out.empty() ? "" : ", ") + std::string(b->name());
  return out;
}

std::string unknownBackend(std::string_view name) {
  return "unknown backend " + quoted(name) + " (" + backendNames() + ")";
}

} // namespace einrt
