//===- LexerTest.cpp - Tokens, locations and lexical errors ---------------===//

#include "dsl/Lexer.h"
#include "dsl/Parser.h"

#include "gtest/gtest.h"

#include <random>

using namespace ein::dsl;
using K = TokenKind;

namespace {

struct Lexed {
  std::unique_ptr<SourceFile> file;
  std::unique_ptr<DiagnosticEngine> diags;
  std::vector<Token> tokens;

  std::vector<K> kinds() const {
    std::vector<K> out;
    for (const Token &t : tokens)
      out.push_back(t.kind);
    return out;
  }
  std::string message(size_t i = 0) const {
    return i < diags->diagnostics().size() ? diags->diagnostics()[i].message : "";
  }
};

Lexed lex(const std::string &text) {
  Lexed l;
  l.file = std::make_unique<SourceFile>("t.ein", text);
  l.diags = std::make_unique<DiagnosticEngine>(*l.file);
  Lexer lexer(*l.file, *l.diags);
  l.tokens = lexer.lexAll();
  return l;
}

TEST(LexerTest, KeywordsAndIdentifiers) {
  Lexed l = lex("dim input param fn for in output minimize return train "
                "dims _x x1 In");
  std::vector<K> expected = {K::KwDim,      K::KwInput,    K::KwParam,    K::KwFn,
                             K::KwFor,      K::KwIn,       K::KwOutput,   K::KwMinimize,
                             K::KwReturn,   K::KwTrain,    K::Identifier, K::Identifier,
                             K::Identifier, K::Identifier, K::Newline,    K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(l.tokens[10].text, "dims");
  EXPECT_EQ(l.tokens[11].text, "_x");
  EXPECT_FALSE(l.diags->hasErrors());
}

TEST(LexerTest, Locations) {
  Lexed l = lex("dim batch = 256\n\tx=y\n");
  ASSERT_GE(l.tokens.size(), 9u);
  EXPECT_EQ(l.tokens[0].loc.line, 1u);
  EXPECT_EQ(l.tokens[0].loc.col, 1u);
  EXPECT_EQ(l.tokens[1].loc.col, 5u);  // batch
  EXPECT_EQ(l.tokens[2].loc.col, 11u); // =
  EXPECT_EQ(l.tokens[3].loc.col, 13u); // 256
  EXPECT_EQ(l.tokens[4].kind, K::Newline);
  EXPECT_EQ(l.tokens[4].loc.col, 16u);
  // A tab counts as one column.
  EXPECT_EQ(l.tokens[5].text, "x");
  EXPECT_EQ(l.tokens[5].loc.line, 2u);
  EXPECT_EQ(l.tokens[5].loc.col, 2u);
  EXPECT_EQ(l.tokens[6].loc.col, 3u);
  EXPECT_EQ(l.tokens[7].loc.col, 4u);
  EXPECT_EQ(l.tokens[5].offset, 17u);
}

TEST(LexerTest, Numbers) {
  Lexed l = lex("256 0.02 1e-5 3e-4 .5 2.5E+3 7.");
  ASSERT_EQ(l.tokens.size(), 9u);
  EXPECT_TRUE(l.tokens[0].isInteger);
  EXPECT_EQ(l.tokens[0].intValue, 256);
  EXPECT_DOUBLE_EQ(l.tokens[0].number, 256);
  EXPECT_FALSE(l.tokens[1].isInteger);
  EXPECT_DOUBLE_EQ(l.tokens[1].number, 0.02);
  EXPECT_DOUBLE_EQ(l.tokens[2].number, 1e-5);
  EXPECT_EQ(l.tokens[2].text, "1e-5");
  EXPECT_FALSE(l.tokens[2].isInteger);
  EXPECT_DOUBLE_EQ(l.tokens[3].number, 3e-4);
  EXPECT_DOUBLE_EQ(l.tokens[4].number, 0.5);
  EXPECT_DOUBLE_EQ(l.tokens[5].number, 2500);
  EXPECT_DOUBLE_EQ(l.tokens[6].number, 7);
  for (int i = 0; i < 7; ++i)
    EXPECT_EQ(l.tokens[i].kind, K::Number);
  EXPECT_FALSE(l.diags->hasErrors());
}

TEST(LexerTest, Int64Limits) {
  Lexed ok = lex("9223372036854775807");
  EXPECT_FALSE(ok.diags->hasErrors());
  EXPECT_EQ(ok.tokens[0].intValue, INT64_MAX);

  Lexed big = lex("x = 9223372036854775808");
  EXPECT_EQ(big.message(), "integer literal too large: '9223372036854775808'");
  EXPECT_EQ(big.tokens[2].kind, K::Error);
  EXPECT_EQ(big.diags->diagnostics()[0].loc.col, 5u);

  Lexed huge = lex("1e999");
  EXPECT_EQ(huge.message(), "number literal too large: '1e999'");
}

TEST(LexerTest, MalformedNumbers) {
  EXPECT_EQ(lex("1e").message(), "expected digits in the exponent of number '1e'");
  EXPECT_EQ(lex("2e+x").message(), "expected digits in the exponent of number '2e+x'");
  EXPECT_EQ(lex("3heads").message(), "invalid number '3heads'");
}

TEST(LexerTest, Strings) {
  Lexed l = lex("\"batch k, k hidden -> batch hidden\" \"\"");
  ASSERT_EQ(l.tokens[0].kind, K::String);
  EXPECT_EQ(l.tokens[0].stringValue(), "batch k, k hidden -> batch hidden");
  EXPECT_EQ(l.tokens[1].kind, K::String);
  EXPECT_EQ(l.tokens[1].stringValue(), "");
  EXPECT_EQ(l.tokens[1].loc.col, 37u);
  EXPECT_FALSE(l.diags->hasErrors());
}

TEST(LexerTest, UnterminatedString) {
  Lexed l = lex("x = \"abc\ny = 1\n");
  EXPECT_EQ(l.message(), "unterminated string");
  EXPECT_EQ(l.diags->diagnostics()[0].loc.line, 1u);
  EXPECT_EQ(l.diags->diagnostics()[0].loc.col, 5u);
  // Lexing goes on with the next line.
  std::vector<K> expected = {K::Identifier, K::Equal,  K::Error,   K::Newline, K::Identifier,
                             K::Equal,      K::Number, K::Newline, K::Eof};
  EXPECT_EQ(l.kinds(), expected);

  Lexed eof = lex("\"abc");
  EXPECT_EQ(eof.message(), "unterminated string");
}

TEST(LexerTest, Punctuation) {
  Lexed l = lex("( ) [ ] { } , : = ~ -> + - * / ** ...");
  std::vector<K> expected = {K::LParen,   K::RParen,   K::LBracket, K::RBracket, K::LBrace,
                             K::RBrace,   K::Comma,    K::Colon,    K::Equal,    K::Tilde,
                             K::Arrow,    K::Plus,     K::Minus,    K::Star,     K::Slash,
                             K::StarStar, K::Ellipsis, K::Newline,  K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_FALSE(l.diags->hasErrors());
  // No space needed: `a**-b`, `x->y`.
  Lexed tight = lex("a**-b->c");
  std::vector<K> tightKinds = {K::Identifier, K::StarStar,   K::Minus,   K::Identifier,
                               K::Arrow,      K::Identifier, K::Newline, K::Eof};
  EXPECT_EQ(tight.kinds(), tightKinds);
}

TEST(LexerTest, NewlinesInsideBracketsAreSkipped) {
  Lexed l = lex("f(a,\n  b)[c\n]\n{\n}\n");
  std::vector<K> expected = {K::Identifier, K::LParen,   K::Identifier, K::Comma,    K::Identifier,
                             K::RParen,     K::LBracket, K::Identifier, K::RBracket, K::Newline,
                             K::LBrace,     K::Newline,  K::RBrace,     K::Newline,  K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  // Locations stay right after a skipped newline.
  EXPECT_EQ(l.tokens[4].loc.line, 2u);
  EXPECT_EQ(l.tokens[4].loc.col, 3u);
}

TEST(LexerTest, NewlinesInsideBracesAreKept) {
  Lexed l = lex("for l in n {\n  x = f(\n y)\n}");
  std::vector<K> expected = {K::KwFor,      K::Identifier, K::KwIn,       K::Identifier,
                             K::LBrace,     K::Newline,    K::Identifier, K::Equal,
                             K::Identifier, K::LParen,     K::Identifier, K::RParen,
                             K::Newline,    K::RBrace,     K::Newline,    K::Eof};
  EXPECT_EQ(l.kinds(), expected);
}

TEST(LexerTest, KeywordFirstOnALineClosesForgottenBrackets) {
  // The '(' is never closed: a statement keyword at the start of a line ends
  // the statement anyway, so the parser can recover there.
  Lexed l = lex("x = f(a,\ndim d = 1\n");
  std::vector<K> expected = {K::Identifier, K::Equal,   K::Identifier, K::LParen,     K::Identifier,
                             K::Comma,      K::Newline, K::KwDim,      K::Identifier, K::Equal,
                             K::Number,     K::Newline, K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(l.tokens[6].loc.line, 1u);
  EXPECT_EQ(l.tokens[6].loc.col, 9u);
  // `in` is not a statement keyword.
  Lexed in = lex("f(a,\n in)");
  EXPECT_EQ(in.tokens[4].kind, K::KwIn);
}

TEST(LexerTest, CommentsAndBlankLines) {
  Lexed l = lex("# header\n\n  \nx = 1 # trailing\n# end");
  std::vector<K> expected = {K::Identifier, K::Equal, K::Number, K::Newline, K::Eof};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(l.tokens[0].loc.line, 4u);
}

TEST(LexerTest, EmptyInput) {
  EXPECT_EQ(lex("").kinds(), std::vector<K>{K::Eof});
  EXPECT_EQ(lex("\n\n# c\n").kinds(), std::vector<K>{K::Eof});
}

TEST(LexerTest, EofForever) {
  SourceFile file("t.ein", "x");
  DiagnosticEngine diags(file);
  Lexer lexer(file, diags);
  EXPECT_EQ(lexer.next().kind, K::Identifier);
  EXPECT_EQ(lexer.next().kind, K::Newline);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(lexer.next().kind, K::Eof);
}

TEST(LexerTest, UnexpectedCharacters) {
  Lexed l = lex("x = a $ b");
  EXPECT_EQ(l.message(), "unexpected character '$'");
  EXPECT_EQ(l.diags->diagnostics()[0].loc.col, 7u);
  EXPECT_EQ(l.tokens[3].kind, K::Error);

  EXPECT_EQ(lex("\xff").message(), "unexpected character '\\xff'");
  EXPECT_EQ(lex("\x01").message(), "unexpected character '\\x01'");
  // One character of several bytes is one error, shown as itself.
  Lexed utf8 = lex("x = a \xc3\x97 b"); // "×"
  EXPECT_EQ(utf8.message(), "unexpected character '\xc3\x97'");
  EXPECT_EQ(utf8.diags->errorCount(), 1u);
  EXPECT_EQ(lex("a . b").message(), "unexpected character '.'");
  EXPECT_EQ(lex("a .. b").message(), "unexpected character '.'");
  EXPECT_EQ(lex("!").message(), "unexpected character '!'");
}

TEST(LexerTest, Describe) {
  Lexed l = lex("foo ( \"a b\" 1e-5 dim");
  EXPECT_EQ(l.tokens[0].describe(), "'foo'");
  EXPECT_EQ(l.tokens[1].describe(), "'('");
  EXPECT_EQ(l.tokens[2].describe(), "string \"a b\"");
  EXPECT_EQ(l.tokens[3].describe(), "'1e-5'");
  EXPECT_EQ(l.tokens[4].describe(), "'dim'");
  EXPECT_EQ(l.tokens[5].describe(), "newline");
  EXPECT_EQ(l.tokens[6].describe(), "end of file");
  EXPECT_EQ(quoteForDiagnostic(std::string(50, 'a'), 10), "aaaaaaaaaa...");
}

TEST(LexerTest, ARunOfStrayBytesIsOneError) {
  Lexed l = lex("x = a \x1b\x01\xff\xfe$? b\ny = 1\n");
  EXPECT_EQ(l.diags->errorCount(), 1u);
  EXPECT_EQ(l.message(), "unexpected characters '\\x1b\\x01\\xff\\xfe$?'");
  EXPECT_EQ(l.diags->diagnostics()[0].loc.col, 7u);
  // The lexer goes on after the run: `b`, the newline, the next statement.
  EXPECT_EQ(l.tokens[3].kind, K::Error);
  EXPECT_EQ(l.tokens[4].text, "b");
  EXPECT_EQ(l.tokens[6].text, "y");
  // A 1 MB run: one error, its quote bounded.
  Lexed big = lex("x = " + std::string(1 << 20, '\x80'));
  EXPECT_EQ(big.diags->errorCount(), 1u);
  EXPECT_LT(big.message().size(), 200u);
}

TEST(LexerTest, ANulByteMeansABinaryFile) {
  // One error at the first NUL, whatever follows, and no tokens.
  std::string text("dim n = 4\nx = \x01 n\0\0$\n\0\xff\n", 26);
  Lexed l = lex(text);
  ASSERT_EQ(l.diags->diagnostics().size(), 1u);
  EXPECT_EQ(l.message(), "unexpected NUL byte: this looks like a binary file, "
                         "not a model (a text file)");
  EXPECT_EQ(l.diags->diagnostics()[0].loc.line, 2u);
  EXPECT_EQ(l.diags->diagnostics()[0].loc.col, 8u);
  EXPECT_EQ(l.kinds(), std::vector<K>{K::Eof});
}

// Random bytes and random token soup: no crash, no hang, and every
// diagnostic has a location inside the file.
TEST(LexerTest, FuzzNoCrash) {
  std::mt19937 rng(1234);
  const char *pieces[] = {"dim ",
                          "x",
                          " = ",
                          "(",
                          ")",
                          "[",
                          "]",
                          "{",
                          "}",
                          "\n",
                          ",",
                          "->",
                          "**",
                          "...",
                          "\"",
                          "1e",
                          "3",
                          "fn ",
                          "for ",
                          " in ",
                          "param ",
                          ":",
                          "~",
                          "-",
                          "#",
                          "\t",
                          "train",
                          "output ",
                          "return ",
                          ".5",
                          "99999999999999999999999",
                          "\x80"};
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    int n = rng() % 60;
    for (int i = 0; i < n; ++i) {
      if (round % 2)
        text += char(rng() % 256);
      else
        text += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
    }
    SourceFile file("f.ein", text);
    DiagnosticEngine diags(file);
    auto program = parseProgram(file, diags);
    ASSERT_NE(program, nullptr);
    for (const Diagnostic &d : diags.diagnostics()) {
      if (!d.loc.isValid())
        continue;
      EXPECT_LE(d.loc.line, uint32_t(std::count(text.begin(), text.end(), '\n') + 1));
    }
    std::string out;
    llvm::raw_string_ostream os(out);
    diags.print(os);
    // What a terminal receives: no control byte but the line ends.
    for (char c : out)
      ASSERT_TRUE(c == '\n' || ((unsigned char)c >= 0x20 && c != 0x7f)) << out;
  }
}

} // namespace
