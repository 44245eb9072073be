//===- StatusTestingTest.cpp - The tests' Status assertions ---------------===//
//
// test/unit/StatusTesting.h's macros pass on what they claim and fail, with
// the Status's code and message in the failure, on anything else.
//
//===----------------------------------------------------------------------===//
#include "test/unit/StatusTesting.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

using einrt::Expected;
using einrt::Status;
using einrt::StatusCode;

namespace {

Status corruptFile() { return Status(StatusCode::Corrupt, "'x.bin': checksum mismatch"); }
Expected<int> answer() { return 42; }
Expected<int> noAnswer() { return Status(StatusCode::NotFound, "no answer"); }
Expected<std::unique_ptr<int>> boxed() { return std::make_unique<int>(7); }

// EXPECT_FATAL_FAILURE's statement may not use locals: these are the
// statements, each in a void function as ASSERT_ needs.
void assertOkOnCorrupt() { EINC_ASSERT_OK(corruptFile()); }
void assertOkAndAssignOnMissing() {
  EINC_ASSERT_OK_AND_ASSIGN(int value, noAnswer());
  ADD_FAILURE() << "not reached: " << value;
}
void assertStatusOnOk() { EINC_ASSERT_STATUS(Status::success(), StatusCode::Invalid, ""); }
void assertNotOkOnOk() { EINC_ASSERT_NOT_OK(answer()); }

} // namespace

TEST(StatusTesting, OkPasses) {
  EINC_EXPECT_OK(Status::success());
  EINC_ASSERT_OK(answer());
  EINC_ASSERT_OK_AND_ASSIGN(int value, answer());
  EXPECT_EQ(value, 42);
  std::unique_ptr<int> box;
  EINC_ASSERT_OK_AND_ASSIGN(box, boxed());
  EXPECT_EQ(*box, 7);
}

TEST(StatusTesting, AFailureFailsAndSaysWhy) {
  // The expression, the code's name and the message, in that order.
  EXPECT_NONFATAL_FAILURE(EINC_EXPECT_OK(corruptFile()),
                          "corruptFile() failed: [corrupt] 'x.bin': checksum mismatch");
  EXPECT_NONFATAL_FAILURE(EINC_EXPECT_OK(noAnswer()) << "while asking",
                          "noAnswer() failed: [not found] no answer\nwhile asking");
  EXPECT_FATAL_FAILURE(assertOkOnCorrupt(), "[corrupt] 'x.bin': checksum mismatch");
  // The original expression is named, not the temporary holding it; and
  // nothing after the assertion runs.
  EXPECT_FATAL_FAILURE(assertOkAndAssignOnMissing(), "noAnswer() failed: [not found] no answer");
}

TEST(StatusTesting, ExpectStatusChecksCodeAndMessage) {
  EINC_EXPECT_STATUS(corruptFile(), StatusCode::Corrupt, "checksum");
  EINC_EXPECT_STATUS(corruptFile(), StatusCode::Corrupt, "");
  EINC_EXPECT_STATUS(noAnswer(), StatusCode::NotFound, "no answer");
  EXPECT_NONFATAL_FAILURE(EINC_EXPECT_STATUS(corruptFile(), StatusCode::Io, "checksum"),
                          "it returned: [corrupt] 'x.bin': checksum mismatch");
  EXPECT_NONFATAL_FAILURE(EINC_EXPECT_STATUS(corruptFile(), StatusCode::Corrupt, "magic"),
                          "to fail: [corrupt] with a message containing \"magic\"");
  EXPECT_NONFATAL_FAILURE(EINC_EXPECT_STATUS(answer(), StatusCode::NotFound, ""),
                          "it returned: ok");
  EXPECT_FATAL_FAILURE(assertStatusOnOk(), "it returned: ok");
}

TEST(StatusTesting, ExpectStatusEqWantsTheWholeMessage) {
  EINC_EXPECT_STATUS_EQ(corruptFile(), StatusCode::Corrupt, "'x.bin': checksum mismatch");
  EXPECT_NONFATAL_FAILURE(
      EINC_EXPECT_STATUS_EQ(corruptFile(), StatusCode::Corrupt, "checksum mismatch"),
      "to fail: [corrupt] with the message \"checksum mismatch\"\n"
      "  it returned: [corrupt] 'x.bin': checksum mismatch");
  EXPECT_NONFATAL_FAILURE(EINC_EXPECT_STATUS_EQ(noAnswer(), StatusCode::Invalid, "no answer"),
                          "it returned: [not found] no answer");
}

TEST(StatusTesting, NotOkWantsAFailure) {
  EINC_EXPECT_NOT_OK(corruptFile());
  EINC_EXPECT_NOT_OK(noAnswer());
  EXPECT_NONFATAL_FAILURE(EINC_EXPECT_NOT_OK(Status::success()), "expected to fail");
  EXPECT_FATAL_FAILURE(assertNotOkOnOk(), "answer() was expected to fail, and it succeeded");
}

TEST(StatusTesting, GtestPrintsStatusAndCode) {
  EXPECT_EQ(::testing::PrintToString(corruptFile()), "[corrupt] 'x.bin': checksum mismatch");
  EXPECT_EQ(::testing::PrintToString(Status::success()), "ok");
  EXPECT_EQ(::testing::PrintToString(StatusCode::OutOfMemory), "out of memory");
}
