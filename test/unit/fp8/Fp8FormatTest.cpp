//===- Fp8FormatTest.cpp - E4M3 and E5M2 against their decode tables ------===//
//
// The table of each format is built here from the bit fields alone (sign,
// exponent, mantissa, bias; E4M3: S.1111.111 is NaN and there is no
// infinity; E5M2: exponent 11111 is infinity or NaN), independently of
// runtime/core/Fp8.cpp: every code decodes to its table value and re-encodes to
// itself; every midpoint between neighbours rounds to the even code; values
// past the largest saturate to it; NaN and infinities as documented.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Fp8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace einrt;

namespace {

/// The value of `code` by the definition of the format.
double tableValue(uint8_t code, int exponentBits, int mantissaBits, bool ieee) {
  int bias = (1 << (exponentBits - 1)) - 1;
  int sign = code >> 7;
  int e = (code >> mantissaBits) & ((1 << exponentBits) - 1);
  int m = code & ((1 << mantissaBits) - 1);
  int eMax = (1 << exponentBits) - 1, mMax = (1 << mantissaBits) - 1;
  if (ieee && e == eMax)
    return m == 0 ? (sign ? -INFINITY : INFINITY) : NAN;
  if (!ieee && e == eMax && m == mMax)
    return NAN;
  double mag = e == 0 ? m * std::pow(2.0, 1 - bias - mantissaBits)
                      : (1.0 + double(m) / (1 << mantissaBits)) * std::pow(2.0, e - bias);
  return sign ? -mag : mag;
}

struct Format {
  Fp8Format f;
  int exponentBits, mantissaBits;
  bool ieee;
  double max, minSubnormal;
};

const Format kFormats[] = {
    {Fp8Format::E4M3, 4, 3, false, 448.0, std::ldexp(1.0, -9)},
    {Fp8Format::E5M2, 5, 2, true, 57344.0, std::ldexp(1.0, -16)},
};

class Fp8Format_ : public ::testing::TestWithParam<Format> {};

TEST_P(Fp8Format_, EveryCodeDecodesToItsTableValueAndReencodesToItself) {
  const Format &fmt = GetParam();
  int nans = 0;
  for (int c = 0; c < 256; ++c) {
    uint8_t code = uint8_t(c);
    double want = tableValue(code, fmt.exponentBits, fmt.mantissaBits, fmt.ieee);
    double got = fp8Decode(code, fmt.f);
    if (std::isnan(want)) {
      ++nans;
      EXPECT_TRUE(std::isnan(got)) << "code " << c;
      // NaN re-encodes to NaN with its sign.
      EXPECT_TRUE(std::isnan(fp8Decode(fp8Encode(got, fmt.f), fmt.f)));
      continue;
    }
    EXPECT_EQ(got, want) << "code " << c;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << "code " << c;
    EXPECT_EQ(fp8Encode(want, fmt.f), code) << "value " << want;
    EXPECT_EQ(fp8Round(want, fmt.f), want);
  }
  EXPECT_EQ(nans, fmt.ieee ? 6 : 2); // E5M2: 3 NaN mantissas x 2 signs; E4M3: S.1111.111
  EXPECT_EQ(fp8Info(fmt.f).maxFinite, fmt.max);
  double largest = 0, smallest = INFINITY;
  for (int c = 0; c < 128; ++c) {
    double v = tableValue(uint8_t(c), fmt.exponentBits, fmt.mantissaBits, fmt.ieee);
    if (std::isfinite(v) && v > 0) {
      largest = std::max(largest, v);
      smallest = std::min(smallest, v);
    }
  }
  EXPECT_EQ(largest, fmt.max);
  EXPECT_EQ(smallest, fmt.minSubnormal);
}

TEST_P(Fp8Format_, MidpointsRoundToTheEvenCode) {
  const Format &fmt = GetParam();
  // The non-negative finite values in code order (codes 0..127 are
  // increasing while finite).
  std::vector<std::pair<double, uint8_t>> values;
  for (int c = 0; c < 128; ++c) {
    double v = tableValue(uint8_t(c), fmt.exponentBits, fmt.mantissaBits, fmt.ieee);
    if (std::isfinite(v))
      values.push_back({v, uint8_t(c)});
  }
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    auto [lo, loCode] = values[i];
    auto [hi, hiCode] = values[i + 1];
    ASSERT_LT(lo, hi);
    double mid = (lo + hi) / 2;
    uint8_t even = (loCode % 2 == 0) ? loCode : hiCode;
    EXPECT_EQ(fp8Encode(mid, fmt.f), even) << "midpoint of " << lo << " and " << hi;
    EXPECT_EQ(fp8Encode(-mid, fmt.f), uint8_t(even | 0x80)) << "midpoint of " << -lo;
    double gap = hi - lo;
    EXPECT_EQ(fp8Encode(mid - gap / 64, fmt.f), loCode);
    EXPECT_EQ(fp8Encode(mid + gap / 64, fmt.f), hiCode);
  }
  // Below half the smallest subnormal: zero (with the sign); above: it.
  EXPECT_EQ(fp8Encode(fmt.minSubnormal / 2, fmt.f), 0x00); // a tie with 0: even
  EXPECT_EQ(fp8Encode(-fmt.minSubnormal / 4, fmt.f), 0x80);
  EXPECT_EQ(fp8Decode(fp8Encode(fmt.minSubnormal * 0.51, fmt.f), fmt.f), fmt.minSubnormal);
}

