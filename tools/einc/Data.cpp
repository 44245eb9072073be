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

einrt::Expected<std::vector<unsigned char>> readAll(const std::string &path) {
  const std::string cannot = "cannot read " + einrt::quoted(path) + ": ";
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    int err = errno;
    return einrt::Status(err == ENOENT ? einrt::StatusCode::NotFound : einrt::StatusCode::Io,
                         cannot + std::strerror(err));
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(f);
    return einrt::Status::invalid(cannot + "it is a directory");
  }
  std::vector<unsigned char> bytes;
  unsigned char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad)
    return einrt::Status(einrt::StatusCode::Io, cannot + "read error");
  return bytes;
}

/// Writes tokens [begin, end) of `bytes` as little-endian uint16 to `path`
/// atomically (temporary file in the same folder, fsync, rename, fsync of
/// the folder).
einrt::Status writeTokens(const std::string &dir, const std::string &name,
                          const unsigned char *begin, const unsigned char *end) {
  std::string path = dir + "/" + name;
  std::string tmp = dir + "/." + name + ".tmp." + std::to_string(getpid());
  auto refused = [&](int err) {
    return einrt::Status(einrt::StatusCode::Io,
                         "cannot write " + einrt::quoted(path) + ": " + std::strerror(err));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return refused(errno);
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
      einrt::Status failed = refused(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return failed;
    }
    done += w;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    einrt::Status failed = refused(errno);
    ::unlink(tmp.c_str());
    return failed;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    einrt::Status failed = refused(errno);
    ::unlink(tmp.c_str());
    return failed;
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return einrt::Status::success();
}

} // namespace

einrt::Status makeDirs(const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return einrt::Status(einrt::StatusCode::Io,
                         "cannot create the folder " + einrt::quoted(dir) + ": " + ec.message());
  if (!std::filesystem::is_directory(dir, ec))
    return einrt::Status(einrt::StatusCode::Io, einrt::quoted(dir) + " is not a folder");
  return einrt::Status::success();
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
  einrt::Expected<std::vector<unsigned char>> read = readAll(o.input);
  if (!read.ok())
    return fail(read.status().message());
  const std::vector<unsigned char> bytes = read.take();
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
  if (einrt::Status made = makeDirs(dir); !made.ok())
    return fail(made.message());
  if (einrt::Status written = writeTokens(dir, "train.bin", bytes.data(), bytes.data() + train);
      !written.ok())
    return fail(written.message());
  if (val > 0)
    if (einrt::Status written = writeTokens(dir, "val.bin", bytes.data() + train, bytes.data() + n);
        !written.ok())
      return fail(written.message());
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
