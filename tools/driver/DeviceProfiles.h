//===- DeviceProfiles.h - The device profiles a compile can price on -*- C++ -*-===//
//
// The report and `budget:` remat price a step on a device profile
// (passes/DeviceProfile.h): the built-in ones, then the user's file (where
// `einc calibrate` writes this machine as "cpu"), then a `--device-file`;
// a later profile of the same name replaces an earlier one (docs/devices.md).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_DEVICEPROFILES_H
#define EINC_TOOLS_DRIVER_DEVICEPROFILES_H

#include "passes/DeviceProfile.h"

#include <optional>
#include <string>

namespace einc {

/// Whether a profile named `name` exists (built in, the user's file, or
/// `deviceFile`), without printing anything.
bool haveDeviceProfile(const std::string &deviceFile, const std::string &name);
/// The profile named `name` (as the report finds it); std::nullopt after
/// printing why not.
std::optional<mlir::ein::DeviceProfile> findDeviceProfile(const std::string &deviceFile,
                                                          const std::string &name);

/// Where `einc calibrate` writes without -o: $XDG_CONFIG_HOME/einc/devices.json,
/// else ~/.config/einc/devices.json; "" when neither variable is set.
std::string defaultDeviceFilePath();

/// The user's device-profile file where `einc calibrate` writes it
/// (defaultDeviceFilePath), if it exists; else "".
std::string userProfilesPath();

} // namespace einc

#endif // EINC_TOOLS_DRIVER_DEVICEPROFILES_H
