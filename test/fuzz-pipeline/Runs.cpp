//===- Runs.cpp - Lowered functions run on given argument values ----------===//
#include "Runs.h"

#include "runtime/core/HostDevice.h"
#include "runtime/core/Init.h"
#include "runtime/cpu/CpuDevice.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace einc::pipelinefuzz {

einrt::Expected<einrt::Executor> Lowered::executor(const std::string &name,
                                                   einrt::Precision precision, int threads) const {
  auto it = programs.find(name);
  if (it == programs.end())
    return einrt::Status(einrt::StatusCode::NotFound, "@" + name + " was not lowered");
  std::shared_ptr<einrt::Device> device;
  if (kernels)
    device = std::make_shared<einrt::CpuDevice>(kernels->table(), threads);
  else
    device = std::make_shared<einrt::HostDevice>(precision);
  einrt::Expected<einrt::Executor> ex = einrt::Executor::create(it->second, device);
  if (!ex.ok())
    return ex.takeStatus().withContext("@" + name + ": ");
  return ex;
}

einrt::Status setByName(einrt::Executor &ex, const Values &values) {
  const einrt::Program &p = ex.program();
  for (size_t a = 0; a < p.arguments.size(); ++a) {
    auto it = values.find(p.buffers[size_t(p.arguments[a])].name);
    if (it != values.end())
      EINRT_TRY(ex.setArgument(a, it->second.data(), it->second.size()));
  }
  return einrt::Status::success();
}

namespace {
/// Fresh values for every Input buffer of `ex` (each its own stream).
einrt::Status fillInputs(einrt::Executor &ex, int32_t vocab, uint64_t seed) {
  const einrt::Program &p = ex.program();
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    if (p.buffers[b].role != einrt::BufferRole::Input)
      continue;
    EINRT_TRY(p.buffers[b].dtype == einrt::DType::I32
                  ? einrt::fillRandomInts(ex, b, seed + b, vocab)
                  : einrt::fillRandomNormal(ex, b, seed + b));
  }
  return einrt::Status::success();
}

/// The arguments' values by name (an argument that cannot be read: empty).
void readArguments(const einrt::Executor &ex, Values &out) {
  const einrt::Program &p = ex.program();
  for (int32_t a : p.arguments) {
    einrt::Expected<std::vector<double>> values = ex.read(size_t(a));
    out[p.buffers[size_t(a)].name] = values.ok() ? values.take() : std::vector<double>{};
  }
}
} // namespace

einrt::Status initialValues(const Lowered &l, const std::string &name, int32_t vocab, double lr,
                            uint64_t seed, Values &out) {
  einrt::Expected<einrt::Executor> ex = l.executor(name, einrt::Precision::F32, 1);
  if (!ex.ok())
    return ex.takeStatus();
  EINRT_TRY(einrt::initParams(*ex, seed));
  EINRT_TRY(fillInputs(*ex, vocab, seed + 1000));
  readArguments(*ex, out);
  out["step"] = {1};
  out["lr"] = {lr};
  return einrt::Status::success();
}

Values jittered(const Values &values, const einrt::Executor &ex, uint64_t seed) {
  Values out = values;
  einrt::Rng rng(seed);
  const einrt::Program &p = ex.program();
  for (int32_t a : p.arguments) {
    const einrt::Buffer &b = p.buffers[size_t(a)];
    if (b.role == einrt::BufferRole::Param)
      for (double &v : out[b.name])
        v += 0.01 * rng.normal();
  }
  return out;
}

Values nudged(const Values &values, const einrt::Program &program, uint64_t seed) {
  Values out = values;
  einrt::Rng rng(seed);
  for (int32_t a : program.arguments) {
    const einrt::Buffer &b = program.buffers[size_t(a)];
    if ((b.role == einrt::BufferRole::Param || b.role == einrt::BufferRole::Input) &&
        b.dtype != einrt::DType::I32 && b.dtype != einrt::DType::I1)
      for (double &v : out[b.name])
        v *= 1 + std::ldexp(2 * rng.uniform() - 1, -20);
  }
  return out;
}

std::vector<Values> microBatches(const Lowered &l, const std::string &name, const Values &values,
                                 int64_t count, int32_t vocab, uint64_t seed) {
  std::vector<Values> out;
  einrt::Expected<einrt::Executor> ex = l.executor(name, einrt::Precision::F32, 1);
  for (int64_t m = 0; ex.ok() && m < count; ++m) {
    Values batch = values;
    if (fillInputs(*ex, vocab, seed + 5000 + 100 * uint64_t(m)).ok())
      readArguments(*ex, batch);
    for (auto &[k, v] : values) // keep the params
      if (ex->findBuffer(k) >= 0 &&
          ex->program().buffers[size_t(ex->findBuffer(k))].role != einrt::BufferRole::Input)
        batch[k] = v;
    out.push_back(std::move(batch));
  }
  return out;
}

