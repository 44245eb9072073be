//===- RunRecordingTest.cpp - The Executor's record-and-replay seam -------===//
//
// Device::beginRun / endRun / forgetRun (runtime/core/Device.h), which the cuda
// device implements with CUDA graphs, seen through a host device that
// "records" a run after its first and "replays" it by running the recorded
// steps itself: the executor issues steps only when told to, reports each
// run's end (and a failed step's), skips beginRun while profiling, gives
// copies their own key and moves the key with the memory; host devices
// keep the defaults and run as before.
//
//===----------------------------------------------------------------------===//
#include "../runtime/ProgramBuilder.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/Executor.h"
#include "runtime/core/HostDevice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace einrt {
namespace {

using test::ProgramBuilder;
using test::valuesOf;

/// Counts steps; replays a key's run once it has ended successfully, by
/// running `replay` (the test's stand-in for a graph launch).
class RecordingDevice : public HostDevice {
public:
  Expected<RunStart> beginRun(uint64_t key) override {
    begun.push_back(key);
    if (failBegin)
      return Status::internal("begin failed");
    if (recorded.count(key)) {
      ++replays;
      return RunStart::Replayed;
    }
    return RunStart::Steps;
  }
  Expected<RunEnd> endRun(uint64_t key, bool ok) override {
    ended.push_back({key, ok});
    if (issueAgain) { // as a failed capture: nothing ran
      issueAgain = false;
      return RunEnd::IssueAgain;
    }
    if (failEnd)
      return Status::internal("end failed");
    if (ok)
      recorded.insert(key);
    return RunEnd::Done;
  }
  void forgetRun(uint64_t key) override { forgotten.push_back(key); }
  Status reference(const Step &s, const std::vector<DeviceSpan> &inputs,
                   const DeviceSpan &output) override {
    ++steps;
    if (failSteps)
      return Status::invalid("step failed");
    return HostDevice::reference(s, inputs, output);
  }

  std::vector<uint64_t> begun, forgotten;
  std::vector<std::pair<uint64_t, bool>> ended;
  std::set<uint64_t> recorded;
  int steps = 0, replays = 0;
  bool failSteps = false, failBegin = false, failEnd = false, issueAgain = false;
};

Program twoSteps() {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {3});
  int32_t y = b.step(StepKind::Exp, {x}, DType::F32, {3});
  b.result(b.step(StepKind::Neg, {y}, DType::F32, {3}));
  return b.p;
}

TEST(RunRecording, FirstRunIssuesStepsLaterRunsReplay) {
  auto dev = std::make_shared<RecordingDevice>();
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(twoSteps(), dev));
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(dev->steps, 2);
  ASSERT_EQ(dev->begun.size(), 1u);
  uint64_t key = dev->begun[0];
  EXPECT_NE(key, 0u);
  ASSERT_EQ(dev->ended.size(), 1u);
  EXPECT_EQ(dev->ended[0], std::make_pair(key, true));
  for (int i = 0; i < 3; ++i)
    EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(dev->steps, 2); // the device replayed: no step issued again
  EXPECT_EQ(dev->replays, 3);
  EXPECT_EQ(dev->ended.size(), 1u); // a replay has no end to report
  EXPECT_EQ(dev->begun, (std::vector<uint64_t>{key, key, key, key}));
}

TEST(RunRecording, ProfilingIssuesEveryStep) {
  auto dev = std::make_shared<RecordingDevice>();
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(twoSteps(), dev));
  EINC_ASSERT_OK(ex.run());
  ex.setProfiling(true);
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(dev->steps, 4);
  EXPECT_EQ(dev->begun.size(), 1u);
  EXPECT_EQ(ex.profiledRuns(), 1);
}

TEST(RunRecording, AFailedStepEndsTheRunUnrecorded) {
  auto dev = std::make_shared<RecordingDevice>();
  dev->failSteps = true;
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(twoSteps(), dev));
  EINC_EXPECT_STATUS(ex.run(), StatusCode::Invalid, "step failed");
  ASSERT_EQ(dev->ended.size(), 1u);
  EXPECT_FALSE(dev->ended[0].second);
  dev->failSteps = false;
  EINC_ASSERT_OK(ex.run()); // not replayed: issued again
  EXPECT_EQ(dev->steps, 1 + 2);
  dev->failBegin = true;
  EINC_EXPECT_STATUS_EQ(ex.run(), StatusCode::Internal, "begin failed");
}

TEST(RunRecording, AFailedRecordingIssuesTheStepsAgain) {
  auto dev = std::make_shared<RecordingDevice>();
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(twoSteps(), dev));
  double in[3] = {0, 1, 2};
  EINC_ASSERT_OK(ex.setArgument(0, in, 3));
  dev->issueAgain = true;
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(dev->steps, 4); // issued, then issued again unrecorded
  EXPECT_EQ(dev->ended.size(), 1u);
  std::vector<double> out = valuesOf(ex, size_t(ex.program().results[0]));
  EXPECT_FLOAT_EQ(float(out[1]), -std::exp(1.0f));
  // A failing step inside a failed recording: issued again, and its error
  // is the run's.
  EINC_ASSERT_OK_AND_ASSIGN(auto other, Executor::create(twoSteps(), dev));
  dev->issueAgain = true;
  dev->failSteps = true;
  EINC_EXPECT_STATUS(other.run(), StatusCode::Invalid, "step failed");
  // The device's own failure at the end.
  dev->failSteps = false;
  dev->failEnd = true;
  EINC_EXPECT_STATUS_EQ(other.run(), StatusCode::Internal, "end failed");
}

TEST(RunRecording, KeysFollowTheMemory) {
  auto dev = std::make_shared<RecordingDevice>();
  uint64_t key = 0, copyKey = 0;
  {
    EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(twoSteps(), dev));
    EINC_ASSERT_OK(ex.run());
    key = dev->begun.back();
    // A copy has memory of its own: a key of its own, recorded anew.
    Executor copy(ex);
    EINC_ASSERT_OK(copy.run());
    copyKey = dev->begun.back();
    EXPECT_NE(copyKey, key);
    EXPECT_EQ(dev->steps, 4);
    // A move keeps the memory and the key: still replayed.
    Executor moved(std::move(ex));
    EINC_ASSERT_OK(moved.run());
    EXPECT_EQ(dev->begun.back(), key);
    EXPECT_EQ(dev->steps, 4);
    EXPECT_TRUE(dev->forgotten.empty());
  }
  // Both executors gone: both keys forgotten, each once.
  std::multiset<uint64_t> forgotten(dev->forgotten.begin(), dev->forgotten.end());
  EXPECT_EQ(forgotten, (std::multiset<uint64_t>{key, copyKey}));
}

TEST(RunRecording, HostDevicesRunAsBefore) {
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(twoSteps(), Precision::F32));
  double in[3] = {0, 1, 2};
  EINC_ASSERT_OK(ex.setArgument(0, in, 3));
  for (int i = 0; i < 2; ++i) {
    EINC_ASSERT_OK(ex.run());
    std::vector<double> out = valuesOf(ex, size_t(ex.program().results[0]));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_FLOAT_EQ(out[2], -std::exp(2.0f));
  }
}

} // namespace
} // namespace einrt
