//===- Fp8Quantize.h - The reference kernel of ein.quantize -----*- C++ -*-===//
//
// Fake quantisation to scaled fp8 (ir/EinOps.td, ein.quantize): every
// element becomes s * q(x / s), q the rounding to the format (runtime/core/Fp8.h)
// and s its group's scale: per block of `block` consecutive elements along
// `axis`, the power of two 2^(floor(log2(amax)) - emax) clamped to
// [2^-127, 2^127] (E8M0, MXFP8); with block 0 one f32 scale amax / max for
// the tensor. amax is the group's largest finite |x|; a group without a
// nonzero finite element has scale 1. Arithmetic in f64. The step kind is
// "quantize" (runtime/core/StepKinds.def), run by the reference kernels on the
// reference and CPU devices.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_FP8QUANTIZE_H
#define EINC_RUNTIME_FP8QUANTIZE_H

#include "runtime/core/Device.h"
#include "runtime/core/Fp8.h"
#include "runtime/core/StepPayloads.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// The scale of a group whose largest finite |x| is `amax`: a power of two
/// for blocks, amax / max rounded to f32 for a tensor (block = false).
double fp8Scale(double amax, Fp8Format f, bool block);

/// y = the fake quantisation of x (row-major, `shape`) by block/axis as
/// above; x and y may be the same array.
void fakeQuantize(const double *x, double *y, const std::vector<int64_t> &shape, Fp8Format f,
                  int64_t block, int64_t axis);

/// The "quantize" step on host storage of floats F (the step validated):
/// `in` is read with `out`'s shape (it may be a reshape's input, the same
/// row-major elements); `spec.format` "none" copies. Invalid for a format
/// name the kernel does not know.
template <class F>
Status quantizeStep(const QuantizeSpec &spec, const DeviceSpan &in, const DeviceSpan &out);

} // namespace einrt

#endif // EINC_RUNTIME_FP8QUANTIZE_H