einrt::Status runOnce(const Lowered &l, const std::string &name, einrt::Precision precision,
                      int threads, const Values &values, RunResults &out) {
  einrt::Expected<einrt::Executor> ex = l.executor(name, precision, threads);
  if (!ex.ok())
    return ex.takeStatus();
  EINRT_TRY(setByName(*ex, values));
  EINRT_TRY(ex->run());
  out = resultsOf(*ex);
  return einrt::Status::success();
}

einrt::Status runSteps(const Lowered &l, const std::string &name, einrt::Precision precision,
                       int threads, Values values, int steps, std::vector<RunResults> &out) {
  einrt::Expected<einrt::Executor> ex = l.executor(name, precision, threads);
  if (!ex.ok())
    return ex.takeStatus();
  for (int s = 1; s <= steps; ++s) {
    values["step"] = {double(s)};
    EINRT_TRY(setByName(*ex, values));
    EINRT_TRY(ex->run());
    out.push_back(resultsOf(*ex));
    const RunResults &r = out.back();
    for (size_t i = 0; i < r.names.size(); ++i)
      if (values.count(r.names[i]))
        values[r.names[i]] = r.values[i];
  }
  return einrt::Status::success();
}

einrt::Status runApply(const Lowered &l, einrt::Precision precision, const Values &values,
                       const std::vector<RunResults> &grads, RunResults &out) {
  einrt::Expected<einrt::Executor> ex = l.executor("apply_update", precision, 1);
  if (!ex.ok())
    return ex.takeStatus();
  EINRT_TRY(setByName(*ex, values));
  const einrt::Program &p = ex->program();
  size_t g = 1; // @grad's results: the loss, then one gradient per param
  for (size_t a = 0; a < p.arguments.size(); ++a) {
    einrt::BufferRole role = p.buffers[size_t(p.arguments[a])].role;
    if (role == einrt::BufferRole::Param || role == einrt::BufferRole::OptState ||
        role == einrt::BufferRole::Scalar)
      continue;
    if (grads.empty() || g >= grads[0].values.size())
      return einrt::Status::invalid("@apply_update takes more gradients than @grad returns");
    std::vector<double> mean(grads[0].values[g].size(), 0.0);
    for (const RunResults &r : grads)
      for (size_t i = 0; i < mean.size(); ++i)
        mean[i] += r.values[g][i];
    for (double &v : mean)
      v /= double(grads.size());
    EINRT_TRY(ex->setArgument(a, mean.data(), mean.size()));
    ++g;
  }
  EINRT_TRY(ex->run());
  out = resultsOf(*ex);
  return einrt::Status::success();
}

bool atKink(einrt::Executor &forward, const std::string &param, int64_t index, double reach) {
  int64_t b = forward.findBuffer(param);
  if (b < 0)
    return false;
  einrt::Expected<std::vector<double>> read = forward.read(size_t(b));
  if (!read.ok() || index < 0 || size_t(index) >= read->size())
    return false;
  std::vector<double> p = read.take();
  double x = p[size_t(index)];
  // The loss with param[index] = v; NaN where the run fails.
  auto loss = [&](double v) {
    p[size_t(index)] = v;
    if (!forward.write(size_t(b), p.data(), p.size()).ok() || !forward.run().ok())
      return double(NAN);
    einrt::Expected<double> l = forward.readScalar(0);
    return l.ok() ? *l : double(NAN);
  };
  // Slopes over 50 steps across [x - reach, x + reach]: smooth, neighbouring
  // slopes differ by the curvature times the step; a kink is one jump.
  constexpr int kSteps = 50;
  const double delta = 2 * reach / kSteps;
  std::vector<double> slopes;
  double previous = loss(x - reach);
  for (int k = 1; k <= kSteps; ++k) {
    double next = loss(x - reach + k * delta);
    slopes.push_back((next - previous) / delta);
    previous = next;
  }
  p[size_t(index)] = x;
  // Puts the param back (best effort, as before: a caller that runs
  // @forward again sets its arguments by name first).
  forward.write(size_t(b), p.data(), p.size()).ignore();
  std::vector<double> jumps;
  double largest = 0;
  for (size_t k = 0; k + 1 < slopes.size(); ++k) {
    jumps.push_back(std::fabs(slopes[k + 1] - slopes[k]));
    largest = std::max(largest, std::fabs(slopes[k]));
  }
  std::vector<double> sorted = jumps;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  double median = sorted[sorted.size() / 2], worst = *std::max_element(jumps.begin(), jumps.end());
  return worst > 1e-3 * std::max(largest, 1e-4) && worst > 50 * median;
}

std::string formatNumber(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

} // namespace einc::pipelinefuzz
