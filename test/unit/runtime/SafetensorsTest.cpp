//===- SafetensorsTest.cpp - Reading, writing and rejecting safetensors ---===//
#include "runtime/core/Safetensors.h"
#include "test/unit/StatusTesting.h"

#include "runtime/base/Crc32c.h"
#include "runtime/core/FloatFormats.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace einrt;

namespace {

/// A fresh directory under the test temp dir, removed (flat) afterwards.
class SafetensorsFile : public ::testing::Test {
protected:
  std::string dir;
  void SetUp() override {
    const char *base = std::getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/einrt-st-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back(0);
    ASSERT_NE(mkdtemp(buf.data()), nullptr);
    dir = buf.data();
  }
  void TearDown() override {
    for (const std::string &f : listDir())
      std::remove((dir + "/" + f).c_str());
    rmdir(dir.c_str());
  }
  std::vector<std::string> listDir() const {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
      while (dirent *e = readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
          names.push_back(e->d_name);
      closedir(d);
    }
    return names;
  }
};

std::vector<uint8_t> readAll(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
}

void writeAll(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

/// A file with the given JSON header (padded as given) and data bytes.
std::vector<uint8_t> rawFile(const std::string &header, const std::vector<uint8_t> &data) {
  std::vector<uint8_t> out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

/// "" when `file` parses; else the message of its failure, which is
/// always Corrupt (a file failing a check).
std::string parseError(const std::vector<uint8_t> &file) {
  SafetensorsMetadata md;
  Expected<std::vector<TensorData>> r = parseSafetensors(file.data(), file.size(), md);
  if (r.ok())
    return "";
  EXPECT_EQ(r.status().code(), StatusCode::Corrupt) << r.status().message();
  return r.status().message();
}

std::vector<TensorData> everyDType() {
  double vals[] = {1.5, -2.25, 0.1, 3e-5, -0.0, 65504};
  return {
      TensorData::fromDoubles("f32", DType::F32, {2, 3}, vals),
      TensorData::fromDoubles("f64", DType::F64, {6}, vals),
      TensorData::fromDoubles("bf16", DType::BF16, {3, 2}, vals),
      TensorData::fromDoubles("f16", DType::F16, {1, 6}, vals),
      TensorData::fromDoubles("i32", DType::I32, {2, 3}, vals),
      TensorData::fromDoubles("bool", DType::I1, {6}, vals),
      TensorData::fromDoubles("scalar", DType::F32, {}, vals),
      TensorData::fromDoubles("empty", DType::F32, {0, 4}, vals),
  };
}

} // namespace

TEST_F(SafetensorsFile, RoundTripsEveryDTypeAndMetadata) {
  std::vector<TensorData> ts = everyDType();
  SafetensorsMetadata md = {{"step", "1200"}, {"rng", "quote \" backslash \\ newline \n ü"}};
  std::string path = dir + "/ckpt.safetensors";
  EINC_ASSERT_OK(writeSafetensors(path, ts, md));
  std::vector<uint8_t> raw = readAll(path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | raw[i];
  EXPECT_EQ((8 + n) % 8, 0u); // data starts 8-byte aligned

  SafetensorsMetadata back;
  EINC_ASSERT_OK_AND_ASSIGN(auto got, readSafetensors(path, back));
  EXPECT_EQ(back, md);
  ASSERT_EQ(got.size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    EXPECT_EQ(got[i].name, ts[i].name);
    EXPECT_EQ(got[i].dtype, ts[i].dtype);
    EXPECT_EQ(got[i].shape, ts[i].shape);
    EXPECT_EQ(got[i].bytes, ts[i].bytes) << ts[i].name;
  }
  EXPECT_EQ(got[0].toDoubles(),
            (std::vector<double>{1.5, -2.25, double(0.1f), double(3e-5f), -0.0, 65504}));
  EXPECT_EQ(got[2].toDoubles()[2], roundToBF16(0.1));
  EXPECT_EQ(got[3].toDoubles()[2], roundToF16(0.1));
  EXPECT_EQ(got[4].toDoubles(), (std::vector<double>{1, -2, 0, 0, 0, 65504}));
  EXPECT_EQ(got[5].toDoubles(), (std::vector<double>{1, 1, 1, 1, 0, 1}));
}

TEST(Safetensors, HeaderLayoutIsTheStandardOne) {
  double v[] = {1, 2};
  EINC_ASSERT_OK_AND_ASSIGN(
      auto bytes, serializeSafetensors({TensorData::fromDoubles("a", DType::F32, {2}, v)}, {}));
  std::string header(bytes.begin() + 8, bytes.end() - 8);
  char crc[9];
  std::snprintf(crc, sizeof crc, "%08x", crc32c(bytes.data() + bytes.size() - 8, 8));
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1),
            std::string(R"({"__metadata__":{"crc32c.a":")") + crc +
                R"("},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})");
  float f[2];
  std::memcpy(f, bytes.data() + bytes.size() - 8, 8);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 2.0f);
}

