//===- TrainerTestUtil.h - Temporary files for the trainer tests ----------===//
#ifndef EINC_TEST_UNIT_TRAINER_TRAINERTESTUTIL_H
#define EINC_TEST_UNIT_TRAINER_TRAINERTESTUTIL_H

#include "runtime/base/Status.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace einrt {
namespace test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its files.
struct TempDir {
  std::string path;
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/einc-trainer-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()))
      path = buf.data();
  }
  ~TempDir() {
    if (!path.empty())
      std::system(("rm -rf '" + path + "'").c_str());
  }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

/// The message of a call a test expects to fail with `code`; the test fails
/// when it failed otherwise, or succeeded.
inline std::string failureOf(const Status &status, StatusCode code) {
  EXPECT_STREQ(statusCodeName(status.code()), statusCodeName(code)) << status.message();
  return status.message();
}
template <class T> std::string failureOf(const Expected<T> &result, StatusCode code) {
  return failureOf(result.status(), code);
}

/// The value of `result`, or none after a test failure saying why not.
template <class T> std::optional<T> valueOf(Expected<T> result) {
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (!result.ok())
    return std::nullopt;
  return result.take();
}

inline void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

/// Little-endian uint16 tokens, optionally after an llm.c header.
inline std::vector<uint8_t> tokenBytes(const std::vector<uint16_t> &tokens, bool llmc = false,
                                       int32_t version = 1, int64_t declared = -1) {
  std::vector<uint8_t> out;
  if (llmc) {
    std::vector<int32_t> header(256, 0);
    header[0] = 20240520;
    header[1] = version;
    header[2] = int32_t(declared < 0 ? int64_t(tokens.size()) : declared);
    for (int32_t h : header)
      for (int k = 0; k < 4; ++k)
        out.push_back(uint8_t(uint32_t(h) >> (8 * k)));
  }
  for (uint16_t t : tokens) {
    out.push_back(uint8_t(t & 0xFF));
    out.push_back(uint8_t(t >> 8));
  }
  return out;
}

/// `n` tokens of a deterministic pseudo-text over [0, vocab): mostly a
/// repeating pattern (learnable), some noise.
inline std::vector<uint16_t> patternTokens(size_t n, int vocab, uint32_t seed = 1) {
  std::vector<uint16_t> t(n);
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    t[i] = (x >> 28) == 0 ? uint16_t((x >> 8) % uint32_t(vocab))
                          : uint16_t((i * 3 + i / 5) % size_t(vocab));
  }
  return t;
}

} // namespace test
} // namespace einrt

#endif
