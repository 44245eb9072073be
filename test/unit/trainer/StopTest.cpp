//===- StopTest.cpp - Stopping on a signal; the checkpoint directory's lock ===//
//
// A stop asked for after a step saves and logs that step and resumes bit for
// bit; on N ranks one rank's stop stops all after the same step. The
// signal handlers (in a child process: the second signal ends it), and the
// checkpoint directory: created, refused when unwritable, locked against a
// second process.
//
//===----------------------------------------------------------------------===//
#include "DistributedTestUtil.h"
#include "runtime/io/Checkpoint.h"
#include "runtime/io/CheckpointDir.h"
#include "runtime/train/StopSignals.h"

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace einrt;
using namespace einrt::test;

namespace {

int64_t checkpointStep(const std::string &path) {
  auto ck = readCheckpoint(path);
  EXPECT_TRUE(ck.ok()) << ck.status().message();
  return ck.ok() ? ck->info.step : -1;
}

// Asked after step 4 (log_every 100, no checkpoint due): step 4 is saved and
// logged, and the resume to 10 is the uninterrupted run.
TEST(Stop, SavesAndLogsTheStepAndResumesBitForBit) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TrainConfig c = config(10, 1);
  c.schedule.total = 10;
  RankOutcome whole = trainAlone(model, data, 2, c);
  ASSERT_TRUE(whole.error.empty()) << whole.error;

  TempDir d;
  c.checkpointDir = d.file("ck");
  c.logPath = d.file("log.jsonl");
  c.logEvery = 100;
  int calls = 0;
  c.stopRequested = [&] { return ++calls == 4; };
  RankOutcome stopped = trainAlone(model, data, 2, c);
  ASSERT_TRUE(stopped.error.empty()) << stopped.error;
  EXPECT_TRUE(stopped.result.stopped);
  EXPECT_EQ(stopped.result.lastStep, 4);
  EXPECT_EQ(checkpointStep(d.file("ck/last.safetensors")), 4);
  std::ifstream log(c.logPath);
  std::string line, lastLine;
  while (std::getline(log, line))
    lastLine = line;
  EXPECT_EQ(lastLine.rfind("{\"step\":4,", 0), 0u) << lastLine;

  c.stopRequested = nullptr;
  c.resume = true;
  RankOutcome rest = trainAlone(model, data, 2, c);
  ASSERT_TRUE(rest.error.empty()) << rest.error;
  EXPECT_FALSE(rest.result.stopped);
  EXPECT_TRUE(sameBits(rest.state, whole.state));
}

// One rank of three asks after step 4 (which one is a race: the first to
// claim it): all stop after step 4, rank 0 saves it, and two ranks resume it
// to the one-process run.
TEST(Stop, OneRanksStopStopsEveryRankAfterTheSameStep) {
  Data data;
  TinyModel model;
  model.batch = 2;
  TrainConfig c = config(10, 1);
  c.schedule.total = 10;
  RankOutcome whole = trainAlone(model, data, 6, c);
  ASSERT_TRUE(whole.error.empty()) << whole.error;

  TempDir d;
  c.checkpointDir = d.path;
  std::atomic<bool> claimed{false};
  c.stopRequested = [&] {
    static thread_local int calls = 0; // each rank is a thread of its own
    return ++calls == 4 && !claimed.exchange(true);
  };
  auto ranks = trainOnRanks(model, data, 3, 2, c);
  EXPECT_TRUE(claimed.load());
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(ranks[size_t(r)].error.empty()) << r << ": " << ranks[size_t(r)].error;
    EXPECT_TRUE(ranks[size_t(r)].result.stopped) << r;
    EXPECT_EQ(ranks[size_t(r)].result.lastStep, 4) << r;
  }
  EXPECT_EQ(checkpointStep(d.file("last.safetensors")), 4);

  c.stopRequested = nullptr;
  c.resume = true;
  auto rest = trainOnRanks(model, data, 2, 3, c);
  for (const auto &o : rest)
    ASSERT_TRUE(o.error.empty()) << o.error;
  EXPECT_TRUE(sameBits(rest[0].state, whole.state));
}

