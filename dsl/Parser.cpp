//===- Parser.cpp - Model file -> AST -------------------------------------===//

#include "dsl/Parser.h"

#include "dsl/Lexer.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <deque>

namespace ein::dsl {
namespace {

/// Where a statement appears: what it may be.
enum class Context { TopLevel, Function, Loop };

class Parser {
public:
  Parser(const SourceFile &file, DiagnosticEngine &diags)
      : lexer_(file, diags), diags_(diags) {}

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
  bool parseBlock(Context ctx, std::vector<StmtPtr> &body,
                  llvm::StringRef what);

  //===--- Shapes ----------------------------------------------------------===//
  bool parseShape(std::vector<AxisSpec> &shape);
  bool parseAxis(AxisSpec &axis);
  bool parseAxisInteger(AxisSpec &axis, const Token &tok);

  //===--- Expressions -----------------------------------------------------===//
  ExprPtr parseExpr();
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

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

std::unique_ptr<Program> Parser::parseProgram() {
  auto program = std::make_unique<Program>();
  parseStatements(Context::TopLevel, program->stmts, /*inBlock=*/false);
  return program;
}

ExprPtr Parser::parseSingleExpression() {
  while (accept(TokenKind::Newline)) {
  }
  ExprPtr expr = parseExpr();
  if (!expr)
    return nullptr;
  accept(TokenKind::Newline);
  if (!at(TokenKind::Eof)) {
    expected("end of expression");
    return nullptr;
  }
  return expr;
}

void Parser::synchronize(bool inBlock) {
  unsigned braces = 0;
  for (;;) {
    const Token &tok = peek();
    switch (tok.kind) {
    case TokenKind::Eof:
      return;
    case TokenKind::Newline:
      consume();
      if (braces == 0)
        return;
      break;
    case TokenKind::LBrace:
      ++braces;
      consume();
      break;
    case TokenKind::RBrace:
      if (braces > 0) {
        --braces;
      } else if (inBlock) {
        return; // the enclosing block's '}'
      }
      consume();
      break;
    default:
      consume();
      break;
    }
  }
}

void Parser::parseStatements(Context ctx, std::vector<StmtPtr> &out,
                             bool inBlock) {
  for (;;) {
    while (accept(TokenKind::Newline)) {
    }
    if (diags_.stopped() || at(TokenKind::Eof))
      return;
    if (at(TokenKind::RBrace)) {
      if (inBlock)
        return;
      diags_.error(peek().loc, "expected a statement, found '}' (no block "
                               "is open)");
      consume();
      continue;
    }
    StmtPtr stmt;
    if (!parseStatement(ctx, stmt)) {
      synchronize(inBlock);
      continue;
    }
    if (stmt)
      out.push_back(std::move(stmt));
    if (accept(TokenKind::Newline) || at(TokenKind::Eof) ||
        (inBlock && at(TokenKind::RBrace)))
      continue;
    expected("newline after statement");
    synchronize(inBlock);
  }
}

static llvm::StringRef keywordName(TokenKind kind) {
  llvm::StringRef spelled = tokenKindSpelling(kind);
  return spelled.drop_front().drop_back(); // 'dim' -> dim
}

bool Parser::parseStatement(Context ctx, StmtPtr &out) {
  const Token &tok = peek();
  TokenKind kind = tok.kind;

  // Statements that are well-formed but misplaced: report, parse them anyway
  // (so the rest of the block is read correctly), then drop them.
  bool misplaced = false;
  if (tok.isKeyword() && kind != TokenKind::KwIn) {
    if (ctx == Context::Function && kind != TokenKind::KwReturn) {
      diags_.error(tok.loc,
                   "only assignments and return are allowed in a function "
                   "body, found '" + keywordName(kind) + "'");
      misplaced = true;
    } else if (kind == TokenKind::KwReturn && ctx != Context::Function) {
      diags_.error(tok.loc, "'return' is only allowed in a function body");
      misplaced = true;
    } else if (ctx == Context::Loop && kind != TokenKind::KwParam &&
               kind != TokenKind::KwFor) {
      diags_.error(tok.loc, "'" + keywordName(kind) +
                                "' is not allowed inside a 'for' loop (only "
                                "param, for and assignments are)");
      misplaced = true;
    }
  }

  bool ok;
  switch (kind) {
  case TokenKind::KwDim:
    ok = parseDim(out);
    break;
  case TokenKind::KwInput:
    ok = parseInput(out);
    break;
  case TokenKind::KwParam:
    ok = parseParam(out);
    break;
  case TokenKind::KwFn:
    ok = parseFn(out);
    break;
  case TokenKind::KwFor:
    ok = parseFor(out);
    break;
  case TokenKind::KwOutput:
    ok = parseValueStmt(StmtKind::Output, out);
    break;
  case TokenKind::KwMinimize:
    ok = parseValueStmt(StmtKind::Minimize, out);
    break;
  case TokenKind::KwReturn:
    ok = parseValueStmt(StmtKind::Return, out);
    break;
  case TokenKind::KwTrain:
    ok = parseTrain(out);
    break;
  case TokenKind::Identifier:
    ok = parseAssign(out);
    break;
  default:
    return expected("a statement");
  }
  if (misplaced)
    out.reset();
  return ok;
}

bool Parser::parseDim(StmtPtr &out) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::Dim;
  stmt->loc = consume().loc;
  if (!at(TokenKind::Identifier))
    return expected("a dim name after 'dim'");
  Token name = consume();
  stmt->name = name.text.str();
  stmt->nameLoc = name.loc;
  if (!expect(TokenKind::Equal, "'=' after dim name"))
    return false;
  stmt->value = parseExpr();
  if (!stmt->value)
    return false;
  out = std::move(stmt);
  return true;
}

bool Parser::parseInput(StmtPtr &out) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::Input;
  stmt->loc = consume().loc;
  if (!at(TokenKind::Identifier))
    return expected("an input name after 'input'");
  Token name = consume();
  stmt->name = name.text.str();
  stmt->nameLoc = name.loc;
  if (!expect(TokenKind::Colon, "':' after input name"))
    return false;
  if (!at(TokenKind::Identifier))
    return expected("a dtype after ':'");
  Token dtype = consume();
  stmt->dtype = dtype.text.str();
  stmt->dtypeLoc = dtype.loc;
  if (!parseShape(stmt->shape))
    return false;
  out = std::move(stmt);
  return true;
}

bool Parser::parseParam(StmtPtr &out) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::Param;
  stmt->loc = consume().loc;
  if (!at(TokenKind::Identifier))
    return expected("a parameter name after 'param'");
  Token name = consume();
  stmt->name = name.text.str();
  stmt->nameLoc = name.loc;
  if (!expect(TokenKind::Colon, "':' after parameter name"))
    return false;
  if (at(TokenKind::Identifier)) {
    Token dtype = consume();
    stmt->dtype = dtype.text.str();
    stmt->dtypeLoc = dtype.loc;
  } else if (!at(TokenKind::LBracket)) {
    return expected("a dtype or '[' after ':'");
  }
  if (!parseShape(stmt->shape))
    return false;
  if (accept(TokenKind::Tilde)) {
    stmt->value = parseExpr();
    if (!stmt->value)
      return false;
  }
  out = std::move(stmt);
  return true;
}

