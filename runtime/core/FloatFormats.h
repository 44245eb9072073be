//===- FloatFormats.h - bf16 and IEEE half rounding and bit conversion ----===//
//
// Round-to-nearest-even conversions between double and the 16-bit float
// formats, with correct subnormals, overflow to infinity and NaN handling.
// Values are rounded once, straight from double (no double rounding via f32).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_FLOATFORMATS_H
#define EINC_RUNTIME_FLOATFORMATS_H

#include "runtime/core/Program.h"

#include <cstdint>

namespace einrt {

/// x rounded to the nearest bf16 value (ties to even), as a double.
double roundToBF16(double x);
/// x rounded to the nearest IEEE binary16 value (ties to even), as a double.
double roundToF16(double x);
/// x rounded to the nearest f32 value.
double roundToF32(double x);
/// Rounds x to what a buffer of dtype t can hold: floats to their format,
/// other types unchanged.
double roundToDType(double x, DType t);

/// Float to i32: truncation toward zero, NaN → 0, saturating at the i32
/// range (never undefined behaviour).
int32_t truncToI32(double x);

/// ein.stochastic_round (ir/EinOps.td), bit for bit; every backend's kernel
/// computes exactly these. The random bits of element `index` under `seed`:
///   k    = mix32(uint32(seed) + uint32(index >> 32) * 0x85EBCA77)
///   bits = mix32(uint32(index) * 0x9E3779B1 + k)
/// with mix32 murmur3's finaliser (h ^= h >> 16; h *= 0x85EBCA6B;
/// h ^= h >> 13; h *= 0xC2B2AE35; h ^= h >> 16), all arithmetic mod 2^32.
/// For one seed, distinct indices below 2^32 get distinct bits.
uint32_t stochasticBits(int32_t seed, int64_t index);
/// The i32 that @train_step's `seed` argument (the dropout masks' key,
/// passes/Dropout.h) holds for a run's seed: its two 32-bit halves xor-ed.
inline int32_t dropoutSeed(uint64_t seed) { return int32_t(uint32_t(seed) ^ uint32_t(seed >> 32)); }
/// x rounded to a neighbouring bf16 value with `bits` as the random draw: the
/// f32 encoding plus bits >> 16, its low 16 bits cleared (up with
/// probability (x - lower) / (upper - lower), exactly). NaN gives the quiet
/// NaN with x's sign; infinities and bf16 values are kept.
float stochasticRoundBF16(float x, uint32_t bits);
/// The same for IEEE half, in f32 arithmetic that is exact at every step:
/// q = 2^(max(e, -14) - 10) the f16 spacing at |x| (e its f32 exponent),
/// s = |x| / q, up when (bits >> 8) · 2^-24 < s - floor(s); the result
/// (floor(s) + up) · q with x's sign. Unbiased for |x| >= 2^-24; beyond
/// 65504 it may reach 65536, which a half buffer holds as infinity.
float stochasticRoundF16(float x, uint32_t bits);

/// Whole buffers between f32 and the 16-bit formats (the cpu device's GEMM
/// operands): widening is exact; narrowing rounds to nearest even as
/// bf16Bits / f16Bits do (f16 through F16C where the CPU has it).
void widenBF16(const uint16_t *in, float *out, int64_t n);
void widenF16(const uint16_t *in, float *out, int64_t n);
void narrowToBF16(const float *in, uint16_t *out, int64_t n);
void narrowToF16(const float *in, uint16_t *out, int64_t n);

uint16_t bf16Bits(double x); // rounds, then encodes
double bf16FromBits(uint16_t bits);
uint16_t f16Bits(double x); // rounds, then encodes
double f16FromBits(uint16_t bits);

} // namespace einrt

#endif // EINC_RUNTIME_FLOATFORMATS_H
