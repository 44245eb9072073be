//===- DiagnosticsTest.cpp - SourceFile and DiagnosticEngine --------------===//

#include "dsl/Diagnostics.h"

#include "gtest/gtest.h"

using namespace ein::dsl;

namespace {

std::string printAll(const DiagnosticEngine &diags) {
  std::string out;
  llvm::raw_string_ostream os(out);
  diags.print(os);
  return out;
}

TEST(SourceFileTest, LineTable) {
  SourceFile file("m.ein", "first\nsecond line\n\nlast");
  EXPECT_EQ(file.line(1), "first");
  EXPECT_EQ(file.line(2), "second line");
  EXPECT_EQ(file.line(3), "");
  EXPECT_EQ(file.line(4), "last");
  EXPECT_EQ(file.line(0), "");
  EXPECT_EQ(file.line(5), "");
  EXPECT_EQ(file.path(), "m.ein");
}

TEST(SourceFileTest, TrailingNewlineAndCRLF) {
  SourceFile file("m.ein", "a = 1\r\nb = 2\n");
  EXPECT_EQ(file.line(1), "a = 1");
  EXPECT_EQ(file.line(2), "b = 2");
  EXPECT_EQ(file.line(3), "");
  SourceFile empty("e.ein", "");
  EXPECT_EQ(empty.line(1), "");
}

TEST(DiagnosticsTest, ErrorWithCaret) {
  SourceFile file("m.ein", "dim a = 1\nh = x + y\n");
  DiagnosticEngine diags(file);
  diags.error({2, 7}, "cannot add");
  EXPECT_TRUE(diags.hasErrors());
  EXPECT_EQ(diags.errorCount(), 1u);
  EXPECT_EQ(printAll(diags), "m.ein:2:7: error: cannot add\n"
                             "h = x + y\n"
                             "      ^\n");
}

TEST(DiagnosticsTest, TabsAreKeptInTheSourceLine) {
  SourceFile file("m.ein", "\tx = $\n");
  DiagnosticEngine diags(file);
  diags.error({1, 6}, "bad");
  EXPECT_EQ(printAll(diags), "m.ein:1:6: error: bad\n\tx = $\n     ^\n");
}

TEST(DiagnosticsTest, NoteFollowsItsError) {
  SourceFile file("m.ein", "for l in n {\n");
  DiagnosticEngine diags(file);
  diags.error({2, 1}, "expected '}'");
  diags.note({1, 12}, "the loop body starts here");
  EXPECT_EQ(diags.errorCount(), 1u);
  ASSERT_EQ(diags.diagnostics().size(), 2u);
  EXPECT_EQ(diags.diagnostics()[1].severity, Diagnostic::Severity::Note);
  EXPECT_EQ(printAll(diags), "m.ein:2:1: error: expected '}'\n"
                             "\n"
                             "^\n"
                             "m.ein:1:12: note: the loop body starts here\n"
                             "for l in n {\n"
                             "           ^\n");
}

TEST(DiagnosticsTest, InvalidLocHasNoSourceLine) {
  SourceFile file("m.ein", "x\n");
  DiagnosticEngine diags(file);
  diags.error(SourceLoc{}, "no main output");
  EXPECT_EQ(printAll(diags), "m.ein: error: no main output\n");
}

TEST(DiagnosticsTest, StopsAfterMaxErrors) {
  SourceFile file("m.ein", "x\n");
  DiagnosticEngine diags(file, 3);
  for (int i = 0; i < 10; ++i) {
    diags.error({1, 1}, "e" + llvm::Twine(i));
    diags.note({1, 1}, "n" + llvm::Twine(i));
  }
  EXPECT_TRUE(diags.tooMany());
  EXPECT_TRUE(diags.stopped());
  const auto &all = diags.diagnostics();
  // 3 errors with their notes, then the stop message, nothing after.
  ASSERT_EQ(all.size(), 7u);
  EXPECT_EQ(all[4].message, "e2");
  EXPECT_EQ(all[5].message, "n2");
  EXPECT_EQ(all.back().message, "too many errors; stopping");
  EXPECT_FALSE(all.back().loc.isValid());
}

TEST(DiagnosticsTest, CaretPastTheEndOfTheLine) {
  SourceFile file("m.ein", "ab");
  DiagnosticEngine diags(file);
  diags.error({1, 3}, "expected newline");
  EXPECT_EQ(printAll(diags), "m.ein:1:3: error: expected newline\nab\n  ^\n");
}

} // namespace
