//===- StopSignals.h - SIGINT and SIGTERM: stop at the step boundary -*- C++ -*-===//
//
// While a StopSignals lives, the first SIGINT, SIGTERM or SIGUSR1 (Ctrl-C,
// a scheduler's preemption or its warning before a time limit, `kill`; Open
// MPI's mpirun passes SIGUSR1 on to every rank at once) does not end the
// process: it is recorded (received()) and a note goes to stderr at once;
// the training loop asks at each step boundary (TrainConfig::stopRequested),
// saves its checkpoint and returns. A second signal of any of them ends the
// process at once, by the signal's default action (the shell's status 128 +
// signal). The previous handlers come back when it is destroyed; one lives
// at a time.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_STOPSIGNALS_H
#define EINC_RUNTIME_STOPSIGNALS_H

#include <string>

namespace einrt {

/// The exit status of a training run that a signal stopped after saving its
/// checkpoint: EX_TEMPFAIL of sysexits.h (a temporary failure: run it again
/// with --resume). 1 stays an error, 128 + signal a run killed unsaved.
constexpr int kStoppedBySignalStatus = 75;

class StopSignals {
public:
  /// `prefix` starts the note written on the first signal ("einc train: ");
  /// quiet: no note (ranks other than 0).
  StopSignals(const std::string &prefix, bool quiet);
  ~StopSignals();
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;

  /// 0 until a signal came since the construction; then its number.
  static int received();
  /// "SIGINT", "SIGTERM", "SIGUSR1".
  static const char *name(int signal);
};

} // namespace einrt

#endif // EINC_RUNTIME_STOPSIGNALS_H
