//===- AST.h - Syntax tree of the einc model language -----------*- C++ -*-===//
//
// The parser produces a Program; the elaborator (Elaborate.cpp) walks it, checks
// shapes with named axes, and emits `ein` IR. Nodes are plain structs with a kind
// tag: the language is small, and one struct per family keeps the walkers short.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_AST_H
#define EINC_DSL_AST_H

#include "dsl/SourceLoc.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ein::dsl {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

/// One axis in a declared shape: `vocab`, `(window embed)`, `(3 heads hd)`, `...`, `8`.
struct AxisSpec {
  enum class Kind { Name, Number, Group, Ellipsis };
  Kind kind = Kind::Name;
  SourceLoc loc;
  std::string name;              // Kind::Name
  int64_t number = 0;            // Kind::Number
  std::vector<AxisSpec> members; // Kind::Group: Name or Number members
};

/// A keyword argument of a call: `std=0.02`, `three=3`.
struct KeywordArg {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};

enum class ExprKind {
  Number, // `3`, `1e-5`: number / isInteger / text
  Name,   // `x`, `mean`, `d`: text
  String, // `"batch k -> k"`: text holds the contents; loc is the opening quote
  Unary,  // `-x`: op == '-', args[0]
  Binary, // `a + b`: op in + - * / ^ (^ spells `**`), args[0], args[1]
  Call,   // `f(a, b, k=v)`: callee / calleeLoc, args, kwargs
  Index,  // `table[ids]`: args[0] is the table, args[1] the indices
  List,   // `[a, b]`: args (rearrange stacks them along a new leading axis)
};

/// A Binary expression's operator as written ("**", "<=", ...).
inline std::string binaryOpSpelling(char op) {
  switch (op) {
  case '^':
    return "**";
  case 'l':
    return "<=";
  case 'g':
    return ">=";
  case 'e':
    return "==";
  case 'n':
    return "!=";
  default:
    return std::string(1, op);
  }
}

struct Expr {
  ExprKind kind = ExprKind::Number;
  SourceLoc loc; // the first character of the expression (the operator for Binary)
  double number = 0;
  bool isInteger = false;
  std::string text;
  char op = 0; // + - * / and '^' for **; comparisons: < > and 'l' <=, 'g' >=, 'e' ==, 'n' !=
  std::string callee;
  SourceLoc calleeLoc;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
};

/// A parameter of a user function: `x: [..., d]` (dtype optional, "" = any float).
struct FnParam {
  std::string name;
  SourceLoc loc;
  std::string dtype;
  std::vector<AxisSpec> shape;
};

/// One `key = value` line of a `train { }` section.
struct TrainSetting {
  std::string key;
  SourceLoc loc;
  ExprPtr value;
};

/// An assignment target: `x` in `x = ...`, or each of `q, k, v`.
struct Target {
  std::string name;
  SourceLoc loc;
};

enum class StmtKind {
  Dim,      // dim NAME = value
  Input,    // input NAME : dtype[shape]
  Param,    // (param | buffer) NAME : [dtype][shape] (~ value)?
  Assign,   // targets = value
  Fn,       // fn NAME(params) -> [resultShape] { body }
  For,      // for NAME in rangeDim { body }
  Output,   // output value
  Minimize, // minimize value
  Return,   // return value (inside fn)
  Train,    // train { settings }
};

struct Stmt {
  StmtKind kind = StmtKind::Assign;
  SourceLoc loc; // the keyword, or the first target of an assignment
  std::string name;
  SourceLoc nameLoc;
  std::vector<Target> targets;
  ExprPtr value;     // Dim size, Assign rhs, Param initialiser (null: none),
                     // Output / Minimize / Return expression
  std::string dtype; // Input / Param ("" when omitted)
  SourceLoc dtypeLoc;
  std::vector<AxisSpec> shape;       // Input / Param
  std::vector<FnParam> params;       // Fn
  std::vector<AxisSpec> resultShape; // Fn
  std::string rangeDim;              // For
  SourceLoc rangeLoc;
  std::vector<StmtPtr> body;          // Fn / For
  std::vector<TrainSetting> settings; // Train
  bool buffer = false;                // Param: declared `buffer` (never trained)
};

struct Program {
  std::vector<StmtPtr> stmts;
};

} // namespace ein::dsl

#endif // EINC_DSL_AST_H
