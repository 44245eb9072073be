//===- BundleInfo.cpp - `report` and `info` of a compiled model -----------===//
#include "Runner.h"

#include "runtime/base/Memory.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/Backend.h"
#include "runtime/core/Safetensors.h"
#include "runtime/cpu/CpuDevice.h"

#include <iostream>

namespace einc::runner {
namespace {

std::string mib(int64_t bytes) { return einrt::formatMiB(bytes); }

/// "key=value ..." of the settings of `time`.
std::string settingsOf(const einrt::TrainSettings &s, einrt::SettingTime time) {
  std::string text;
  for (const einrt::SettingInfo &info : einrt::trainSettingTable()) {
    if (info.time != time)
      continue;
    std::string value = einrt::trainSettingValue(s, info);
    text += (text.empty() ? "" : " ") + std::string(info.key) + "=" +
            (value.empty() ? "(default)" : value);
  }
  return text;
}

} // namespace

int report(const RunContext &context, const RunOptions &o, const einrt::ModelBundle &bundle) {
  std::string text = o.format == "json" ? bundle.reportJson : bundle.reportText;
  // The text was printed by einc when it compiled this executable: its title
  // names the executable, which has whatever name it has now.
  const std::string einc = "einc report: ";
  if (o.format != "json" && text.compare(0, einc.size(), einc) == 0)
    text = context.tool + " report: " + text.substr(einc.size());
  if (text.empty()) {
    std::cerr << context.tool << " report: it was compiled without a report\n";
    return 1;
  }
  if (o.output.empty()) {
    std::cout << text;
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  einrt::Status written =
      einrt::writeFileAtomically(o.output, std::vector<uint8_t>(text.begin(), text.end()));
  if (!written.ok()) {
    std::cerr << context.tool << " report: " << written.message() << "\n";
    return 1;
  }
  return 0;
}

int info(const RunContext &context, const einrt::ModelBundle &bundle, const LinkedKernels &linked,
         int64_t programFileBytes, int64_t fileBytes) {
  std::ostream &out = std::cout;
  out << context.tool << ": the model " << einrt::terminalSafe(bundle.modelName) << " ("
      << einrt::terminalSafe(bundle.sourceName) << "), compiled by " << bundle.writtenBy << "\n";
  std::string dims;
  for (const auto &[name, size] : bundle.dims)
    dims += (dims.empty() ? "" : " ") + name + "=" + std::to_string(size);
  out << "  dims        " << dims << "\n";

  // Params: the arguments of the first program that has them.
  int64_t params = 0, paramBytes = 0;
  for (const einrt::BundledProgram &bp : bundle.programs) {
    for (int32_t a : bp.program.arguments) {
      const einrt::Buffer &b = bp.program.buffers[size_t(a)];
      if (b.role == einrt::BufferRole::Param) {
        params += b.elementCount();
        paramBytes += b.elementCount() * einrt::dtypeSize(b.dtype);
      }
    }
    if (params > 0)
      break;
  }
  out << "  params      " << params << " (" << mib(paramBytes) << ")\n";
  out << "  compiled in " << settingsOf(bundle.settings, einrt::SettingTime::Compiled) << "\n";
  out << "  run time    " << settingsOf(bundle.settings, einrt::SettingTime::Run)
      << "\n              (`train --set` changes these; the others need einc compile)\n";
  if (bundle.window)
    out << "  windows     " << einrt::windowMappingName(*bundle.window) << "\n";

  einrt::CpuDevice sizing; // memory plans as the CPU backend allocates them
  for (const einrt::BundledProgram &bp : bundle.programs) {
    int64_t bytes = einrt::Executor::plannedBytes(bp.program, sizing);
    out << "  @" << bp.program.name
        << std::string(bp.program.name.size() < 11 ? 11 - bp.program.name.size() : 1, ' ')
        << bp.program.steps.size() << " steps, " << bp.program.buffers.size() << " buffers, "
        << mib(bytes) << " planned (" << bp.backend << ")\n";
  }
  for (const einrt::KernelObject &k : bundle.kernelObjects)
    out << "  kernels     " << k.name << ": " << k.kernelCount << " kernels, "
        << mib(int64_t(k.bytes.size())) << " of object code\n";
  // Each kernel section as its backend describes it (and what its device
  // would refuse, checked without one).
  for (const auto &[section, bytes] : bundle.kernelSections)
    if (const einrt::Backend *backend = einrt::backendOfSection(section)) {
      std::vector<const einrt::Program *> programs;
      for (const einrt::BundledProgram &bp : bundle.programs)
        if (bp.backend == backend->programLowering())
          programs.push_back(&bp.program);
      out << backend->describeSection(bytes, programs);
    }
  std::string targets;
  for (const std::string &t : linked.targets)
    targets += (targets.empty() ? "" : ", ") + t;
  out << "  linked      " << (targets.empty() ? "no kernel objects" : targets) << "\n";
  out << "  this CPU    " << (linked.chosen.empty() ? "no kernels" : "runs " + linked.chosen)
      << (linked.why.empty() ? "" : " (" + linked.why + ")") << "\n";
  out << "  sizes       program file " << mib(programFileBytes);
  if (fileBytes > 0)
    out << ", executable " << mib(fileBytes);
  out << "\n";
  out.flush();
  return 0;
}

} // namespace einc::runner
