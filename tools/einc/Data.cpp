//===- Data.cpp - `einc data`: text to byte-token files -------------------===//
//
// Byte-level tokenisation: token = byte value, so the vocabulary is 256 and
// decoding is the identity (`einc sample` prints the bytes). The split is by
// position: the first (1 - F) of the tokens train, the tail is held out, so
// no text appears on both sides. Files are written next to their final name
// and renamed into place after an fsync: an interrupted run leaves either the
// previous file or the new one, never a torn one.
//
//===----------------------------------------------------------------------===//
#include "Data.h"

#include "runtime/base/TerminalText.h"
#include "tools/driver/Errors.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace einc {
namespace {

int fail(const std::string &message) { return exitError("data", message); }

bool readAll(const std::string &path, std::vector<unsigned char> &bytes, std::string &error) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = "cannot read " + einrt::quoted(path) + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(f);
    error = "cannot read " + einrt::quoted(path) + ": it is a directory";
    return false;
  }
  unsigned char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) {
    error = "cannot read " + einrt::quoted(path) + ": read error";
    return false;
  }
  return true;
}

/// Writes tokens [begin, end) of `bytes` as little-endian uint16 to `path`
/// atomically (temporary file in the same folder, fsync, rename, fsync of
/// the folder).
bool writeTokens(const std::string &dir, const std::string &name, const unsigned char *begin,
                 const unsigned char *end, std::string &error) {
  std::string path = dir + "/" + name;
  std::string tmp = dir + "/." + name + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    error = "cannot write " + einrt::quoted(path) + ": " + std::strerror(errno);
    return false;
  }
  std::vector<unsigned char> out;
  out.reserve(2 * (end - begin));
  for (const unsigned char *p = begin; p != end; ++p) {
    out.push_back(*p); // low byte
    out.push_back(0);  // high byte: every byte token is < 256
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t w = ::write(fd, out.data() + done, out.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      error = "cannot write " + einrt::quoted(path) + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += w;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    error = "cannot write " + einrt::quoted(path) + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write " + einrt::quoted(path) + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

} // namespace

bool makeDirs(const std::string &dir, std::string &error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    error = "cannot create the folder " + einrt::quoted(dir) + ": " + ec.message();
    return false;
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    error = einrt::quoted(dir) + " is not a folder";
    return false;
  }
  return true;
}

namespace {

std::string withCommas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(i, ",");
  return s;
}

} // namespace

int prepareData(const Options &o) {
  std::string error;
  std::vector<unsigned char> bytes;
  if (!readAll(o.input, bytes, error))
    return fail(error);
  if (bytes.empty())
    return fail(einrt::quoted(o.input) + " is empty: no tokens to write");
  uint64_t n = bytes.size();
  uint64_t val = static_cast<uint64_t>(std::llround(static_cast<double>(n) * o.valFraction));
  if (o.valFraction > 0 && val == 0)
    val = 1;
  if (val >= n)
    return fail(einrt::quoted(o.input) + " has " + std::to_string(n) +
                " bytes: too few to hold out a validation split of " +
                llvm::formatv("{0}", o.valFraction).str());
  uint64_t train = n - val;
  std::string dir = o.dataOut;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  if (!makeDirs(dir, error))
    return fail(error);
  if (!writeTokens(dir, "train.bin", bytes.data(), bytes.data() + train, error))
    return fail(error);
  if (val > 0 && !writeTokens(dir, "val.bin", bytes.data() + train, bytes.data() + n, error))
    return fail(error);
  llvm::outs() << "read " << withCommas(n) << " bytes from " << einrt::terminalSafe(o.input)
               << " (byte-level tokens, vocab 256)\n";
  llvm::outs() << "  " << einrt::terminalSafe(dir) << "/train.bin  " << withCommas(train)
               << " tokens\n";
  if (val > 0)
    llvm::outs() << "  " << einrt::terminalSafe(dir) << "/val.bin    " << withCommas(val)
                 << " tokens (" << llvm::format("%.3g", 100.0 * val / n) << "%, the tail)\n";
  return 0;
}

} // namespace einc