// In a child: the first signal is recorded and the process goes on; the
// second ends it by that signal.
TEST(StopSignals, FirstIsRecordedSecondEndsTheProcess) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StopSignals signals("", /*quiet=*/true);
    if (StopSignals::received() != 0)
      _exit(10);
    std::raise(SIGINT);
    if (StopSignals::received() != SIGINT)
      _exit(11);
    std::raise(SIGTERM);
    _exit(12); // still alive
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

std::atomic<int> gOwnHandlerCalls{0};
void ownHandler(int) { gOwnHandlerCalls.fetch_add(1); }

TEST(StopSignals, ThePreviousHandlersComeBack) {
  struct sigaction own = {}, before = {};
  own.sa_handler = ownHandler;
  sigaction(SIGTERM, &own, &before);
  {
    StopSignals signals("", /*quiet=*/true);
    std::raise(SIGTERM);
    EXPECT_EQ(StopSignals::received(), SIGTERM);
    EXPECT_EQ(gOwnHandlerCalls.load(), 0);
  }
  std::raise(SIGTERM);
  EXPECT_EQ(gOwnHandlerCalls.load(), 1);
  sigaction(SIGTERM, &before, nullptr);
}

TEST(CheckpointDir, CreatedAndLockedWithThePid) {
  TempDir d;
  auto lock = CheckpointDirLock::acquire(d.file("runs/a/ck"));
  ASSERT_TRUE(lock.ok()) << lock.status().message();
  EXPECT_TRUE((*lock)->note().empty());
  std::ifstream file(d.file(std::string("runs/a/ck/") + kCheckpointLockName));
  int64_t pid = 0;
  file >> pid;
  EXPECT_EQ(pid, int64_t(getpid()));
  // The probe file is gone: only the lock file is there.
  size_t files = 0;
  for (auto &e : std::filesystem::directory_iterator(d.file("runs/a/ck")))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

// Permission bits do not stop root: /proc takes no new files from anyone,
// and nothing can be made under a file.
TEST(CheckpointDir, UnwritableIsRefused) {
  std::string error = failureOf(CheckpointDirLock::acquire("/proc"), StatusCode::Io);
  EXPECT_EQ(error.rfind("cannot write in the checkpoint directory '/proc': ", 0), 0u) << error;
  TempDir d;
  {
    std::ofstream(d.file("afile")) << "x";
  }
  error = failureOf(CheckpointDirLock::acquire(d.file("afile/ck")), StatusCode::Io);
  EXPECT_EQ(error,
            "cannot create the checkpoint directory '" + d.file("afile/ck") + "': Not a directory");
}

// fcntl locks are per process: a child holds it, the parent is refused with
// the child's pid, and takes it once the child has ended.
TEST(CheckpointDir, ASecondProcessIsRefusedWithTheHoldersPid) {
  TempDir d;
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(done[1]); // the parent's end: EOF when the parent closes it
    auto lock = CheckpointDirLock::acquire(d.path);
    char c = lock.ok() ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) < 0)
      _exit(2);
    _exit(0); // the lock goes with the process
  }
  close(ready[1]);
  close(done[0]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  EXPECT_EQ(c, 'y');
  EXPECT_EQ(failureOf(CheckpointDirLock::acquire(d.path), StatusCode::Unavailable),
            "the checkpoint directory '" + d.path + "' is in use by another training run (pid " +
                std::to_string(child) +
                " holds its lock, train.lock): wait for it to end, stop it (SIGINT or "
                "SIGTERM saves and stops it), or choose another --checkpoint-dir");
  close(done[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(ready[0]);
  auto lock = CheckpointDirLock::acquire(d.path);
  EXPECT_TRUE(lock.ok()) << lock.status().message();
}

} // namespace