bool Parser::parseBlock(Context ctx, std::vector<StmtPtr> &body,
                        llvm::StringRef what) {
  if (!at(TokenKind::LBrace))
    return expected("'{' to start the " + what);
  Token open = consume();
  bool ok = enter(open.loc, "block");
  DepthScope scope(*this);
  if (!ok) {
    skipBlockRest();
    return false;
  }
  parseStatements(ctx, body, /*inBlock=*/true);
  if (accept(TokenKind::RBrace))
    return true;
  // At the end of the file only the innermost open block is reported.
  if (at(TokenKind::Eof) && reportedEofInBlock_)
    return false;
  reportedEofInBlock_ = at(TokenKind::Eof);
  expected("'}' to close the " + what);
  diags_.note(open.loc, "the " + what + " starts here");
  return false;
}

void Parser::skipBlockRest() {
  unsigned braces = 1;
  while (!at(TokenKind::Eof)) {
    Token tok = consume();
    if (tok.is(TokenKind::LBrace))
      ++braces;
    else if (tok.is(TokenKind::RBrace) && --braces == 0)
      return;
  }
}

bool Parser::parseFn(StmtPtr &out) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::Fn;
  stmt->loc = consume().loc;
  if (!at(TokenKind::Identifier))
    return expected("a function name after 'fn'");
  Token name = consume();
  stmt->name = name.text.str();
  stmt->nameLoc = name.loc;
  if (!expect(TokenKind::LParen, "'(' after function name"))
    return false;
  while (!at(TokenKind::RParen)) {
    if (!at(TokenKind::Identifier))
      return expected("a parameter name");
    Token pname = consume();
    FnParam param;
    param.name = pname.text.str();
    param.loc = pname.loc;
    if (!expect(TokenKind::Colon, "':' after parameter name"))
      return false;
    if (at(TokenKind::Identifier))
      param.dtype = consume().text.str();
    else if (!at(TokenKind::LBracket))
      return expected("a dtype or '[' after ':'");
    if (!parseShape(param.shape))
      return false;
    stmt->params.push_back(std::move(param));
    if (accept(TokenKind::Comma))
      continue;
    if (!at(TokenKind::RParen))
      return expected("',' or ')' after parameter");
  }
  consume(); // ')'
  if (!expect(TokenKind::Arrow, "'->' and the result shape after ')'"))
    return false;
  if (!parseShape(stmt->resultShape))
    return false;
  if (!parseBlock(Context::Function, stmt->body, "function body"))
    return false;
  out = std::move(stmt);
  return true;
}

