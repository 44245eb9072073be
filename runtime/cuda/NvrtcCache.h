//===- NvrtcCache.h - NVRTC's on-disk cache of compiled images -*- C++ -*-===//
//
// One file per compile, named by nvrtcCacheKey (runtime/cuda/Nvrtc.h): a header
// line, the key's own checksum (a second hash of the key: a file of another
// key under the same name is not taken), the image's kind and sizes, a
// checksum of the payload, then the image and the NVRTC log. Written to a
// temporary file in the same directory and renamed into place, so a reader
// sees a whole entry or none; one that does not read back intact is a miss.
// Internal to runtime/cuda/Nvrtc.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_NVRTCCACHE_H
#define EINC_RUNTIME_NVRTCCACHE_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt::nvrtccache {

struct Entry {
  bool ptx = false;
  std::string image, log;
};

/// The key as the cache hashes it.
std::string keyText(const std::string &source, const std::vector<std::string> &options,
                    const std::string &version, const std::string &arch);
/// The second hash of the key stored in the entry.
uint32_t keyCheck(const std::string &key);

/// Reads the entry `path`; false when absent, of another key, or corrupt.
bool read(const std::string &path, uint32_t check, Entry &entry);
/// Writes it atomically (creating `dir` and its parents); Io when the file
/// system refuses.
Status write(const std::string &dir, const std::string &file, uint32_t check, const Entry &entry);

} // namespace einrt::nvrtccache

#endif // EINC_RUNTIME_NVRTCCACHE_H
