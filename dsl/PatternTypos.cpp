//===- PatternTypos.cpp - Misspelt dims in einops patterns ----------------===//

#include "dsl/PatternTypos.h"

#include "dsl/ElaboratorImpl.h"

namespace ein::dsl {

namespace {

std::string operandName(unsigned operandIndex) {
  return operandIndex == 0 ? "the operand" : "operand " + std::to_string(operandIndex);
}

void noteDim(Elaborator &E, llvm::StringRef dim) {
  E.diags.note(E.dims.declaredAt(dim), "did you mean '" + dim + "'?");
}

} // namespace

bool checkNotMisspeltDim(Elaborator &E, llvm::StringRef name, SourceLoc loc, NameRole role,
                         const Tensor *operand, const Axis *axis, unsigned operandIndex) {
  auto dim = E.dims.misspeltDim(name);
  if (!dim)
    return true;
  std::string message = "axis '" + name.str() +
                        "' is not a dim but is close "
                        "to dim '" +
                        *dim + "'; as a local name it would ";
  if (role == NameRole::Creates) {
    message += "name a new axis";
  } else {
    std::string which = operandName(operandIndex);
    message += (role == NameRole::Reads ? "read " : "split ") + which + "'s axis '" + axis->name +
               "': " + which + " is " + formatTensor(*operand);
  }
  E.diags.error(loc, message);
  noteDim(E, *dim);
  return false;
}

void noteMisspeltDim(Elaborator &E, llvm::StringRef name) {
  if (auto dim = E.dims.misspeltDim(name))
    noteDim(E, *dim);
}

bool checkNoRenamedLoneSum(Elaborator &E, const Pattern &pattern, llvm::ArrayRef<Tensor> operands,
                           llvm::function_ref<SourceLoc(unsigned)> at) {
  if (operands.size() < 2)
    return true; // one operand: summing is all einsum can do, as in reduce
  for (size_t i = 0; i < operands.size(); ++i) {
    const PatternSide &side = pattern.inputs[i];
    const Tensor &x = operands[i];
    size_t named = 0;
    for (const PatternAxis &a : side.axes)
      named += a.kind == PatternAxis::Kind::Name;
    size_t d = 0; // the operand axis the pattern axis reads
    for (const PatternAxis &a : side.axes) {
      if (a.kind == PatternAxis::Kind::Ellipsis) {
        d += x.axes.size() - named;
        continue;
      }
      const Axis &axis = x.axes[d++];
      if (E.dims.isDeclared(a.name) || !E.dims.isDeclared(axis.name))
        continue;
      bool elsewhere = findPatternAxis(pattern.output, a.name);
      for (size_t j = 0; j < operands.size() && !elsewhere; ++j)
        elsewhere = j != i && findPatternAxis(pattern.inputs[j], a.name);
      if (elsewhere)
        continue;
      std::string which = operandName(unsigned(i + 1));
      E.diags.error(at(a.offset), "einsum sums " + which + "'s axis '" + axis.name +
                                      "' on its own under the local name '" + a.name +
                                      "' (no other operand and not the output has '" + a.name +
                                      "'); to sum it on purpose, reduce it before "
                                      "the einsum: " +
                                      which + " is " + formatTensor(x));
      noteDim(E, axis.name);
      return false;
    }
  }
  return true;
}

} // namespace ein::dsl