bool Parser::parseFor(StmtPtr &out) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::For;
  stmt->loc = consume().loc;
  if (!at(TokenKind::Identifier))
    return expected("a loop variable after 'for'");
  Token var = consume();
  stmt->name = var.text.str();
  stmt->nameLoc = var.loc;
  if (!expect(TokenKind::KwIn, "'in' after loop variable"))
    return false;
  if (!at(TokenKind::Identifier))
    return expected("a dim name after 'in'");
  Token range = consume();
  stmt->rangeDim = range.text.str();
  stmt->rangeLoc = range.loc;
  if (!parseBlock(Context::Loop, stmt->body, "loop body"))
    return false;
  out = std::move(stmt);
  return true;
}

bool Parser::parseValueStmt(StmtKind kind, StmtPtr &out) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = kind;
  stmt->loc = consume().loc;
  stmt->value = parseExpr();
  if (!stmt->value)
    return false;
  out = std::move(stmt);
  return true;
}

bool Parser::parseTrain(StmtPtr &out) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::Train;
  stmt->loc = consume().loc;
  if (!at(TokenKind::LBrace))
    return expected("'{' after 'train'");
  Token open = consume();
  for (;;) {
    while (accept(TokenKind::Newline)) {
    }
    if (diags_.stopped())
      return false;
    if (accept(TokenKind::RBrace))
      break;
    if (at(TokenKind::Eof)) {
      if (reportedEofInBlock_)
        return false;
      reportedEofInBlock_ = true;
      expected("'}' to close the train section");
      diags_.note(open.loc, "the train section starts here");
      return false;
    }
    if (!at(TokenKind::Identifier)) {
      expected("a setting name in the train section");
      synchronize(/*inBlock=*/true);
      continue;
    }
    Token key = consume();
    TrainSetting setting;
    setting.key = key.text.str();
    setting.loc = key.loc;
    if (!expect(TokenKind::Equal, "'=' after setting name")) {
      synchronize(/*inBlock=*/true);
      continue;
    }
    setting.value = parseExpr();
    if (!setting.value) {
      synchronize(/*inBlock=*/true);
      continue;
    }
    stmt->settings.push_back(std::move(setting));
    if (accept(TokenKind::Newline) || at(TokenKind::RBrace))
      continue;
    if (at(TokenKind::Eof))
      continue; // reported as an unclosed section above
    expected("newline after setting");
    synchronize(/*inBlock=*/true);
  }
  out = std::move(stmt);
  return true;
}

