//===- DeviceProfileTest.cpp - Device profiles and the roofline -----------===//
#include "passes/DeviceProfile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mlir::ein;

namespace {

const DeviceProfile *find(const std::vector<DeviceProfile> &profiles, const std::string &name) {
  for (const DeviceProfile &p : profiles)
    if (p.name == name)
      return &p;
  return nullptr;
}

/// A well-formed one-profile file with `field` replaced by `replacement`
/// ("" drops the field).
std::string profileWith(const std::string &field, const std::string &replacement) {
  const std::pair<const char *, const char *> fields[] = {
      {"name", "\"toy\""},
      {"description", "\"a toy\""},
      {"matmulFlops", "{\"f32\": 1e12, \"bf16\": 2e12}"},
      {"vectorFlops", "{\"f32\": 1e11}"},
      {"bandwidth", "1e11"},
      {"memoryBytes", "8589934592"},
      {"source", "\"made up\""},
  };
  std::string out = "{\"profiles\": [{";
  bool first = true;
  for (auto [name, value] : fields) {
    std::string v = name == field ? replacement : value;
    if (v.empty())
      continue;
    out += std::string(first ? "" : ", ") + "\"" + name + "\": " + v;
    first = false;
  }
  return out + "}]}";
}

std::string errorOf(const std::string &json) {
  auto parsed = parseDeviceProfiles(json);
  EXPECT_FALSE(parsed.ok()) << json;
  EXPECT_EQ(parsed.status().code(), einrt::StatusCode::Invalid) << json;
  return parsed.status().message();
}

TEST(DeviceProfile, BuiltinsParse) {
  const auto &profiles = builtinDeviceProfiles();
  for (const char *name : {"h100", "h200", "a100", "b200"}) {
    const DeviceProfile *p = find(profiles, name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_FALSE(p->description.empty());
    EXPECT_FALSE(p->source.empty());
    for (const char *dtype : {"f32", "bf16", "f16"}) {
      EXPECT_GT(p->matmulFlops.at(dtype), 1e13) << name << " " << dtype;
      EXPECT_GT(p->vectorFlops.at(dtype), 1e12) << name << " " << dtype;
    }
    // Tensor cores beat the vector units for every type they take; an f32
    // GEMM (CUBLAS_COMPUTE_32F) runs on the FP32 units, at their peak.
    for (const char *dtype : {"bf16", "f16"})
      EXPECT_GT(p->matmulFlops.at(dtype), p->vectorFlops.at(dtype)) << name << " " << dtype;
    EXPECT_EQ(p->matmulFlops.at("f32"), p->vectorFlops.at("f32")) << name;
    EXPECT_GT(p->matmulFlops.at("tf32"), 5 * p->matmulFlops.at("f32")) << name;
    EXPECT_GT(p->bandwidth, 1e12);
    EXPECT_GE(p->memoryBytes, 8e10);
  }
  // "cpu" is measured by `einc calibrate`, never built in.
  EXPECT_EQ(find(profiles, "cpu"), nullptr);
  // Parsed once.
  EXPECT_EQ(&builtinDeviceProfiles(), &profiles);
}

TEST(DeviceProfile, BuiltinH100Numbers) {
  const DeviceProfile *h100 = find(builtinDeviceProfiles(), "h100");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->description, "NVIDIA H100 SXM5 80GB");
  EXPECT_DOUBLE_EQ(h100->matmulFlops.at("bf16"), 989.5e12);
  EXPECT_DOUBLE_EQ(h100->matmulFlops.at("f16"), 989.5e12);
  EXPECT_DOUBLE_EQ(h100->matmulFlops.at("f32"), 66.9e12); // FP32: CUBLAS_COMPUTE_32F
  EXPECT_DOUBLE_EQ(h100->matmulFlops.at("tf32"), 494.7e12);
  EXPECT_DOUBLE_EQ(h100->vectorFlops.at("f32"), 66.9e12);
  EXPECT_DOUBLE_EQ(h100->bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h100->memoryBytes, 80e9);

  const DeviceProfile *h200 = find(builtinDeviceProfiles(), "h200");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(h200->matmulFlops, h100->matmulFlops);
  EXPECT_DOUBLE_EQ(h200->bandwidth, 4.8e12);
  EXPECT_DOUBLE_EQ(h200->memoryBytes, 141e9);

  const DeviceProfile *a100 = find(builtinDeviceProfiles(), "a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->matmulFlops.at("bf16"), 312e12);
  EXPECT_DOUBLE_EQ(a100->bandwidth, 2.039e12);
}

TEST(DeviceProfile, WellFormedParses) {
  auto parsed = parseDeviceProfiles(profileWith("", ""));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->size(), 1u);
  const DeviceProfile &p = (*parsed)[0];
  EXPECT_EQ(p.name, "toy");
  EXPECT_EQ(p.description, "a toy");
  EXPECT_DOUBLE_EQ(p.matmulFlops.at("bf16"), 2e12);
  EXPECT_DOUBLE_EQ(p.memoryBytes, 8589934592.0); // integers are numbers too
  // The optional "notes" string is accepted.
  auto withNotes = parseDeviceProfiles(profileWith("source", "\"s\", \"notes\": \"n\""));
  ASSERT_TRUE(withNotes.ok()) << withNotes.status().message();
  // An empty list is a valid (empty) file.
  ASSERT_TRUE(parseDeviceProfiles("{\"profiles\": []}").ok());
}

TEST(DeviceProfile, MissingFieldNamesProfileAndField) {
  for (const char *field :
       {"description", "matmulFlops", "vectorFlops", "bandwidth", "memoryBytes", "source"}) {
    std::string error = errorOf(profileWith(field, ""));
    EXPECT_NE(error.find("profile 'toy'"), std::string::npos) << error;
    EXPECT_NE(error.find(std::string("'") + field + "' is missing"), std::string::npos) << error;
  }
  std::string error = errorOf(profileWith("name", ""));
  EXPECT_NE(error.find("profile #0"), std::string::npos) << error;
  EXPECT_NE(error.find("'name' is missing"), std::string::npos) << error;
  error = errorOf("{}");
  EXPECT_NE(error.find("'profiles' is missing"), std::string::npos) << error;
}

TEST(DeviceProfile, WrongTypeNamesProfileAndField) {
  std::string error = errorOf(profileWith("bandwidth", "\"3.35 TB/s\""));
  EXPECT_NE(error.find("profile 'toy': field 'bandwidth' must be a number"), std::string::npos)
      << error;
  error = errorOf(profileWith("description", "42"));
  EXPECT_NE(error.find("profile 'toy': field 'description' must be a string"), std::string::npos)
      << error;
  error = errorOf(profileWith("matmulFlops", "1e12"));
  EXPECT_NE(error.find("profile 'toy': field 'matmulFlops' must be an object"), std::string::npos)
      << error;
  error = errorOf(profileWith("vectorFlops", "{\"f32\": \"fast\"}"));
  EXPECT_NE(error.find("field 'vectorFlops.f32' must be a number"), std::string::npos) << error;
  error = errorOf(profileWith("name", "7"));
  EXPECT_NE(error.find("profile #0: field 'name' must be a non-empty string"), std::string::npos)
      << error;
  error = errorOf("{\"profiles\": {}}");
  EXPECT_NE(error.find("'profiles' must be an array"), std::string::npos) << error;
  error = errorOf("{\"profiles\": [3]}");
  EXPECT_NE(error.find("profile #0: expected an object"), std::string::npos) << error;
  error = errorOf("[]");
  EXPECT_NE(error.find("expected a JSON object"), std::string::npos) << error;
}

TEST(DeviceProfile, BadValuesRejected) {
  std::string error = errorOf(profileWith("bandwidth", "0"));
  EXPECT_NE(error.find("'bandwidth' must be a positive finite number"), std::string::npos) << error;
  error = errorOf(profileWith("memoryBytes", "-1"));
  EXPECT_NE(error.find("'memoryBytes' must be a positive"), std::string::npos) << error;
  error = errorOf(profileWith("matmulFlops", "{\"bf16\": 1e12}"));
  EXPECT_NE(error.find("'matmulFlops' needs an \"f32\" entry"), std::string::npos) << error;
  // A misspelt field is an error, not silently ignored.
  error = errorOf(profileWith("source", "\"s\", \"bandwith\": 1"));
  EXPECT_NE(error.find("profile 'toy': field 'bandwith' is not a profile field"), std::string::npos)
      << error;
  error = errorOf("{\"profiles\": [], \"version\": 2}");
  EXPECT_NE(error.find("unknown top-level field 'version'"), std::string::npos) << error;
  std::string one = profileWith("", "");
  std::string body = one.substr(std::string("{\"profiles\": [").size());
  body = body.substr(0, body.size() - 2);
  error = errorOf("{\"profiles\": [" + body + ", " + body + "]}");
  EXPECT_NE(error.find("profile 'toy' is defined twice"), std::string::npos) << error;
}

TEST(DeviceProfile, BadJsonRejected) {
  std::string error = errorOf("{\"profiles\": [");
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
  error = errorOf("");
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
  error = errorOf(profileWith("bandwidth", "1e11,"));
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
  // Strict as every JSON einc reads (runtime/base/StrictJson.h): a repeated key
  // is an error, not the last one winning.
  error = errorOf("{\"profiles\": [], \"profiles\": 3}");
  EXPECT_NE(error.find("duplicate key \"profiles\""), std::string::npos) << error;
}

TEST(DeviceProfile, PrintParseRoundTrip) {
  std::vector<DeviceProfile> profiles = builtinDeviceProfiles();
  DeviceProfile cpu;
  cpu.name = "cpu";
  cpu.description = "AMD EPYC \"quoted\" \\ model";
  cpu.matmulFlops = {{"f32", 1.8734567890123e11}, {"bf16", 1.8734567890123e11}};
  cpu.vectorFlops = {{"f32", 0.1 + 0.2}, {"bf16", 1e-300}};
  cpu.bandwidth = 31.25e9;
  cpu.memoryBytes = 25276514304;
  cpu.source = "measured by einc calibrate on 2025-01-01";
  profiles.push_back(cpu);

  std::string text = printDeviceProfiles(profiles);
  auto parsed = parseDeviceProfiles(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << text;
  ASSERT_EQ(parsed->size(), profiles.size());
  for (size_t i = 0; i < profiles.size(); ++i) {
    const DeviceProfile &a = profiles[i], &b = (*parsed)[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.description, b.description);
    EXPECT_EQ(a.matmulFlops, b.matmulFlops); // exact: numbers print to round-trip
    EXPECT_EQ(a.vectorFlops, b.vectorFlops);
    EXPECT_EQ(a.bandwidth, b.bandwidth);
    EXPECT_EQ(a.memoryBytes, b.memoryBytes);
    EXPECT_EQ(a.source, b.source);
  }
  // Printing is stable and exact in the fewest digits (einrt::jsonNumber:
  // whole numbers as integers, others in nlohmann's shortest round-trip form).
  EXPECT_EQ(printDeviceProfiles(*parsed), text);
  EXPECT_NE(text.find("\"bf16\": 989500000000000,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"bandwidth\": 3350000000000,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"f32\": 0.30000000000000004"), std::string::npos) << text;
  EXPECT_NE(text.find("\"bf16\": 1e-300"), std::string::npos) << text;
  EXPECT_NE(text.find("\"f32\": 187345678901.23"), std::string::npos) << text;
}

// The lecture's example: (4096×8192) @ (8192×1024) in bf16 on an H100.
TEST(Roofline, LectureMatmulIsComputeBound) {
  const DeviceProfile *h100 = find(builtinDeviceProfiles(), "h100");
  ASSERT_NE(h100, nullptr);
  double m = 4096, k = 8192, n = 1024;
  double flops = 2 * m * k * n;
  double bytes = 2 * (m * k + k * n + m * n);
  Roofline r = roofline(*h100, "bf16", /*onMatrixUnits=*/true, flops, bytes);
  EXPECT_DOUBLE_EQ(flops, 68719476736.0);
  EXPECT_NEAR(r.seconds * 1e6, 69.4, 0.1);
  EXPECT_DOUBLE_EQ(r.seconds, flops / 989.5e12);
  EXPECT_TRUE(r.computeBound);
  EXPECT_NEAR(r.intensity, flops / bytes, 1e-9);
  EXPECT_GT(r.intensity, 989.5e12 / 3.35e12); // past the ridge point (~295 FLOP/B)
}

TEST(Roofline, ElementwiseIsMemoryBound) {
  const DeviceProfile *h100 = find(builtinDeviceProfiles(), "h100");
  ASSERT_NE(h100, nullptr);
  // y = a * x + b (scalars a, b) over 4096×8192 bf16: 2 FLOPs per element, reads x, writes y.
  double elems = 4096.0 * 8192.0;
  double flops = 2 * elems, bytes = 2 * 2 * elems;
  Roofline r = roofline(*h100, "bf16", /*onMatrixUnits=*/false, flops, bytes);
  EXPECT_FALSE(r.computeBound);
  EXPECT_DOUBLE_EQ(r.intensity, 0.5);
  EXPECT_DOUBLE_EQ(r.seconds, bytes / 3.35e12); // ~40 µs
  EXPECT_NEAR(r.seconds * 1e6, 40.06, 0.01);
}

TEST(Roofline, PeakChoiceAndFallback) {
  DeviceProfile d;
  d.matmulFlops = {{"f32", 100}, {"bf16", 400}};
  d.vectorFlops = {{"f32", 10}};
  d.bandwidth = 1;
  // Matrix vs vector units, and a dtype missing from the map uses f32.
  EXPECT_DOUBLE_EQ(roofline(d, "bf16", true, 800, 0).seconds, 2);
  EXPECT_DOUBLE_EQ(roofline(d, "f32", true, 800, 0).seconds, 8);
  EXPECT_DOUBLE_EQ(roofline(d, "bf16", false, 800, 0).seconds, 80);
  EXPECT_DOUBLE_EQ(roofline(d, "f16", true, 800, 0).seconds, 8);
}

TEST(Roofline, ZeroBytesAndZeroWork) {
  const DeviceProfile *h100 = find(builtinDeviceProfiles(), "h100");
  ASSERT_NE(h100, nullptr);
  Roofline r = roofline(*h100, "f32", false, 1e9, 0);
  EXPECT_TRUE(std::isinf(r.intensity));
  EXPECT_TRUE(r.computeBound);
  EXPECT_DOUBLE_EQ(r.seconds, 1e9 / 66.9e12);
  // Pure data movement (a copy, a transpose).
  r = roofline(*h100, "f32", false, 0, 1e9);
  EXPECT_EQ(r.intensity, 0);
  EXPECT_FALSE(r.computeBound);
  EXPECT_DOUBLE_EQ(r.seconds, 1e9 / 3.35e12);
  // Nothing at all.
  r = roofline(*h100, "f32", false, 0, 0);
  EXPECT_EQ(r.seconds, 0);
  EXPECT_EQ(r.intensity, 0);
  EXPECT_FALSE(std::isnan(r.seconds));
  // A hand-made profile without rates or bandwidth: infinitely slow, not NaN.
  DeviceProfile empty;
  r = roofline(empty, "bf16", true, 1, 1);
  EXPECT_TRUE(std::isinf(r.seconds));
}

} // namespace
