//===- Parser.h - Model file -> AST ------------------------------*- C++ -*-===//
//
// A recursive-descent parser over the Lexer's tokens. Errors are reported to the
// DiagnosticEngine; the parser recovers at the next statement (newline) and
// always returns a Program holding the statements it could parse.
//
// Grammar (statements are newline-terminated):
//   program   := stmt*
//   stmt      := 'dim' NAME '=' expr
//              | 'input' NAME ':' DTYPE shape
//              | 'param' NAME ':' DTYPE? shape ('~' expr)?
//              | 'fn' NAME '(' (fnparam (',' fnparam)*)? ')' '->' shape block
//              | 'for' NAME 'in' NAME block
//              | 'output' expr | 'minimize' expr | 'return' expr
//              | 'train' '{' (NAME '=' expr)* '}'
//              | NAME (',' NAME)* '=' expr
//   fnparam   := NAME ':' DTYPE? shape
//   shape     := '[' (axis (',' axis)*)? ']'
//   axis      := NAME | INTEGER | '...' | '(' (NAME | INTEGER)+ ')'
//   block     := '{' stmt* '}'
//   expr      := term (('+' | '-') term)*
//   term      := unary (('*' | '/') unary)*
//   unary     := '-' unary | power
//   power     := postfix ('**' unary)?
//   postfix   := primary ('[' expr ']')*  |  NAME '(' args ')' ('[' expr ']')*
//   args      := (arg (',' arg)*)? ','?      arg := expr | NAME '=' expr
//   primary   := NUMBER | NAME | STRING | '(' expr ')'
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_PARSER_H
#define EINC_DSL_PARSER_H

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

#include <memory>

namespace ein::dsl {

/// Nesting limit of expressions, shapes and blocks; deeper input gets the
/// diagnostic "expression nested too deeply" instead of a stack overflow.
constexpr unsigned kMaxParseDepth = 256;

/// Height limit of an expression's tree. A chain `a + b + ... ` is a tree as
/// deep as it is long (every later stage walks it recursively), so it has a
/// limit of its own, well above any nesting a person writes: a longer chain
/// gets "expression too long" instead of a stack overflow.
constexpr unsigned kMaxExpressionHeight = 1024;

/// Parses a whole model file. Never returns null; check diags.hasErrors().
std::unique_ptr<Program> parseProgram(const SourceFile &file, DiagnosticEngine &diags);

/// Parses a single expression (the whole text must be one expression, possibly
/// followed by a newline). Used by tests and by `--set`-style tools. Returns
/// null after reporting an error.
ExprPtr parseExpression(const SourceFile &file, DiagnosticEngine &diags);

} // namespace ein::dsl

#endif // EINC_DSL_PARSER_H
