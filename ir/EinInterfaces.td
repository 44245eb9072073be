//===- EinInterfaces.td - Interfaces of the ein dialect ------*- tablegen -*-===//

#ifndef EIN_INTERFACES_TD
#define EIN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::ein";
  let description = [{
    A static cost model of one op: floating-point (or integer) operations and
    bytes moved, computed from static shapes only. Bytes are element count
    times element width (f32/i32: 4, bf16/f16: 2, i1: 1). By default an op
    reads all its operands and writes all its results; ops that are views
    (`ein.reshape`) override both to 0. Transcendentals (the ops with the
    EinTranscendental trait, exp, log, tanh, ...: one per result element, 0
    for every other op) are
    counted apart, as XLA does; they are also included in getFlops. The
    FLOPs table is in docs/ir.md.
  }];
  let methods = [
    InterfaceMethod<"Number of arithmetic operations the op performs.",
      "int64_t", "getFlops", (ins)>,
    InterfaceMethod<[{
        Transcendental evaluations: one per result element for the ops with
        the EinTranscendental trait (exp, log, tanh, ...), 0 for the others.
      }],
      "int64_t", "getTranscendentals", (ins), [{}], [{
        return ::mlir::ein::getTranscendentalCount($_op.getOperation());
      }]>,
    InterfaceMethod<"Bytes read from the operands.",
      "int64_t", "getBytesRead", (ins), [{}], [{
        return ::mlir::ein::getTotalBytes($_op->getOperandTypes());
      }]>,
    InterfaceMethod<"Bytes written to the results.",
      "int64_t", "getBytesWritten", (ins), [{}], [{
        return ::mlir::ein::getTotalBytes($_op->getResultTypes());
      }]>,
  ];
}

def GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::ein";
  let description = [{
    Reverse-mode differentiation of one op (the vector-Jacobian product).
    Every ein op has one result; the rules are in ir/EinGradients.cpp and
    tabulated in docs/autodiff.md. The `ein-autodiff` pass calls them in
    reverse program order.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, at the builder's insertion point, the ops that compute the
        gradients of the operands flagged in `needOperandGrad` from
        `resultGrad`, the gradient of the op's (single) result, which has the
        result's type and is never null.

        `needOperandGrad` has one flag per operand; no op is emitted for an
        operand whose flag is false (activity analysis: the FLOPs of a
        backward depend on it). On success `operandGrads` is cleared and then
        receives exactly one entry per operand, in operand order: a Value of
        the operand's type holding the gradient, or a null Value where no
        gradient is needed or none flows (i32 indices, i1 masks, cmp, iota,
        constant). Forward values (operands, the result) are reused, never
        recomputed. Every op created carries an `axes` attribute derived
        from the names of the forward values (when they are known). The op
        itself is not modified. Returns failure (after emitting a diagnostic
        on the op) when the gradient cannot be built.
      }],
      "::mlir::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::Value":$resultGrad,
           "::llvm::ArrayRef<bool>":$needOperandGrad,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
  let extraClassDeclaration = [{
    /// The axis names of a value: the `axes` attribute of its defining op,
    /// or the `ein.axes` attribute of the function argument. Null when
    /// unknown (or when the length does not match the rank).
    static ::mlir::ArrayAttr getAxisNames(::mlir::Value value);
  }];
}

#endif // EIN_INTERFACES_TD
