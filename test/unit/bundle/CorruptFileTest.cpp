//===- CorruptFileTest.cpp - Damaged, foreign and crafted program files ---===//
//
// Every truncation and every changed byte of a file is a clean error; with
// the checksum made valid again (a file einc did not write), every change
// is a clean error or a valid bundle, never a crash; crafted headers give
// the message naming what is wrong.
//
//===----------------------------------------------------------------------===//
#include "SampleBundle.h"
#include "test/unit/StatusOut.h"

#include "runtime/core/Safetensors.h"
#include "test/unit/runtime/ProgramBuilder.h"

#include <gtest/gtest.h>

#include <random>

using namespace einrt;
using namespace einrt::test;
using nlohmann::json;

namespace {

const std::string kName = "m.einprog";

Expected<ModelBundle> parsed(const std::vector<uint8_t> &bytes) {
  return parseModelBundle(bytes.data(), bytes.size(), kName);
}

std::string errorOf(const std::vector<uint8_t> &bytes) {
  Expected<ModelBundle> b = parsed(bytes);
  return b.ok() ? "(parsed)" : b.status().message();
}

/// A small file: one reference program, default settings.
std::vector<uint8_t> smallFile() {
  ModelBundle b;
  b.writtenBy = "einc 0.1.0 (test)";
  b.modelName = "tiny";
  b.source = "dims { d = 3 }\n";
  b.dims = {{"d", 3}};
  ProgramBuilder pb;
  pb.p.name = "forward";
  int32_t a = pb.arg(DType::F32, {3}, "a");
  int32_t c = pb.constant(DType::F32, {3}, {0.5});
  pb.result(pb.op(StepKind::Add, {a, c}, DType::F32, {3}, NoPayload{}), "loss");
  b.programs.push_back({"reference", pb.p});
  auto bytes = serializeModelBundle(b);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

std::vector<uint8_t> sampleFile() {
  auto bytes = serializeModelBundle(sampleBundle());
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

/// What the reader must say when the damage is caught by the frame.
void expectFrameError(const std::vector<uint8_t> &bytes, size_t changedAt, const char *what) {
  std::string error = errorOf(bytes);
  // Not a program file at all: Invalid; one whose frame is damaged: Corrupt.
  const bool foreign = bytes.size() < 8 || changedAt < 8;
  EXPECT_STREQ(statusCodeName(parsed(bytes).status().code()),
               statusCodeName(foreign ? StatusCode::Invalid : StatusCode::Corrupt))
      << what;
  if (bytes.empty())
    EXPECT_EQ(error, "'" + kName + "' is not an einc program file (it is empty)") << what;
  else if (bytes.size() < 8 || changedAt < 8)
    EXPECT_EQ(error, "'" + kName + "' is not an einc program file") << what;
  else if (bytes.size() < 20)
    EXPECT_EQ(error,
              "'" + kName + "' is corrupt: truncated to " + std::to_string(bytes.size()) + " bytes")
        << what;
  else
    EXPECT_EQ(error, "'" + kName + "' is corrupt: checksum mismatch") << what;
}

} // namespace

TEST(CorruptFile, EveryTruncationIsAnError) {
  for (const std::vector<uint8_t> &file : {smallFile(), sampleFile()})
    for (size_t n = 0; n < file.size(); ++n)
      expectFrameError(std::vector<uint8_t>(file.begin(), file.begin() + n), size_t(-1),
                       ("cut to " + std::to_string(n)).c_str());
}

TEST(CorruptFile, EveryChangedByteIsAnError) {
  for (const std::vector<uint8_t> &file : {smallFile(), sampleFile()})
    for (size_t i = 0; i < file.size(); ++i)
      for (uint8_t flip : {0x01, 0x80, 0xFF}) {
        std::vector<uint8_t> bad = file;
        bad[i] ^= flip;
        expectFrameError(bad, i, ("byte " + std::to_string(i)).c_str());
      }
}

// A file einc did not write: the checksum is valid again after each change.
// The reader's own checks must catch what is wrong, without a crash: every
// byte of the small file changed two ways, 3000 random bytes of the sample.
TEST(CorruptFile, ChangedBytesUnderAValidChecksumNeverCrash) {
  int errors = 0, parsedOk = 0;
  auto check = [&](std::vector<uint8_t> bad) {
    fixChecksum(bad);
    std::string error = errorOf(bad);
    if (error == "(parsed)") {
      ++parsedOk; // e.g. a letter of a name, a byte of a section
      return;
    }
    ++errors;
    EXPECT_EQ(error.rfind("'" + kName + "'", 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_LT(error.size(), 600u) << error;
  };
  std::vector<uint8_t> small = smallFile();
  for (size_t i = 8; i + 4 < small.size(); ++i)
    for (uint8_t flip : {0x01, 0xFF}) {
      std::vector<uint8_t> bad = small;
      bad[i] ^= flip;
      check(bad);
    }
  std::vector<uint8_t> sample = sampleFile();
  std::mt19937 rng(7);
  for (int n = 0; n < 3000; ++n) {
    std::vector<uint8_t> bad = sample;
    bad[8 + rng() % (sample.size() - 12)] ^= uint8_t(1 + rng() % 255);
    check(bad);
  }
  EXPECT_GT(errors, 2 * parsedOk);
}

TEST(CorruptFile, TruncationsUnderAValidChecksumAreErrors) {
  std::vector<uint8_t> file = smallFile();
  for (size_t n = 20; n < file.size(); ++n) {
    std::vector<uint8_t> bad(file.begin(), file.begin() + n - 4);
    bad.resize(n);
    fixChecksum(bad);
    std::string error = errorOf(bad);
    EXPECT_NE(error, "(parsed)") << n;
    EXPECT_EQ(error.rfind("'" + kName + "'", 0), 0u) << error;
  }
}

TEST(CorruptFile, AnotherFormatVersionNamesTheWriter) {
  const std::string reads = std::to_string(kProgramFormatVersion);
  for (uint32_t version : {0u, kProgramFormatVersion - 1, kProgramFormatVersion + 1, 0xFFFFFFFFu}) {
    std::vector<uint8_t> file = smallFile();
    for (int i = 0; i < 4; ++i)
      file[8 + i] = uint8_t(version >> (8 * i));
    fixChecksum(file);
    EXPECT_EQ(parsed(file).status().code(), StatusCode::Invalid);
    EXPECT_EQ(errorOf(file), "'" + kName + "' was written by einc 0.1.0 (test) (program format " +
                                 std::to_string(version) + "); this einc reads format " + reads +
                                 ": recompile the model");
  }
  // Whatever its layout, a file of another version is not parsed further.
  FileParts parts = splitFile(smallFile());
  parts.version = kProgramFormatVersion + 1;
  parts.writer = "einc 9.0\x01";
  parts.header = "not JSON at all";
  EXPECT_EQ(errorOf(joinFile(parts)),
            "'" + kName + "' was written by einc 9.0\\x01 (program format " +
                std::to_string(kProgramFormatVersion + 1) + "); this einc reads format " + reads +
                ": recompile the model");
}

TEST(CorruptFile, OtherFilesAreNotProgramFiles) {
  std::string error;
  TensorData t = TensorData::fromDoubles("w", DType::F32, {2}, std::vector<double>{1, 2}.data());
  auto safetensors = statusOut(serializeSafetensors({t}, {}), error);
  ASSERT_TRUE(safetensors) << error;
  expectFrameError(*safetensors, 0, "safetensors");
  std::string text = "dims { vocab = 256 }\n";
  expectFrameError(std::vector<uint8_t>(text.begin(), text.end()), 0, "text");
  expectFrameError({}, 0, "empty");
  expectFrameError({0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, "ELF");
}

TEST(CorruptFile, FrameLengthsAreChecked) {
  std::vector<uint8_t> file = smallFile();
  FileParts parts = splitFile(file);
  size_t lengths = (16 + parts.writer.size() + 7) / 8 * 8;
  auto withLength = [&](size_t at, uint64_t value) {
    std::vector<uint8_t> bad = file;
    for (int i = 0; i < 8; ++i)
      bad[at + i] = uint8_t(value >> (8 * i));
    fixChecksum(bad);
    return errorOf(bad);
  };
  std::string fill = " bytes do not fill the file's " + std::to_string(file.size()) + " bytes";
  const uint64_t h = parts.header.size(), d = parts.data.size();
  EXPECT_EQ(withLength(lengths, h + 8), "'" + kName + "' is corrupt: a header of " +
                                            std::to_string(h + 8) + " bytes and data of " +
                                            std::to_string(d) + fill);
  EXPECT_EQ(withLength(lengths, ~uint64_t(0)),
            "'" + kName + "' is corrupt: a header of " + std::to_string(~uint64_t(0)) +
                " bytes and data of " + std::to_string(d) + fill);
  EXPECT_EQ(withLength(lengths + 8, uint64_t(1) << 63),
            "'" + kName + "' is corrupt: a header of " + std::to_string(h) + " bytes and data of " +
                std::to_string(uint64_t(1) << 63) + fill);
  std::vector<uint8_t> bad = file;
  bad[12] = 0xE8, bad[13] = 0x03; // a writer's name of 1000 bytes
  fixChecksum(bad);
  EXPECT_EQ(errorOf(bad), "'" + kName + "' is corrupt: a writer's name of 1000 bytes");
}

TEST(CorruptFile, HeaderThatIsNotJson) {
  FileParts parts = splitFile(smallFile());
  auto withHeader = [&](const std::string &header) {
    FileParts p = parts;
    p.header = header;
    return errorOf(joinFile(p));
  };
  EXPECT_EQ(withHeader("{\"a\": 1, \"a\": 2}"),
            "'" + kName + "': header: invalid JSON: duplicate key \"a\"");
  EXPECT_EQ(withHeader(std::string(100, '[') + std::string(100, ']')),
            "'" + kName + "': header: invalid JSON: nesting deeper than 64");
  EXPECT_EQ(withHeader("[]"), "'" + kName + "': header: expected an object, got an array");
  EXPECT_EQ(withHeader("").rfind("'" + kName + "': header: invalid JSON at byte 1: ", 0), 0u);
  EXPECT_EQ(withHeader("{\"model_nam\": \"x\"}"),
            "'" + kName + "': header: unknown member 'model_nam'");
}

namespace {

/// The message for the sample file with its header edited.
std::string edited(const std::function<void(json &)> &edit) {
  return errorOf(editHeader(sampleFile(), edit));
}

/// The message for the sample file with its "cuda" kernel section's own
/// header edited (runtime/base/FieldsJson.h's blob: its JSON's length, the
/// JSON, its data): the edited blob appended to the file's data and the
/// section pointed at it.
std::string editedCuda(const std::function<void(json &)> &edit) {
  FileParts parts = splitFile(sampleFile());
  json header = json::parse(parts.header);
  json &ref = header["kernel_sections"]["cuda"];
  const size_t at = ref["offset"].get<size_t>(), size = ref["size"].get<size_t>();
  std::vector<uint8_t> blob(parts.data.begin() + long(at), parts.data.begin() + long(at + size));
  uint64_t jsonBytes = 0;
  for (int k = 0; k < 8; ++k)
    jsonBytes |= uint64_t(blob[size_t(k)]) << (8 * k);
  json cuda = json::parse(std::string(blob.begin() + 8, blob.begin() + 8 + long(jsonBytes)));
  edit(cuda);
  std::string text = cuda.dump();
  while (text.size() % 8 != 0)
    text += ' ';
  std::vector<uint8_t> edited;
  for (int k = 0; k < 8; ++k)
    edited.push_back(uint8_t(uint64_t(text.size()) >> (8 * k)));
  edited.insert(edited.end(), text.begin(), text.end());
  edited.insert(edited.end(), blob.begin() + 8 + long(jsonBytes), blob.end());
  while (parts.data.size() % 8 != 0)
    parts.data.push_back(0);
  ref["offset"] = parts.data.size();
  ref["size"] = edited.size();
  parts.data.insert(parts.data.end(), edited.begin(), edited.end());
  parts.header = header.dump();
  while (parts.header.size() % 8 != 0)
    parts.header += ' ';
  return errorOf(joinFile(parts));
}

json &step(json &h, size_t i) { return h["programs"][0]["program"]["steps"][i]; }
json &buffer(json &h, size_t i) { return h["programs"][0]["program"]["buffers"][i]; }

} // namespace

TEST(CorruptFile, CraftedHeadersNameWhatIsWrong) {
  const std::string at = "'" + kName + "': header: programs[0].program.";
  EXPECT_EQ(edited([](json &h) { step(h, 3)["kind"] = "frobnicate"; }),
            at + "steps[3].kind: 'frobnicate' is not a step kind this einc knows");
  EXPECT_EQ(edited([](json &h) { step(h, 0)["extra"] = 1; }),
            at + "steps[0]: unknown member 'extra'");
  EXPECT_EQ(edited([](json &h) { step(h, 0)["output"] = int64_t(1) << 40; }),
            at + "steps[0].output: 1099511627776 is out of range for a 32-bit integer");
  EXPECT_EQ(edited([](json &h) { step(h, 0)["output"] = 1.5; }),
            at + "steps[0].output: expected an integer, got a number");
  EXPECT_EQ(edited([](json &h) { step(h, 0)["inputs"] = "x"; }),
            at + "steps[0].inputs: expected an array, got a string");
  // The payload's members are those of its kind's type.
  EXPECT_EQ(edited([](json &h) { step(h, 0)["kind"] = "transpose"; }),
            at + "steps[0].payload: unknown member 'lhs_contract'");
  EXPECT_EQ(edited([](json &h) { buffer(h, 0)["dtype"] = "f128"; }),
            at + "buffers[0].dtype: 'f128' is not a dtype (f32, bf16, f16, f64, i32, i1)");
  EXPECT_EQ(edited([](json &h) { buffer(h, 0)["role"] = "weights"; }),
            at + "buffers[0].role: 'weights' is not a buffer role (input, param, opt_state, "
                 "accumulator, scalar, constant, temp)");
  EXPECT_EQ(edited([](json &h) { h["window"] = "sideways"; }),
            "'" + kName +
                "': header: window: 'sideways' is not a window mapping (next_token, "
                "shifted)");
  EXPECT_EQ(edited([](json &h) { h["dims"] = json::array(); }),
            "'" + kName + "': header: dims: expected an object, got an array");
  EXPECT_EQ(edited([](json &h) { h["settings"]["lr"] = true; }),
            "'" + kName +
                "': header: settings.lr: expected a number (or \"inf\", \"-inf\", "
                "\"nan\"), got a boolean");
}

TEST(CorruptFile, CraftedSectionsAreBoundsChecked) {
  std::string data = std::to_string(splitFile(sampleFile()).data.size());
  EXPECT_EQ(edited([](json &h) { h["source"]["offset"] = uint64_t(1) << 62; }),
            "'" + kName + "': header: source: the section [" + std::to_string(uint64_t(1) << 62) +
                ", +" + std::to_string(sampleBundle().source.size()) + ") lies outside the data (" +
                data + " bytes)");
  EXPECT_EQ(edited([](json &h) {
              h["report"]["size"] = ~uint64_t(0) >> 1;
            }).rfind("'" + kName + "': header: report: the section [", 0),
            0u);
  EXPECT_EQ(edited([](json &h) { h["source"]["offset"] = -8; }),
            "'" + kName +
                "': header: source: a section's offset and size are non-negative "
                "integers");
  EXPECT_EQ(edited([](json &h) { h["source"] = "text"; }),
            "'" + kName + "': header: source: expected a section {\"offset\": O, \"size\": N}");
  EXPECT_EQ(edited([](json &h) { buffer(h, 12)["constant"]["size"] = 12; }),
            "'" + kName +
                "': header: programs[0].program.buffers[12].constant: a section of 12 "
                "bytes is not whole doubles");
}

TEST(CorruptFile, CheckedBundlesGiveTheirProblem) {
  const std::string file = "'" + kName + "': ";
  ModelBundle sample = sampleBundle();
  const size_t nbuf = sample.programs[0].program.buffers.size();
  EXPECT_EQ(edited([](json &h) { step(h, 0)["inputs"][0] = 999; }),
            file +
                "program 'everything': step 0 (contract, every-kind.ein:1:1): input 0: buffer "
                "index 999 out of range (" +
                std::to_string(nbuf) + " buffers)");
  EXPECT_EQ(edited([](json &h) { buffer(h, 12)["shape"] = {2, 4}; }),
            file + "program 'everything': buffer 12 ('%12'): constant has 6 values but the shape "
                   "[2, 4] has 8 elements");
  EXPECT_EQ(edited([](json &h) { h["programs"][1]["program"]["name"] = "everything"; }),
            file + "two programs of function 'everything'");
  EXPECT_EQ(edited([](json &h) { h["programs"][1]["backend"] = "cuda"; }),
            file + "program 'forward': unknown backend 'cuda' (expected cpu or reference)");
  size_t launch = 0;
  for (size_t i = 0; i < sample.programs[0].program.steps.size(); ++i)
    if (sample.programs[0].program.steps[i].kind == StepKind::Kernel)
      launch = i;
  EXPECT_EQ(edited([](json &h) { h["kernel_objects"][0]["kernel_count"] = 2; }),
            file + "program 'everything' step " + std::to_string(launch) +
                " launches kernel 2; 'cpu/x86-64-v3' holds 2");
  // The CUDA kernels: the table's count, each launch's parameters, names,
  // architectures.
  EXPECT_EQ(editedCuda([](json &h) { h["kernels"].erase(2); }),
            file + "cuda: 2 kernels, but the cpu kernel objects hold 3");
  EXPECT_EQ(editedCuda([](json &h) { h["kernels"][2]["params"] = 7; }),
            file + "cuda: program 'everything' step " + std::to_string(launch) +
                " passes 5 buffers to cuda kernel 2 (k2_fused_exp), which takes 7");
  EXPECT_EQ(editedCuda([](json &h) { h["kernels"][1]["entry"] = "k0_fused_exp"; }),
            file + "cuda: kernel 1: a second kernel named 'k0_fused_exp'");
  EXPECT_EQ(editedCuda([](json &h) { h["kernels"][0]["entry"] = "0bad name"; }),
            file + "cuda: kernel 0: its entry is not a C identifier");
  EXPECT_EQ(editedCuda([](json &h) { h["kernels"][1]["row_length"] = 0; }),
            file + "cuda: kernel 1 (k1_fused_exp): work 4097, row length 0");
  EXPECT_EQ(editedCuda([](json &h) { h["images"][0]["arch"] = "sm90"; }),
            file + "cuda: an image for 'sm90', not an architecture (sm_XY, compute_XY)");
  EXPECT_EQ(editedCuda([](json &h) { h["images"][1]["arch"] = "sm_80"; }),
            file + "cuda: two images for sm_80");
  EXPECT_EQ(editedCuda([](json &h) { h["images"][1]["ptx"] = false; }),
            file + "cuda: the image for compute_90 is not PTX");
  EXPECT_EQ(editedCuda([](json &h) { h["kernels"][0]["kind"] = "warps"; }),
            file + "cuda: kernels[0].kind: 'warps' is not a launch kind (elements, "
                   "warp_rows, block_rows)");
  EXPECT_EQ(edited([](json &h) { h["kernel_sections"]["rocm"] = h["kernel_sections"]["cuda"]; }),
            file + "kernel section 'rocm': no backend of this einc runs it");
  EXPECT_EQ(edited([](json &h) { h["kernel_objects"][1]["name"] = "cpu/x86-64-v3"; }),
            file + "two kernel objects named 'cpu/x86-64-v3'");
  EXPECT_EQ(edited([](json &h) { h["kernel_objects"][1]["name"] = "x86"; }),
            file + "kernel object 'x86': the name is not <backend>/<target>");
  EXPECT_EQ(edited([](json &h) { h["settings"]["lr"] = 20; }),
            file + "settings: 'lr' (peak learning rate) must be in [0, 10], got 20");
  EXPECT_EQ(edited([](json &h) { h["settings"]["lr"] = "nan"; }),
            file + "settings: 'lr' (peak learning rate) must be in [0, 10], got nan");
  EXPECT_EQ(edited([](json &h) { h["settings"]["optimizer"] = "lion"; }),
            file + "settings: 'lion' is not a valid optimizer; expected one of: adamw adam sgd "
                   "adagrad");
  EXPECT_EQ(edited([](json &h) { h["settings"]["given"].push_back("bogus"); }),
            file + "settings: 'bogus' is given but is no setting");
  EXPECT_EQ(edited([](json &h) { h["settings"]["given"].push_back("lr"); }),
            file + "settings: 'lr' is given twice");
  EXPECT_EQ(edited([](json &h) { h["dims"]["d"] = 0; }),
            file + "dims: 'd' = 0 (a dim is a name and a size >= 1)");
  // Names from the file stay on one line, and long ones are cut.
  std::string longName = edited([](json &h) {
    h["programs"][1]["program"]["name"] = "a\nb" + std::string(1000, 'x');
    h["programs"][1]["backend"] = "cuda";
  });
  EXPECT_EQ(longName.rfind(file + "program 'a\\x0abxxx", 0), 0u) << longName;
  EXPECT_EQ(longName.find('\n'), std::string::npos);
  EXPECT_EQ(longName.size(), file.size() - 2 + 503);
  // The report must be JSON: point it at the model's source.
  EXPECT_EQ(
      edited([](json &h) { h["report"] = h["source"]; }).rfind(file + "report: invalid JSON", 0),
      0u);
}