TEST(Safetensors, ReadsHandWrittenFiles) {
  // Order of keys, whitespace, escapes and metadata position are free.
  std::vector<uint8_t> data = {1, 0, 0, 0, 2, 0, 0, 0, 1, 0};
  std::string header = "{ \"__metadata__\" : {\"format\":\"pt\"},\n"
                       "  \"b\\u00e9\": {\"shape\": [2], \"dtype\": \"BOOL\", "
                       "\"data_offsets\": [8, 10]},\n"
                       "  \"a\": {\"data_offsets\": [0, 8], \"dtype\": "
                       "\"I32\", \"shape\": [1, 2]} }";
  SafetensorsMetadata md;
  auto file = rawFile(header, data);
  bool checksummed = true;
  EINC_ASSERT_OK_AND_ASSIGN(auto ts, parseSafetensors(file.data(), file.size(), md, &checksummed));
  EXPECT_FALSE(checksummed); // another writer's file: read unverified
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].name, "b\xC3\xA9");
  EXPECT_EQ(ts[0].toDoubles(), (std::vector<double>{1, 0}));
  EXPECT_EQ(ts[1].toDoubles(), (std::vector<double>{1, 2}));
  EXPECT_EQ(md.at("format"), "pt");
}

TEST(Safetensors, RejectsCorruptFiles) {
  double v[] = {1, 2, 3, 4};
  EINC_ASSERT_OK_AND_ASSIGN(
      auto good, serializeSafetensors({TensorData::fromDoubles("a", DType::F32, {2}, v),
                                       TensorData::fromDoubles("b", DType::F32, {2}, v + 2)},
                                      {}));
  EXPECT_EQ(parseError(good), "");

  // Truncated anywhere.
  for (size_t cut : {size_t(0), size_t(5), size_t(8), size_t(20), good.size() - 1}) {
    std::vector<uint8_t> t(good.begin(), good.begin() + cut);
    EXPECT_NE(parseError(t), "") << cut;
  }
  std::vector<uint8_t> t(good.begin(), good.end() - 1);
  EXPECT_NE(parseError(t).find("beyond the 15 data bytes"), std::string::npos) << parseError(t);
  // Header length larger than the file.
  std::vector<uint8_t> big = good;
  big[0] = 0xFF;
  big[1] = 0xFF;
  EXPECT_NE(parseError(big).find("header length"), std::string::npos);
  big[7] = 0x80;
  EXPECT_NE(parseError(big).find("100 MiB"), std::string::npos);

  std::vector<uint8_t> d8(8, 0), d16(16, 0);
  auto err = [&](const std::string &h, const std::vector<uint8_t> &d) {
    return parseError(rawFile(h, d));
  };
  auto one = [](const std::string &fields) { return "{\"a\":{" + fields + "}}"; };
  // Bad JSON.
  EXPECT_NE(err("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", d8)
                .find("invalid JSON"),
            std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[2,],\"data_offsets\":[0,8]"), d8), "");
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]"), d8), "");
  EXPECT_NE(err(one("\"dtype\":\"F\\x32\",\"shape\":[2],\"data_offsets\":[0,8]"), d8), "");
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]") + "x", d8), "");
  EXPECT_NE(err("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],"
                "\"data_offsets\":[0,8]}}",
                d8)
                .find("duplicate key"),
            std::string::npos);
  EXPECT_NE(err("[1, 2]", {}), "");
  EXPECT_NE(err("{\"a\":\"\xff\"}", {}).find("UTF-8"), std::string::npos);
  EXPECT_NE(err("{\"a\":\"\\ud800\"}", {}).find("surrogate"), std::string::npos);
  EXPECT_NE(err(std::string(100, '['), {}), "");
  EXPECT_NE(
      err("{\"a\":" + std::string(1000, '[') + std::string(1000, ']') + "}", {}).find("nesting"),
      std::string::npos);
  // Semantic errors.
  EXPECT_NE(err(one("\"dtype\":\"F8\",\"shape\":[2],\"data_offsets\":[0,8]"), d8)
                .find("unsupported dtype \"F8\""),
            std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]"), d8)
                .find("need 12 bytes but data_offsets span 8"),
            std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]"), d8)
                .find("non-negative integers"),
            std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]"), d8), "");
  EXPECT_NE(
      err(one("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]"), d8).find("begin > end"),
      std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,9]"), d8), "");
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[2]"), d8).find("needs"), std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1"), d8)
                .find("unknown field"),
            std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
                    "\"data_offsets\":[0,8]"),
                d8)
                .find("too large"),
            std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[99999999999999999999],"
                    "\"data_offsets\":[0,8]"),
                d8),
            "");
  // Overlapping offsets, holes, trailing bytes.
  std::string two = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
  EXPECT_NE(err(two, d16).find("overlaps"), std::string::npos) << err(two, d16);
  std::string hole = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}";
  EXPECT_NE(err(hole, d16).find("belong to no tensor"), std::string::npos);
  EXPECT_NE(err(one("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]"), d16)
                .find("belong to no tensor"),
            std::string::npos);
  EXPECT_NE(err("{\"__metadata__\":{\"k\":1}}", {}).find("expected a string"), std::string::npos);
}

