//===- StatusTest.cpp - The runtime's error type ---------------------------===//
#include "runtime/base/Status.h"

#include <gtest/gtest.h>

#include <memory>

using einrt::Expected;
using einrt::Status;
using einrt::StatusCode;

namespace {

Status failsWhen(bool fail) {
  if (fail)
    return Status(StatusCode::NotFound, "no such thing");
  return Status::success();
}

// EINRT_TRY returns the first failure and goes on after a success.
Status twoSteps(bool failFirst, bool failSecond, int &reached) {
  EINRT_TRY(failsWhen(failFirst));
  reached = 1;
  EINRT_TRY(failsWhen(failSecond).withContext("second: "));
  reached = 2;
  return Status::success();
}

Expected<std::unique_ptr<int>> makeInt(int v) {
  if (v < 0)
    return Status::invalid("negative: " + std::to_string(v));
  return std::make_unique<int>(v);
}

} // namespace

TEST(Status, OkAndFailure) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.code(), StatusCode::Ok);
  EXPECT_EQ(ok.message(), "");
  Status bad = Status(StatusCode::OutOfMemory, "needs 3 GiB, 1 GiB free");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), StatusCode::OutOfMemory);
  EXPECT_STREQ(einrt::statusCodeName(bad.code()), "out of memory");
}

TEST(Status, ContextPrefixesFailuresOnly) {
  EXPECT_EQ(Status::invalid("bad dim").withContext("cannot run @f: ").message(),
            "cannot run @f: bad dim");
  EXPECT_EQ(Status::invalid("bad dim").withContext("x: ").code(), StatusCode::Invalid);
  EXPECT_TRUE(Status::success().withContext("cannot run @f: ").ok());
  EXPECT_EQ(Status::success().withContext("cannot run @f: ").message(), "");
}

TEST(Status, TryReturnsTheFirstFailure) {
  int reached = 0;
  EXPECT_TRUE(twoSteps(false, false, reached).ok());
  EXPECT_EQ(reached, 2);
  reached = 0;
  Status s = twoSteps(true, false, reached);
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(s.message(), "no such thing");
  reached = 0;
  s = twoSteps(false, true, reached);
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(s.message(), "second: no such thing");
  EXPECT_EQ(s.code(), StatusCode::NotFound);
}

TEST(Expected, ValueOrStatus) {
  Expected<std::unique_ptr<int>> good = makeInt(7);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(**good, 7);
  std::unique_ptr<int> taken = good.take();
  EXPECT_EQ(*taken, 7);
  Expected<std::unique_ptr<int>> bad = makeInt(-2);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "negative: -2");
  EXPECT_EQ(bad.takeStatus().code(), StatusCode::Invalid);
}
