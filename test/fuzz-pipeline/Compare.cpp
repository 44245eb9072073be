//===- Compare.cpp - Results of two backends, within float32's reach ------===//
#include "Compare.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace einc::pipelinefuzz {

RunResults resultsOf(const einrt::Executor &ex) {
  RunResults r;
  for (size_t i = 0; i < ex.resultCount(); ++i) {
    size_t b = size_t(ex.program().results[i]);
    einrt::Expected<std::vector<double>> read = ex.read(b);
    std::vector<double> values = read.ok() ? read.take() : std::vector<double>{};
    r.names.push_back(ex.program().resultNames[i]);
    // The raw float32 storage where the device keeps floats as f32 (host
    // memory on the reference and cpu devices).
    std::vector<float> raw;
    if (ex.storageOf(b) == einrt::StorageType::F32 && ex.deviceData(b)) {
      const float *p = static_cast<const float *>(ex.deviceData(b));
      raw.assign(p, p + ex.elementCount(b));
    }
    r.values.push_back(std::move(values));
    r.f32.push_back(std::move(raw));
  }
  return r;
}

namespace {
std::string number(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

std::string mismatch(const RunResults &r, size_t first, size_t second) {
  return "results differ in number or names (" + std::to_string(first) + " vs " +
         std::to_string(second) + (r.names.empty() ? "" : ", first " + r.names[0]) + ")";
}
} // namespace

std::vector<double> noiseOf(const std::vector<Sample> &samples) {
  std::vector<double> noise;
  for (const Sample &s : samples) {
    noise.resize(std::max(noise.size(), s.ref64.values.size()), 0.0);
    for (size_t t = 0; t < s.ref64.values.size() && t < s.ref32.values.size(); ++t)
      for (size_t i = 0; i < s.ref64.values[t].size(); ++i)
        noise[t] = std::max(noise[t], std::fabs(s.ref32.values[t][i] - s.ref64.values[t][i]));
  }
  return noise;
}

std::string compareWithReference(const RunResults &cpu, const RunResults &ref64,
                                 const std::vector<double> &noise, bool &nonFinite,
                                 const Skips *skips) {
  if (cpu.names != ref64.names || noise.size() != ref64.names.size())
    return mismatch(cpu, cpu.names.size(), ref64.names.size());
  for (size_t t = 0; t < ref64.values.size(); ++t) {
    const std::vector<double> &c = cpu.values[t], &w = ref64.values[t];
    const std::vector<bool> *skip = nullptr;
    if (skips)
      if (auto it = skips->find(ref64.names[t]); it != skips->end())
        skip = &it->second;
    double scale = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      if (!std::isfinite(w[i])) {
        nonFinite = true;
        return "the float64 reference of '" + ref64.names[t] + "' is not finite at [" +
               std::to_string(i) + "]";
      }
      scale = std::max(scale, std::fabs(w[i]));
    }
    double bound = kRelative * scale + kNoise * noise[t];
    for (size_t i = 0; i < w.size(); ++i) {
      double diff = std::fabs(c[i] - w[i]);
      if (!(diff <= bound) && !(skip && i < skip->size() && (*skip)[i]))
        return "'" + ref64.names[t] + "'[" + std::to_string(i) + "]: cpu " + number(c[i]) +
               ", reference " + number(w[i]) + " (float64); |cpu - float64| = " + number(diff) +
               " > bound " + number(bound) + " (max |float64| " + number(scale) +
               ", float32 noise " + number(noise[t]) + ")";
    }
  }
  return "";
}

std::string compareBits(const RunResults &a, const RunResults &b) {
  if (a.names != b.names)
    return mismatch(a, a.names.size(), b.names.size());
  for (size_t t = 0; t < a.f32.size(); ++t) {
    const std::vector<float> &x = a.f32[t], &y = b.f32[t];
    if (x.size() != y.size())
      return "'" + a.names[t] + "' has " + std::to_string(x.size()) + " vs " +
             std::to_string(y.size()) + " elements";
    for (size_t i = 0; i < x.size(); ++i)
      if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0)
        return "'" + a.names[t] + "'[" + std::to_string(i) + "]: " + number(x[i]) + " vs " +
               number(y[i]) + " (not the same bits)";
  }
  return "";
}

std::string compareClose(const RunResults &a, const RunResults &b, double relative,
                         double absolute) {
  if (a.names != b.names)
    return mismatch(a, a.names.size(), b.names.size());
  for (size_t t = 0; t < b.values.size(); ++t) {
    double scale = 0;
    for (double v : b.values[t])
      scale = std::max(scale, std::fabs(v));
    double bound = relative * scale + absolute;
    for (size_t i = 0; i < b.values[t].size(); ++i) {
      double diff = std::fabs(a.values[t][i] - b.values[t][i]);
      if (!(diff <= bound))
        return "'" + b.names[t] + "'[" + std::to_string(i) + "]: " + number(a.values[t][i]) +
               " vs " + number(b.values[t][i]) + ", difference " + number(diff) + " > bound " +
               number(bound);
    }
  }
  return "";
}

} // namespace einc::pipelinefuzz
