//===- Parser.cpp - Model file -> AST: statements -------------------------===//

#include "dsl/ParserImpl.h"

namespace ein::dsl {
namespace parser {

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

void Parser::parseStatements(Context ctx, std::vector<StmtPtr> &out, bool inBlock) {
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
    if (accept(TokenKind::Newline) || at(TokenKind::Eof) || (inBlock && at(TokenKind::RBrace)))
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
      diags_.error(tok.loc, "only assignments and return are allowed in a function "
                            "body, found '" +
                                keywordName(kind) + "'");
      misplaced = true;
    } else if (kind == TokenKind::KwReturn && ctx != Context::Function) {
      diags_.error(tok.loc, "'return' is only allowed in a function body");
      misplaced = true;
    } else if (ctx == Context::Loop && kind != TokenKind::KwParam && kind != TokenKind::KwBuffer &&
               kind != TokenKind::KwFor) {
      diags_.error(tok.loc, "'" + keywordName(kind) +
                                "' is not allowed inside a 'for' loop (only "
                                "param, buffer, for and assignments are)");
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
  case TokenKind::KwBuffer:
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
  stmt->buffer = at(TokenKind::KwBuffer);
  stmt->loc = consume().loc;
  if (!at(TokenKind::Identifier))
    return expected(stmt->buffer ? "a buffer name after 'buffer'"
                                 : "a parameter name after 'param'");
  Token name = consume();
  stmt->name = name.text.str();
  stmt->nameLoc = name.loc;
  if (!expect(TokenKind::Colon,
              stmt->buffer ? "':' after buffer name" : "':' after parameter name"))
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

bool Parser::parseBlock(Context ctx, std::vector<StmtPtr> &body, llvm::StringRef what) {
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
      return expected(stmt->targets.size() == 1 ? "'=' or ',' after assignment target"
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

} // namespace parser

using parser::Parser;

std::unique_ptr<Program> parseProgram(const SourceFile &file, DiagnosticEngine &diags) {
  Parser parser(file, diags);
  return parser.parseProgram();
}

ExprPtr parseExpression(const SourceFile &file, DiagnosticEngine &diags) {
  Parser parser(file, diags);
  return parser.parseSingleExpression();
}

} // namespace ein::dsl