bool Parser::parseAssign(StmtPtr &out) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::Assign;
  stmt->loc = peek().loc;
  for (;;) {
    Token name = consume(); // an identifier, checked by the caller or below
    stmt->targets.push_back({name.text.str(), name.loc});
    if (accept(TokenKind::Equal))
      break;
    if (!accept(TokenKind::Comma))
      return expected(stmt->targets.size() == 1
                          ? "'=' or ',' after assignment target"
                          : "'=' or ',' after assignment targets");
    if (!at(TokenKind::Identifier))
      return expected("a name after ',' in assignment targets");
  }
  stmt->name = stmt->targets.front().name;
  stmt->nameLoc = stmt->targets.front().loc;
  stmt->value = parseExpr();
  if (!stmt->value)
    return false;
  out = std::move(stmt);
  return true;
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

bool Parser::parseShape(std::vector<AxisSpec> &shape) {
  if (!at(TokenKind::LBracket))
    return expected("'[' to start a shape");
  consume();
  if (accept(TokenKind::RBracket))
    return true; // a scalar
  for (;;) {
    AxisSpec axis;
    if (!parseAxis(axis))
      return false;
    shape.push_back(std::move(axis));
    if (accept(TokenKind::RBracket))
      return true;
    if (!accept(TokenKind::Comma))
      return expected("',' or ']' in shape");
  }
}

bool Parser::parseAxisInteger(AxisSpec &axis, const Token &tok) {
  if (!tok.isInteger) {
    diags_.error(tok.loc, "axis size must be an integer, found '" +
                              quoteForDiagnostic(tok.text) + "'");
    return false;
  }
  axis.kind = AxisSpec::Kind::Number;
  axis.number = tok.intValue;
  return true;
}