TEST_P(Fp8Format_, BeyondTheLargestSaturates) {
  const Format &fmt = GetParam();
  uint8_t maxCode = fp8Encode(fmt.max, fmt.f);
  EXPECT_EQ(fp8Decode(maxCode, fmt.f), fmt.max);
  // The spacing of the values in the top binade.
  double step = std::ldexp(1.0, int(std::floor(std::log2(fmt.max))) - fmt.mantissaBits);
  for (double x : {std::nextafter(fmt.max, INFINITY), fmt.max + step / 2, fmt.max + step,
                   fmt.max * 2, 1e30, double(std::numeric_limits<float>::max())}) {
    EXPECT_EQ(fp8Encode(x, fmt.f), maxCode) << x;
    EXPECT_EQ(fp8Encode(-x, fmt.f), uint8_t(maxCode | 0x80)) << -x;
    EXPECT_EQ(fp8Round(x, fmt.f), fmt.max);
  }
  // NaN stays NaN; an infinity is infinite in E5M2 and NaN in E4M3.
  EXPECT_TRUE(std::isnan(fp8Round(NAN, fmt.f)));
  double inf = fp8Round(INFINITY, fmt.f), minusInf = fp8Round(-INFINITY, fmt.f);
  if (fmt.ieee) {
    EXPECT_EQ(inf, INFINITY);
    EXPECT_EQ(minusInf, -INFINITY);
  } else {
    EXPECT_TRUE(std::isnan(inf));
    EXPECT_TRUE(std::isnan(minusInf));
  }
}

TEST_P(Fp8Format_, RoundIsDecodeOfEncode) {
  // Log-uniform magnitudes from far below the smallest subnormal to far
  // above the max, both signs.
  const Format &fmt = GetParam();
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> exponent(-30, 30);
  for (int i = 0; i < 100000; ++i) {
    double x = std::exp2(exponent(gen)) * (i % 2 ? -1 : 1);
    double want = fp8Decode(fp8Encode(x, fmt.f), fmt.f);
    ASSERT_EQ(fp8Round(x, fmt.f), want) << x;
    ASSERT_EQ(std::signbit(fp8Round(x, fmt.f)), std::signbit(want)) << x;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8Format_, ::testing::ValuesIn(kFormats),
                         [](const ::testing::TestParamInfo<Format> &info) {
                           return std::string(fp8Info(info.param.f).name);
                         });

TEST(Fp8Format, KnownCodes) {
  EXPECT_EQ(fp8Encode(448, Fp8Format::E4M3), 0x7E);
  EXPECT_EQ(fp8Encode(1.0, Fp8Format::E4M3), 0x38);
  EXPECT_EQ(fp8Encode(std::ldexp(1.0, -9), Fp8Format::E4M3), 0x01);
  EXPECT_EQ(fp8Encode(57344, Fp8Format::E5M2), 0x7B);
  EXPECT_EQ(fp8Encode(1.0, Fp8Format::E5M2), 0x3C);
  EXPECT_EQ(fp8Encode(INFINITY, Fp8Format::E5M2), 0x7C);
  EXPECT_EQ(fp8Encode(NAN, Fp8Format::E4M3) & 0x7F, 0x7F);
  Fp8Format f;
  EXPECT_TRUE(parseFp8Format("e5m2", f) && f == Fp8Format::E5M2);
  EXPECT_FALSE(parseFp8Format("e3m4", f));
}

} // namespace
