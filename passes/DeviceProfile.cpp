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

const char *const kFields[] = {"name",          "description", "matmulFlops", "vectorFlops",
                               "bandwidth",     "memoryBytes", "source",      "intraNodeLink",
                               "interNodeLink", "notes"};
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

/// Parses one profile; returns false with `error` set.
bool parseProfile(const Json &value, size_t index, DeviceProfile &p, std::string &error) {
  std::string where = "profile #" + std::to_string(index);
  if (!value.is_object()) {
    error = where + ": expected an object";
    return false;
  }
  auto fail = [&](const std::string &field, const std::string &what) {
    error = where + ": field '" + field + "' " + what;
    return false;
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
      return fail(kv.key(), "is not a profile field (expected name, description, "
                            "matmulFlops, vectorFlops, bandwidth, memoryBytes, source, "
                            "intraNodeLink, interNodeLink, notes)");
  }

  auto readString = [&](const char *field, std::string *out) {
    auto v = value.find(field);
    if (v == value.end())
      return fail(field, "is missing");
    if (!v->is_string())
      return fail(field, "must be a string");
    if (out)
      *out = v->get<std::string>();
    return true;
  };
  auto readNumber = [&](const char *field, double &out) {
    auto v = value.find(field);
    if (v == value.end())
      return fail(field, "is missing");
    if (!v->is_number())
      return fail(field, "must be a number");
    if (!readPositive(*v, out))
      return fail(field, "must be a positive finite number");
    return true;
  };
  auto readRates = [&](const char *field, std::map<std::string, double> &out) {
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
    return true;
  };

  if (!readString("description", &p.description) || !readString("source", &p.source) ||
      !readRates("matmulFlops", p.matmulFlops) || !readRates("vectorFlops", p.vectorFlops) ||
      !readNumber("bandwidth", p.bandwidth) || !readNumber("memoryBytes", p.memoryBytes))
    return false;
  auto readLink = [&](const char *field, std::optional<DeviceProfile::Link> &out) {
    auto v = value.find(field);
    if (v == value.end())
      return true; // optional
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
    return true;
  };
  if (!readLink("intraNodeLink", p.intraNodeLink) || !readLink("interNodeLink", p.interNodeLink))
    return false;
  auto notes = value.find("notes");
  if (notes != value.end() && !notes->is_string())
    return fail("notes", "must be a string");
  return true;
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

std::optional<std::vector<DeviceProfile>> parseDeviceProfiles(const std::string &json,
                                                              std::string &error) {
  einrt::Expected<Json> parsed = einrt::parseStrictJson(json.data(), json.size());
  if (!parsed.ok()) {
    error = "not valid JSON: " + parsed.status().message();
    return std::nullopt;
  }
  Json top = parsed.take();
  if (!top.is_object()) {
    error = "expected a JSON object with a \"profiles\" array";
    return std::nullopt;
  }
  for (const auto &kv : top.items()) {
    if (kv.key() != "profiles") {
      error = "unknown top-level field '" + kv.key() + "' (expected \"profiles\")";
      return std::nullopt;
    }
  }
  auto list = top.find("profiles");
  if (list == top.end() || !list->is_array()) {
    error = list != top.end() ? "field 'profiles' must be an array" : "field 'profiles' is missing";
    return std::nullopt;
  }
  std::vector<DeviceProfile> profiles;
  std::set<std::string> names;
  for (size_t i = 0; i < list->size(); ++i) {
    DeviceProfile p;
    if (!parseProfile((*list)[i], i, p, error))
      return std::nullopt;
    if (!names.insert(p.name).second) {
      error = "profile '" + p.name + "' is defined twice";
      return std::nullopt;
    }
    profiles.push_back(std::move(p));
  }
  return profiles;
}

const std::vector<DeviceProfile> &builtinDeviceProfiles() {
  static const std::vector<DeviceProfile> profiles = [] {
    std::string error;
    auto parsed = parseDeviceProfiles(kDevicesJson, error);
    if (!parsed) {
      // A build-time file: a mistake in it is a bug in einc, caught by the
      // unit tests.
      llvm::errs() << "einc: internal error: built-in passes/devices.json: " << error << "\n";
      std::abort();
    }
    return std::move(*parsed);
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
