//===- DeviceProfiles.cpp - The device profiles a compile can price on ----===//
#include "DeviceProfiles.h"

#include "runtime/base/TerminalText.h"

#include "Errors.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

namespace einc {
namespace ein = mlir::ein;
namespace {

bool fail(const llvm::Twine &message) { return printError(message); }

/// Adds the profiles of `path` to `profiles` (same names replace).
bool readProfiles(const std::string &path, std::vector<ein::DeviceProfile> &profiles) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("cannot read device file " + einrt::quoted(path) + ": " +
                buffer.getError().message());
  auto parsed = ein::parseDeviceProfiles((*buffer)->getBuffer().str());
  if (!parsed.ok())
    return fail("device file " + einrt::quoted(path) + ": " + parsed.status().message());
  for (ein::DeviceProfile &p : *parsed) {
    auto same = std::find_if(profiles.begin(), profiles.end(),
                             [&](const ein::DeviceProfile &q) { return q.name == p.name; });
    if (same != profiles.end())
      *same = std::move(p);
    else
      profiles.push_back(std::move(p));
  }
  return true;
}

std::optional<std::vector<ein::DeviceProfile>> allProfiles(const std::string &deviceFile) {
  std::vector<ein::DeviceProfile> profiles = ein::builtinDeviceProfiles();
  std::string user = userProfilesPath();
  if (!user.empty() && !readProfiles(user, profiles))
    return std::nullopt;
  if (!deviceFile.empty() && !readProfiles(deviceFile, profiles))
    return std::nullopt;
  return profiles;
}

} // namespace

std::optional<ein::DeviceProfile> findDeviceProfile(const std::string &deviceFile,
                                                    const std::string &name) {
  auto all = allProfiles(deviceFile);
  if (!all)
    return std::nullopt;
  std::vector<ein::DeviceProfile> &profiles = *all;
  std::string user = userProfilesPath();
  for (const ein::DeviceProfile &p : profiles)
    if (p.name == name)
      return p;
  std::vector<std::string> names;
  for (const ein::DeviceProfile &p : profiles)
    names.push_back(p.name);
  std::string hint = user.empty() ? "; `einc calibrate` measures this machine as \"cpu\"" : "";
  fail("unknown device " + einrt::quoted(name) + "; known devices: " + llvm::join(names, ", ") +
       hint);
  return std::nullopt;
}

std::string defaultDeviceFilePath() {
  llvm::SmallString<256> path;
  const char *xdg = std::getenv("XDG_CONFIG_HOME");
  const char *home = std::getenv("HOME");
  if (xdg && *xdg && llvm::sys::path::is_absolute(xdg)) {
    path = xdg;
  } else if (home && *home) {
    path = home;
    llvm::sys::path::append(path, ".config");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "einc", "devices.json");
  return std::string(path);
}

std::string userProfilesPath() {
  std::string path = defaultDeviceFilePath();
  return !path.empty() && llvm::sys::fs::exists(path) ? path : "";
}

bool haveDeviceProfile(const std::string &deviceFile, const std::string &name) {
  std::vector<ein::DeviceProfile> profiles = ein::builtinDeviceProfiles();
  for (const std::string &path : {userProfilesPath(), deviceFile}) {
    if (path.empty())
      continue;
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      continue;
    if (auto parsed = ein::parseDeviceProfiles((*buffer)->getBuffer().str()); parsed.ok())
      profiles.insert(profiles.end(), parsed->begin(), parsed->end());
  }
  return std::any_of(profiles.begin(), profiles.end(),
                     [&](const ein::DeviceProfile &p) { return p.name == name; });
}

} // namespace einc
