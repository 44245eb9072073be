//===- Compare.h - Results of two backends, within float32's reach -*- C++ -*-===//
//
// The CPU backend sums in other orders than the reference backend (BLAS
// blocking, vectorised partial sums), so their float32 results differ by
// rounding, and by much more where the program cancels (a gradient that is
// zero in exact arithmetic is rounding noise in both). The bound says how far
// float32 can be from the truth on this very program: the reference backend
// in float32 against float64, at the point and at a few points a few ulps
// away (one sample can be lucky). Per tensor,
//
//   max |cpu - ref64|  <=  kRelative * max |ref64|  +  kNoise * noise,
//   noise = max over the samples of max |ref32 - ref64|,
//
// kNoise being the slack for another summation order and for the CPU's
// exp, log and tanh (polynomials a few ulps from libm's, which the reference
// calls; measured up to 4 ulps for tanh). Bit-identical claims compare raw
// bits.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_COMPARE_H
#define EINC_TEST_FUZZ_PIPELINE_COMPARE_H

#include "runtime/core/Executor.h"

#include <map>
#include <string>
#include <vector>

namespace einc::pipelinefuzz {

constexpr double kRelative = 1e-5;
constexpr double kNoise = 32;

/// Results of one run: each result's name and values (as doubles), and the
/// raw float32 bits where the run was in float32.
struct RunResults {
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;
  std::vector<std::vector<float>> f32;
};
RunResults resultsOf(const einrt::Executor &ex);

/// One sample of float32's error: the reference backend at one point, in
/// float32 and in float64.
struct Sample {
  RunResults ref32, ref64;
};
/// Per result, the largest |ref32 - ref64| over the samples.
std::vector<double> noiseOf(const std::vector<Sample> &samples);

/// Entries a comparison leaves out, per result name.
using Skips = std::map<std::string, std::vector<bool>>;

/// "" when `cpu` is within the bound of every tensor, else what differed
/// (the result, the element, the values and the bound). `nonFinite` is set
/// when the float64 reference itself is not finite.
std::string compareWithReference(const RunResults &cpu, const RunResults &ref64,
                                 const std::vector<double> &noise, bool &nonFinite,
                                 const Skips *skips = nullptr);

/// "" when every result has the same bits, else the first difference.
std::string compareBits(const RunResults &a, const RunResults &b);

/// "" when max |a - b| <= relative * max |b| + absolute per tensor (float64
/// runs of two functions computing the same thing).
std::string compareClose(const RunResults &a, const RunResults &b, double relative,
                         double absolute);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_COMPARE_H
