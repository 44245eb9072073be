//===- FloatFormats.cpp - bf16 and IEEE half rounding ---------------------===//
#include "runtime/core/FloatFormats.h"

#include <algorithm>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <cmath>
#include <cstring>
#include <limits>

namespace einrt {

namespace {

/// Rounds x to a binary format with `precision` significand bits (including
/// the implicit one), minimum normal exponent `emin` and largest finite
/// value `maxFinite`; ties to even.
double roundToFormat(double x, int precision, int emin, double maxFinite) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  int e;
  std::frexp(x, &e); // x = m * 2^e, 0.5 <= |m| < 1
  int exp = e - 1;   // x = 1.f * 2^exp
  if (exp < emin)
    exp = emin; // subnormal: fixed quantum
  int shift = exp - (precision - 1);
  // x / 2^shift is exact in double; nearbyint rounds ties to even in the
  // default rounding mode.
  double q = std::nearbyint(std::ldexp(x, -shift));
  double r = std::ldexp(q, shift);
  if (std::fabs(r) > maxFinite)
    return std::copysign(std::numeric_limits<double>::infinity(), x);
  if (r == 0)
    return std::copysign(0.0, x);
  return r;
}

} // namespace

double roundToBF16(double x) { return roundToFormat(x, 8, -126, 0x1.FEp127); }

double roundToF16(double x) { return roundToFormat(x, 11, -14, 65504.0); }

double roundToF32(double x) {
  if (std::isnan(x))
    return x;
  return double(float(x));
}

double roundToDType(double x, DType t) {
  switch (t) {
  case DType::BF16:
    return roundToBF16(x);
  case DType::F16:
    return roundToF16(x);
  case DType::F32:
    return roundToF32(x);
  default:
    return x;
  }
}

int32_t truncToI32(double x) {
  if (std::isnan(x))
    return 0;
  if (x >= 2147483647.0)
    return std::numeric_limits<int32_t>::max();
  if (x <= -2147483648.0)
    return std::numeric_limits<int32_t>::min();
  return int32_t(x); // truncates toward zero, in range
}

namespace {

uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace

uint32_t stochasticBits(int32_t seed, int64_t index) {
  uint64_t i = uint64_t(index);
  uint32_t k = mix32(uint32_t(seed) + uint32_t(i >> 32) * 0x85EBCA77u);
  return mix32(uint32_t(i) * 0x9E3779B1u + k);
}

float stochasticRoundBF16(float x, uint32_t bits) {
  uint32_t u = bitsOf(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) // NaN
    return floatOf((u & 0x80000000u) | 0x7FC00000u);
  return floatOf((u + (bits >> 16)) & 0xFFFF0000u);
}

float stochasticRoundF16(float x, uint32_t bits) {
  float a = std::fabs(x);
  int e = int((bitsOf(a) >> 23) & 0xFF) - 127;
  int qe = std::max(e, -14) - 10;                   // in [-24, 118]
  float q = floatOf(uint32_t(qe + 127) << 23);      // 2^qe
  float inv = floatOf(uint32_t(127 - qe) << 23);    // 2^-qe, normal too
  float s = a * inv;                                // exact
  float lo = std::floor(s);                         // exact
  float frac = s - lo;                              // exact, in [0, 1)
  float draw = float(bits >> 8) * 0x1p-24f;         // exact, in [0, 1)
  float r = (lo + (draw < frac ? 1.0f : 0.0f)) * q; // exact below 2^128
  return std::copysign(r, x);
}

void widenBF16(const uint16_t *in, float *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = floatOf(uint32_t(in[i]) << 16);
}

void narrowToBF16(const float *in, uint16_t *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = bitsOf(in[i]);
    uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1)) >> 16;
    bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
    out[i] = uint16_t(nan ? ((u >> 16) & 0x8000u) | 0x7FC0u : rounded);
  }
}

namespace {

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void widenF16C(const uint16_t *in, float *out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
  for (; i < n; ++i)
    out[i] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(in[i])));
}

__attribute__((target("avx,f16c"))) void narrowF16C(const float *in, uint16_t *out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i)
    out[i] =
        uint16_t(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(in[i]), _MM_FROUND_TO_NEAREST_INT), 0));
}

bool hasF16C() {
  static const bool has = __builtin_cpu_supports("f16c");
  return has;
}
#else
bool hasF16C() { return false; }
void widenF16C(const uint16_t *, float *, int64_t) {}
void narrowF16C(const float *, uint16_t *, int64_t) {}
#endif

} // namespace

void widenF16(const uint16_t *in, float *out, int64_t n) {
  if (hasF16C())
    return widenF16C(in, out, n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = float(f16FromBits(in[i]));
}

void narrowToF16(const float *in, uint16_t *out, int64_t n) {
  if (hasF16C())
    return narrowF16C(in, out, n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = f16Bits(double(in[i]));
}

uint16_t bf16Bits(double x) {
  if (std::isnan(x))
    return std::signbit(x) ? 0xFFC0 : 0x7FC0;
  float f = float(roundToBF16(x)); // exact: the value is a bf16
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t(u >> 16);
}

double bf16FromBits(uint16_t bits) {
  uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t f16Bits(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x))
    return sign | 0x7E00;
  double r = std::fabs(roundToF16(x));
  if (std::isinf(r))
    return sign | 0x7C00;
  if (r == 0)
    return sign;
  if (r < 0x1p-14) // subnormal: multiples of 2^-24
    return sign | uint16_t(std::ldexp(r, 24));
  int e;
  double m = std::frexp(r, &e); // r = m * 2^e, m in [0.5, 1)
  int exp = e - 1;
  uint16_t mant = uint16_t((m * 2 - 1) * 1024);
  return sign | uint16_t((exp + 15) << 10) | mant;
}

double f16FromBits(uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int exp = (bits >> 10) & 0x1F;
  int mant = bits & 0x3FF;
  if (exp == 0x1F)
    return mant ? std::numeric_limits<double>::quiet_NaN()
                : sign * std::numeric_limits<double>::infinity();
  if (exp == 0)
    return sign * std::ldexp(double(mant), -24);
  return sign * std::ldexp(double(mant + 1024), exp - 25);
}

} // namespace einrt
