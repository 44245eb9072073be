//===- DeviceProfile.cpp - Hardware numbers as data -----------------------===//
//
// The profiles file is a JSON object {"profiles": [ {...}, ... ]}; every
// profile has exactly the fields of DeviceProfile (plus an optional "notes"
// string for people). Parsing is strict: a missing field, a wrong type, an
// unknown field or a non-positive number is an error that names the profile
// and the field. docs/devices.md describes the format.
//
//===----------------------------------------------------------------------===//
#include "passes/DeviceProfile.h"

#include "runtime/base/StrictJson.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

namespace mlir::ein {

namespace {

// passes/devices.json, turned into a string literal at build time
// (passes/CMakeLists.txt).
#include "passes/DevicesJson.inc"

const char *const kFields[] = {
    "name",        "description",          "matmulFlops", "vectorFlops",   "bandwidth",
    "memoryBytes", "kernelLatencySeconds", "source",      "intraNodeLink", "interNodeLink",
    "notes"};
const char *const kLinkKinds[] = {"nvlink", "pcie", "loopback", "infiniband", "ethernet"};

using Json = nlohmann::json;

/// Reads a positive, finite number.
bool readPositive(const Json &v, double &out) {
  if (!v.is_number())
    return false;
  double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0)
    return false;
  out = d;
  return true;
}

/// Parses one profile (Invalid naming the profile and the field).
einrt::Expected<DeviceProfile> parseProfile(const Json &value, size_t index) {
  std::string where = "profile #" + std::to_string(index);
  if (!value.is_object())
    return einrt::Status::invalid(where + ": expected an object");
  DeviceProfile p;
  auto fail = [&](const std::string &field, const std::string &what) {
    return einrt::Status::invalid(where + ": field '" + field + "' " + what);
  };
  // The name first, so that later messages can use it.
  auto name = value.find("name");
  if (name == value.end())
    return fail("name", "is missing");
  if (!name->is_string() || name->get<std::string>().empty())
    return fail("name", "must be a non-empty string");
  p.name = name->get<std::string>();
  where = "profile '" + p.name + "'";

  for (const auto &kv : value.items()) {
    bool known = false;
    for (const char *f : kFields)
      known |= kv.key() == f;
    if (!known)
      return fail(kv.key(),
                  "is not a profile field (expected name, description, "
                  "matmulFlops, vectorFlops, bandwidth, memoryBytes, kernelLatencySeconds, source, "
                  "intraNodeLink, interNodeLink, notes)");
  }

  auto readString = [&](const char *field, std::string *out) -> einrt::Status {
    auto v = value.find(field);
    if (v == value.end())
      return fail(field, "is missing");
    if (!v->is_string())
      return fail(field, "must be a string");
    if (out)
      *out = v->get<std::string>();
    return einrt::Status();
  };
  auto readNumber = [&](const char *field, double &out) -> einrt::Status {
    auto v = value.find(field);
    if (v == value.end())
      return fail(field, "is missing");
    if (!v->is_number())
      return fail(field, "must be a number");
    if (!readPositive(*v, out))
      return fail(field, "must be a positive finite number");
    return einrt::Status();
  };
  auto readRates = [&](const char *field, std::map<std::string, double> &out) -> einrt::Status {
    auto v = value.find(field);
    if (v == value.end())
      return fail(field, "is missing");
    if (!v->is_object())
      return fail(field, "must be an object mapping element types to FLOP/s");
    for (const auto &kv : v->items()) {
      std::string key = std::string(field) + "." + kv.key();
      if (!kv.value().is_number())
        return fail(key, "must be a number");
      double d;
      if (!readPositive(kv.value(), d))
        return fail(key, "must be a positive finite number");
      out[kv.key()] = d;
    }
    if (!out.count("f32"))
      return fail(field, "needs an \"f32\" entry (the fallback for other element types)");
    return einrt::Status();
  };

  EINRT_TRY(readString("description", &p.description));
  EINRT_TRY(readString("source", &p.source));
  EINRT_TRY(readRates("matmulFlops", p.matmulFlops));
  EINRT_TRY(readRates("vectorFlops", p.vectorFlops));
  EINRT_TRY(readNumber("bandwidth", p.bandwidth));
  EINRT_TRY(readNumber("memoryBytes", p.memoryBytes));
  if (auto latency = value.find("kernelLatencySeconds"); latency != value.end()) {
    if (!latency->is_number() || !std::isfinite(latency->get<double>()) ||
        latency->get<double>() < 0)
      return fail("kernelLatencySeconds", "must be a finite number of seconds, 0 or more");
    p.kernelLatency = latency->get<double>();
  }
  auto readLink = [&](const char *field, std::optional<DeviceProfile::Link> &out) -> einrt::Status {
    auto v = value.find(field);
    if (v == value.end())
      return einrt::Status(); // optional
    if (!v->is_object() || v->size() != 2 || !v->contains("kind") ||
        !v->contains("bytesPerSecond") || !(*v)["kind"].is_string())
      return fail(field, "must be {\"kind\": nvlink|pcie|loopback|infiniband|ethernet, "
                         "\"bytesPerSecond\": N}");
    DeviceProfile::Link link;
    link.kind = (*v)["kind"].get<std::string>();
    bool known = false;
    for (const char *k : kLinkKinds)
      known |= link.kind == k;
    if (!known)
      return fail(std::string(field) + ".kind",
                  "must be nvlink, pcie, loopback, infiniband or ethernet");
    if (!readPositive((*v)["bytesPerSecond"], link.bytesPerSecond))
      return fail(std::string(field) + ".bytesPerSecond", "must be a positive finite number");
    out = link;
    return einrt::Status();
  };
  EINRT_TRY(readLink("intraNodeLink", p.intraNodeLink));
  EINRT_TRY(readLink("interNodeLink", p.interNodeLink));
  auto notes = value.find("notes");
  if (notes != value.end() && !notes->is_string())
    return fail("notes", "must be a string");
  return p;
}

double rate(const std::map<std::string, double> &rates, const std::string &dtype) {
  auto it = rates.find(dtype);
  if (it == rates.end())
    it = rates.find("f32");
  return it == rates.end() ? 0 : it->second;
}

/// a / b for non-negative a, b, where no work takes no time and work on a
/// zero rate takes forever.
double divide(double a, double b) {
  if (a <= 0)
    return 0;
  if (b <= 0)
    return std::numeric_limits<double>::infinity();
  return a / b;
}

} // namespace

