//===- Init.cpp - Seeded random numbers and parameter initialisation ------===//
#include "runtime/core/Init.h"

#include <cmath>

namespace einrt {

namespace {

uint64_t splitmix64(uint64_t &x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

} // namespace

void Rng::reseed(uint64_t seed) {
  uint64_t x = seed;
  for (auto &w : s)
    w = splitmix64(x);
  hasSpare = false;
  spare = 0;
}

Rng Rng::forStream(uint64_t seed, const std::string &name) {
  uint64_t x = seed;
  uint64_t mixed = splitmix64(x) ^ fnv1a(name);
  return Rng(mixed);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double Rng::uniform() { return double(next() >> 11) * 0x1p-53; }

uint64_t Rng::below(uint64_t n) {
  // Rejection: accept values under the largest multiple of n.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  while (true) {
    uint64_t x = next();
    if (x < limit)
      return x % n;
  }
}

double Rng::normal() {
  if (hasSpare) {
    hasSpare = false;
    return spare;
  }
  double u1 = 1.0 - uniform(); // (0, 1]: log is finite
  double u2 = uniform();
  double r = std::sqrt(-2.0 * std::log(u1));
  double theta = 6.283185307179586476925286766559 * u2;
  spare = r * std::sin(theta);
  hasSpare = true;
  return r * std::cos(theta);
}

Rng::State Rng::state() const {
  State st;
  for (int i = 0; i < 4; ++i)
    st.s[i] = s[i];
  st.hasSpare = hasSpare;
  st.spare = spare;
  return st;
}

void Rng::setState(const State &st) {
  for (int i = 0; i < 4; ++i)
    s[i] = st.s[i];
  hasSpare = st.hasSpare;
  spare = st.spare;
}

double sampleInit(const Init &init, Rng &rng) {
  if (init.kind == "normal") {
    if (init.clip > 0 && init.std > 0) {
      double lo = init.mean - init.clip * init.std;
      double hi = init.mean + init.clip * init.std;
      // Resampling: the acceptance probability is >= P(|z| < clip); for
      // tiny clips give up after many tries and clamp.
      for (int tries = 0; tries < 10000; ++tries) {
        double v = init.mean + init.std * rng.normal();
        if (v >= lo && v <= hi)
          return v;
      }
      return init.mean;
    }
    return init.mean + init.std * rng.normal();
  }
  if (init.kind == "uniform")
    return init.low + (init.high - init.low) * rng.uniform();
  if (init.kind == "ones")
    return 1.0;
  return 0.0;
}

Status initParams(Executor &ex, uint64_t seed) {
  const Program &p = ex.program();
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer &buf = p.buffers[b];
    if (buf.role != BufferRole::Param || !ex.deviceData(b))
      continue;
    Rng rng = Rng::forStream(seed, buf.name);
    std::vector<double> values(size_t(buf.elementCount()));
    for (double &v : values)
      v = sampleInit(buf.init, rng);
    EINRT_TRY(ex.write(b, values.data(), values.size()));
  }
  return Status::success();
}

Status fillRandomNormal(Executor &ex, size_t bufferIndex, uint64_t seed) {
  if (bufferIndex >= ex.program().buffers.size())
    return Status::invalid("buffer index " + std::to_string(bufferIndex) + " out of range");
  Rng rng = Rng::forStream(seed, ex.program().buffers[bufferIndex].name);
  std::vector<double> values(size_t(ex.elementCount(bufferIndex)));
  for (double &v : values)
    v = rng.normal();
  return ex.write(bufferIndex, values.data(), values.size());
}

Status fillRandomInts(Executor &ex, size_t bufferIndex, uint64_t seed, int32_t upperExclusive) {
  if (bufferIndex >= ex.program().buffers.size())
    return Status::invalid("buffer index " + std::to_string(bufferIndex) + " out of range");
  if (upperExclusive <= 0)
    return Status::invalid("random integers need an upper bound > 0, got " +
                           std::to_string(upperExclusive));
  Rng rng = Rng::forStream(seed, ex.program().buffers[bufferIndex].name);
  std::vector<double> values(size_t(ex.elementCount(bufferIndex)));
  for (double &v : values)
    v = double(rng.below(uint64_t(upperExclusive)));
  return ex.write(bufferIndex, values.data(), values.size());
}

Status fillRandomInputs(Executor &ex, uint64_t seed, int32_t vocab) {
  const Program &p = ex.program();
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer &buf = p.buffers[b];
    if ((buf.role != BufferRole::Input && buf.role != BufferRole::Scalar) || !ex.deviceData(b))
      continue;
    if (isFloat(buf.dtype))
      EINRT_TRY(fillRandomNormal(ex, b, seed));
    else if (buf.dtype == DType::I32)
      EINRT_TRY(fillRandomInts(ex, b, seed, vocab));
    else
      EINRT_TRY(fillRandomInts(ex, b, seed, 2));
  }
  return Status::success();
}

} // namespace einrt
