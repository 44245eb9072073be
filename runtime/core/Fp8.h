//===- Fp8.h - The fp8 formats E4M3 and E5M2 -------------------*- C++ -*-===//
//
// The two 8-bit float formats of fp8 training (the OCP 8-bit float
// specification; NVIDIA's __nv_fp8_e4m3 / __nv_fp8_e5m2):
//
//   E4M3 ("FN"): sign, 4 exponent bits (bias 7), 3 mantissa bits. No
//     infinities; S.1111.111 is NaN, so the largest value is
//     S.1111.110 = 1.75 * 2^8 = 448. Smallest subnormal 2^-9.
//   E5M2: sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like:
//     exponent 11111 holds infinity (mantissa 0) and NaN. Largest value
//     1.75 * 2^15 = 57344, smallest subnormal 2^-16.
//
// Encoding rounds to nearest, ties to even, with subnormals, and saturates:
// a finite value beyond the largest goes to the largest (with its sign), as
// fp8 training recipes convert (CUDA's __NV_SATFINITE). NaN stays NaN (the
// all-ones code with its sign). An infinity is no overflow: E5M2 keeps it,
// E4M3 has none and gives NaN, so a non-finite value stays non-finite.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_FP8_H
#define EINC_RUNTIME_FP8_H

#include <cstdint>
#include <string>

namespace einrt {

enum class Fp8Format : uint8_t { E4M3, E5M2 };

struct Fp8Info {
  const char *name; // "e4m3" | "e5m2"
  int exponentBits; // 4 | 5
  int mantissaBits; // 3 | 2
  int bias;         // 7 | 15
  int emax;         // the largest finite value's exponent: 8 | 15
  int emin;         // the smallest normal's exponent: 1 - bias
  double maxFinite; // 448 | 57344
  bool hasInfinity; // E5M2 only
};
const Fp8Info &fp8Info(Fp8Format f);

/// The format named `name` ("e4m3", "e5m2"); false for any other name.
bool parseFp8Format(const std::string &name, Fp8Format &f);

/// The code of x in `f`: rounded to nearest even, saturating (above).
uint8_t fp8Encode(double x, Fp8Format f);
/// The value of a code (NaN for the NaN codes, +-infinity for E5M2's).
double fp8Decode(uint8_t code, Fp8Format f);
/// x rounded to `f`'s values: fp8Decode(fp8Encode(x, f), f), computed
/// without the codes.
double fp8Round(double x, Fp8Format f);

} // namespace einrt

#endif // EINC_RUNTIME_FP8_H