TEST(Safetensors, MutatedFilesNeverCrash) {
  EINC_ASSERT_OK_AND_ASSIGN(auto good, serializeSafetensors(everyDType(), {{"k", "v"}}));
  uint64_t state = 99;
  auto rnd = [&](uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  int rejected = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> f = good;
    int edits = 1 + int(rnd(4));
    for (int e = 0; e < edits; ++e) {
      size_t at = rnd(iter % 3 == 0 ? 8 : f.size());
      f[at] = uint8_t(rnd(256));
    }
    if (iter % 7 == 0)
      f.resize(rnd(f.size() + 1));
    SafetensorsMetadata md;
    rejected += !parseSafetensors(f.data(), f.size(), md).ok();
  }
  EXPECT_GT(rejected, 1000);
}

// Every tensor's CRC-32C is in the metadata einc writes; a changed byte of
// any tensor's data is refused naming the tensor, and so are a header with
// a checksum taken out or added.
TEST(Safetensors, ChecksumsNameTheDamagedTensor) {
  double v[] = {1, 2, 3, 4, 5, 6};
  SafetensorsMetadata given = {{"step", "7"}, {"crc32c.a", "stale"}};
  EINC_ASSERT_OK_AND_ASSIGN(
      auto good, serializeSafetensors({TensorData::fromDoubles("a", DType::F32, {2}, v),
                                       TensorData::fromDoubles("b", DType::F32, {4}, v + 2)},
                                      given));
  SafetensorsMetadata md;
  bool checksummed = false;
  EINC_ASSERT_OK(parseSafetensors(good.data(), good.size(), md, &checksummed));
  EXPECT_TRUE(checksummed);
  EXPECT_EQ(md, (SafetensorsMetadata{{"step", "7"}})); // the checksums are taken out

  // Each data byte of b, flipped: refused, naming b and both checksums.
  const size_t end = good.size(), bStart = end - 16;
  for (size_t at = bStart; at < end; ++at) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x40;
    std::string e = parseError(bad);
    EXPECT_NE(e.find("tensor \"b\": its data fails its checksum (CRC-32C "), std::string::npos)
        << e;
    EXPECT_NE(e.find("the file is damaged"), std::string::npos) << e;
  }
  std::vector<uint8_t> badA = good;
  badA[bStart - 1] ^= 1; // a's last byte
  EXPECT_NE(parseError(badA).find("tensor \"a\": its data fails"), std::string::npos);

  // The header edited: one checksum removed, one for no tensor added.
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | good[i];
  std::string header(good.begin() + 8, good.begin() + 8 + n);
  std::vector<uint8_t> data(good.begin() + 8 + n, good.end());
  size_t key = header.find("\"crc32c.a\"");
  ASSERT_NE(key, std::string::npos);
  std::string without = header;
  without.erase(key, header.find(',', key) + 1 - key);
  EXPECT_NE(parseError(rawFile(without, data))
                .find("tensor \"a\" has no checksum while the other tensors have one"),
            std::string::npos)
      << parseError(rawFile(without, data));
  std::string extra = header;
  extra.insert(key, "\"crc32c.c\":\"00000000\",");
  EXPECT_NE(parseError(rawFile(extra, data)).find("a checksum for \"c\", which is no tensor"),
            std::string::npos)
      << parseError(rawFile(extra, data));
}

