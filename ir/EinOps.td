//===- EinOps.td - Operations of the ein dialect -------------*- tablegen -*-===//
//
// Every op: ranked tensors with static shapes, value semantics, no side
// effects (Pure), and a trailing optional `axes` attribute naming the axes of
// the result. The FLOPs each op reports through CostOpInterface are defined
// in EinCost.cpp and tabulated in docs/ir.md.
// Every op also implements GradientOpInterface: its reverse-mode rule is in
// EinGradients.cpp (table in docs/autodiff.md).
//
// Narrow floats (bf16, f16). A value of a narrow type holds a value of that
// format. Every op computes in f32 (or wider) from its operands and rounds
// its result to its type, to nearest even, once; an op fused into a kernel
// with others rounds every narrow-typed intermediate too, so fused and
// unfused programs give the same bits (docs/determinism.md). The exceptions
// are stated per op: ein.contract (f32 products and sums, one rounding),
// ein.reduce and ein.scatter_add (a fold in the result type),
// ein.stochastic_round (random rounding).
//
//===----------------------------------------------------------------------===//

#ifndef EIN_OPS_TD
#define EIN_OPS_TD

include "ir/EinDialect.td"
include "ir/EinInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Ein_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>,
  ]> {
  let cppNamespace = "::mlir::ein";
}

def Ein_CmpPredicate : I32EnumAttr<"CmpPredicate", "comparison predicate", [
    I32EnumAttrCase<"eq", 0>,
    I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>,
    I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>,
    I32EnumAttrCase<"ge", 5>,
  ]> {
  let cppNamespace = "::mlir::ein";
}

// The fp8 formats of ein.quantize (runtime/core/Fp8.h): `none` is no
// quantisation (the identity).
def Ein_Fp8Format : I32EnumAttr<"Fp8Format", "fp8 format", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"e4m3", 1>,
    I32EnumAttrCase<"e5m2", 2>,
  ]> {
  let cppNamespace = "::mlir::ein";
}

//===----------------------------------------------------------------------===//
// Traits (C++ in ir/EinTraits.h)
//===----------------------------------------------------------------------===//

class Ein_NativeOpTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::mlir::OpTrait::ein";
}

// Carried by every ein op: all operand and result shapes are static, and
// `axes`, when present, has one name per result dimension.
def EinTensorOp : Ein_NativeOpTrait<"EinTensorOp">;
// The op reduces dimensions of its input away (ein.reduce).
def EinReduction : Ein_NativeOpTrait<"EinReduction">;
// The op is a tensor contraction, a sum of products (ein.contract).
def EinContraction : Ein_NativeOpTrait<"EinContraction">;
// The elementwise op is one transcendental evaluation per result element
// (CostOpInterface's getTranscendentals).
def EinTranscendental : Ein_NativeOpTrait<"EinTranscendental">;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Ein_Op<string mnemonic, list<Trait> traits = [],
             Trait cost = DeclareOpInterfaceMethods<CostOpInterface>>
    : Op<Ein_Dialect, mnemonic,
         !listconcat([Pure, EinTensorOp, cost,
                      DeclareOpInterfaceMethods<GradientOpInterface>],
                     traits)>;

defvar EinAxesAttr = OptionalAttr<StrArrayAttr>;

// The elementwise ops: f32 (or wider) arithmetic on the operands' values, a
// narrow result rounded to nearest even once.
// One FLOP per result element (ir/EinCost.cpp's table). Outside the dialect,
// each has a row in runtime/base/ElementwiseOps.def.
class Ein_UnaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Ein_Op<mnemonic, !listconcat([Elementwise, SameOperandsAndResultType], traits)> {
  let arguments = (ins type:$input, EinAxesAttr:$axes);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() { return ::mlir::ein::elementwiseFlops(getOperation(), 1); }
  }];
}

class Ein_BinaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Ein_Op<mnemonic, !listconcat([Elementwise, SameOperandsAndResultType], traits)> {
  let arguments = (ins type:$lhs, type:$rhs, EinAxesAttr:$axes);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let extraClassDefinition = [{
    int64_t $cppClass::getFlops() { return ::mlir::ein::elementwiseFlops(getOperation(), 1); }
  }];
}

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

