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
    (`ein.reshape`) override both to 0. The FLOPs table is in docs/ir.md.
  }];
  let methods = [
    InterfaceMethod<"Number of arithmetic operations the op performs.",
      "int64_t", "getFlops", (ins)>,
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
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, at the builder's insertion point, the ops that compute the
        gradient of each operand from the gradients of the results.

        `resultGrads` holds one value per result, in result order, each with
        the type of its result; a null Value means no gradient flows into
        that result (treat it as zero). On success `operandGrads` is cleared
        and then receives exactly one entry per operand, in operand order:
        a Value of the operand's type holding the gradient, or a null Value
        where no gradient flows (non-differentiable operands such as i32
        indices and i1 masks, or a gradient known to be zero). The op itself
        is not modified. Returns failure (after emitting a diagnostic on the
        op) when the gradient cannot be built.
      }],
      "::mlir::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // EIN_INTERFACES_TD
