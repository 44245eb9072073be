//===- Init.h - Seeded random numbers and parameter initialisation --------===//
//
// xoshiro256** seeded through splitmix64: reproducible on every platform for
// the same seed. Each Param buffer draws from its own stream, derived from
// the seed and the buffer's name, so adding a parameter does not change the
// values of the others.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_INIT_H
#define EINC_RUNTIME_INIT_H

#include "runtime/core/Executor.h"

#include <cstdint>
#include <string>

namespace einrt {

class Rng {
public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed);
  /// A stream derived from (seed, name): independent of other names.
  static Rng forStream(uint64_t seed, const std::string &name);

  uint64_t next(); // xoshiro256**
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform integer in [0, n), unbiased; n > 0.
  uint64_t below(uint64_t n);
  /// Standard normal (Box-Muller; the second value is cached).
  double normal();

  /// The full state, for checkpoints (bit-exact resume).
  struct State {
    uint64_t s[4];
    bool hasSpare;
    double spare;
  };
  State state() const;
  void setState(const State &st);

private:
  uint64_t s[4] = {0, 0, 0, 0};
  bool hasSpare = false;
  double spare = 0;
};

/// Draws one value of an Init (normal with clip k: resampled until within
/// [mean - k·std, mean + k·std]; uniform in [low, high); zeros; ones).
double sampleInit(const Init &init, Rng &rng);

/// Fills every Param buffer of the executor's program from its Init.
Status initParams(Executor &ex, uint64_t seed);

/// Fills buffer `bufferIndex` with N(0, 1) values (floats) — any dtype;
/// ints get truncated values.
Status fillRandomNormal(Executor &ex, size_t bufferIndex, uint64_t seed);
/// Fills buffer `bufferIndex` (i32, or any dtype) with integers uniform in
/// [0, upperExclusive); upperExclusive must be > 0.
Status fillRandomInts(Executor &ex, size_t bufferIndex, uint64_t seed, int32_t upperExclusive);
/// Random inputs for `einc run` without data: every Input buffer (and Scalar
/// buffer) gets N(0, 1) if float, uniform [0, vocab) if i32, 0/1 if i1.
Status fillRandomInputs(Executor &ex, uint64_t seed, int32_t vocab);

} // namespace einrt

#endif // EINC_RUNTIME_INIT_H
