//===- Fp8Quantize.cpp - The reference kernel of ein.quantize -------------===//
#include "runtime/core/Fp8Quantize.h"

#include "runtime/core/ReferenceSteps.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace einrt {

double fp8Scale(double amax, Fp8Format f, bool block) {
  if (!(amax > 0) || !std::isfinite(amax))
    return 1.0;
  const Fp8Info &in = fp8Info(f);
  if (!block) {
    float s = float(amax / in.maxFinite);
    return s > 0 ? double(s) : double(std::numeric_limits<float>::denorm_min());
  }
  int e;
  std::frexp(amax, &e); // amax = m * 2^e, m in [0.5, 1): floor(log2 amax) = e - 1
  return std::ldexp(1.0, std::clamp(e - 1 - in.emax, -127, 127));
}

namespace {

double largestFinite(const double *x, int64_t count, int64_t stride) {
  double amax = 0;
  for (int64_t i = 0; i < count; ++i) {
    double a = std::fabs(x[i * stride]);
    if (std::isfinite(a))
      amax = std::max(amax, a);
  }
  return amax;
}

void quantizeGroup(const double *x, double *y, int64_t count, int64_t stride, Fp8Format f,
                   double scale) {
  for (int64_t i = 0; i < count; ++i)
    y[i * stride] = fp8Round(x[i * stride] / scale, f) * scale;
}

} // namespace

void fakeQuantize(const double *x, double *y, const std::vector<int64_t> &shape, Fp8Format f,
                  int64_t block, int64_t axis) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  if (block <= 0) {
    quantizeGroup(x, y, count, 1, f, fp8Scale(largestFinite(x, count, 1), f, false));
    return;
  }
  // [outer, n, inner] around `axis`: a block is `block` elements `inner` apart.
  int64_t outer = 1, inner = 1, n = shape[size_t(axis)];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d)
    inner *= shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t start = 0; start < n; start += block) {
        int64_t len = std::min(block, n - start);
        int64_t first = (o * n + start) * inner + i;
        double scale = fp8Scale(largestFinite(x + first, len, inner), f, true);
        quantizeGroup(x + first, y + first, len, inner, f, scale);
      }
}

template <class F>
Status quantizeStep(const QuantizeSpec &spec, const DeviceSpan &in, const DeviceSpan &out) {
  std::vector<double> v(size_t(in.count));
  for (int64_t i = 0; i < in.count; ++i)
    v[size_t(i)] = loadElement<F>(in, i);
  if (spec.format != "none") {
    Fp8Format f;
    if (!parseFp8Format(spec.format, f))
      return Status::invalid("unknown fp8 format '" + spec.format + "'");
    fakeQuantize(v.data(), v.data(), *out.shape, f, spec.block, spec.axis);
  }
  for (int64_t i = 0; i < out.count; ++i)
    storeElement<F>(out, i, v[size_t(i)]); // a bf16/f16 result rounded once
  return Status::success();
}

template Status quantizeStep<float>(const QuantizeSpec &, const DeviceSpan &, const DeviceSpan &);
template Status quantizeStep<double>(const QuantizeSpec &, const DeviceSpan &, const DeviceSpan &);

} // namespace einrt
