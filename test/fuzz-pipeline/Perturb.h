//===- Perturb.h - The reference with the CPU's ulps of exp, log, tanh -*- C++ -*-===//
//
// The CPU backend computes exp, log, tanh and pow with polynomials a few ulps
// from libm, which the reference backend calls (measured: up to 4 ulps for
// tanh, biased by a third of an ulp near saturation). Where a result is
// sensitive to those ulps (tanh's derivative 1 - y², near y = 1, loses all but
// a few bits), nudging the inputs does not show it: a saturated tanh does not
// move. So the noise samples (Compare.h) also run the reference on a copy of
// the function whose every exp/log/tanh/pow result is scaled by 1 ± 2^-23
// (about an ulp): all up, all down, or each element at random.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_PERTURB_H
#define EINC_TEST_FUZZ_PIPELINE_PERTURB_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>

namespace einc::pipelinefuzz {

enum class UlpNudge { Up, Down, Random };
constexpr UlpNudge kUlpNudges[] = {UlpNudge::Up, UlpNudge::Down, UlpNudge::Random};

/// A copy of `module` with every exp, log, tanh and pow result of its float
/// functions multiplied by 1 + s 2^-23 (s = +1, -1, or ±1 per element).
mlir::OwningOpRef<mlir::ModuleOp> nudgeTranscendentals(mlir::ModuleOp module, UlpNudge how,
                                                       uint64_t seed);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_PERTURB_H
