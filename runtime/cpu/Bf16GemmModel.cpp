//===- Bf16GemmModel.cpp - A scalar model of the VDPBF16PS GEMM kernel ----===//
//
// The instruction's arithmetic in portable C++ (runtime/cpu/Bf16Gemm.h says what
// it is). One step, acc + x·y rounded once to f32 with DAZ and FTZ, is
// computed exactly in double: the product of two bf16 values (8-bit
// significands) is exact in double, the sum with the f32 accumulator is
// made exact by TwoSum and then rounded to odd, which a single conversion to
// f32 rounds correctly (53 >= 24 + 2 bits). Tininess (for FTZ) is judged
// after rounding, on the value scaled into f32's normal range.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Bf16Gemm.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace einrt {

namespace {

uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
float floatOf(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
uint64_t bitsOf(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return u;
}

/// f32 bits with a denormal read as zero of its sign (DAZ).
double daz(uint32_t u) {
  if ((u & 0x7F800000u) == 0)
    u &= 0x80000000u;
  return floatOf(u);
}

/// acc + x·y (x, y bf16 bits), as one FMA of the instruction.
float step(float acc, uint16_t x, uint16_t y) {
  const double a = daz(bitsOf(acc));
  const double p = daz(uint32_t(x) << 16) * daz(uint32_t(y) << 16); // exact
  if (!std::isfinite(a) || !std::isfinite(p))
    return float(a + p); // infinities and NaNs (NaN payloads not modelled)
  double s = a + p;
  if (s == 0)
    return float(s); // exact zero: IEEE's sign rule, as the hardware's
  // TwoSum: s + err == a + p exactly (no overflow in double's range).
  const double bb = s - a;
  const double err = (a - (s - bb)) + (p - bb);
  // Round to odd: of the two doubles around a + p, the one with an odd last
  // bit, so that converting to f32 rounds as if from the exact value.
  if (err != 0 && (bitsOf(s) & 1) == 0)
    s = std::nextafter(s, err > 0 ? std::numeric_limits<double>::infinity()
                                  : -std::numeric_limits<double>::infinity());
  if (std::fabs(s) < 0x1p-126) {
    // Tiny after rounding (to 24 bits, unbounded exponent) flushes to zero;
    // else the value rounded up to the smallest normal.
    const float scaled = float(s * 0x1p64); // exact scaling, f32-normal range
    if (std::fabs(scaled) < 0x1p-62f)
      return s < 0 ? -0.0f : 0.0f;
    return float(double(scaled) * 0x1p-64);
  }
  return float(s); // RNE; beyond f32's range: infinity
}

} // namespace

float dpbf16Lane(float acc, uint32_t a, uint32_t b) {
  acc = step(acc, uint16_t(a >> 16), uint16_t(b >> 16)); // the odd (high) element first
  return step(acc, uint16_t(a & 0xFFFFu), uint16_t(b & 0xFFFFu));
}

void bf16ModelTile(const uint32_t *pa, const uint32_t *pb, int64_t kp, float *tile) {
  for (int64_t r = 0; r < kBf16BlockRows; ++r)
    for (int64_t q = 0; q < kBf16PanelCols; ++q) {
      float acc = 0.0f;
      for (int64_t p = 0; p < kp; ++p)
        acc = dpbf16Lane(acc, pa[p * kBf16BlockRows + r], pb[p * kBf16PanelCols + q]);
      tile[r * kBf16PanelCols + q] = acc;
    }
}

} // namespace einrt
