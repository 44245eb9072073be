//===- Lexer.h - Tokens of the einc model language ---------------*- C++ -*-===//
//
// Splits a model file into tokens. Statements are line-separated: a newline is
// a token, except inside ( ) and [ ] (a call or a shape may span lines). Inside
// { } newlines separate the statements of the block. `#` starts a comment.
//
// Errors (a bad character, an unterminated string, a number out of range) are
// reported to the DiagnosticEngine and produce a TokenKind::Error token, so the
// parser can recover without reporting the same problem twice. A run of stray
// characters (`$$`, bytes that are not UTF-8) is one error; a file holding a
// NUL byte is reported once, at the first NUL, and yields no tokens.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_LEXER_H
#define EINC_DSL_LEXER_H

#include "dsl/Diagnostics.h"
#include "dsl/SourceLoc.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ein::dsl {

enum class TokenKind {
  Eof,
  Newline,
  Error, // already diagnosed by the lexer
  Identifier,
  Number,
  String,
  // Keywords.
  KwDim,
  KwInput,
  KwParam,
  KwBuffer,
  KwFn,
  KwFor,
  KwIn,
  KwOutput,
  KwMinimize,
  KwReturn,
  KwTrain,
  // Punctuation.
  LParen,   // (
  RParen,   // )
  LBracket, // [
  RBracket, // ]
  LBrace,   // {
  RBrace,   // }
  Comma,    // ,
  Colon,    // :
  Equal,    // =
  Tilde,    // ~
  Arrow,    // ->
  Plus,     // +
  Minus,    // -
  Star,     // *
  Slash,    // /
  StarStar, // **
  Ellipsis, // ...
  // Comparisons.
  Less,         // <
  LessEqual,    // <=
  Greater,      // >
  GreaterEqual, // >=
  EqualEqual,   // ==
  NotEqual,     // !=
};

/// A short fixed spelling of a kind: "identifier", "'('", "newline", "'dim'".
llvm::StringRef tokenKindSpelling(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  SourceLoc loc;
  /// Byte offset of the first character in the file.
  uint32_t offset = 0;
  /// The exact source text (for a String: including the quotes).
  llvm::StringRef text;
  /// Number: the value. isInteger when written without '.' or exponent, and
  /// then intValue holds it exactly.
  double number = 0;
  int64_t intValue = 0;
  bool isInteger = false;

  bool is(TokenKind k) const { return kind == k; }
  bool isKeyword() const { return kind >= TokenKind::KwDim && kind <= TokenKind::KwTrain; }
  /// For a String: the contents between the quotes.
  llvm::StringRef stringValue() const {
    return text.size() >= 2 ? text.drop_front().drop_back() : llvm::StringRef();
  }
  /// How a diagnostic names this token: "newline", "end of file",
  /// "'foo'", "'('", "string \"a b\"", "'1e-5'" (long text is shortened and
  /// unprintable bytes are escaped).
  std::string describe() const;
};

/// Escapes text as escapeForTerminal does (printable UTF-8 kept, other bytes
/// as \xNN) and shortens it past maxLen bytes with "...", for quoting user
/// text inside a diagnostic.
std::string quoteForDiagnostic(llvm::StringRef text, size_t maxLen = 40);

class Lexer {
public:
  Lexer(const SourceFile &file, DiagnosticEngine &diags);

  /// The next token. After the end, returns Eof forever. A Newline token is
  /// always produced before Eof unless the file is empty of tokens or already
  /// ended with one.
  Token next();

  /// Lexes the whole file (ending with the Eof token).
  std::vector<Token> lexAll();

private:
  char peekChar(size_t ahead = 0) const;
  SourceLoc locAt(size_t offset) const;
  Token make(TokenKind kind, size_t begin, size_t end);
  Token lexNumber(size_t begin);
  Token lexString(size_t begin);
  Token lexIdentifier(size_t begin);
  void skipSpaceAndComments();
  bool newlinesSkipped() const;

  const SourceFile &file_;
  DiagnosticEngine &diags_;
  llvm::StringRef text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t lineStart_ = 0;
  /// Open brackets: '(', '[' or '{'.
  llvm::SmallVector<char, 16> nesting_;
  /// A newline was skipped inside ( ) or [ ] since the last token.
  bool skippedNewline_ = false;
  SourceLoc skippedNewlineLoc_;
  uint32_t skippedNewlineOffset_ = 0;
  /// The last token returned was a Newline (or none was returned yet).
  bool atLineStart_ = true;
  bool done_ = false;
  bool pendingValid_ = false;
  Token pending_;
};

} // namespace ein::dsl

#endif // EINC_DSL_LEXER_H
