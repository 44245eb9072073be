//===- Memory.cpp - How much memory a process may still allocate ----------===//
#include "runtime/base/Memory.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/resource.h>

namespace einrt {

namespace {

/// The value in kB of `key` (e.g. "VmSize:") in a /proc file, in bytes; -1.
int64_t procKilobytes(const char *path, const std::string &key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      std::istringstream fields(line.substr(key.size()));
      int64_t kb = -1;
      fields >> kb;
      return kb < 0 ? -1 : kb * 1024;
    }
  return -1;
}

/// The first number in a one-line file ("max" and missing files: -1).
int64_t fileNumber(const std::string &path) {
  std::ifstream in(path);
  int64_t v = -1;
  if (!(in >> v))
    return -1;
  return v;
}

void consider(MemoryAvailable &m, int64_t bytes, const std::string &what) {
  if (bytes < 0)
    bytes = 0;
  if (bytes < m.bytes) {
    m.bytes = bytes;
    m.limitedBy = what;
  }
}

void considerRlimit(MemoryAvailable &m, int resource, const char *name, const char *usedKey) {
  struct rlimit rl;
  if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return;
  int64_t limit = int64_t(rl.rlim_cur);
  int64_t used = procKilobytes("/proc/self/status", usedKey);
  if (used < 0)
    used = 0;
  consider(m, limit - used,
           std::string(name) + " of " + formatBytes(limit) + ", " + formatBytes(used) + " in use");
}

/// cgroup v2: the process's group and its parents up to the root.
void considerCgroup(MemoryAvailable &m) {
  std::ifstream in("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0)
      path = line.substr(3);
  if (path.empty() || path[0] != '/')
    return;
  while (true) {
    std::string dir = "/sys/fs/cgroup" + (path == "/" ? "" : path);
    int64_t max = fileNumber(dir + "/memory.max");
    int64_t current = fileNumber(dir + "/memory.current");
    if (max >= 0 && current >= 0)
      consider(m, max - current,
               "the cgroup memory limit (" + dir + "/memory.max) of " + formatBytes(max) + ", " +
                   formatBytes(current) + " in use");
    if (path == "/")
      break;
    size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

} // namespace

MemoryAvailable availableMemory() {
  MemoryAvailable m;
  considerRlimit(m, RLIMIT_AS, "the address-space limit (ulimit -v)", "VmSize:");
  considerRlimit(m, RLIMIT_DATA, "the data-segment limit (ulimit -d)", "VmData:");
  int64_t avail = procKilobytes("/proc/meminfo", "MemAvailable:");
  if (avail >= 0)
    consider(m, avail, "MemAvailable in /proc/meminfo");
  considerCgroup(m);
  return m;
}

std::string memoryShortfall(int64_t bytes, const std::string &what) {
  MemoryAvailable m = availableMemory();
  if (bytes <= m.bytes)
    return "";
  return what + " needs " + formatBytes(bytes) + " but only " + formatBytes(m.bytes) +
         " are available (" + m.limitedBy + ")";
}

std::string formatBytes(int64_t bytes) {
  if (bytes < (int64_t(1) << 20))
    return std::to_string(bytes) + " bytes";
  char buf[64];
  if (bytes < (int64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / (1 << 30));
  return std::string(buf) + " (" + std::to_string(bytes) + " bytes)";
}

std::string formatMiB(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1 << 20));
  return buf;
}

} // namespace einrt
