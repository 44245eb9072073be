//===- BackendDevice.cpp - --backend's device, opened before compiling ----===//
#include "BackendDevice.h"

#include "tools/driver/DeviceProfiles.h"
#include "tools/runner/Runner.h"

#include "llvm/Support/raw_ostream.h"

#include <cctype>

namespace einc {

std::shared_ptr<einrt::Device> openBackendDevice(const einrt::Backend &kind,
                                                 const einrt::BackendOpen &open) {
  auto device = runner::openDevice(kind, open);
  if (!device.ok()) {
    llvm::errs() << "einc: " << device.status().message() << "\n";
    return nullptr;
  }
  return device.take();
}

std::string reportProfileFor(const Options &o, const einrt::Backend &kind,
                             const einrt::Device &device) {
  const std::string description = kind.describe(device);
  std::string word;
  for (char c : description + " ") {
    if (std::isalnum((unsigned char)c)) {
      word += char(std::tolower((unsigned char)c));
      continue;
    }
    if (!word.empty() && haveDeviceProfile(o.deviceFile, word) &&
        kind.profileDescribes(word, description))
      return word;
    word.clear();
  }
  return kind.hostMemory() ? "cpu" : "";
}

} // namespace einc