bool Parser::parseAxis(AxisSpec &axis) {
  const Token &tok = peek();
  axis.loc = tok.loc;
  switch (tok.kind) {
  case TokenKind::Identifier:
    axis.kind = AxisSpec::Kind::Name;
    axis.name = consume().text.str();
    return true;
  case TokenKind::Number:
    return parseAxisInteger(axis, consume());
  case TokenKind::Ellipsis:
    consume();
    axis.kind = AxisSpec::Kind::Ellipsis;
    return true;
  case TokenKind::LParen:
    break;
  default:
    return expected("an axis (a name, an integer, '...' or '( )')");
  }
  consume();
  axis.kind = AxisSpec::Kind::Group;
  for (;;) {
    const Token &member = peek();
    AxisSpec inner;
    inner.loc = member.loc;
    if (member.is(TokenKind::Identifier)) {
      inner.kind = AxisSpec::Kind::Name;
      inner.name = consume().text.str();
    } else if (member.is(TokenKind::Number)) {
      if (!parseAxisInteger(inner, consume()))
        return false;
    } else if (member.is(TokenKind::RParen) && !axis.members.empty()) {
      consume();
      return true;
    } else if (member.is(TokenKind::LParen)) {
      diags_.error(member.loc, "nested parentheses are not allowed in a shape");
      return false;
    } else if (member.is(TokenKind::Ellipsis)) {
      diags_.error(member.loc, "'...' is not allowed inside '( )' in a shape");
      return false;
    } else {
      return expected(axis.members.empty()
                          ? "an axis name or integer after '('"
                          : "an axis name, integer or ')' in '( )'");
    }
    axis.members.push_back(std::move(inner));
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr Parser::finish(ExprPtr expr) {
  unsigned h = 0;
  for (const ExprPtr &arg : expr->args)
    h = std::max(h, height(arg));
  for (const KeywordArg &kw : expr->kwargs)
    h = std::max(h, height(kw.value));
  ++h;
  if (h > kMaxParseDepth) {
    diags_.error(expr->loc, "expression nested too deeply");
    return nullptr;
  }
  // Children are never looked up again; keep the map small.
  for (const ExprPtr &arg : expr->args)
    heights_.erase(arg.get());
  for (const KeywordArg &kw : expr->kwargs)
    heights_.erase(kw.value.get());
  // Every node passes here when made, so a stale entry left by a node freed
  // on an error path is overwritten before its address can be read again.
  heights_[expr.get()] = h;
  return expr;
}

ExprPtr Parser::parseExpr() { return parseAdditive(); }

static ExprPtr makeBinary(char op, SourceLoc loc, ExprPtr lhs, ExprPtr rhs) {
  auto expr = std::make_unique<Expr>();
  expr->kind = ExprKind::Binary;
  expr->op = op;
  expr->loc = loc;
  expr->args.push_back(std::move(lhs));
  expr->args.push_back(std::move(rhs));
  return expr;
}

ExprPtr Parser::parseAdditive() {
  ExprPtr lhs = parseMultiplicative();
  while (lhs && (at(TokenKind::Plus) || at(TokenKind::Minus))) {
    Token op = consume();
    ExprPtr rhs = parseMultiplicative();
    if (!rhs)
      return nullptr;
    lhs = finish(makeBinary(op.is(TokenKind::Plus) ? '+' : '-', op.loc,
                            std::move(lhs), std::move(rhs)));
  }
  return lhs;
}

ExprPtr Parser::parseMultiplicative() {
  ExprPtr lhs = parseUnary();
  while (lhs && (at(TokenKind::Star) || at(TokenKind::Slash))) {
    Token op = consume();
    ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = finish(makeBinary(op.is(TokenKind::Star) ? '*' : '/', op.loc,
                            std::move(lhs), std::move(rhs)));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  if (!at(TokenKind::Minus))
    return parsePower();
  Token op = consume();
  bool ok = enter(op.loc, "expression");
  DepthScope scope(*this);
  if (!ok)
    return nullptr;
  ExprPtr operand = parseUnary();
  if (!operand)
    return nullptr;
  auto expr = std::make_unique<Expr>();
  expr->kind = ExprKind::Unary;
  expr->op = '-';
  expr->loc = op.loc;
  expr->args.push_back(std::move(operand));
  return finish(std::move(expr));
}

ExprPtr Parser::parsePower() {
  ExprPtr base = parsePostfix();
  if (!base || !at(TokenKind::StarStar))
    return base;
  Token op = consume();
  bool ok = enter(op.loc, "expression");
  DepthScope scope(*this);
  if (!ok)
    return nullptr;
  ExprPtr exponent = parseUnary(); // right-associative: a ** -b ** c
  if (!exponent)
    return nullptr;
  return finish(makeBinary('^', op.loc, std::move(base), std::move(exponent)));
}

ExprPtr Parser::parsePostfix() {
  ExprPtr expr;
  if (at(TokenKind::Identifier) && peek(1).is(TokenKind::LParen))
    expr = parseCall();
  else
    expr = parsePrimary();
  while (expr) {
    if (at(TokenKind::LBracket)) {
      Token open = consume();
      bool ok = enter(open.loc, "expression");
      DepthScope scope(*this);
      if (!ok)
        return nullptr;
      ExprPtr index = parseExpr();
      if (!index)
        return nullptr;
      if (!at(TokenKind::RBracket)) {
        expected("']' after index");
        noteOpener(open, "'[' opened here");
        return nullptr;
      }
      consume();
      auto node = std::make_unique<Expr>();
      node->kind = ExprKind::Index;
      node->loc = expr->loc;
      node->args.push_back(std::move(expr));
      node->args.push_back(std::move(index));
      expr = finish(std::move(node));
    } else if (at(TokenKind::LParen)) {
      diags_.error(peek().loc, "only a function name can be called");
      return nullptr;
    } else {
      break;
    }
  }
  return expr;
}

ExprPtr Parser::parseCall() {
  Token callee = consume();
  Token open = consume(); // '('
  bool ok = enter(open.loc, "expression");
  DepthScope scope(*this);
  if (!ok)
    return nullptr;
  auto call = std::make_unique<Expr>();
  call->kind = ExprKind::Call;
  call->loc = callee.loc;
  call->callee = callee.text.str();
  call->calleeLoc = callee.loc;
  while (!at(TokenKind::RParen)) {
    if (at(TokenKind::Identifier) && peek(1).is(TokenKind::Equal)) {
      Token name = consume();
      consume(); // '='
      for (const KeywordArg &kw : call->kwargs) {
        if (kw.name == name.text) {
          diags_.error(name.loc, "duplicate keyword argument '" + name.text +
                                     "'");
          diags_.note(kw.loc, "first given here");
          return nullptr;
        }
      }
      ExprPtr value = parseExpr();
      if (!value)
        return nullptr;
      call->kwargs.push_back({name.text.str(), name.loc, std::move(value)});
    } else {
      SourceLoc argLoc = peek().loc;
      if (!call->kwargs.empty() && !peek().is(TokenKind::Error)) {
        diags_.error(argLoc, "positional argument after keyword argument");
        return nullptr;
      }
      ExprPtr arg = parseExpr();
      if (!arg)
        return nullptr;
      call->args.push_back(std::move(arg));
    }
    if (accept(TokenKind::Comma))
      continue;
    if (!at(TokenKind::RParen)) {
      expected("',' or ')' in call to '" + callee.text + "'");
      noteOpener(open, "the call's '(' is here");
      return nullptr;
    }
  }
  consume(); // ')'
  return finish(std::move(call));
}

ExprPtr Parser::parsePrimary() {
  const Token &tok = peek();
  switch (tok.kind) {
  case TokenKind::Number: {
    Token num = consume();
    auto expr = std::make_unique<Expr>();
    expr->kind = ExprKind::Number;
    expr->loc = num.loc;
    expr->number = num.number;
    expr->isInteger = num.isInteger;
    expr->text = num.text.str();
    return finish(std::move(expr));
  }
  case TokenKind::Identifier: {
    Token name = consume();
    auto expr = std::make_unique<Expr>();
    expr->kind = ExprKind::Name;
    expr->loc = name.loc;
    expr->text = name.text.str();
    return finish(std::move(expr));
  }
  case TokenKind::String: {
    Token str = consume();
    auto expr = std::make_unique<Expr>();
    expr->kind = ExprKind::String;
    expr->loc = str.loc;
    expr->text = str.stringValue().str();
    return finish(std::move(expr));
  }
  case TokenKind::LParen: {
    Token open = consume();
    bool ok = enter(open.loc, "expression");
    DepthScope scope(*this);
    if (!ok)
      return nullptr;
    ExprPtr inner = parseExpr();
    if (!inner)
      return nullptr;
    if (!at(TokenKind::RParen)) {
      expected("')' to close '('");
      noteOpener(open, "'(' opened here");
      return nullptr;
    }
    consume();
    return inner;
  }
  default:
    expected("an expression");
    return nullptr;
  }
}

} // namespace

std::unique_ptr<Program> parseProgram(const SourceFile &file,
                                      DiagnosticEngine &diags) {
  Parser parser(file, diags);
  return parser.parseProgram();
}

ExprPtr parseExpression(const SourceFile &file, DiagnosticEngine &diags) {
  Parser parser(file, diags);
  return parser.parseSingleExpression();
}

} // namespace ein::dsl
