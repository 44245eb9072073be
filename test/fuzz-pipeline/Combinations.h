//===- Combinations.h - The settings one program is checked under -*- C++ -*-===//
//
// Each program is checked under one combination of the compiled settings,
// drawn from its seed: a precision policy, an fp8 mode, a remat policy, a
// fusion setting and an optimizer other than its own. Each is drawn on its
// own stream, so that over many programs every pair of values meets (the
// settings interact: a narrow policy's casts in a row kernel that remat
// clones). The choices are the settings table's (runtime/base/TrainSettings.h),
// so a new policy is drawn without a change here; remat's parametrised
// policies take the instances below.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_COMBINATIONS_H
#define EINC_TEST_FUZZ_PIPELINE_COMBINATIONS_H

#include "runtime/base/TrainSettings.h"

#include <cstdint>
#include <string>

namespace einc::pipelinefuzz {

struct Combination {
  std::string precision, fp8, remat, fusion; // fusion: never `off` (the baseline)
  std::string optimizer;
  double momentum = 0; // sgd's (with or without)

  /// "precision bf16-mixed, fp8 none, remat selective, fusion all, optimizer sgd with momentum"
  std::string label() const;
  /// `base` (a program's settings) with every drawn setting applied.
  einrt::TrainSettings applied(const einrt::TrainSettings &base) const;
};

/// The combination of program `seed`, whose own settings are `program`.
Combination drawCombination(uint64_t seed, const einrt::TrainSettings &program);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_COMBINATIONS_H