einrt::Expected<std::vector<DeviceProfile>> parseDeviceProfiles(const std::string &json) {
  einrt::Expected<Json> parsed = einrt::parseStrictJson(json.data(), json.size());
  if (!parsed.ok()) {
    return einrt::Status::invalid("not valid JSON: " + parsed.status().message());
  }
  Json top = parsed.take();
  if (!top.is_object()) {
    return einrt::Status::invalid("expected a JSON object with a \"profiles\" array");
  }
  for (const auto &kv : top.items()) {
    if (kv.key() != "profiles") {
      return einrt::Status::invalid("unknown top-level field '" + kv.key() +
                                    "' (expected \"profiles\")");
    }
  }
  auto list = top.find("profiles");
  if (list == top.end() || !list->is_array()) {
    return einrt::Status::invalid(list != top.end() ? "field 'profiles' must be an array"
                                                    : "field 'profiles' is missing");
  }
  std::vector<DeviceProfile> profiles;
  std::set<std::string> names;
  for (size_t i = 0; i < list->size(); ++i) {
    einrt::Expected<DeviceProfile> parsed = parseProfile((*list)[i], i);
    if (!parsed.ok())
      return parsed.takeStatus();
    DeviceProfile p = parsed.take();
    if (!names.insert(p.name).second) {
      return einrt::Status::invalid("profile '" + p.name + "' is defined twice");
    }
    profiles.push_back(std::move(p));
  }
  return profiles;
}

const std::vector<DeviceProfile> &builtinDeviceProfiles() {
  static const std::vector<DeviceProfile> profiles = [] {
    einrt::Expected<std::vector<DeviceProfile>> parsed = parseDeviceProfiles(kDevicesJson);
    if (!parsed.ok()) {
      // A build-time file: a mistake in it is a bug in einc, caught by the
      // unit tests.
      llvm::errs() << "einc: internal error: built-in passes/devices.json: "
                   << parsed.status().message() << "\n";
      std::abort();
    }
    return parsed.take();
  }();
  return profiles;
}

std::string printDeviceProfiles(const std::vector<DeviceProfile> &profiles) {
  using OrderedJson = nlohmann::ordered_json; // fields in the documented order
  auto rates = [](const std::map<std::string, double> &m) {
    OrderedJson j = OrderedJson::object();
    for (const auto &[dtype, rate] : m)
      j[dtype] = einrt::jsonNumber(rate);
    return j;
  };
  OrderedJson list = OrderedJson::array();
  for (const DeviceProfile &p : profiles) {
    OrderedJson j;
    j["name"] = p.name;
    j["description"] = p.description;
    j["matmulFlops"] = rates(p.matmulFlops);
    j["vectorFlops"] = rates(p.vectorFlops);
    j["bandwidth"] = einrt::jsonNumber(p.bandwidth);
    j["memoryBytes"] = einrt::jsonNumber(p.memoryBytes);
    if (p.kernelLatency > 0)
      j["kernelLatencySeconds"] = einrt::jsonNumber(p.kernelLatency);
    j["source"] = p.source;
    for (auto [field, link] : {std::pair{"intraNodeLink", &p.intraNodeLink},
                               std::pair{"interNodeLink", &p.interNodeLink}})
      if (*link) {
        OrderedJson l;
        l["kind"] = (*link)->kind;
        l["bytesPerSecond"] = einrt::jsonNumber((*link)->bytesPerSecond);
        j[field] = std::move(l);
      }
    list.push_back(std::move(j));
  }
  OrderedJson top;
  top["profiles"] = std::move(list);
  return einrt::dumpJson(top, 2) + "\n";
}

Roofline roofline(const DeviceProfile &device, const std::string &dtype, bool onMatrixUnits,
                  double flops, double bytes) {
  double peak = rate(onMatrixUnits ? device.matmulFlops : device.vectorFlops, dtype);
  double computeSeconds = divide(flops, peak);
  double memorySeconds = divide(bytes, device.bandwidth);
  Roofline r;
  if (bytes > 0)
    r.intensity = flops / bytes;
  else
    r.intensity = flops > 0 ? std::numeric_limits<double>::infinity() : 0;
  r.seconds = std::max(computeSeconds, memorySeconds);
  r.computeBound = computeSeconds >= memorySeconds;
  return r;
}

} // namespace mlir::ein
