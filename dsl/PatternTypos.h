//===- PatternTypos.h - Misspelt dims in einops patterns ---------*- C++ -*-===//
//
// A pattern name that is not a dim is local and may read any axis (see
// docs/language.md section 4), so a misspelt dim silently renames the axis it
// reads: in einsum(h, w2, "batch hidden, hiddn classes -> batch classes")
// each operand then sums its 'hidden' axis on its own, an outer product of
// two sums instead of a matmul. Two rules make this class an error (rules 4
// and 5 of docs/language.md section 4; the why is in docs/decisions.md):
//
//  4. a local name close to a dim (DimTable::misspeltDim) is an error
//     wherever it names an axis;
//  5. an einsum of two or more operands may not sum an axis within one
//     operand alone when the pattern calls that axis, which carries a dim's
//     name, by a local name.
//
// Both errors end with a note "did you mean 'hidden'?" at the dim's
// declaration.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_PATTERNTYPOS_H
#define EINC_DSL_PATTERNTYPOS_H

#include "dsl/Pattern.h"
#include "dsl/Shape.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace ein::dsl {

class Elaborator;
struct Tensor;

/// What a pattern name does with the operand it is checked against.
enum class NameRole {
  Reads,  // names one of the operand's axes
  Splits, // is a member of a group that splits one of the operand's axes
  Creates // a new axis of repeat: reads no operand
};

/// Rule 4 for `name` at `loc`. `operand` and `axis` are the operand and the
/// axis the name reads or splits (unused for NameRole::Creates);
/// `operandIndex` is 0 for a single operand, else 1-based. Returns false
/// after reporting.
bool checkNotMisspeltDim(Elaborator &E, llvm::StringRef name, SourceLoc loc, NameRole role,
                         const Tensor *operand, const Axis *axis, unsigned operandIndex);

/// After another error about `name` (an axis on the right side only, a new
/// axis of unknown size): notes the dim it is probably a misspelling of.
void noteMisspeltDim(Elaborator &E, llvm::StringRef name);

/// Rule 5 for an einsum whose inputs were bound to `operands` without error
/// (so every side has one name per axis, '...' aside). `at` turns an offset
/// in the pattern into a location. Returns false after reporting.
bool checkNoRenamedLoneSum(Elaborator &E, const Pattern &pattern, llvm::ArrayRef<Tensor> operands,
                           llvm::function_ref<SourceLoc(unsigned)> at);

} // namespace ein::dsl

#endif // EINC_DSL_PATTERNTYPOS_H
