//===- Optimizers.h - Optimizer update rules for ein-train-step -*- C++ -*-===//
//
// One rule per optimizer, in one table (`optimizerRules()`): its name, its
// state slots (adamw: "m", "v") and the functions that emit its update as
// `ein` ops, in the order of operations of torch.optim's single-tensor
// implementations. Used by the `ein-train-step` pass (TrainStep.cpp); the
// equations are in docs/train-step.md.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_OPTIMIZERS_H
#define EINC_PASSES_OPTIMIZERS_H

#include "ir/EinOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <map>

namespace mlir::ein::train {

/// The optimizer hyper-parameters, as the pass options give them (eps and
/// weight decay resolved: the pass's -1 is torch's default for the
/// optimizer, einrt::kOptimizerDefaults).
struct Hyper {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0, momentum = 0;
};

/// Creates `ein` ops at one insertion point, each with an `axes` attribute.
/// Scalars are rank-0 f32 tensors with `axes = []`. Ops get the location set
/// last (setLoc: the param an update belongs to); constants, shared by every
/// param, keep the one the emitter was created with.
class Emitter {
public:
  Emitter(OpBuilder &b, Location loc) : b_(b), loc_(loc), constantLoc_(loc) {}

  OpBuilder &builder() { return b_; }
  /// The location of the ops created from now on (constants aside).
  void setLoc(Location loc) { loc_ = loc; }
  ArrayAttr noAxes() { return b_.getStrArrayAttr({}); }

  /// `ein.constant dense<v> : tensor<f32>` (v rounded to f32), one per value.
  Value constant(double v);

  Value add(Value l, Value r, ArrayAttr axes);
  Value sub(Value l, Value r, ArrayAttr axes);
  Value mul(Value l, Value r, ArrayAttr axes);
  Value div(Value l, Value r, ArrayAttr axes);
  Value min(Value l, Value r, ArrayAttr axes);
  Value pow(Value l, Value r, ArrayAttr axes);
  Value sqrt(Value x, ArrayAttr axes);
  Value tanh(Value x, ArrayAttr axes);
  /// `ein.cmp` (an i1 tensor of `l`'s shape) and `ein.select`.
  Value cmp(CmpPredicate predicate, Value l, Value r, ArrayAttr axes);
  Value select(Value cond, Value onTrue, Value onFalse, ArrayAttr axes);
  /// `ein.constant dense<v> : tensor<i32>`, one per value.
  Value constantI32(int32_t v);
  /// `ein.stochastic_round` of f32 `x` to element type `to` with the i32
  /// `seed` of x's shape.
  Value stochasticRound(Value x, Value seed, Type to, ArrayAttr axes);
  /// `ein.cast` to element type `to` (no op when it already has it).
  Value castTo(Value x, Type to, ArrayAttr axes);
  /// Sum of all elements: a rank-0 tensor (no op for a rank-0 input).
  Value sumAll(Value x);
  /// A rank-0 scalar as a tensor of `type`: cast to its element type if it
  /// differs, then `ein.broadcast` (skipped for rank 0).
  Value splat(Value scalar, RankedTensorType type, ArrayAttr axes);
  /// A rank-0 tensor broadcast to `shape` with its own element type (no op
  /// for rank 0).
  Value broadcastTo(Value scalar, ArrayRef<int64_t> shape, ArrayAttr axes);

private:
  OpBuilder &b_;
  Location loc_;
  Location constantLoc_;
  std::map<double, Value> constants_;
  std::map<int32_t, Value> constantsI32_;
};

/// Ops on tensors shaped like one param: its type and its axis names.
struct ParamEmitter {
  Emitter &e;
  RankedTensorType type;
  ArrayAttr axes;

  Value splat(Value scalar) { return e.splat(scalar, type, axes); }
  Value splat(double v) { return splat(e.constant(v)); }
  Value add(Value l, Value r) { return e.add(l, r, axes); }
  Value sub(Value l, Value r) { return e.sub(l, r, axes); }
  Value mul(Value l, Value r) { return e.mul(l, r, axes); }
  Value div(Value l, Value r) { return e.div(l, r, axes); }
  Value sqrt(Value x) { return e.sqrt(x, axes); }
};

/// What every param's update may use: the step's scalar arguments and
/// whether any param decays.
struct StepScalars {
  Value step; ///< tensor<f32>: t, 1-based
  Value lr;   ///< tensor<f32>
  bool anyDecays = false;
};

/// One param's update: inputs and outputs.
struct ParamUpdate {
  Value param, grad;           ///< grad: after clipping
  SmallVector<Value> state;    ///< one per slot, in slot order
  bool decays = false;         ///< weight decay applies to this param
  Value newParam;              ///< set by the rule
  SmallVector<Value> newState; ///< set by the rule, one per slot
};

struct OptimizerRule {
  StringRef name;
  /// The state slots, in order; none where these options need no state.
  SmallVector<StringRef> (*slots)(const Hyper &);
  /// Emits the scalars every param shares (bias corrections, step size),
  /// once per step, before the first update.
  SmallVector<Value> (*prepare)(Emitter &, const Hyper &, const StepScalars &);
  /// Emits one param's update; `shared` is what `prepare` returned.
  void (*update)(ParamEmitter &, const Hyper &, const StepScalars &, ArrayRef<Value> shared,
                 ParamUpdate &);
};

/// Every optimizer, in the order diagnostics list them.
ArrayRef<OptimizerRule> optimizerRules();
/// The rule named `name`, or null.
const OptimizerRule *findOptimizer(StringRef name);

} // namespace mlir::ein::train

#endif // EINC_PASSES_OPTIMIZERS_H