def Ein_ContractOp : Ein_Op<"contract", [EinContraction]> {
  let summary = "general tensor contraction (dot_general)";
  let description = [{
    Multiplies `lhs` and `rhs` elementwise over paired batch dimensions
    (`lhs_batch[k]` with `rhs_batch[k]`) and sums over paired contracting
    dimensions (`lhs_contract[k]` with `rhs_contract[k]`). The result
    dimensions are, in order: the batch dimensions (in `lhs_batch` order),
    the free dimensions of `lhs` (neither batch nor contracted, in order),
    then the free dimensions of `rhs` (in order). Operands share one float
    element type; the result may have another float type.

    Precision: whatever the operand types, the products and their sum are
    computed in f32 (as GEMM libraries and tensor cores do: narrow operands
    are exact in f32), in an order the backend chooses; the sum is rounded
    once to the result type (f32, or to nearest even for bf16/f16). So bf16
    operands with an f32 result are "f32 accumulation", and a bf16 result
    differs from it by that one rounding only.

    A batched matrix product:

    ```mlir
    %c = ein.contract %a, %b batch [0], [0] contract [2], [1]
           {axes = ["b", "i", "j"]}
           : tensor<2x3x4xbf16>, tensor<2x4x5xbf16> -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins EinFloatTensor:$lhs, EinFloatTensor:$rhs,
                       DenseI64ArrayAttr:$lhs_batch,
                       DenseI64ArrayAttr:$rhs_batch,
                       DenseI64ArrayAttr:$lhs_contract,
                       DenseI64ArrayAttr:$rhs_contract,
                       EinAxesAttr:$axes);
  let results = (outs EinFloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `batch` $lhs_batch `,` $rhs_batch
    `contract` $lhs_contract `,` $rhs_contract attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ein_TransposeOp : Ein_Op<"transpose",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "permutes the dimensions of a tensor";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %t = ein.transpose %x [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins EinTensor:$input, DenseI64ArrayAttr:$permutation,
                       EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ein_ReshapeOp : Ein_Op<"reshape",
    [AllElementTypesMatch<["input", "result"]>],
    DeclareOpInterfaceMethods<CostOpInterface,
                              ["getBytesRead", "getBytesWritten"]>> {
  let summary = "reinterprets a tensor with a new shape";
  let description = [{
    Same elements in row-major order, new shape; the element counts must be
    equal. A reshape is a view: its cost is 0 FLOPs and 0 bytes.

    ```mlir
    %r = ein.reshape %x : tensor<3x4xf32> -> tensor<12xf32>
    ```
  }];
  let arguments = (ins EinTensor:$input, EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Ein_BroadcastOp : Ein_Op<"broadcast",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "broadcasts a tensor into a larger shape";
  let description = [{
    Input dimension `i` maps to result dimension `dimensions[i]`;
    `dimensions` is strictly increasing and has one entry per input
    dimension. Each input dimension has the size of its result dimension, or
    size 1 (then it is repeated). Result dimensions not named in
    `dimensions` are new and the input is repeated along them.

    ```mlir
    %b = ein.broadcast %x dims [1] : tensor<4xf32> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins EinTensor:$input, DenseI64ArrayAttr:$dimensions,
                       EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = [{
    $input `dims` $dimensions attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ein_ReduceOp : Ein_Op<"reduce",
    [EinReduction, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "reduces dimensions of a tensor with sum, max or min";
  let description = [{
    The result is the input with `dimensions` (strictly increasing, in
    range) removed; each result element combines the input elements along
    those dimensions with `kind`.

    Precision: a reduction accumulates in its result element type, as a
    fold over the reduced elements in row-major order of the input. A
    bf16/f16 `sum` is therefore a narrow accumulator rounded to nearest even
    after every addition (10000 additions of 0.01 in bf16 stop near 4,
    where 0.01 is below half an ulp); a sum that should accumulate in f32
    takes an f32 input (a cast in front, which fuses). An f32 `sum` may be
    reassociated by a backend (equal up to f32 rounding). `max` and `min`
    are exact in any order.

    ```mlir
    %s = ein.reduce sum %x dims [1] : tensor<3x4xf32> -> tensor<3xf32>
    ```
  }];
  let arguments = (ins EinNumericTensor:$input, Ein_ReduceKind:$kind,
                       DenseI64ArrayAttr:$dimensions, EinAxesAttr:$axes);
  let results = (outs EinNumericTensor:$result);
  let assemblyFormat = [{
    $kind $input `dims` $dimensions attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Unary elementwise ops
//===----------------------------------------------------------------------===//

def Ein_NegOp : Ein_UnaryOp<"neg", EinNumericTensor> {
  let summary = "elementwise negation";
  let description = [{
    `-x`, elementwise.

    ```mlir
    %y = ein.neg %x : tensor<4xf32>
    ```
  }];
}

def Ein_ExpOp : Ein_UnaryOp<"exp", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise natural exponential";
  let description = [{
    `e^x`, elementwise.

    ```mlir
    %y = ein.exp %x : tensor<4xf32>
    ```
  }];
}

def Ein_LogOp : Ein_UnaryOp<"log", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise natural logarithm";
  let description = [{
    `ln(x)`, elementwise.

    ```mlir
    %y = ein.log %x : tensor<4xf32>
    ```
  }];
}

def Ein_TanhOp : Ein_UnaryOp<"tanh", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise hyperbolic tangent";
  let description = [{
    `tanh(x)`, elementwise.

    ```mlir
    %y = ein.tanh %x : tensor<4xf32>
    ```
  }];
}

def Ein_SqrtOp : Ein_UnaryOp<"sqrt", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise square root";
  let description = [{
    `sqrt(x)`, elementwise.

    ```mlir
    %y = ein.sqrt %x : tensor<4xf32>
    ```
  }];
}

def Ein_RsqrtOp : Ein_UnaryOp<"rsqrt", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise reciprocal square root";
  let description = [{
    `1 / sqrt(x)`, elementwise.

    ```mlir
    %y = ein.rsqrt %x : tensor<4xf32>
    ```
  }];
}

def Ein_AbsOp : Ein_UnaryOp<"abs", EinNumericTensor> {
  let summary = "elementwise absolute value";
  let description = [{
    `|x|`, elementwise.

    ```mlir
    %y = ein.abs %x : tensor<4xi32>
    ```
  }];
}

def Ein_SoftplusOp : Ein_UnaryOp<"softplus", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise softplus, log(1 + e^x)";
  let description = [{
    `log(1 + e^x)`, elementwise, computed as `max(x, 0) + log1p(e^-|x|)`:
    finite for every finite `x` (no overflow of `e^x`) and accurate for very
    negative `x`, where `1 + e^x` would round to 1. A smooth `relu`; its
    derivative is `sigmoid(x)`.

    ```mlir
    %y = ein.softplus %x : tensor<4xf32>
    ```
  }];
}

def Ein_SinOp : Ein_UnaryOp<"sin", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise sine";
  let description = [{
    `sin(x)`, elementwise, `x` in radians.

    ```mlir
    %y = ein.sin %x : tensor<4xf32>
    ```
  }];
}

def Ein_CosOp : Ein_UnaryOp<"cos", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise cosine";
  let description = [{
    `cos(x)`, elementwise, `x` in radians.

    ```mlir
    %y = ein.cos %x : tensor<4xf32>
    ```
  }];
}

