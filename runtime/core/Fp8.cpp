//===- Fp8.cpp - The fp8 formats E4M3 and E5M2 ----------------------------===//
#include "runtime/core/Fp8.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace einrt {
namespace {

const Fp8Info kE4M3 = {"e4m3", 4, 3, 7, 8, -6, 448.0, false};
const Fp8Info kE5M2 = {"e5m2", 5, 2, 15, 15, -14, 57344.0, true};

/// The NaN code with `sign` (the all-ones exponent and mantissa).
uint8_t nanCode(uint8_t sign) { return uint8_t(sign | 0x7F); }

/// a rounded to the nearest integer, ties to even (a >= 0, below 2^52).
double roundHalfEven(double a) {
  double f = std::floor(a);
  double frac = a - f;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(f, 2.0) != 0.0))
    f += 1.0;
  return f;
}

/// |x| (finite, nonzero) rounded to the format's values, saturating.
double roundMagnitude(double a, const Fp8Info &in) {
  // The spacing of the format's values near a: 2^(e - mantissaBits), with e
  // the exponent of a, no smaller than emin (the subnormals' spacing).
  int e;
  std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1): the exponent is e - 1
  e = std::max(e - 1, in.emin);
  double quantum = std::ldexp(1.0, e - in.mantissaBits);
  double v = roundHalfEven(a / quantum) * quantum; // exact: a / quantum < 2^(m+2)
  return v > in.maxFinite ? in.maxFinite : v;
}

} // namespace

const Fp8Info &fp8Info(Fp8Format f) { return f == Fp8Format::E4M3 ? kE4M3 : kE5M2; }

bool parseFp8Format(const std::string &name, Fp8Format &f) {
  if (name == "e4m3")
    f = Fp8Format::E4M3;
  else if (name == "e5m2")
    f = Fp8Format::E5M2;
  else
    return false;
  return true;
}

uint8_t fp8Encode(double x, Fp8Format f) {
  const Fp8Info &in = fp8Info(f);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x))
    return nanCode(sign);
  double a = std::fabs(x);
  if (std::isinf(a))
    return in.hasInfinity ? uint8_t(sign | (((1 << in.exponentBits) - 1) << in.mantissaBits))
                          : nanCode(sign);
  if (a == 0)
    return sign;
  double v = roundMagnitude(a, in);
  if (v == 0)
    return sign;
  int e;
  // v is a value of the format: encode it.
  std::frexp(v, &e);
  e -= 1;
  uint32_t exponentField, mantissa;
  if (e < in.emin) { // subnormal: v = mantissa * 2^(emin - mantissaBits)
    exponentField = 0;
    mantissa = uint32_t(std::ldexp(v, in.mantissaBits - in.emin));
  } else {
    exponentField = uint32_t(e + in.bias);
    mantissa = uint32_t(std::ldexp(v, in.mantissaBits - e)) - (1u << in.mantissaBits);
  }
  return uint8_t(sign | (exponentField << in.mantissaBits) | mantissa);
}

double fp8Decode(uint8_t code, Fp8Format f) {
  const Fp8Info &in = fp8Info(f);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const uint32_t mantissaMask = (1u << in.mantissaBits) - 1;
  const uint32_t exponentMax = (1u << in.exponentBits) - 1;
  uint32_t mantissa = code & mantissaMask;
  uint32_t exponentField = (code & 0x7F) >> in.mantissaBits;
  if (in.hasInfinity && exponentField == exponentMax)
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  if (!in.hasInfinity && (code & 0x7F) == 0x7F)
    return std::numeric_limits<double>::quiet_NaN();
  if (exponentField == 0)
    return sign * std::ldexp(double(mantissa), in.emin - in.mantissaBits);
  return sign * std::ldexp(double(mantissa | (1u << in.mantissaBits)),
                           int(exponentField) - in.bias - in.mantissaBits);
}

double fp8Round(double x, Fp8Format f) {
  // decode(encode(x)) without the codes (the quantiser's inner loop).
  const Fp8Info &in = fp8Info(f);
  if (std::isnan(x))
    return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(x))
    return in.hasInfinity ? x : std::numeric_limits<double>::quiet_NaN();
  if (x == 0)
    return x;
  return std::copysign(roundMagnitude(std::fabs(x), in), x);
}

} // namespace einrt
