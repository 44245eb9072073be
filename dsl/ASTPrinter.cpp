//===- ASTPrinter.cpp - Readable dump of the syntax tree ------------------===//

#include "dsl/ASTPrinter.h"

namespace ein::dsl {

namespace {

void printLoc(SourceLoc loc, llvm::raw_ostream &os) { os << "@" << loc.line << ":" << loc.col; }

void printQuoted(llvm::StringRef text, llvm::raw_ostream &os) {
  os << '"';
  static const char hex[] = "0123456789abcdef";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      os << '\\' << char(c);
    } else if (c >= 0x20 && c < 0x7f) {
      os << char(c);
    } else {
      os << "\\x" << hex[c >> 4] << hex[c & 15];
    }
  }
  os << '"';
}

void printAxis(const AxisSpec &axis, llvm::raw_ostream &os) {
  switch (axis.kind) {
  case AxisSpec::Kind::Name:
    os << axis.name;
    break;
  case AxisSpec::Kind::Number:
    os << axis.number;
    break;
  case AxisSpec::Kind::Ellipsis:
    os << "...";
    break;
  case AxisSpec::Kind::Group:
    os << "(";
    for (size_t i = 0; i < axis.members.size(); ++i) {
      if (i)
        os << " ";
      printAxis(axis.members[i], os);
    }
    os << ")";
    break;
  }
  printLoc(axis.loc, os);
}

const char *stmtName(StmtKind kind) {
  switch (kind) {
  case StmtKind::Dim:
    return "dim";
  case StmtKind::Input:
    return "input";
  case StmtKind::Param:
    return "param";
  case StmtKind::Assign:
    return "assign";
  case StmtKind::Fn:
    return "fn";
  case StmtKind::For:
    return "for";
  case StmtKind::Output:
    return "output";
  case StmtKind::Minimize:
    return "minimize";
  case StmtKind::Return:
    return "return";
  case StmtKind::Train:
    return "train";
  }
  return "stmt";
}

void printDtype(llvm::StringRef dtype, SourceLoc loc, llvm::raw_ostream &os) {
  os << " dtype=";
  if (dtype.empty()) {
    os << "-";
    return;
  }
  os << dtype;
  if (loc.isValid())
    printLoc(loc, os);
}

} // namespace

void printShape(const std::vector<AxisSpec> &shape, llvm::raw_ostream &os) {
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      os << ", ";
    printAxis(shape[i], os);
  }
  os << "]";
}

void printAST(const Expr &expr, llvm::raw_ostream &os, unsigned indent) {
  os.indent(indent) << "(";
  switch (expr.kind) {
  case ExprKind::Number:
    os << "number " << expr.text << (expr.isInteger ? " int " : " float ");
    break;
  case ExprKind::Name:
    os << "name " << expr.text << " ";
    break;
  case ExprKind::String:
    os << "string ";
    printQuoted(expr.text, os);
    os << " ";
    break;
  case ExprKind::Unary:
    os << "unary " << expr.op << " ";
    break;
  case ExprKind::Binary:
    os << "binary " << binaryOpSpelling(expr.op) << " ";
    break;
  case ExprKind::Call:
    os << "call " << expr.callee << " ";
    break;
  case ExprKind::Index:
    os << "index ";
    break;
  case ExprKind::List:
    os << "list ";
    break;
  }
  printLoc(expr.loc, os);
  for (const ExprPtr &arg : expr.args) {
    os << "\n";
    if (arg)
      printAST(*arg, os, indent + 2);
    else
      os.indent(indent + 2) << "(null)";
  }
  for (const KeywordArg &kw : expr.kwargs) {
    os << "\n";
    os.indent(indent + 2) << "(kwarg " << kw.name << " ";
    printLoc(kw.loc, os);
    os << "\n";
    if (kw.value)
      printAST(*kw.value, os, indent + 4);
    else
      os.indent(indent + 4) << "(null)";
    os << ")";
  }
  os << ")";
}

void printAST(const Stmt &stmt, llvm::raw_ostream &os, unsigned indent) {
  os.indent(indent) << "(" << stmtName(stmt.kind) << " ";
  printLoc(stmt.loc, os);
  switch (stmt.kind) {
  case StmtKind::Dim:
    os << " name=" << stmt.name;
    printLoc(stmt.nameLoc, os);
    break;
  case StmtKind::Input:
  case StmtKind::Param:
    if (stmt.buffer)
      os << " buffer";
    os << " name=" << stmt.name;
    printLoc(stmt.nameLoc, os);
    printDtype(stmt.dtype, stmt.dtypeLoc, os);
    os << " shape=";
    printShape(stmt.shape, os);
    break;
  case StmtKind::Assign:
    os << " targets=[";
    for (size_t i = 0; i < stmt.targets.size(); ++i) {
      if (i)
        os << ", ";
      os << stmt.targets[i].name;
      printLoc(stmt.targets[i].loc, os);
    }
    os << "]";
    break;
  case StmtKind::Fn:
    os << " name=" << stmt.name;
    printLoc(stmt.nameLoc, os);
    for (const FnParam &param : stmt.params) {
      os << "\n";
      os.indent(indent + 2) << "(fnparam " << param.name;
      printLoc(param.loc, os);
      printDtype(param.dtype, SourceLoc{}, os);
      os << " shape=";
      printShape(param.shape, os);
      os << ")";
    }
    os << "\n";
    os.indent(indent + 2) << "(result shape=";
    printShape(stmt.resultShape, os);
    os << ")";
    break;
  case StmtKind::For:
    os << " var=" << stmt.name;
    printLoc(stmt.nameLoc, os);
    os << " in=" << stmt.rangeDim;
    printLoc(stmt.rangeLoc, os);
    break;
  case StmtKind::Train:
    for (const TrainSetting &setting : stmt.settings) {
      os << "\n";
      os.indent(indent + 2) << "(setting " << setting.key << " ";
      printLoc(setting.loc, os);
      os << "\n";
      if (setting.value)
        printAST(*setting.value, os, indent + 4);
      else
        os.indent(indent + 4) << "(null)";
      os << ")";
    }
    break;
  case StmtKind::Output:
  case StmtKind::Minimize:
  case StmtKind::Return:
    break;
  }
  if (stmt.value) {
    os << "\n";
    printAST(*stmt.value, os, indent + 2);
  }
  for (const StmtPtr &child : stmt.body) {
    os << "\n";
    if (child)
      printAST(*child, os, indent + 2);
  }
  os << ")";
}

void printAST(const Program &program, llvm::raw_ostream &os) {
  os << "(program";
  for (const StmtPtr &stmt : program.stmts) {
    os << "\n";
    if (stmt)
      printAST(*stmt, os, 2);
  }
  os << ")\n";
}

} // namespace ein::dsl
