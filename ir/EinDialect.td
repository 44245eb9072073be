//===- EinDialect.td - The ein dialect definition ------------*- tablegen -*-===//
//
// The `ein` dialect: value-semantics tensor operations on statically shaped,
// ranked tensors, produced by the einc elaborator and consumed by autodiff,
// cost reports and code generation.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_DIALECT_TD
#define EIN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Ein_Dialect : Dialect {
  let name = "ein";
  let cppNamespace = "::mlir::ein";
  let summary = "Tensor operations for training neural networks with named axes";
  let description = [{
    Every op works on ranked tensors with static shapes and value semantics.
    Element types are f32, bf16, f16, i32 and i1. Each op carries an optional
    `axes` string array naming the axes of its result; it is used only for
    reports and diagnostics and never changes the meaning of the op.
  }];
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

defvar EinElementTypes = [F32, BF16, F16, I32, I1];
defvar EinFloatTypes = [F32, BF16, F16];
defvar EinNumericTypes = [F32, BF16, F16, I32];

def EinElement : AnyTypeOf<EinElementTypes, "f32, bf16, f16, i32 or i1">;
def EinFloat : AnyTypeOf<EinFloatTypes, "f32, bf16 or f16">;

def EinTensor : RankedTensorOf<EinElementTypes>;
def EinFloatTensor : RankedTensorOf<EinFloatTypes>;
def EinNumericTensor : RankedTensorOf<EinNumericTypes>;
def EinI32Tensor : RankedTensorOf<[I32]>;
def EinI1Tensor : RankedTensorOf<[I1]>;

#endif // EIN_DIALECT_TD
