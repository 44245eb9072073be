//===- Lexer.cpp - Tokens of the einc model language ----------------------===//

#include "dsl/Lexer.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ConvertUTF.h"

#include <cmath>
#include <cstdlib>

namespace ein::dsl {

llvm::StringRef tokenKindSpelling(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Newline:
    return "newline";
  case TokenKind::Error:
    return "invalid token";
  case TokenKind::Identifier:
    return "identifier";
  case TokenKind::Number:
    return "number";
  case TokenKind::String:
    return "string";
  case TokenKind::KwDim:
    return "'dim'";
  case TokenKind::KwInput:
    return "'input'";
  case TokenKind::KwParam:
    return "'param'";
  case TokenKind::KwBuffer:
    return "'buffer'";
  case TokenKind::KwFn:
    return "'fn'";
  case TokenKind::KwFor:
    return "'for'";
  case TokenKind::KwIn:
    return "'in'";
  case TokenKind::KwOutput:
    return "'output'";
  case TokenKind::KwMinimize:
    return "'minimize'";
  case TokenKind::KwReturn:
    return "'return'";
  case TokenKind::KwTrain:
    return "'train'";
  case TokenKind::LParen:
    return "'('";
  case TokenKind::RParen:
    return "')'";
  case TokenKind::LBracket:
    return "'['";
  case TokenKind::RBracket:
    return "']'";
  case TokenKind::LBrace:
    return "'{'";
  case TokenKind::RBrace:
    return "'}'";
  case TokenKind::Comma:
    return "','";
  case TokenKind::Colon:
    return "':'";
  case TokenKind::Equal:
    return "'='";
  case TokenKind::Tilde:
    return "'~'";
  case TokenKind::Arrow:
    return "'->'";
  case TokenKind::Plus:
    return "'+'";
  case TokenKind::Minus:
    return "'-'";
  case TokenKind::Star:
    return "'*'";
  case TokenKind::Slash:
    return "'/'";
  case TokenKind::StarStar:
    return "'**'";
  case TokenKind::Ellipsis:
    return "'...'";
  case TokenKind::Less:
    return "'<'";
  case TokenKind::LessEqual:
    return "'<='";
  case TokenKind::Greater:
    return "'>'";
  case TokenKind::GreaterEqual:
    return "'>='";
  case TokenKind::EqualEqual:
    return "'=='";
  case TokenKind::NotEqual:
    return "'!='";
  }
  return "token";
}

std::string quoteForDiagnostic(llvm::StringRef text, size_t maxLen) {
  if (text.size() <= maxLen)
    return escapeForTerminal(text);
  // Cut on a character boundary: drop a partial UTF-8 sequence at the end.
  llvm::StringRef head = text.take_front(maxLen);
  size_t continuation = 0;
  while (continuation < 3 && continuation < head.size() &&
         (head[head.size() - 1 - continuation] & 0xC0) == 0x80)
    ++continuation;
  if (continuation < head.size()) {
    unsigned char lead = head[head.size() - 1 - continuation];
    if (lead >= 0xC0 && llvm::getNumBytesForUTF8(lead) > continuation + 1)
      head = head.drop_back(continuation + 1);
  }
  return escapeForTerminal(head) + "...";
}

std::string Token::describe() const {
  switch (kind) {
  case TokenKind::Eof:
  case TokenKind::Newline:
    return tokenKindSpelling(kind).str();
  case TokenKind::String:
    return "string \"" + quoteForDiagnostic(stringValue()) + "\"";
  default:
    return "'" + quoteForDiagnostic(text) + "'";
  }
}

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

/// A byte that starts no token and separates none: stray text such as `$`,
/// `?`, a non-ASCII character or a control byte. A run of them is one error.
static bool isStrayByte(char c) {
  if (c == '\0' || isIdentChar(c))
    return false;
  return !llvm::StringRef(" \t\r\f\v\n#\"()[]{},:=~+-*/.").contains(c);
}

