//===- DiagnosticsTest.cpp - SourceFile and DiagnosticEngine --------------===//

#include "dsl/Diagnostics.h"

#include "llvm/Support/Unicode.h"

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

TEST(DiagnosticsTest, TabsBecomeSpacesAndTheCaretFollows) {
  // A terminal puts `x` of "\tx" at column 8: the caret must count the same.
  SourceFile file("m.ein", "\tx = $\n");
  DiagnosticEngine diags(file);
  diags.error({1, 6}, "bad");
  EXPECT_EQ(printAll(diags), "m.ein:1:6: error: bad\n        x = $\n            ^\n");
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

//===----------------------------------------------------------------------===//
// Output a terminal can trust: escaping and bounded excerpts
//===----------------------------------------------------------------------===//

/// The display column of the caret line's '^' (its leading spaces).
size_t caretIndent(const std::string &printed) {
  size_t caretLineEnd = printed.rfind('\n', printed.size() - 2);
  return printed.find('^', caretLineEnd) - caretLineEnd - 1;
}

TEST(TerminalTextTest, EscapeKeepsPrintableUtf8) {
  EXPECT_EQ(escapeForTerminal("plain ascii ~"), "plain ascii ~");
  EXPECT_EQ(escapeForTerminal("caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87"),
            "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87"); // "café 中文"
  EXPECT_EQ(escapeForTerminal("a\tb"), "a\\tb");
}

TEST(TerminalTextTest, EscapeControlAndInvalidBytes) {
  EXPECT_EQ(escapeForTerminal(llvm::StringRef("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escapeForTerminal("\x1b[2J\r\n\x7f"), "\\x1b[2J\\x0d\\x0a\\x7f");
  // A lone continuation byte, a truncated sequence, an overlong '/', a
  // surrogate: not UTF-8, one escape per byte.
  EXPECT_EQ(escapeForTerminal("\x80"), "\\x80");
  EXPECT_EQ(escapeForTerminal("\xe4\xb8"), "\\xe4\\xb8");
  EXPECT_EQ(escapeForTerminal("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(escapeForTerminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  // C1 control U+009B (a one-character CSI) and the bidi override U+202E.
  EXPECT_EQ(escapeForTerminal("\xc2\x9b"), "\\xc2\\x9b");
  EXPECT_EQ(escapeForTerminal("x\xe2\x80\xaey"), "x\\xe2\\x80\\xaey");
}

TEST(TerminalTextTest, EscapeElidesTheMiddleOfLongText) {
  std::string name = "unknown name '" + std::string(100000, 'a') + "' here";
  std::string out = escapeForTerminal(name, 100);
  EXPECT_LE(out.size(), 100u);
  EXPECT_TRUE(llvm::StringRef(out).starts_with("unknown name 'aaa"));
  EXPECT_TRUE(llvm::StringRef(out).ends_with("aaa' here"));
  EXPECT_NE(out.find(" ... "), std::string::npos);
  EXPECT_EQ(escapeForTerminal("short", 100), "short");
  // Zero-width combining marks (U+0301) count one column each for the bound.
  std::string marks = "x";
  for (int i = 0; i < 100000; ++i)
    marks += "\xcc\x81";
  EXPECT_LE(escapeForTerminal(marks, 100).size(), 2 * 100u);
  EXPECT_LE(excerptLine(marks, 50000).text.size(), 2 * kMaxExcerptColumns);
}

TEST(TerminalTextTest, ExcerptOfAShortLineIsTheWholeLine) {
  SourceExcerpt e = excerptLine("h = x + y", 7);
  EXPECT_EQ(e.text, "h = x + y");
  EXPECT_EQ(e.caretColumn, 6u);
  e = excerptLine("ab", 3); // past the end
  EXPECT_EQ(e.text, "ab");
  EXPECT_EQ(e.caretColumn, 2u);
  e = excerptLine("ab", 1000000);
  EXPECT_EQ(e.caretColumn, 2u);
}

TEST(TerminalTextTest, ExcerptCutsAroundTheCaret) {
  std::string line = std::string(5000, 'a') + "$" + std::string(5000, 'b');
  SourceExcerpt e = excerptLine(line, 5001, 60);
  EXPECT_LE(e.text.size(), 60u);
  EXPECT_TRUE(llvm::StringRef(e.text).starts_with("...aaa"));
  EXPECT_TRUE(llvm::StringRef(e.text).ends_with("bbb..."));
  ASSERT_LT(e.caretColumn, e.text.size());
  EXPECT_EQ(e.text[e.caretColumn], '$');

  // At the start: no mark on the left; at the end: none on the right.
  e = excerptLine(line, 1, 60);
  EXPECT_TRUE(llvm::StringRef(e.text).starts_with("aaa"));
  EXPECT_TRUE(llvm::StringRef(e.text).ends_with("aaa..."));
  EXPECT_EQ(e.caretColumn, 0u);
  e = excerptLine(line, line.size() + 1, 60);
  EXPECT_TRUE(llvm::StringRef(e.text).starts_with("...bbb"));
  EXPECT_TRUE(llvm::StringRef(e.text).ends_with("bbb"));
  EXPECT_EQ(e.caretColumn, e.text.size());
  EXPECT_LE(e.text.size(), 60u);
}

TEST(TerminalTextTest, ExcerptOfATenMegabyteLine) {
  // Decoding only a window around the caret keeps this linear in the window,
  // not the line (a quadratic or whole-line decode would time the test out
  // when repeated).
  std::string line(10 << 20, 'x');
  line[(5 << 20) + 3] = '$';
  for (int i = 0; i < 1000; ++i) {
    SourceExcerpt e = excerptLine(line, (5 << 20) + 4);
    ASSERT_LE(e.text.size(), kMaxExcerptColumns);
    ASSERT_EQ(e.text[e.caretColumn], '$');
  }
}

TEST(TerminalTextTest, ExcerptAlignsByDisplayColumns) {
  // "中文" is two characters of three bytes and two columns each; the escape
  // of ESC takes four columns.
  SourceExcerpt e = excerptLine("x = \xe4\xb8\xad\xe6\x96\x87 \x1b $", 14);
  EXPECT_EQ(e.text, "x = \xe4\xb8\xad\xe6\x96\x87 \\x1b $");
  EXPECT_EQ(e.caretColumn, 14u);         // 4 + 4 (CJK) + 1 + 4 (escape) + 1
  e = excerptLine("caf\xc3\xa9 = $", 9); // "café = $"
  EXPECT_EQ(e.caretColumn, 7u);
}

TEST(TerminalTextTest, ExcerptCutsWideTextOnCharacters) {
  // A line of CJK characters: the cut never splits one into bytes.
  std::string line;
  for (int i = 0; i < 1000; ++i)
    line += "\xe4\xb8\xad";
  SourceExcerpt e = excerptLine(line, 1501, 40); // the 501st character
  EXPECT_EQ(e.text.find("\\x"), std::string::npos);
  EXPECT_EQ(e.caretColumn % 2, 1u); // after "...", on a character boundary
  EXPECT_LE(llvm::sys::unicode::columnWidthUTF8(e.text), 40);
}

TEST(DiagnosticsTest, SourceLineIsEscapedAndCaretStaysUnder) {
  SourceFile file("m.ein", std::string("x = \x1b[2J\0 $\n", 13));
  DiagnosticEngine diags(file);
  diags.error({1, 12}, "unexpected character '$'");
  std::string out = printAll(diags);
  EXPECT_EQ(out, "m.ein:1:12: error: unexpected character '$'\n"
                 "x = \\x1b[2J\\x00 $\n"
                 "                 ^\n");
}

TEST(DiagnosticsTest, LongSourceLineIsBounded) {
  std::string text = "x = " + std::string(10 << 20, 'a') + " $\n";
  SourceFile file("m.ein", text);
  DiagnosticEngine diags(file);
  uint32_t col = uint32_t(text.size() - 1); // the '$'
  diags.error({1, col}, "unexpected character '$'");
  std::string out = printAll(diags);
  EXPECT_LT(out.size(), 400u);
  EXPECT_NE(out.find("\n...aaaa"), std::string::npos);
  EXPECT_NE(out.find("aaaa $\n"), std::string::npos);
  size_t lineStart = out.find('\n') + 1;
  EXPECT_EQ(out[lineStart + caretIndent(out)], '$');
}

TEST(DiagnosticsTest, MessageAndFileNameAreEscapedAndBounded) {
  SourceFile file("m\x1b]0;title\x07.ein", "x\n");
  DiagnosticEngine diags(file);
  diags.error({1, 1}, "unknown name '\x1b[2J" + std::string(100000, 'n') + "'");
  std::string out = printAll(diags);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\x07'), std::string::npos);
  EXPECT_TRUE(llvm::StringRef(out).starts_with(
      "m\\x1b]0;title\\x07.ein:1:1: error: unknown name '\\x1b[2Jnnn"));
  // The middle is elided; the end of the message stays.
  EXPECT_NE(out.find("nnn ... nnn"), std::string::npos);
  EXPECT_NE(out.find("nnn'\n"), std::string::npos);
  EXPECT_LT(out.size(), 2 * kMaxMessageColumns);
}

} // namespace
