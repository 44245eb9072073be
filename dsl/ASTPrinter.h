//===- ASTPrinter.h - Readable dump of the syntax tree -----------*- C++ -*-===//
//
// `einc emit --stage=ast`: an indented S-expression per node, each with its
// line:col (`@line:col`), deterministic (for FileCheck tests). Axes print
// inline as `name@line:col`; `dtype=-` means none was written. Example:
//
//   (program
//     (dim @2:1 name=batch@2:5
//       (number 256 int @2:14))
//     (input @8:1 name=tokens@8:7 dtype=i32@8:16 shape=[batch@8:20, window@8:27])
//     (param @12:1 name=w1@12:7 dtype=- shape=[(window@12:14 embed@12:21)@12:13, hidden@12:29]
//       (call normal @12:40
//         (kwarg std @12:47
//           (binary / @12:52
//             (number 1 int @12:51)
//             (call sqrt @12:53
//               (binary * @12:64
//                 (name window @12:58)
//                 (name embed @12:65)))))
//         (kwarg clip @12:73
//           (number 3 int @12:78))))
//     (assign @16:1 targets=[x@16:1]
//       (call rearrange @16:10
//         (index @16:20
//           (name wte @16:20)
//           (name tokens @16:24))
//         (string "batch window embed -> batch (window embed)" @16:33))))
//
// Node kinds: dim input param assign fn (fnparam, result) for output minimize
// return train (setting); number (int|float) name string unary binary (op `**`
// for ^) call (kwarg) index.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_ASTPRINTER_H
#define EINC_DSL_ASTPRINTER_H

#include "dsl/AST.h"

#include "llvm/Support/raw_ostream.h"

namespace ein::dsl {

void printAST(const Program &program, llvm::raw_ostream &os);
void printAST(const Stmt &stmt, llvm::raw_ostream &os, unsigned indent = 0);
void printAST(const Expr &expr, llvm::raw_ostream &os, unsigned indent = 0);
/// `[batch@8:20, (window@9:3 embed@9:10)@9:2, ...@9:20]`.
void printShape(const std::vector<AxisSpec> &shape, llvm::raw_ostream &os);

} // namespace ein::dsl

#endif // EINC_DSL_ASTPRINTER_H
