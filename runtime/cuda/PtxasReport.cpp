//===- PtxasReport.cpp - ptxas' -v report, read from an NVRTC log ---------===//
//
// ptxas -v writes, per function it compiles:
//
//   ptxas info    : Compiling entry function 'k0_add' for 'sm_90'
//   ptxas info    : Function properties for k0_add
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 0 barriers, 128 bytes smem
//
// (a device function that is not inlined gets "Compiling 'f'" and its own
// properties). Each number is read as the one before its phrase.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Nvrtc.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace einrt {

namespace {

/// The number just before `phrase` in `line` (e.g. "12 bytes spill stores"),
/// or -1.
int64_t numberBefore(const std::string &line, const std::string &phrase) {
  size_t at = line.find(phrase);
  if (at == std::string::npos)
    return -1;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ')
    --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1])))
    --begin;
  if (begin == end)
    return -1;
  return std::stoll(line.substr(begin, end - begin));
}

/// The text between the first pair of single quotes after `from`.
std::string quoted(const std::string &line, size_t from) {
  size_t a = line.find('\'', from);
  size_t b = a == std::string::npos ? a : line.find('\'', a + 1);
  return b == std::string::npos ? "" : line.substr(a + 1, b - a - 1);
}

} // namespace

std::vector<PtxasReport> parsePtxasReport(const std::string &log) {
  std::vector<PtxasReport> out;
  // Indices into `out` (it grows): the function of the last "Compiling ..."
  // line, and of the last "Function properties for ..." line.
  int compiling = -1, properties = -1;
  auto start = [&](const std::string &line, size_t at, bool entry) {
    PtxasReport r;
    r.function = quoted(line, at);
    r.entry = entry;
    if (size_t forAt = line.find(" for ", at); forAt != std::string::npos)
      r.arch = quoted(line, forAt);
    out.push_back(r);
    compiling = int(out.size()) - 1;
    properties = -1;
  };
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ptxas", 0) != 0)
      continue;
    if (size_t at = line.find("Compiling entry function "); at != std::string::npos) {
      start(line, at, true);
    } else if (size_t at = line.find("Compiling ");
               at != std::string::npos && line.find('\'', at) != std::string::npos) {
      start(line, at, false);
    } else if (size_t at = line.find("Function properties for "); at != std::string::npos) {
      std::string name = line.substr(at + std::string("Function properties for ").size());
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())))
        name.pop_back();
      properties = -1;
      for (size_t i = out.size(); i-- > 0;)
        if (out[i].function == name) {
          properties = int(i);
          break;
        }
      if (properties < 0) { // a function ptxas did not announce
        PtxasReport r;
        r.function = name;
        if (compiling >= 0)
          r.arch = out[size_t(compiling)].arch;
        out.push_back(r);
        properties = int(out.size()) - 1;
      }
    } else if (line.find("stack frame") != std::string::npos && properties >= 0) {
      PtxasReport &r = out[size_t(properties)];
      r.stackFrameBytes = std::max<int64_t>(0, numberBefore(line, "bytes stack frame"));
      r.spillStoreBytes = std::max<int64_t>(0, numberBefore(line, "bytes spill stores"));
      r.spillLoadBytes = std::max<int64_t>(0, numberBefore(line, "bytes spill loads"));
    } else if (line.find("Used ") != std::string::npos) {
      int at = properties >= 0 ? properties : compiling;
      if (at < 0)
        continue;
      PtxasReport &r = out[size_t(at)];
      r.registers = int32_t(std::max<int64_t>(0, numberBefore(line, "registers")));
      r.barriers = int32_t(std::max<int64_t>(0, numberBefore(line, "barriers")));
      r.sharedBytes = std::max<int64_t>(0, numberBefore(line, "bytes smem"));
    }
  }
  return out;
}

} // namespace einrt
