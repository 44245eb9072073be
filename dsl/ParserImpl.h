//===- ParserImpl.h - The recursive-descent parser, shared by its parts -*- C++ -*-===//
//
// Internal to dsl/: Parser.cpp holds the statements, ParseExpressions.cpp the
// shapes and expressions.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_PARSERIMPL_H
#define EINC_DSL_PARSERIMPL_H

#include "dsl/Parser.h"

#include "dsl/Lexer.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <deque>

namespace ein::dsl::parser {

/// Where a statement appears: what it may be.
enum class Context { TopLevel, Function, Loop };

class Parser {
public:
  Parser(const SourceFile &file, DiagnosticEngine &diags) : lexer_(file, diags), diags_(diags) {}

  std::unique_ptr<Program> parseProgram();
  ExprPtr parseSingleExpression();

private:
  //===--- Tokens ----------------------------------------------------------===//
  const Token &peek(size_t ahead = 0) {
    while (buffer_.size() <= ahead)
      buffer_.push_back(lexer_.next());
    return buffer_[ahead];
  }
  bool at(TokenKind kind) { return peek().is(kind); }
  Token consume() {
    Token tok = peek();
    if (!tok.is(TokenKind::Eof))
      buffer_.pop_front();
    return tok;
  }
  bool accept(TokenKind kind) {
    if (!at(kind))
      return false;
    consume();
    return true;
  }
  /// Reports "expected WHAT, found TOKEN" at the current token (unless that
  /// token is a lexer error, which was reported already). Always false.
  bool expected(const llvm::Twine &what) {
    const Token &tok = peek();
    if (!tok.is(TokenKind::Error))
      diags_.error(tok.loc, "expected " + what + ", found " + tok.describe());
    return false;
  }
  bool expect(TokenKind kind, const llvm::Twine &what) {
    if (accept(kind))
      return true;
    return expected(what);
  }

  /// Skips to the start of the next statement: past the next newline at this
  /// level, skipping whole { } blocks; inside a block, stops before its '}'.
  void synchronize(bool inBlock);
  /// After a '{': skips to its matching '}' (consumed) or the end of file.
  void skipBlockRest();

  //===--- Statements ------------------------------------------------------===//
  void parseStatements(Context ctx, std::vector<StmtPtr> &out, bool inBlock);
  bool parseStatement(Context ctx, StmtPtr &out);
  bool parseDim(StmtPtr &out);
  bool parseInput(StmtPtr &out);
  bool parseParam(StmtPtr &out);
  bool parseFn(StmtPtr &out);
  bool parseFor(StmtPtr &out);
  bool parseValueStmt(StmtKind kind, StmtPtr &out);
  bool parseTrain(StmtPtr &out);
  bool parseAssign(StmtPtr &out);
  bool parseBlock(Context ctx, std::vector<StmtPtr> &body, llvm::StringRef what);

  //===--- Shapes ----------------------------------------------------------===//
  bool parseShape(std::vector<AxisSpec> &shape);
  bool parseAxis(AxisSpec &axis);
  bool parseAxisInteger(AxisSpec &axis, const Token &tok);

  //===--- Expressions -----------------------------------------------------===//
  ExprPtr parseExpr();
  ExprPtr parseComparison();
  ExprPtr parseAdditive();
  ExprPtr parseMultiplicative();
  ExprPtr parseUnary();
  ExprPtr parsePower();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr parseCall();

  /// Records the height of a new node and rejects trees deeper than the limit
  /// (later passes walk the tree recursively).
  ExprPtr finish(ExprPtr expr);
  unsigned height(const ExprPtr &expr) const {
    auto it = heights_.find(expr.get());
    return it == heights_.end() ? 1 : it->second;
  }
  /// After an "expected ')'" error: when the culprit is on a later line than
  /// the bracket, shows where the bracket was opened.
  void noteOpener(const Token &open, const llvm::Twine &message) {
    const Token &tok = peek();
    if (!tok.is(TokenKind::Error) && tok.loc.line != open.loc.line)
      diags_.note(open.loc, message);
  }
  /// Enters one level of recursion; false (after a diagnostic) when too deep.
  bool enter(SourceLoc loc, const char *what) {
    if (++depth_ <= kMaxParseDepth)
      return true;
    diags_.error(loc, llvm::Twine(what) + " nested too deeply");
    return false;
  }

  struct DepthScope {
    Parser &parser;
    explicit DepthScope(Parser &p) : parser(p) {}
    ~DepthScope() { --parser.depth_; }
  };

  Lexer lexer_;
  DiagnosticEngine &diags_;
  std::deque<Token> buffer_;
  unsigned depth_ = 0;
  bool reportedEofInBlock_ = false;
  llvm::DenseMap<const Expr *, unsigned> heights_;
};

} // namespace ein::dsl::parser

#endif // EINC_DSL_PARSERIMPL_H
