//===- EinTraits.h - Op traits of the ein dialect ---------------*- C++ -*-===//
//
// Traits that tell ein op families apart (elementwise ops use MLIR's own
// `Elementwise` trait):
//   EinTensorOp     every ein op: static shapes, `axes` matches the result rank
//   EinReduction    the op removes dimensions by combining elements (reduce)
//   EinContraction  the op is a sum of products over paired dims (contract)
//   EinTranscendental  an elementwise op counted as one transcendental per
//                   result element (the cost model's getTranscendentals)
//
//===----------------------------------------------------------------------===//

#ifndef EIN_IR_EINTRAITS_H
#define EIN_IR_EINTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::ein::detail {
/// Checks that every operand and result is a statically shaped tensor and
/// that the optional `axes` attribute has one name per result dimension.
LogicalResult verifyEinTensorOp(Operation *op);
} // namespace mlir::ein::detail

namespace mlir::OpTrait::ein {

/// Carried by every ein op; see verifyEinTensorOp.
template <typename ConcreteType> class EinTensorOp : public TraitBase<ConcreteType, EinTensorOp> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return ::mlir::ein::detail::verifyEinTensorOp(op);
  }
};

/// Marks ops that reduce dimensions of their input away (ein.reduce).
template <typename ConcreteType>
class EinReduction : public TraitBase<ConcreteType, EinReduction> {};

/// Marks tensor contractions, sums of products (ein.contract).
template <typename ConcreteType>
class EinContraction : public TraitBase<ConcreteType, EinContraction> {};

/// Marks the transcendental elementwise ops (exp, log, tanh, sqrt, ...).
template <typename ConcreteType>
class EinTranscendental : public TraitBase<ConcreteType, EinTranscendental> {};

} // namespace mlir::OpTrait::ein

#endif // EIN_IR_EINTRAITS_H