/// True when `text` is exactly one character: one byte, or one valid UTF-8
/// sequence.
static bool isOneCharacter(llvm::StringRef text) {
  if (text.size() <= 1)
    return true;
  auto *first = reinterpret_cast<const llvm::UTF8 *>(text.data());
  return llvm::getNumBytesForUTF8(first[0]) == text.size() &&
         llvm::isLegalUTF8Sequence(first, first + text.size());
}

Lexer::Lexer(const SourceFile &file, DiagnosticEngine &diags)
    : file_(file), diags_(diags), text_(file.text()) {
  // A NUL byte means a binary file (or a wrong path): one error at the first
  // one, and no tokens, rather than a screen of errors about its bytes.
  size_t nul = text_.find('\0');
  if (nul != llvm::StringRef::npos) {
    size_t lineStart = text_.rfind('\n', nul);
    lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
    uint32_t line = 1 + uint32_t(text_.take_front(lineStart).count('\n'));
    diags_.error(SourceLoc{line, uint32_t(nul - lineStart + 1)},
                 "unexpected NUL byte: this looks like a binary file, not a "
                 "model (a text file)");
    pos_ = text_.size();
    done_ = true;
  }
}

char Lexer::peekChar(size_t ahead) const {
  size_t at = pos_ + ahead;
  return at < text_.size() ? text_[at] : '\0';
}

SourceLoc Lexer::locAt(size_t offset) const {
  // Tokens never span lines, except the skipped newlines (tracked apart).
  return SourceLoc{line_, uint32_t(offset - lineStart_ + 1)};
}

Token Lexer::make(TokenKind kind, size_t begin, size_t end) {
  Token tok;
  tok.kind = kind;
  tok.loc = locAt(begin);
  tok.offset = uint32_t(begin);
  tok.text = text_.slice(begin, end);
  return tok;
}

bool Lexer::newlinesSkipped() const { return !nesting_.empty() && nesting_.back() != '{'; }

void Lexer::skipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n')
        ++pos_;
    } else if (c == '\n' && newlinesSkipped()) {
      if (!skippedNewline_) {
        skippedNewline_ = true;
        skippedNewlineLoc_ = locAt(pos_);
        skippedNewlineOffset_ = uint32_t(pos_);
      }
      ++pos_;
      ++line_;
      lineStart_ = pos_;
    } else {
      return;
    }
  }
}

Token Lexer::lexIdentifier(size_t begin) {
  while (pos_ < text_.size() && isIdentChar(text_[pos_]))
    ++pos_;
  llvm::StringRef word = text_.slice(begin, pos_);
  TokenKind kind = llvm::StringSwitch<TokenKind>(word)
                       .Case("dim", TokenKind::KwDim)
                       .Case("input", TokenKind::KwInput)
                       .Case("param", TokenKind::KwParam)
                       .Case("buffer", TokenKind::KwBuffer)
                       .Case("fn", TokenKind::KwFn)
                       .Case("for", TokenKind::KwFor)
                       .Case("in", TokenKind::KwIn)
                       .Case("output", TokenKind::KwOutput)
                       .Case("minimize", TokenKind::KwMinimize)
                       .Case("return", TokenKind::KwReturn)
                       .Case("train", TokenKind::KwTrain)
                       .Default(TokenKind::Identifier);
  return make(kind, begin, pos_);
}

