//===- CheckpointDir.h - The directory a training run writes -----*- C++ -*-===//
//
// Before a run trains: its checkpoint directory is created, shown to take
// new files (a probe file is created and removed: permission bits alone do
// not tell, e.g. for root or on a read-only mount), and locked for the run,
// so a second run into the same directory is refused instead of training
// beside the first (both would write `last` and the log). The lock is an
// advisory fcntl(2) lock on DIR/train.lock, which holds the holder's pid and
// host for people; the kernel drops it when the process ends, however it
// ends, so a killed run leaves no stale lock. fcntl locks work across NFS
// clients (lockd) too.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CHECKPOINTDIR_H
#define EINC_RUNTIME_CHECKPOINTDIR_H

#include "runtime/base/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace einrt {

/// The lock file's name in a checkpoint directory.
inline constexpr const char *kCheckpointLockName = "train.lock";

class CheckpointDirLock {
public:
  /// Creates `dir` (and its parents), checks that files can be created in
  /// it and takes its lock. Fails naming the directory and why: Io when it
  /// cannot be created, written or locked, Unavailable when another process
  /// holds the lock (its pid, and host when another).
  static Expected<std::unique_ptr<CheckpointDirLock>> acquire(const std::string &dir);
  /// Releases the lock (the file stays); a directory this lock created and
  /// nothing else wrote into (a run refused before its first checkpoint)
  /// is removed with its lock file, as if the run had not started.
  ~CheckpointDirLock();
  /// "" when locked; else a note that the filesystem has no locks (the
  /// run goes on unlocked).
  const std::string &note() const { return unlockedNote; }
  CheckpointDirLock(const CheckpointDirLock &) = delete;
  CheckpointDirLock &operator=(const CheckpointDirLock &) = delete;

private:
  explicit CheckpointDirLock(int fd) : fd(fd) {}
  int fd;
  std::string unlockedNote;
  std::string createdDir; // the directory, when acquire created it
};

/// Removes `last.safetensors.tmp.PID` and `best.safetensors.tmp.PID` in
/// `dir` whose writer (process PID) is gone: a kill between creating the
/// temporary and renaming it leaves one (writeFileAtomically). A live
/// process's file may be a write in flight and stays. Returns the paths.
std::vector<std::string> removeStaleTemporaries(const std::string &dir);

} // namespace einrt

#endif // EINC_RUNTIME_CHECKPOINTDIR_H
