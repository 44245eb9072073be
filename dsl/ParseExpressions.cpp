//===- ParseExpressions.cpp - Model file -> AST: shapes and expressions ---===//

#include "dsl/ParserImpl.h"

namespace ein::dsl::parser {

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
    diags_.error(tok.loc,
                 "axis size must be an integer, found '" + quoteForDiagnostic(tok.text) + "'");
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
      return expected(axis.members.empty() ? "an axis name or integer after '('"
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
  if (h > kMaxExpressionHeight) {
    diags_.error(expr->loc, "expression too long: more than " +
                                std::to_string(kMaxExpressionHeight) +
                                " operands or levels in one expression; split it into named parts");
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

ExprPtr Parser::parseExpr() { return parseComparison(); }

static ExprPtr makeBinary(char op, SourceLoc loc, ExprPtr lhs, ExprPtr rhs) {
  auto expr = std::make_unique<Expr>();
  expr->kind = ExprKind::Binary;
  expr->op = op;
  expr->loc = loc;
  expr->args.push_back(std::move(lhs));
  expr->args.push_back(std::move(rhs));
  return expr;
}

/// The comparison an operator token is, as Expr::op; 0 for any other token.
static char comparisonOp(TokenKind kind) {
  switch (kind) {
  case TokenKind::Less:
    return '<';
  case TokenKind::Greater:
    return '>';
  case TokenKind::LessEqual:
    return 'l';
  case TokenKind::GreaterEqual:
    return 'g';
  case TokenKind::EqualEqual:
    return 'e';
  case TokenKind::NotEqual:
    return 'n';
  default:
    return 0;
  }
}

// Comparisons bind loosest and do not chain: `a < b < c` would compare a
// mask with c.
ExprPtr Parser::parseComparison() {
  ExprPtr lhs = parseAdditive();
  char op = lhs ? comparisonOp(peek().kind) : 0;
  if (!op)
    return lhs;
  Token opToken = consume();
  ExprPtr rhs = parseAdditive();
  if (!rhs)
    return nullptr;
  if (comparisonOp(peek().kind)) {
    diags_.error(peek().loc, "comparisons do not chain: 'a < b < c' would compare a mask with c");
    return nullptr;
  }
  return finish(makeBinary(op, opToken.loc, std::move(lhs), std::move(rhs)));
}

ExprPtr Parser::parseAdditive() {
  ExprPtr lhs = parseMultiplicative();
  while (lhs && (at(TokenKind::Plus) || at(TokenKind::Minus))) {
    Token op = consume();
    ExprPtr rhs = parseMultiplicative();
    if (!rhs)
      return nullptr;
    lhs = finish(
        makeBinary(op.is(TokenKind::Plus) ? '+' : '-', op.loc, std::move(lhs), std::move(rhs)));
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
    lhs = finish(
        makeBinary(op.is(TokenKind::Star) ? '*' : '/', op.loc, std::move(lhs), std::move(rhs)));
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
          diags_.error(name.loc, "duplicate keyword argument '" + name.text + "'");
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
  case TokenKind::LBracket: {
    Token open = consume();
    bool ok = enter(open.loc, "expression");
    DepthScope scope(*this);
    if (!ok)
      return nullptr;
    auto list = std::make_unique<Expr>();
    list->kind = ExprKind::List;
    list->loc = open.loc;
    while (!at(TokenKind::RBracket)) {
      ExprPtr item = parseExpr();
      if (!item)
        return nullptr;
      list->args.push_back(std::move(item));
      if (accept(TokenKind::Comma))
        continue;
      if (!at(TokenKind::RBracket)) {
        expected("',' or ']' in a list");
        noteOpener(open, "the list's '[' is here");
        return nullptr;
      }
    }
    consume(); // ']'
    return finish(std::move(list));
  }
  default:
    expected("an expression");
    return nullptr;
  }
}

} // namespace ein::dsl::parser