Token Lexer::lexNumber(size_t begin) {
  bool isInteger = true;
  while (isDigit(peekChar()))
    ++pos_;
  if (peekChar() == '.' && !(peekChar(1) == '.' && peekChar(2) == '.')) {
    isInteger = false;
    ++pos_;
    while (isDigit(peekChar()))
      ++pos_;
  }
  if (peekChar() == 'e' || peekChar() == 'E') {
    size_t save = pos_;
    ++pos_;
    if (peekChar() == '+' || peekChar() == '-')
      ++pos_;
    if (!isDigit(peekChar())) {
      // `2e`, `1e+`: a malformed exponent. Swallow the identifier tail so the
      // error is reported once.
      while (isIdentChar(peekChar()))
        ++pos_;
      Token tok = make(TokenKind::Error, begin, pos_);
      diags_.error(tok.loc, "expected digits in the exponent of number '" +
                                quoteForDiagnostic(tok.text) + "'");
      (void)save;
      return tok;
    }
    isInteger = false;
    while (isDigit(peekChar()))
      ++pos_;
  }
  Token tok = make(TokenKind::Number, begin, pos_);
  // `3heads`: a number glued to a name is a typo, not two tokens.
  if (isIdentChar(peekChar())) {
    while (isIdentChar(peekChar()))
      ++pos_;
    tok = make(TokenKind::Error, begin, pos_);
    diags_.error(tok.loc, "invalid number '" + quoteForDiagnostic(tok.text) + "'");
    return tok;
  }
  tok.isInteger = isInteger;
  if (isInteger) {
    int64_t value = 0;
    if (tok.text.getAsInteger(10, value)) {
      diags_.error(tok.loc, "integer literal too large: '" + quoteForDiagnostic(tok.text) + "'");
      tok.kind = TokenKind::Error;
      return tok;
    }
    tok.intValue = value;
    tok.number = double(value);
    return tok;
  }
  std::string spelled = tok.text.str();
  double value = std::strtod(spelled.c_str(), nullptr);
  if (!std::isfinite(value)) {
    diags_.error(tok.loc, "number literal too large: '" + quoteForDiagnostic(tok.text) + "'");
    tok.kind = TokenKind::Error;
    return tok;
  }
  tok.number = value;
  return tok;
}

Token Lexer::lexString(size_t begin) {
  ++pos_; // the opening quote
  while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n')
    ++pos_;
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    Token tok = make(TokenKind::Error, begin, pos_);
    diags_.error(tok.loc, "unterminated string");
    return tok;
  }
  ++pos_;
  return make(TokenKind::String, begin, pos_);
}

