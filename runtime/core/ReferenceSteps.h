//===- ReferenceSteps.h - Reference-kernel steps on host storage -*- C++ -*-===//
//
// Runs one step whose kind the reference kernels implement (StepKinds.def's
// Runner column: Reference) on buffers held in host memory, dispatching from
// the step-kind table. Float buffers are stored as F (float or double,
// whatever their Program dtype); i32 as int32_t, i1 as uint8_t (0/1). A
// value written to a bf16/f16 buffer by a cast is rounded to that format.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_REFERENCESTEPS_H
#define EINC_RUNTIME_REFERENCESTEPS_H

#include "runtime/core/Device.h"
#include "runtime/core/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// Element i as a double, from storage whose floats are F.
template <class F> double loadElement(const DeviceSpan &b, int64_t i);
/// Stores v into element i: rounded to bf16/f16 for those dtypes, float to
/// i32 truncating and saturating, i1 as v != 0.
template <class F> void storeElement(const DeviceSpan &b, int64_t i, double v);

/// Runs `s` (validated, a Reference kind): `inputs` in the step's order.
/// Invalid on a data-dependent failure (a bad gather index, integer
/// division by zero); Internal for a kind the reference kernels do not run.
template <class F>
Status runReferenceStep(const Step &s, const std::vector<DeviceSpan> &inputs,
                        const DeviceSpan &output);

} // namespace einrt

#endif // EINC_RUNTIME_REFERENCESTEPS_H
