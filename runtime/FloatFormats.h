//===- FloatFormats.h - bf16 and IEEE half rounding and bit conversion ----===//
//
// Round-to-nearest-even conversions between double and the 16-bit float
// formats, with correct subnormals, overflow to infinity and NaN handling.
// Values are rounded once, straight from double (no double rounding via f32).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_FLOATFORMATS_H
#define EINC_RUNTIME_FLOATFORMATS_H

#include "runtime/Program.h"

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

uint16_t bf16Bits(double x); // rounds, then encodes
double bf16FromBits(uint16_t bits);
uint16_t f16Bits(double x); // rounds, then encodes
double f16FromBits(uint16_t bits);

} // namespace einrt

#endif // EINC_RUNTIME_FLOATFORMATS_H
