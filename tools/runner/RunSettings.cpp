//===- RunSettings.cpp - An executable's --set: run-time settings only ----===//
//
// A compiled executable's Programs are fixed: its dims and the settings
// built into the training step (SettingTime::Compiled in the settings
// table) cannot change without compiling again. The run-time settings (lr,
// schedule, steps, evaluation, checkpoints, seed, data) are read by the
// trainer and take --set as `einc train` does: applied in order, the last
// of a key winning, each one marked as given.
//
//===----------------------------------------------------------------------===//
#include "Runner.h"
#include "runtime/base/TerminalText.h"

namespace einc::runner {
namespace {

std::string recompile(const std::string &key, const std::string &value) {
  return ": recompile the model for that (einc compile MODEL.ein --set " + key + "=" + value +
         " -o NAME)";
}

} // namespace

einrt::Expected<einrt::TrainSettings> runSettings(const einrt::ModelBundle &bundle,
                                                  const RunOptions &o) {
  einrt::TrainSettings out = bundle.settings;
  for (const auto &[key, value] : o.overrides) {
    std::string flag = "--set " + key + "=" + value + ": ";
    auto dim = bundle.dims.find(key);
    if (dim != bundle.dims.end()) {
      if (value == std::to_string(dim->second))
        continue;
      return einrt::Status::invalid(flag + "the dim " + einrt::quoted(key) +
                                    " is compiled into this executable (" + key + "=" +
                                    std::to_string(dim->second) + ")" + recompile(key, value));
    }
    const einrt::SettingInfo *info = einrt::findTrainSetting(key);
    if (!info)
      return einrt::Status::invalid(flag + "no dim or train setting named " + einrt::quoted(key));
    einrt::TrainSettings changed = out;
    std::string problem = einrt::setTrainText(changed, key, value);
    if (!problem.empty())
      return einrt::Status::invalid(flag + problem);
    std::string was = einrt::trainSettingValue(out, *info);
    if (info->time == einrt::SettingTime::Compiled &&
        einrt::trainSettingValue(changed, *info) != was)
      return einrt::Status::invalid(flag + "the setting " + einrt::quoted(key) +
                                    " is compiled into this executable (" + key + "=" + was + ")" +
                                    recompile(key, value));
    out = std::move(changed);
  }
  return out;
}

} // namespace einc::runner