def Ein_ErfOp : Ein_UnaryOp<"erf", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise error function";
  let description = [{
    `erf(x)` = 2/√π ∫₀ˣ e^(−t²) dt, elementwise (exact GELU's building block).

    ```mlir
    %y = ein.erf %x : tensor<4xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Binary elementwise ops (no implicit broadcasting)
//===----------------------------------------------------------------------===//

def Ein_AddOp : Ein_BinaryOp<"add", EinNumericTensor> {
  let summary = "elementwise addition";
  let description = [{
    `lhs + rhs`; both operands and the result have one type.

    ```mlir
    %z = ein.add %x, %y : tensor<4xf32>
    ```
  }];
}

def Ein_SubOp : Ein_BinaryOp<"sub", EinNumericTensor> {
  let summary = "elementwise subtraction";
  let description = [{
    `lhs - rhs`.

    ```mlir
    %z = ein.sub %x, %y : tensor<4xf32>
    ```
  }];
}

def Ein_MulOp : Ein_BinaryOp<"mul", EinNumericTensor> {
  let summary = "elementwise multiplication";
  let description = [{
    `lhs * rhs`.

    ```mlir
    %z = ein.mul %x, %y : tensor<4xf32>
    ```
  }];
}

def Ein_DivOp : Ein_BinaryOp<"div", EinNumericTensor> {
  let summary = "elementwise division";
  let description = [{
    `lhs / rhs` (i32: rounds toward zero).

    ```mlir
    %z = ein.div %x, %y : tensor<4xf32>
    ```
  }];
}

def Ein_MaxOp : Ein_BinaryOp<"max", EinNumericTensor> {
  let summary = "elementwise maximum";
  let description = [{
    `max(lhs, rhs)`.

    ```mlir
    %z = ein.max %x, %y : tensor<4xf32>
    ```
  }];
}

def Ein_MinOp : Ein_BinaryOp<"min", EinNumericTensor> {
  let summary = "elementwise minimum";
  let description = [{
    `min(lhs, rhs)`.

    ```mlir
    %z = ein.min %x, %y : tensor<4xf32>
    ```
  }];
}

def Ein_PowOp : Ein_BinaryOp<"pow", EinFloatTensor, [EinTranscendental]> {
  let summary = "elementwise power";
  let description = [{
    `lhs ^ rhs`, floats only.

    ```mlir
    %z = ein.pow %x, %y : tensor<4xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Comparison, selection, conversion
//===----------------------------------------------------------------------===//

def Ein_CmpOp : Ein_Op<"cmp", [Elementwise, SameOperandsAndResultShape,
                               AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison";
  let description = [{
    Compares `lhs` and `rhs` (same type) with `predicate` and yields an i1
    tensor of the same shape.

    ```mlir
    %m = ein.cmp lt, %a, %b : tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Ein_CmpPredicate:$predicate, EinTensor:$lhs,
                       EinTensor:$rhs, EinAxesAttr:$axes);
  let results = (outs EinI1Tensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)
  }];
}

def Ein_SelectOp : Ein_Op<"select", [Elementwise, SameOperandsAndResultShape,
    AllTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise choice between two tensors";
  let description = [{
    Element `i` of the result is `on_true[i]` where `cond[i]` is true and
    `on_false[i]` otherwise. All have one shape.

    ```mlir
    %r = ein.select %m, %a, %b : tensor<4xi1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins EinI1Tensor:$cond, EinTensor:$on_true,
                       EinTensor:$on_false, EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = [{
    $cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,`
    type($result)
  }];
}

def Ein_CastOp : Ein_Op<"cast", [Elementwise, SameOperandsAndResultShape]> {
  let summary = "elementwise element type conversion";
  let description = [{
    Converts each element to the result's element type (float rounding is
    to nearest even; float to i32 truncates toward zero; to i1 is `!= 0`).
    Random rounding to bf16/f16 is `ein.stochastic_round`.

    ```mlir
    %h = ein.cast %x : tensor<4xf32> -> tensor<4xbf16>
    ```
  }];
  let arguments = (ins EinTensor:$input, EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Ein_StochasticRoundOp : Ein_Op<"stochastic_round",
    [Elementwise, SameOperandsAndResultShape]> {
  let summary = "f32 to bf16/f16 with stochastic rounding";
  let description = [{
    Rounds each f32 element of `input` to one of the two result-type values
    next to it (the result type is bf16 or f16), up with probability equal
    to its distance from the lower one over their gap, so that
    E[result] = input for every input in the result type's finite range
    (the low update bits that nearest rounding loses are kept on average:
    llm.c's bf16 parameter updates). Values of the result type, infinities
    and NaN are kept (NaN as the quiet NaN); beyond the finite range the
    result may be infinite.

    The random bits are a counter-based hash of (`seed[i]`, i), i the
    row-major index of the element: deterministic, independent of how a
    backend splits the work across threads, and a fresh draw for every new
    seed (e.g. the optimizer's step count). The 32-bit hash and the rounding
    are specified bit for bit in runtime/core/FloatFormats.h
    (stochasticBits, stochasticRound*), which every backend follows. `seed` is an
    i32 tensor of the input's shape, normally a broadcast of a rank-0 value
    (which kernels read in place); the builder taking a rank-0 seed inserts
    that broadcast.

    The gradient is the identity (straight through): the result's gradient
    cast back to f32.

    ```mlir
    %s = ein.broadcast %step dims [] : tensor<i32> -> tensor<4xi32>
    %w = ein.stochastic_round %x, %s : tensor<4xf32>, tensor<4xi32> -> tensor<4xbf16>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input, EinI32Tensor:$seed,
                       EinAxesAttr:$axes);
  let results = (outs RankedTensorOf<[BF16, F16]>:$result);
  let assemblyFormat = [{
    $input `,` $seed attr-dict `:` type($input) `,` type($seed) `->`
    type($result)
  }];
  let builders = [
    // `seed` of rank 0 is broadcast to the input's shape first.
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::Value":$input,
                   "::mlir::Value":$seed), [{
      auto inType = ::llvm::cast<::mlir::RankedTensorType>(input.getType());
      auto seedType = ::llvm::cast<::mlir::RankedTensorType>(seed.getType());
      if (seedType.getRank() == 0 && inType.getRank() > 0)
        seed = $_builder.create<BroadcastOp>(
            $_state.location, inType.clone(seedType.getElementType()), seed,
            ::llvm::ArrayRef<int64_t>{}, /*axes=*/nullptr);
      build($_builder, $_state, resultType, input, seed, /*axes=*/nullptr);
    }]>,
  ];
}

def Ein_QuantizeOp : Ein_Op<"quantize", [SameOperandsAndResultType]> {
  let summary = "fake quantisation to scaled fp8 (E4M3, E5M2), per block or per tensor";
  let description = [{
    The result has the input's type and shape and holds the input rounded
    to a scaled fp8 grid: each element is `s * q(x / s)`, with `q` the
    rounding to `format` (runtime/core/Fp8.h: to nearest even, with subnormals;
    a finite value beyond the format's largest saturates to it, as fp8
    training recipes convert; NaN stays NaN; an infinity stays infinite in
    e5m2 and is NaN in e4m3, which has no infinity, so an overflow check
    after it still sees it) and `s` the scale of the element's group:

    - `block` = B > 0 (MXFP8 with B = 32): groups are runs of B consecutive
      elements along dimension `axis` (the last run of a row is shorter
      when B does not divide that dimension's size; it has its own scale).
      A group's scale is the power of two (E8M0)
      `2^(floor(log2(amax)) - emax)`, amax the group's largest finite |x|,
      emax the format's largest exponent (8 for e4m3, 15 for e5m2), clamped
      to [2^-127, 2^127]; so amax lands in [2^emax, 2^(emax+1)) and the
      part of that range past the format's maximum (448, 57344) saturates,
      as the OCP MX specification does.
    - `block` = 0: one f32 scale for the whole tensor, `amax / max_format`
      (per-tensor fp8 recipes); `axis` is unused.

    A group without a nonzero finite element has scale 1. The arithmetic
    is in f64; a bf16/f16 result is rounded to its type once. `format` =
    `none` is no quantisation: the result is the input.

    The gradient is straight-through (STE): the derivative of the rounding
    is taken as 1, so the input's gradient is the result's, quantised with
    `grad_format` (same `block` and `axis`) when one is given, else
    unchanged. A contraction whose operands are quantised with e4m3 and
    whose result goes through `ein.quantize none ... grad e5m2` (the
    `fp8` setting, passes/Fp8Contractions.h) thus has E4M3 operands in the
    forward and an E5M2 incoming gradient in both backward contractions.
    What is approximated: that gradient is quantised once, in blocks along
    `axis` of the contraction's result, where fp8 GEMM kernels quantise
    it once per backward GEMM along that GEMM's contracted dimension; the
    backward contractions read the forward's quantised operands (blocked
    along the forward's contracted dimension); and the rounding's true
    derivative (0 almost everywhere) is ignored.

    ```mlir
    %q = ein.quantize e4m3 %x block 32 axis 1 : tensor<4x64xf32>
    %g = ein.quantize none %y grad e5m2 block 32 axis 1 : tensor<4x64xf32>
    ```
  }];
  let arguments = (ins EinFloatTensor:$input, Ein_Fp8Format:$format,
                       OptionalAttr<Ein_Fp8Format>:$grad_format,
                       I64Attr:$block, I64Attr:$axis, EinAxesAttr:$axes);
  let results = (outs EinFloatTensor:$result);
  let assemblyFormat = [{
    $format $input (`grad` $grad_format^)? `block` $block `axis` $axis
    attr-dict `:` type($result)
  }];
  let builders = [
    // The result has the input's type; `gradFormat` none is no attribute.
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::ein::Fp8Format":$format,
                   "::mlir::ein::Fp8Format":$gradFormat, "int64_t":$block,
                   "int64_t":$axis, "::mlir::ArrayAttr":$axes), [{
      ::mlir::ein::Fp8FormatAttr grad;
      if (gradFormat != ::mlir::ein::Fp8Format::none)
        grad = ::mlir::ein::Fp8FormatAttr::get($_builder.getContext(), gradFormat);
      build($_builder, $_state, input.getType(), input,
            ::mlir::ein::Fp8FormatAttr::get($_builder.getContext(), format), grad,
            $_builder.getI64IntegerAttr(block), $_builder.getI64IntegerAttr(axis),
            axes);
    }]>,
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

def Ein_ConstantOp : Ein_Op<"constant", [ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    The result is `value`; its type is the value's type.

    ```mlir
    %c = ein.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value, EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let builders = [
    OpBuilder<(ins "::mlir::DenseElementsAttr":$value), [{
      build($_builder, $_state, value.getType(), value, /*axes=*/nullptr);
    }]>,
  ];
  let hasFolder = 1;
}

def Ein_IotaOp : Ein_Op<"iota"> {
  let summary = "a tensor holding its index along one dimension";
  let description = [{
    Element `(i_0, ..., i_n)` of the result is `i_dimension`, converted to
    the result's element type (i32 or float).

    ```mlir
    %i = ein.iota dim 1 : tensor<3x4xi32>
    ```
  }];
  let arguments = (ins I64Attr:$dimension, EinAxesAttr:$axes);
  let results = (outs EinNumericTensor:$result);
  let assemblyFormat = "`dim` $dimension attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Slices of the leading dimension
//===----------------------------------------------------------------------===//

def Ein_SliceOp : Ein_Op<"slice",
    [AllElementTypesMatch<["input", "result"]>],
    DeclareOpInterfaceMethods<CostOpInterface,
                              ["getBytesRead", "getBytesWritten"]>> {
  let summary = "a static range of the leading dimension (a view)";
  let description = [{
    `result[i, j...] = input[offset + i, j...]`: rows `[offset, offset +
    size)` of dimension 0, `size` the result's dimension 0; the other
    dimensions are the input's. In row-major order these rows are one
    contiguous run of the input's elements, so a slice is a view: its cost
    is 0 FLOPs and 0 bytes, and the CPU backend reads the input's buffer at
    an offset (runtime/core/Program.h, Buffer::viewOf). Tuple unpacking in the
    language (`q, k, v = t`) is one slice of size 1 per name, then a
    reshape dropping the axis.

    The gradient writes dY into its rows of a zero tensor of the input's
    type: an `ein.concat` of zeros, dY and zeros. `ein-autodiff` sums the
    gradients of slices of one tensor that cover disjoint rows into one
    concat of their gradients (docs/autodiff.md), so unpacking a tensor
    into all its parts has one concat as the whole's gradient.

    ```mlir
    %k = ein.slice %qkv offset 1 : tensor<3x8x16xf32> -> tensor<1x8x16xf32>
    ```
  }];
  let arguments = (ins EinTensor:$input, I64Attr:$offset, EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = [{
    $input `offset` $offset attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ein_ConcatOp : Ein_Op<"concat"> {
  let summary = "joins tensors along the leading dimension";
  let description = [{
    The inputs, one after the other along dimension 0: input `k` is rows
    `[o_k, o_k + n_k)` of the result, `o_k` the sum of the earlier inputs'
    dimension 0 and `n_k` its own. All inputs have the result's element
    type, rank (at least 1) and dimensions after the first; the result's
    dimension 0 is the sum of theirs. It is the gradient of slices
    (`ein.slice`): each input is its slice's gradient. The CPU backend lets
    each input's producer write its rows of the result in place where it
    can (codegen/CpuLowering.cpp) and copies the others.

    ```mlir
    %g = ein.concat %dq, %dk, %dv
           : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>
             -> tensor<3x8x16xf32>
    ```
  }];
  let arguments = (ins Variadic<EinTensor>:$inputs, EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

def Ein_GatherOp : Ein_Op<"gather",
    [AllElementTypesMatch<["table", "result"]>]> {
  let summary = "embedding lookup: rows of a table selected by indices";
  let description = [{
    `result[i..., j...] = table[indices[i...], j...]`: the result shape is
    the indices shape followed by the table shape without its first
    dimension. Indices out of `[0, table.shape[0])` are undefined behaviour.

    ```mlir
    %e = ein.gather %table, %ids
           : tensor<100x16xf32>, tensor<4x8xi32> -> tensor<4x8x16xf32>
    ```
  }];
  let arguments = (ins EinTensor:$table, EinI32Tensor:$indices,
                       EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` type($table) `,` type($indices) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Ein_ScatterAddOp : Ein_Op<"scatter_add",
    [AllElementTypesMatch<["updates", "result"]>]> {
  let summary = "sums rows of updates into a zero table (gradient of gather)";
  let description = [{
    Starts from zeros of the result type and adds `updates[i..., j...]` into
    `result[indices[i...], j...]`. `updates` has the shape of `indices`
    followed by the result shape without its first dimension. Each addition
    is in the result type (a bf16/f16 result is rounded after every
    addition), in row-major order of `indices`.

    ```mlir
    %g = ein.scatter_add %dy, %ids
           : tensor<4x8x16xf32>, tensor<4x8xi32> -> tensor<100x16xf32>
    ```
  }];
  let arguments = (ins EinNumericTensor:$updates, EinI32Tensor:$indices,
                       EinAxesAttr:$axes);
  let results = (outs EinNumericTensor:$result);
  let assemblyFormat = [{
    $updates `,` $indices attr-dict `:` type($updates) `,` type($indices)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradient control
//===----------------------------------------------------------------------===//

def Ein_StopGradientOp : Ein_Op<"stop_gradient", [SameOperandsAndResultType],
    DeclareOpInterfaceMethods<CostOpInterface,
                              ["getBytesRead", "getBytesWritten"]>> {
  let summary = "its input's value, through which no gradient flows";
  let description = [{
    The result is the input. ein-autodiff treats the result as a constant:
    nothing it feeds gives the input a gradient (jax.lax.stop_gradient,
    torch's `.detach()`). Once the backward is built it has no job:
    ein-autodiff erases it (`eraseStopGradients`), so fusion, the analyses
    and the backends never see it, and it costs nothing. No folder: a
    canonicalize before autodiff must not drop it.

    ```mlir
    %c = ein.stop_gradient %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins EinTensor:$input, EinAxesAttr:$axes);
  let results = (outs EinTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Ein_DropoutOp : Ein_Op<"dropout", [SameOperandsAndResultType],
    DeclareOpInterfaceMethods<CostOpInterface>> {
  let summary = "inverted dropout, active only in the training step";
  let description = [{
    `x · keep / (1 − p)` with `keep = u ≥ p`, u a uniform draw in [0, 1) per
    element, keyed by (the run's seed, the step, `site`, the element's
    row-major index): deterministic, the same on every backend and thread
    count. `site` tells one dropout call of the model from another. Its
    gradient is a dropout of the same `p` and `site` (the same mask, drawn
    again from the same key, never stored).

    The op has no kernel: ein-train-step expands each one in @train_step
    into the mask's ops (passes/Dropout.h, keyed by its step and seed
    arguments) and then erases the rest (`eraseDropouts`: @forward and
    @grad, so evaluation, sampling and `einc run` see the identity), as a
    compile without a training step does.

    ```mlir
    %y = ein.dropout %x {p = 1.000000e-01 : f64, site = 0 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins EinFloatTensor:$input, F64Attr:$p, I64Attr:$site,
                       EinAxesAttr:$axes);
  let results = (outs EinFloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // EIN_OPS_TD