Token Lexer::next() {
  if (pendingValid_) {
    pendingValid_ = false;
    atLineStart_ = pending_.is(TokenKind::Newline);
    return pending_;
  }
  for (;;) {
    if (done_)
      return make(TokenKind::Eof, text_.size(), text_.size());
    skipSpaceAndComments();

    if (pos_ >= text_.size()) {
      if (!atLineStart_) {
        atLineStart_ = true;
        Token newline = make(TokenKind::Newline, pos_, pos_);
        // An unclosed ( or [ swallowed the last newlines: point at the first
        // of them, the end of the line where the statement stopped.
        if (skippedNewline_) {
          newline.loc = skippedNewlineLoc_;
          newline.offset = skippedNewlineOffset_;
          newline.text = text_.substr(skippedNewlineOffset_, 1);
          skippedNewline_ = false;
        }
        return newline;
      }
      done_ = true;
      continue;
    }

    size_t begin = pos_;
    char c = text_[pos_];
    if (c == '\n') {
      Token tok = make(TokenKind::Newline, begin, begin + 1);
      ++pos_;
      ++line_;
      lineStart_ = pos_;
      skippedNewline_ = false;
      if (atLineStart_)
        continue; // blank lines produce no token
      atLineStart_ = true;
      return tok;
    }

    bool afterSkippedNewline = skippedNewline_;
    skippedNewline_ = false;
    Token tok;
    if (isIdentStart(c)) {
      tok = lexIdentifier(begin);
      // A statement keyword first on a line inside ( ) or [ ]: the brackets
      // were left open by mistake. End the statement here so the parser
      // reports the missing bracket and recovers at this keyword.
      if (afterSkippedNewline && tok.isKeyword() && !tok.is(TokenKind::KwIn)) {
        while (!nesting_.empty() && nesting_.back() != '{')
          nesting_.pop_back();
        pending_ = tok;
        pendingValid_ = true;
        Token newline;
        newline.kind = TokenKind::Newline;
        newline.loc = skippedNewlineLoc_;
        newline.offset = skippedNewlineOffset_;
        newline.text = text_.substr(skippedNewlineOffset_, 1);
        atLineStart_ = true;
        return newline;
      }
    } else if (isDigit(c) || (c == '.' && isDigit(peekChar(1)))) {
      tok = lexNumber(begin);
    } else if (c == '"') {
      tok = lexString(begin);
    } else {
      TokenKind kind = TokenKind::Error;
      size_t len = 1;
      switch (c) {
      case '(':
        kind = TokenKind::LParen;
        nesting_.push_back('(');
        break;
      case '[':
        kind = TokenKind::LBracket;
        nesting_.push_back('[');
        break;
      case '{':
        kind = TokenKind::LBrace;
        nesting_.push_back('{');
        break;
      case ')':
      case ']': {
        kind = c == ')' ? TokenKind::RParen : TokenKind::RBracket;
        char open = c == ')' ? '(' : '[';
        // Close the matching bracket if one is open in the current block;
        // a stray closer leaves the nesting alone (the parser reports it).
        for (size_t i = nesting_.size(); i-- > 0;) {
          if (nesting_[i] == '{')
            break;
          if (nesting_[i] == open) {
            nesting_.resize(i);
            break;
          }
        }
        break;
      }
      case '}':
        kind = TokenKind::RBrace;
        for (size_t i = nesting_.size(); i-- > 0;) {
          if (nesting_[i] == '{') {
            nesting_.resize(i);
            break;
          }
        }
        break;
      case ',':
        kind = TokenKind::Comma;
        break;
      case ':':
        kind = TokenKind::Colon;
        break;
      case '=':
        kind = peekChar(1) == '=' ? TokenKind::EqualEqual : TokenKind::Equal;
        len = kind == TokenKind::EqualEqual ? 2 : 1;
        break;
      case '<':
      case '>': {
        bool orEqual = peekChar(1) == '=';
        kind = c == '<' ? (orEqual ? TokenKind::LessEqual : TokenKind::Less)
                        : (orEqual ? TokenKind::GreaterEqual : TokenKind::Greater);
        len = orEqual ? 2 : 1;
        break;
      }
      case '!':
        if (peekChar(1) == '=') {
          kind = TokenKind::NotEqual;
          len = 2;
        }
        break;
      case '~':
        kind = TokenKind::Tilde;
        break;
      case '+':
        kind = TokenKind::Plus;
        break;
      case '/':
        kind = TokenKind::Slash;
        break;
      case '-':
        if (peekChar(1) == '>') {
          kind = TokenKind::Arrow;
          len = 2;
        } else {
          kind = TokenKind::Minus;
        }
        break;
      case '*':
        if (peekChar(1) == '*') {
          kind = TokenKind::StarStar;
          len = 2;
        } else {
          kind = TokenKind::Star;
        }
        break;
      case '.':
        if (peekChar(1) == '.' && peekChar(2) == '.') {
          kind = TokenKind::Ellipsis;
          len = 3;
        }
        break;
      default:
        break;
      }
      pos_ += len;
      if (kind == TokenKind::Error && isStrayByte(c))
        while (pos_ < text_.size() && isStrayByte(text_[pos_]))
          ++pos_;
      tok = make(kind, begin, pos_);
      if (kind == TokenKind::Error)
        diags_.error(tok.loc, llvm::Twine("unexpected character") +
                                  (isOneCharacter(tok.text) ? "" : "s") + " '" +
                                  quoteForDiagnostic(tok.text) + "'");
    }
    atLineStart_ = false;
    return tok;
  }
}

std::vector<Token> Lexer::lexAll() {
  std::vector<Token> tokens;
  for (;;) {
    tokens.push_back(next());
    if (tokens.back().is(TokenKind::Eof))
      return tokens;
  }
}

} // namespace ein::dsl
