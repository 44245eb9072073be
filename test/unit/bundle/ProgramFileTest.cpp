//===- ProgramFileTest.cpp - The program file: round trips and the layout -===//
#include "SampleBundle.h"
#include "runtime/cuda/CudaKernels.h"

#include "runtime/base/Crc32c.h"
#include "runtime/io/ModelBundle.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#include <set>
#include <unistd.h>

using namespace einrt;
using namespace einrt::test;

namespace {

std::vector<uint8_t> serialized(const ModelBundle &b) {
  auto bytes = serializeModelBundle(b);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

/// The bundle read back, or none after a test failure saying why.
std::optional<ModelBundle> parsed(const std::vector<uint8_t> &bytes) {
  Expected<ModelBundle> back = parseModelBundle(bytes.data(), bytes.size(), "m.einprog");
  EXPECT_TRUE(back.ok()) << back.status().message();
  if (!back.ok())
    return std::nullopt;
  return back.take();
}

std::string bytesOf(const char *text) { return text; }

/// Why the writer refuses `b` (a bundle the reader would refuse: Invalid).
std::string writeRefusal(const ModelBundle &b) {
  Expected<std::vector<uint8_t>> bytes = serializeModelBundle(b);
  EXPECT_EQ(bytes.status().code(), StatusCode::Invalid) << bytes.status().message();
  return bytes.status().message();
}

} // namespace

TEST(Crc32c, KnownVectors) {
  auto crc = [](const std::string &s) {
    return crc32c(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  };
  EXPECT_EQ(crc(""), 0u);
  EXPECT_EQ(crc("123456789"), 0xE3069283u);
  // RFC 3720 (iSCSI), B.4: 32 zero bytes, 32 bytes 0xFF, 0..31 ascending.
  EXPECT_EQ(crc(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i)
    ascending += char(i);
  EXPECT_EQ(crc(ascending), 0x46DD794Eu);
  // Continued over pieces of every length: the same CRC.
  std::string text = "The quick brown fox jumps over the lazy dog, twice over.";
  auto *p = reinterpret_cast<const uint8_t *>(text.data());
  for (size_t cut = 0; cut <= text.size(); ++cut)
    EXPECT_EQ(crc32c(p + cut, text.size() - cut, crc32c(p, cut)), crc(text)) << cut;
}

TEST(ProgramFile, SampleCoversEveryKindDtypeRoleAndPayload) {
  Program p = everyKindProgram();
  std::set<StepKind> kinds;
  std::set<size_t> payloads;
  std::set<DType> dtypes;
  std::set<BufferRole> roles;
  std::set<std::string> inits;
  for (const Step &s : p.steps) {
    kinds.insert(s.kind);
    payloads.insert(s.payload.index());
  }
  for (const Buffer &b : p.buffers) {
    dtypes.insert(b.dtype);
    roles.insert(b.role);
    if (b.role == BufferRole::Param)
      inits.insert(b.init.kind);
  }
  EXPECT_EQ(kinds.size(), size_t(kStepKindCount));
  EXPECT_EQ(payloads.size(), std::variant_size_v<StepPayload>);
  EXPECT_EQ(dtypes.size(), size_t(kDTypeCount));
  EXPECT_EQ(roles.size(), size_t(BufferRole::Temp) + 1);
  EXPECT_EQ(inits.size(), 3u); // normal, uniform, ones; the rest hold zeros
  // Every setting differs from its default, so a field the file dropped
  // would come back different.
  TrainSettings defaults, set = nonDefaultSettings();
  forEachFieldPair(set, defaults, [&](size_t, const char *name, const auto &a, const auto &b) {
    EXPECT_FALSE(identical(a, b)) << name;
  });
}

TEST(ProgramFile, RoundTripIsIdenticalAndDeterministic) {
  ModelBundle b = sampleBundle();
  std::vector<uint8_t> bytes = serialized(b);
  auto back = parsed(bytes);
  ASSERT_TRUE(back);
  EXPECT_TRUE(*back == b) << firstDifference(*back, b);
  EXPECT_EQ(back->writtenBy, "einc 0.1.0 (test)");
  EXPECT_EQ(back->source, b.source); // bytes that are not UTF-8 included
  EXPECT_TRUE(identical(back->settings, b.settings));
  EXPECT_EQ(back->programs[0].program, b.programs[0].program);
  EXPECT_EQ(back->vocab(), 5);
  ASSERT_NE(back->find("forward"), nullptr);
  EXPECT_EQ(back->find("forward")->backend, "reference");
  EXPECT_EQ(back->find("backward"), nullptr);
  EXPECT_EQ(serialized(*back), bytes);
  EXPECT_EQ(serialized(b), bytes); // no clock, no addresses in the bytes
}

TEST(ProgramFile, DoublesComeBackBitForBit) {
  ModelBundle b = sampleBundle();
  Init &in = b.programs[0].program.buffers[7].init; // "w"
  ASSERT_EQ(in.kind, "normal");
  in.mean = 0.1 + 0.2, in.std = 1e-300, in.clip = 5e-324;
  b.settings.lr = 1.0 / 3;
  auto back = parsed(serialized(b));
  ASSERT_TRUE(back);
  const Init &got = back->programs[0].program.buffers[7].init;
  EXPECT_TRUE(identical(got.mean, 0.1 + 0.2));
  EXPECT_TRUE(identical(got.std, 1e-300));
  EXPECT_TRUE(identical(got.clip, 5e-324));
  EXPECT_TRUE(identical(back->settings.lr, 1.0 / 3));
  // The constants (NaN, ±inf, -0, a subnormal) are in a binary section.
  EXPECT_TRUE(*back == b) << firstDifference(*back, b);
}

TEST(ProgramFile, EmptyAndDefaultBundlesRoundTrip) {
  ModelBundle empty;
  std::vector<uint8_t> bytes = serialized(empty);
  EXPECT_EQ(splitFile(bytes).header, "{}      "); // every member its default
  auto back = parsed(bytes);
  ASSERT_TRUE(back);
  EXPECT_TRUE(*back == empty);
  EXPECT_FALSE(back->window.has_value());
  EXPECT_FALSE(back->settings.minLr.has_value());
  // A member left out reads as its default, in every struct.
  ModelBundle b = sampleBundle();
  b.programs[0].program.steps[0].note.clear();
  b.programs[0].program.buffers[7].init.mean = 0;
  b.settings.lr = TrainSettings().lr;
  back = parsed(serialized(b));
  ASSERT_TRUE(back);
  EXPECT_TRUE(*back == b) << firstDifference(*back, b);
}

TEST(ProgramFile, EqualityNoticesEveryKindOfChange) {
  ModelBundle a = sampleBundle();
  auto differs = [&](const std::function<void(ModelBundle &)> &change, const std::string &where) {
    ModelBundle b = a;
    change(b);
    EXPECT_FALSE(b == a) << where;
    EXPECT_EQ(firstDifference(b, a), where);
  };
  size_t matmul = 0;
  for (size_t i = 0; i < a.programs[0].program.steps.size(); ++i)
    if (a.programs[0].program.steps[i].kind == StepKind::Matmul)
      matmul = i; // the accumulating one, with an outer loop
  differs(
      [&](ModelBundle &b) {
        b.programs[0].program.steps[matmul].as<GemmDesc>().outer[0].strideB += 1;
      },
      "programs.0.program.steps." + std::to_string(matmul) + ".payload.outer.0.stride_b");
  differs([](ModelBundle &b) { b.programs[0].program.buffers[12].constant[1] = 0.0; },
          "programs.0.program.buffers.12.constant.1");
  differs([](ModelBundle &b) { b.settings.given.pop_back(); }, "settings.given.size");
  differs([](ModelBundle &b) { b.settings.minLr.reset(); }, "settings.min_lr");
  differs([](ModelBundle &b) { b.kernelObjects[1].bytes[299] ^= 1; }, "kernel_objects.1.bytes.299");
  differs([](ModelBundle &b) { b.source += " "; }, "source");
  differs([](ModelBundle &b) { b.dims["d"] = 4; }, "dims");
  ModelBundle renamed = a;
  renamed.writtenBy = "einc 0.2.0";
  EXPECT_FALSE(renamed == a); // the preamble's field, outside the visitor
}

TEST(ProgramFile, LayoutIsTheDocumentedOne) {
  ModelBundle b = sampleBundle();
  std::vector<uint8_t> bytes = serialized(b);
  FileParts parts = splitFile(bytes);
  EXPECT_EQ(parts.version, kProgramFormatVersion);
  EXPECT_EQ(parts.writer, b.writtenBy);
  EXPECT_EQ(parts.header.size() % 8, 0u);
  EXPECT_EQ(joinFile(parts), bytes);
  // The header names every top-level field; sections point into the data.
  nlohmann::json header = nlohmann::json::parse(parts.header);
  for (const char *key : {"model_name", "source_name", "source", "dims", "settings", "window",
                          "programs", "kernel_objects", "kernel_sections", "report"})
    EXPECT_TRUE(header.contains(key)) << key;
  EXPECT_EQ(header.size(), 10u);
  // A backend's kernel section is a section too: the bytes its backend
  // encoded, as they were (and they decode to the kernels written).
  const nlohmann::json &cuda = header["kernel_sections"]["cuda"];
  EXPECT_EQ(std::vector<uint8_t>(parts.data.begin() + cuda["offset"].get<long>(),
                                 parts.data.begin() + cuda["offset"].get<long>() +
                                     cuda["size"].get<long>()),
            *b.kernelSection("cuda"));
  einrt::Expected<einrt::CudaKernelBundle> kernels =
      einrt::decodeCudaKernelBundle(*b.kernelSection("cuda"));
  ASSERT_TRUE(kernels.ok()) << kernels.status().message();
  EXPECT_EQ(kernels->kernels[1].kind, einrt::CudaLaunchKind::WarpRows);
  EXPECT_EQ(kernels->images[0].bytes.substr(0, 4), "\x7f"
                                                   "ELF");
  // Members holding their defaults are left out: a temporary's init, its
  // (empty) constant, the f32 dtype, the temp role.
  const nlohmann::json &temp = header["programs"][0]["program"]["buffers"].back();
  nlohmann::json expected = nlohmann::json::object();
  expected["name"] = "%" + std::to_string(b.programs[0].program.buffers.size() - 1);
  expected["shape"] = {2, 3};
  EXPECT_EQ(temp, expected);
  const nlohmann::json &source = header["source"];
  std::string text(parts.data.begin() + source["offset"].get<size_t>(),
                   parts.data.begin() + source["offset"].get<size_t>() +
                       source["size"].get<size_t>());
  EXPECT_EQ(text, b.source);
  const nlohmann::json &step = header["programs"][0]["program"]["steps"][0];
  EXPECT_EQ(step["kind"], "contract");
  EXPECT_EQ(step["payload"]["lhs_contract"], nlohmann::json::array({1}));
  EXPECT_EQ(header["programs"][0]["program"]["buffers"][1]["dtype"], "i32"); // "ids"
  EXPECT_EQ(header["settings"]["optimizer"], "adagrad");
  EXPECT_EQ(header["window"], "shifted");
}

TEST(ProgramFile, WriteIsAtomicAndReadsBack) {
  char dir[] = "/tmp/einc-bundle-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/model.einprog";
  ModelBundle b = sampleBundle();
  ASSERT_TRUE(writeModelBundle(path, b).ok());
  b.modelName = "second";
  ASSERT_TRUE(writeModelBundle(path, b).ok()); // replaces it
  auto back = readModelBundle(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(*back == b);
  // Nothing left beside it (no temporary).
  DIR *d = opendir(dir);
  ASSERT_NE(d, nullptr);
  int entries = 0;
  while (dirent *e = readdir(d))
    entries += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
  closedir(d);
  EXPECT_EQ(entries, 1);
  Status missing = readModelBundle(std::string(dir) + "/missing.einprog").status();
  EXPECT_EQ(missing.code(), StatusCode::NotFound);
  EXPECT_EQ(missing.message().find("cannot open '"), 0u) << missing.message();
  Status directory = readModelBundle(dir).status();
  EXPECT_FALSE(directory.ok());
  EXPECT_EQ(directory.message(), "'" + std::string(dir) + "' is not a regular file");
  // A failed write (no such directory) names the file and leaves nothing.
  Status written = writeModelBundle(std::string(dir) + "/no/such/dir/m.einprog", b);
  EXPECT_EQ(written.code(), StatusCode::Io);
  EXPECT_NE(written.message().find("cannot create"), std::string::npos) << written.message();
  ::unlink(path.c_str());
  ::rmdir(dir);
}

TEST(ProgramFile, WriterRefusesWhatTheReaderWould) {
  ModelBundle b = sampleBundle();
  b.programs[1].program.steps[0].inputs = {7};
  EXPECT_EQ(writeRefusal(b),
            "cannot write the program file: program 'forward': step 0 (exp, test exp): "
            "input 0: buffer index 7 out of range (2 buffers)");
  b = sampleBundle();
  b.programs[0].program.buffers[0].name = bytesOf("x\xc3");
  EXPECT_EQ(writeRefusal(b),
            "cannot write the program file: programs[0].program.buffers[0].name: not "
            "valid UTF-8");
  b = sampleBundle();
  b.writtenBy = std::string(300, 'e');
  EXPECT_EQ(writeRefusal(b),
            "cannot write the program file: the writer's name is longer than 256 bytes");
}
