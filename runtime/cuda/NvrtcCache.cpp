//===- NvrtcCache.cpp - NVRTC's on-disk cache of compiled images ----------===//
#include "runtime/cuda/NvrtcCache.h"
#include "runtime/base/Crc32c.h"
#include "runtime/base/TerminalText.h"
#include "runtime/cuda/Nvrtc.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace einrt {

namespace {

constexpr const char *kMagic = "einc-nvrtc-cache 1";

uint32_t crcOf(const std::string &s) {
  return crc32c(reinterpret_cast<const uint8_t *>(s.data()), s.size());
}

/// FNV-1a, 64 bits.
uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

Status makeDirs(const std::string &dir) {
  std::string path;
  size_t at = 0;
  while (at != std::string::npos) {
    size_t next = dir.find('/', at + 1);
    path = dir.substr(0, next);
    at = next;
    if (path.empty() || path == "/")
      continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
      return Status(StatusCode::Io, "cannot create " + quoted(path) + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status(StatusCode::Io, dir + " is not a directory");
  return Status::success();
}

} // namespace

std::string defaultNvrtcCacheDir() {
  auto env = [](const char *name) -> std::string {
    const char *v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (std::string d = env("EINC_CACHE_DIR"); !d.empty())
    return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty())
    return d + "/einc/cuda";
  if (std::string d = env("HOME"); !d.empty())
    return d + "/.cache/einc/cuda";
  return "";
}

std::string nvrtcCacheKey(const std::string &source, const std::vector<std::string> &options,
                          const std::string &version, const std::string &arch) {
  char hex[17];
  std::snprintf(
      hex, sizeof hex, "%016llx",
      static_cast<unsigned long long>(fnv1a(nvrtccache::keyText(source, options, version, arch))));
  return hex;
}

namespace nvrtccache {

std::string keyText(const std::string &source, const std::vector<std::string> &options,
                    const std::string &version, const std::string &arch) {
  std::string key = "nvrtc " + version + "\n" + arch + "\n";
  for (const std::string &o : options)
    key += o + "\n";
  key += std::to_string(source.size()) + "\n" + source;
  return key;
}

uint32_t keyCheck(const std::string &key) { return crcOf(key); }

bool read(const std::string &path, uint32_t check, Entry &entry) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::string magic;
  unsigned long long storedCheck = 0, ptx = 2, imageSize = 0, logSize = 0, payloadCrc = 0;
  if (!std::getline(in, magic) || magic != kMagic)
    return false;
  in >> std::hex >> storedCheck >> std::dec >> ptx >> imageSize >> logSize >> std::hex >>
      payloadCrc;
  if (!in || in.get() != '\n' || storedCheck != check || ptx > 1)
    return false;
  // The sizes must be those of the rest of the file exactly.
  std::streampos start = in.tellg();
  in.seekg(0, std::ios::end);
  std::streampos end = in.tellg();
  if (start < 0 || end < start || uint64_t(end - start) != imageSize + logSize)
    return false;
  in.seekg(start);
  std::string payload(size_t(imageSize + logSize), '\0');
  if (!in.read(payload.data(), std::streamsize(payload.size())) || crcOf(payload) != payloadCrc)
    return false;
  entry.ptx = ptx == 1;
  entry.image = payload.substr(0, size_t(imageSize));
  entry.log = payload.substr(size_t(imageSize));
  return true;
}

Status write(const std::string &dir, const std::string &file, uint32_t check, const Entry &entry) {
  EINRT_TRY(makeDirs(dir));
  std::string payload = entry.image + entry.log;
  char header[160];
  std::snprintf(header, sizeof header, "%s\n%08x %d %zu %zu %08x\n", kMagic, check,
                entry.ptx ? 1 : 0, entry.image.size(), entry.log.size(), crcOf(payload));
  std::string path = dir + "/" + file;
  static std::atomic<uint64_t> writes{0}; // unique per thread and process
  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << header << payload;
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      return Status(StatusCode::Io, "cannot write " + temp);
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    Status failed(StatusCode::Io, "cannot rename " + quoted(temp) + " to " + quoted(path) + ": " +
                                      std::strerror(errno));
    std::remove(temp.c_str());
    return failed;
  }
  return Status::success();
}

} // namespace nvrtccache
} // namespace einrt
