//===- RunnerOptions.h - einc's command line as the runner's options -*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_RUNNEROPTIONS_H
#define EINC_TOOLS_EINC_RUNNEROPTIONS_H

#include "Options.h"

#include "tools/runner/RunOptions.h"

namespace einc {

/// What the runner reads of `o` (tools/runner/RunOptions.h): the one place
/// einc and the executables hand their command line to the runner.
runner::RunOptions runOptions(const Options &o);

} // namespace einc

#endif // EINC_TOOLS_EINC_RUNNEROPTIONS_H
