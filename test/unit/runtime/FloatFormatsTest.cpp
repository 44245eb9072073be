//===- FloatFormatsTest.cpp - bf16 / f16 rounding and encoding ------------===//
#include "runtime/core/FloatFormats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace einrt;

namespace {
/// bf16 by the classic bit trick on f32 (round to nearest even), for
/// comparison on values already representable as float.
uint16_t bf16ByBitTrick(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}
} // namespace

TEST(FloatFormats, BF16KnownValues) {
  EXPECT_EQ(bf16Bits(1.0), 0x3F80);
  EXPECT_EQ(bf16Bits(-2.0), 0xC000);
  EXPECT_EQ(bf16Bits(0.0), 0x0000);
  EXPECT_EQ(bf16Bits(-0.0), 0x8000);
  EXPECT_EQ(bf16Bits(std::numeric_limits<double>::infinity()), 0x7F80);
  EXPECT_EQ(bf16Bits(3.4e38), 0x7F80); // overflows to infinity
  EXPECT_EQ(bf16Bits(0x1.FEp127), 0x7F7F);
  uint16_t nan = bf16Bits(std::nan(""));
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x7F, 0);
  EXPECT_TRUE(std::isnan(bf16FromBits(nan)));
  EXPECT_EQ(roundToBF16(1 + std::ldexp(1, -8)), 1.0);                       // tie → even
  EXPECT_EQ(roundToBF16(1 + 3 * std::ldexp(1, -8)), 1 + std::ldexp(1, -6)); // tie → even
  EXPECT_EQ(roundToBF16(-(1 + 3 * std::ldexp(1, -8))), -(1 + std::ldexp(1, -6)));
}

TEST(FloatFormats, BF16AgreesWithTheBitTrickOnFloats) {
  uint64_t state = 1;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t u = uint32_t(state >> 32);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f))
      continue;
    ASSERT_EQ(bf16Bits(f), bf16ByBitTrick(f)) << std::hex << u;
  }
}

TEST(FloatFormats, BF16RoundTripsEveryPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    double v = bf16FromBits(uint16_t(b));
    if (std::isnan(v))
      continue;
    ASSERT_EQ(bf16Bits(v), b) << std::hex << b;
    ASSERT_EQ(roundToBF16(v), v);
  }
}

TEST(FloatFormats, F16KnownValues) {
  EXPECT_EQ(f16Bits(1.0), 0x3C00);
  EXPECT_EQ(f16Bits(-2.0), 0xC000);
  EXPECT_EQ(f16Bits(65504.0), 0x7BFF);
  EXPECT_EQ(f16Bits(65519.0), 0x7BFF);
  EXPECT_EQ(f16Bits(65520.0), 0x7C00); // ties away from max → inf
  EXPECT_EQ(f16Bits(std::ldexp(1, -24)), 0x0001);
  EXPECT_EQ(f16Bits(std::ldexp(1, -25)), 0x0000);     // tie → even (0)
  EXPECT_EQ(f16Bits(3 * std::ldexp(1, -25)), 0x0002); // tie → even (2)
  EXPECT_EQ(f16Bits(std::ldexp(1, -14)), 0x0400);     // smallest normal
  EXPECT_EQ(f16Bits(0.1), 0x2E66);
  EXPECT_EQ(f16Bits(-0.0), 0x8000);
  EXPECT_EQ(f16Bits(std::nan("")) & 0x7E00, 0x7E00);
  EXPECT_EQ(f16FromBits(0x3555), 0.333251953125);
  EXPECT_EQ(f16FromBits(0xFC00), -std::numeric_limits<double>::infinity());
}

TEST(FloatFormats, F16RoundTripsEveryPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    double v = f16FromBits(uint16_t(b));
    if (std::isnan(v))
      continue;
    ASSERT_EQ(f16Bits(v), b) << std::hex << b;
  }
}

TEST(FloatFormats, TruncToI32) {
  EXPECT_EQ(truncToI32(2.9), 2);
  EXPECT_EQ(truncToI32(-2.9), -2);
  EXPECT_EQ(truncToI32(std::nan("")), 0);
  EXPECT_EQ(truncToI32(1e300), 2147483647);
  EXPECT_EQ(truncToI32(-1e300), -2147483647 - 1);
  EXPECT_EQ(truncToI32(-2147483648.0), -2147483647 - 1);
}
