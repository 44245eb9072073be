//===- TerminalTextTest.cpp - What may be printed of a user's text --------===//
#include "runtime/base/TerminalText.h"

#include <gtest/gtest.h>

#include <string>

using namespace einrt;

namespace {

TEST(TerminalTextTest, PrintableTextIsKept) {
  EXPECT_EQ(terminalSafe("data/train.bin"), "data/train.bin");
  EXPECT_EQ(terminalSafe("caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x99\x82"),
            "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x99\x82");
  EXPECT_EQ(printableLength("\xe4\xb8\xad", 0), 3u);
  EXPECT_EQ(printableLength("a", 0), 1u);
}

TEST(TerminalTextTest, ControlBytesAreEscapedOneByOne) {
  EXPECT_EQ(terminalSafe("odd\x1b[31m\nname"), "odd\\x1b[31m\\x0aname");
  EXPECT_EQ(terminalSafe(std::string("a\0b\r\x7f", 5)), "a\\x00b\\x0d\\x7f");
  EXPECT_EQ(terminalSafe("a\tb"), "a\\tb");
  EXPECT_EQ(printableLength("\t", 0), 0u);
}

TEST(TerminalTextTest, InvalidUtf8IsEscaped) {
  EXPECT_EQ(terminalSafe("\x80"), "\\x80");                            // a lone continuation byte
  EXPECT_EQ(terminalSafe("\xe4\xb8"), "\\xe4\\xb8");                   // cut short
  EXPECT_EQ(terminalSafe("\xc0\xaf"), "\\xc0\\xaf");                   // overlong '/'
  EXPECT_EQ(terminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a surrogate
  EXPECT_EQ(terminalSafe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // past U+10FFFF
}

TEST(TerminalTextTest, ControlAndFormatCharactersAreEscaped) {
  EXPECT_EQ(terminalSafe("\xc2\x9b"), "\\xc2\\x9b");              // C1 CSI
  EXPECT_EQ(terminalSafe("x\xe2\x80\xaey"), "x\\xe2\\x80\\xaey"); // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(terminalSafe("\xe2\x80\x8b"), "\\xe2\\x80\\x8b");     // ZERO WIDTH SPACE
  EXPECT_EQ(terminalSafe("\xe2\x80\xa8"), "\\xe2\\x80\\xa8");     // LINE SEPARATOR
  EXPECT_EQ(terminalSafe("\xef\xbb\xbf"), "\\xef\\xbb\\xbf");     // BOM
  EXPECT_EQ(terminalSafe("\xc2\xa0"), "\xc2\xa0");                // NO-BREAK SPACE is printable
}

TEST(TerminalTextTest, QuotedIsTheEscapedTextInQuotes) {
  EXPECT_EQ(quoted("ck/last.safetensors"), "'ck/last.safetensors'");
  EXPECT_EQ(quoted("a\x1b"
                   "b\n"),
            "'a\\x1bb\\x0a'");
  EXPECT_EQ(quoted(""), "''");
}

} // namespace
