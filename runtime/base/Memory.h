//===- Memory.h - How much memory a process may still allocate ------------===//
//
// Big allocations (an executor's arenas and buffers, a checkpoint's staging
// copy) are checked against availableMemory() before they are made, so a
// model too large for the machine fails with the bytes needed and available
// instead of std::bad_alloc (the runtime and the tools are built without
// exceptions: a failed allocation aborts). The bound is the least of
//   * RLIMIT_AS (ulimit -v) minus the process's virtual size (VmSize);
//   * RLIMIT_DATA (ulimit -d) minus its data segment (VmData);
//   * MemAvailable of /proc/meminfo (buffers are zero-filled: touched);
//   * memory.max minus memory.current of its cgroup (v2) and every parent.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_MEMORY_H
#define EINC_RUNTIME_MEMORY_H

#include <cstdint>
#include <string>

namespace einrt {

struct MemoryAvailable {
  int64_t bytes = INT64_MAX; // INT64_MAX: no limit found
  std::string limitedBy;     // which bound, e.g. "the address-space limit
                             // (ulimit -v) of 4.00 GiB"
};

MemoryAvailable availableMemory();

/// "" when `bytes` fit into availableMemory(); else a message: "<what>
/// needs X but only Y are available (<the bound>)".
std::string memoryShortfall(int64_t bytes, const std::string &what);

/// "1.50 GiB (1610612736 bytes)"; below 1 MiB: "1234 bytes".
std::string formatBytes(int64_t bytes);
/// "1.5 MiB": the tools' short form, for sizes listed side by side.
std::string formatMiB(int64_t bytes);

} // namespace einrt

#endif // EINC_RUNTIME_MEMORY_H