TEST(Safetensors, WriterRejectsBadTensors) {
  double v[] = {1, 2};
  TensorData a = TensorData::fromDoubles("a", DType::F32, {2}, v);
  EINC_EXPECT_STATUS(serializeSafetensors({a, a}, {}), StatusCode::Invalid,
                     "duplicate tensor name");
  TensorData bad = a;
  bad.bytes.pop_back();
  EINC_EXPECT_STATUS(serializeSafetensors({bad}, {}), StatusCode::Invalid, "need 8 bytes, got 7");
  TensorData meta = a;
  meta.name = "__metadata__";
  EINC_EXPECT_STATUS(serializeSafetensors({meta}, {}), StatusCode::Invalid, "");
  TensorData utf = a;
  utf.name = "\xff";
  EINC_EXPECT_STATUS(serializeSafetensors({utf}, {}), StatusCode::Invalid, "");
}

TEST_F(SafetensorsFile, AtomicWriteReplacesWholeAndLeavesNoTmp) {
  std::string path = dir + "/model.safetensors";
  // An existing, larger file is replaced whole.
  writeAll(path, std::vector<uint8_t>(100000, 0xAB));
  double v[] = {4, 5};
  std::vector<TensorData> ts = {TensorData::fromDoubles("w", DType::F32, {2}, v)};
  EINC_ASSERT_OK(writeSafetensors(path, ts, {{"step", "3"}}));
  EINC_ASSERT_OK_AND_ASSIGN(auto expected, serializeSafetensors(ts, {{"step", "3"}}));
  EXPECT_EQ(readAll(path), expected);
  EXPECT_EQ(listDir(), std::vector<std::string>{"model.safetensors"});
  // Relative paths work too (the directory is ".").
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  EINC_EXPECT_OK(writeSafetensors("rel.safetensors", ts, {}));
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_EQ(listDir().size(), 2u);
}

TEST_F(SafetensorsFile, FailedWritesAreErrorsAndLeaveNoTmp) {
  // A file size limit makes write() fail part way, as a full disk does.
  std::string path = dir + "/big.safetensors";
  writeAll(path, {1, 2, 3});
  std::vector<double> v(100000, 1.0);
  std::vector<TensorData> ts = {TensorData::fromDoubles("w", DType::F32, {100000}, v.data())};
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto oldHandler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  Status written = writeSafetensors(path, ts, {});
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, oldHandler);
  EINC_EXPECT_STATUS(written, StatusCode::Io, "cannot write");
  EXPECT_EQ(listDir(), std::vector<std::string>{"big.safetensors"});
  EXPECT_EQ(readAll(path), (std::vector<uint8_t>{1, 2, 3})); // untouched
}

TEST_F(SafetensorsFile, UnwritablePathsAreErrors) {
  double v[] = {4, 5};
  std::vector<TensorData> ts = {TensorData::fromDoubles("w", DType::F32, {2}, v)};
  Status written = writeSafetensors(dir + "/missing/x.safetensors", ts, {});
  EXPECT_EQ(written.code(), StatusCode::Io);
  std::string error = written.message();
  EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
  Expected<std::vector<uint8_t>> missing = readFileBytes(dir + "/missing/x.safetensors", 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::NotFound);
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos);
  // The target is a directory: rename fails and the tmp file is removed.
  ASSERT_EQ(mkdir((dir + "/sub").c_str(), 0755), 0);
  EINC_EXPECT_STATUS(writeSafetensors(dir + "/sub", ts, {}), StatusCode::Io, "cannot rename");
  auto names = listDir();
  EXPECT_EQ(names, std::vector<std::string>{"sub"});
  rmdir((dir + "/sub").c_str());
  SafetensorsMetadata md;
  EINC_EXPECT_STATUS(readSafetensors(dir + "/nope.safetensors", md), StatusCode::NotFound,
                     "cannot open");
  EINC_EXPECT_STATUS(readSafetensors(dir, md), StatusCode::Io, "not a regular file");
}
