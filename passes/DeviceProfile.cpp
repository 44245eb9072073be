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

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
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

const char *const kFields[] = {"name",      "description", "matmulFlops", "vectorFlops",
                               "bandwidth", "memoryBytes", "source",      "notes"};

/// Reads a positive, finite number.
bool readPositive(const llvm::json::Value &v, double &out) {
  std::optional<double> d = v.getAsNumber();
  if (!d || !std::isfinite(*d) || *d <= 0)
    return false;
  out = *d;
  return true;
}

/// Parses one profile; returns false with `error` set.
bool parseProfile(const llvm::json::Value &value, size_t index, DeviceProfile &p,
                  std::string &error) {
  std::string where = "profile #" + std::to_string(index);
  const llvm::json::Object *obj = value.getAsObject();
  if (!obj) {
    error = where + ": expected an object";
    return false;
  }
  auto fail = [&](const std::string &field, const std::string &what) {
    error = where + ": field '" + field + "' " + what;
    return false;
  };
  // The name first, so that later messages can use it.
  const llvm::json::Value *name = obj->get("name");
  if (!name)
    return fail("name", "is missing");
  if (!name->getAsString() || name->getAsString()->empty())
    return fail("name", "must be a non-empty string");
  p.name = name->getAsString()->str();
  where = "profile '" + p.name + "'";

  for (const auto &kv : *obj) {
    bool known = false;
    for (const char *f : kFields)
      known |= kv.first == f;
    if (!known)
      return fail(kv.first.str(), "is not a profile field (expected name, description, "
                                  "matmulFlops, vectorFlops, bandwidth, memoryBytes, source, "
                                  "notes)");
  }

  auto readString = [&](const char *field, std::string *out) {
    const llvm::json::Value *v = obj->get(field);
    if (!v)
      return fail(field, "is missing");
    if (!v->getAsString())
      return fail(field, "must be a string");
    if (out)
      *out = v->getAsString()->str();
    return true;
  };
  auto readNumber = [&](const char *field, double &out) {
    const llvm::json::Value *v = obj->get(field);
    if (!v)
      return fail(field, "is missing");
    if (!v->getAsNumber())
      return fail(field, "must be a number");
    if (!readPositive(*v, out))
      return fail(field, "must be a positive finite number");
    return true;
  };
  auto readRates = [&](const char *field, std::map<std::string, double> &out) {
    const llvm::json::Value *v = obj->get(field);
    if (!v)
      return fail(field, "is missing");
    const llvm::json::Object *rates = v->getAsObject();
    if (!rates)
      return fail(field, "must be an object mapping element types to FLOP/s");
    for (const auto &kv : *rates) {
      std::string key = std::string(field) + "." + kv.first.str();
      if (!kv.second.getAsNumber())
        return fail(key, "must be a number");
      double d;
      if (!readPositive(kv.second, d))
        return fail(key, "must be a positive finite number");
      out[kv.first.str()] = d;
    }
    if (!out.count("f32"))
      return fail(field, "needs an \"f32\" entry (the fallback for other element types)");
    return true;
  };

  if (!readString("description", &p.description) || !readString("source", &p.source) ||
      !readRates("matmulFlops", p.matmulFlops) || !readRates("vectorFlops", p.vectorFlops) ||
      !readNumber("bandwidth", p.bandwidth) || !readNumber("memoryBytes", p.memoryBytes))
    return false;
  if (obj->get("notes") && !obj->get("notes")->getAsString())
    return fail("notes", "must be a string");
  return true;
}

/// The shortest decimal form that reads back as exactly `d`.
std::string formatNumber(double d) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d)
      break;
  }
  return buf;
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
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed) {
    error = "not valid JSON: " + llvm::toString(parsed.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *top = parsed->getAsObject();
  if (!top) {
    error = "expected a JSON object with a \"profiles\" array";
    return std::nullopt;
  }
  for (const auto &kv : *top) {
    if (kv.first != "profiles") {
      error = "unknown top-level field '" + kv.first.str() + "' (expected \"profiles\")";
      return std::nullopt;
    }
  }
  const llvm::json::Array *list = top->getArray("profiles");
  if (!list) {
    error =
        top->get("profiles") ? "field 'profiles' must be an array" : "field 'profiles' is missing";
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
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  auto number = [&](double d) { j.rawValue(formatNumber(d)); };
  auto rates = [&](const std::map<std::string, double> &m) {
    j.object([&] {
      for (const auto &kv : m)
        j.attributeBegin(kv.first), number(kv.second), j.attributeEnd();
    });
  };
  j.object([&] {
    j.attributeArray("profiles", [&] {
      for (const DeviceProfile &p : profiles) {
        j.object([&] {
          j.attribute("name", p.name);
          j.attribute("description", p.description);
          j.attributeBegin("matmulFlops");
          rates(p.matmulFlops);
          j.attributeEnd();
          j.attributeBegin("vectorFlops");
          rates(p.vectorFlops);
          j.attributeEnd();
          j.attributeBegin("bandwidth");
          number(p.bandwidth);
          j.attributeEnd();
          j.attributeBegin("memoryBytes");
          number(p.memoryBytes);
          j.attributeEnd();
          j.attribute("source", p.source);
        });
      }
    });
  });
  os << "\n";
  return out;
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
