//===- TestUtil.h - Helpers shared by the front-end unit tests --*- C++ -*-===//
#ifndef EINC_TEST_UNIT_TESTUTIL_H
#define EINC_TEST_UNIT_TESTUTIL_H

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"
#include "dsl/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace ein::dsl::test {

/// Owns a SourceFile and its DiagnosticEngine (the engine keeps a reference).
struct Parsed {
  std::unique_ptr<SourceFile> file;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<Program> program;

  std::string printed() const {
    std::string out;
    llvm::raw_string_ostream os(out);
    diags->print(os);
    return out;
  }
  /// The first diagnostic's message ("" when none).
  std::string firstMessage() const {
    return diags->diagnostics().empty() ? "" : diags->diagnostics().front().message;
  }
};

inline Parsed parse(const std::string &text, unsigned maxErrors = 20) {
  Parsed p;
  p.file = std::make_unique<SourceFile>("t.ein", text);
  p.diags = std::make_unique<DiagnosticEngine>(*p.file, maxErrors);
  p.program = parseProgram(*p.file, *p.diags);
  return p;
}

/// A compact prefix form of an expression: `(+ a (* b c))`, `(call f a std=1)`.
inline std::string sexpr(const Expr *e) {
  if (!e)
    return "<null>";
  switch (e->kind) {
  case ExprKind::Number:
  case ExprKind::Name:
    return e->text;
  case ExprKind::String:
    return "\"" + e->text + "\"";
  case ExprKind::Unary:
    return std::string("(neg ") + sexpr(e->args[0].get()) + ")";
  case ExprKind::Binary: {
    std::string op = e->op == '^' ? "**" : std::string(1, e->op);
    return "(" + op + " " + sexpr(e->args[0].get()) + " " + sexpr(e->args[1].get()) + ")";
  }
  case ExprKind::Index:
    return "(index " + sexpr(e->args[0].get()) + " " + sexpr(e->args[1].get()) + ")";
  case ExprKind::List: {
    std::string out = "(list";
    for (const ExprPtr &arg : e->args)
      out += " " + sexpr(arg.get());
    return out + ")";
  }
  case ExprKind::Call: {
    std::string out = "(call " + e->callee;
    for (const ExprPtr &arg : e->args)
      out += " " + sexpr(arg.get());
    for (const KeywordArg &kw : e->kwargs)
      out += " " + kw.name + "=" + sexpr(kw.value.get());
    return out + ")";
  }
  }
  return "?";
}

} // namespace ein::dsl::test

#endif // EINC_TEST_UNIT_TESTUTIL_H
