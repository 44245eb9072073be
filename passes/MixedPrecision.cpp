//===- MixedPrecision.cpp - ein-mixed-precision: a precision policy -------===//
//
// Rewrites @forward (before autodiff) by a precision policy, so that the
// backward, the optimizer, remat, fusion, the analyses and every backend
// see ordinary IR with casts (docs/precision.md):
//   - every float param and float input is cast once, at the top, to the
//     policy's narrow type N (bf16 or f16): its working copy; under `bf16`
//     the params themselves become N (no fp32 master copy);
//   - every other float op computes in N: contractions take N operands and
//     give an N result (f32 accumulation inside), elementwise ops and data
//     movement in N;
//   - a `sum` reduction takes an f32 input (a cast in front) and gives an
//     f32 result; ops that read only such statistics and constants stay
//     f32 (a variance's `+ eps` and `rsqrt`: rsqrt's gradient y^3 overflows
//     f16), and a statistic is cast to N once, where it meets N values;
//   - the loss path (the loss and every op between it and the last
//     accumulating op before it: a sum reduction or a contraction) computes
//     in f32;
//   - results other than the loss keep @forward's signature (cast back).
// A value is cast to a type at most once (constants are converted instead
// of cast), so CSE finds nothing to merge. A rewritten function records its
// policy in `ein.precision`; a function that has one is left alone, so the
// pass can run again on a module.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/EinOps.h"
#include "runtime/base/TrainSettings.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINMIXEDPRECISION
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

Type elementOf(Type t) {
  auto shaped = dyn_cast<ShapedType>(t);
  return shaped ? shaped.getElementType() : Type();
}
bool isFloatTensor(Type t) { return isa_and_nonnull<FloatType>(elementOf(t)); }
bool isSum(Operation *op) {
  auto reduce = dyn_cast<ReduceOp>(op);
  return reduce && reduce.getKind() == ReduceKind::sum;
}
/// Ops that accumulate many products or terms: the loss path ends here.
bool accumulates(Operation *op) { return isSum(op) || isa<ContractOp>(op); }

/// The ops of the loss path: from the op defining `loss`, every op some
/// operand chain reaches before (and including) an accumulating op.
llvm::DenseSet<Operation *> lossPath(Value loss) {
  llvm::DenseSet<Operation *> path;
  SmallVector<Value> work{loss};
  while (!work.empty()) {
    Operation *op = work.pop_back_val().getDefiningOp();
    if (!op || !path.insert(op).second || accumulates(op))
      continue;
    for (Value v : op->getOperands())
      work.push_back(v);
  }
  return path;
}

class Rewriter {
public:
  Rewriter(func::FuncOp fn, Type narrow) : fn_(fn), b_(fn.getContext()), narrow_(narrow) {
    f32_ = b_.getF32Type();
  }

  void run(bool narrowParams) {
    Block &body = fn_.front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    for (BlockArgument arg : body.getArguments())
      original_[arg] = arg.getType();
    for (Operation &op : body)
      for (Value v : op.getResults())
        original_[v] = v.getType();
    llvm::DenseSet<Operation *> loss;
    if (ret.getNumOperands() > 0)
      loss = lossPath(ret.getOperand(0));

    // Params: under `bf16` the arguments themselves become narrow.
    if (narrowParams) {
      SmallVector<Type> inputs(fn_.getArgumentTypes());
      for (BlockArgument arg : body.getArguments()) {
        auto kind = fn_.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "ein.kind");
        if (kind && kind.getValue() == "param" && isFloatTensor(arg.getType())) {
          arg.setType(withElement(arg.getType(), narrow_));
          inputs[arg.getArgNumber()] = arg.getType();
        }
      }
      fn_.setFunctionType(b_.getFunctionType(inputs, fn_.getResultTypes()));
    }
    // The working copies at the top, in argument order; erased below when
    // nothing reads them (a param read only by the loss path).
    b_.setInsertionPointToStart(&body);
    for (BlockArgument arg : body.getArguments())
      if (isFloatTensor(arg.getType()) && !arg.use_empty())
        castOf(arg, narrow_);

    for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
      if (created_.contains(&op))
        continue;
      rewrite(&op, loss.contains(&op) ? f32_ : narrow_);
    }
    // The results keep the function's types.
    FunctionType type = fn_.getFunctionType();
    for (OpOperand &operand : ret->getOpOperands()) {
      Type want = elementOf(type.getResult(operand.getOperandNumber()));
      if (want && isFloatTensor(operand.get().getType()) &&
          elementOf(operand.get().getType()) != want)
        operand.set(castOf(operand.get(), want));
    }
    for (Operation *op : llvm::make_early_inc_range(created_))
      if (op->use_empty())
        op->erase();
  }

private:
  static Type withElement(Type t, Type element) { return cast<RankedTensorType>(t).clone(element); }

  /// Sets the float operands of `op` to `type` (casting them) and its float
  /// results to what the op then computes.
  void rewrite(Operation *op, Type type) {
    if (isa<ConstantOp, IotaOp, CastOp>(op))
      return; // sources are converted where read; a program's own casts stay
    if (op->getName().getDialectNamespace() != "ein") {
      // Not ours to retype: it reads what it read before.
      for (OpOperand &operand : op->getOpOperands())
        if (Type was = original_.lookup(operand.get()); was && was != operand.get().getType())
          operand.set(castOf(operand.get(), elementOf(was)));
      return;
    }
    if (isSum(op))
      type = f32_; // accumulate in f32
    else if (type == narrow_ && continuesStatistic(op))
      type = f32_;
    Type operandType = isa<ContractOp>(op) ? narrow_ : type;
    for (OpOperand &operand : op->getOpOperands())
      if (isFloatTensor(operand.get().getType()) &&
          elementOf(operand.get().getType()) != operandType)
        operand.set(castOf(operand.get(), operandType));
    for (OpResult result : op->getResults())
      if (isFloatTensor(result.getType())) {
        result.setType(withElement(result.getType(), type));
        if (type == f32_ && !isa<ContractOp>(op))
          statistics_.insert(result);
      }
  }

  /// A constant, or a broadcast of one.
  static bool isConstant(Value v) {
    Operation *def = v.getDefiningOp();
    if (auto b = dyn_cast_or_null<BroadcastOp>(def))
      def = b.getInput().getDefiningOp();
    return isa_and_nonnull<ConstantOp>(def);
  }

  /// Whether `op` continues a sum's statistic in f32 (a norm's variance,
  /// `+ eps`, `rsqrt`): every float operand is a statistic (a sum's result,
  /// or an op on statistics) or a constant, and one is a statistic. Its
  /// gradient is then f32 too: rsqrt's slope y^3 overflows f16 for a
  /// variance below 2.5e-4. A broadcast ends it: the statistic meets the
  /// full-size narrow values there and is rounded before it is broadcast.
  bool continuesStatistic(Operation *op) {
    if (isa<BroadcastOp>(op))
      return false;
    bool any = false;
    for (Value v : op->getOperands()) {
      if (!isFloatTensor(v.getType()))
        continue;
      if (statistics_.contains(v))
        any = true;
      else if (!isConstant(v))
        return false;
    }
    return any;
  }

  /// `v` as a tensor of `element`: one cast (a converted constant for a
  /// constant) per value and type, placed right after `v` is defined.
  Value castOf(Value v, Type element) {
    if (elementOf(v.getType()) == element)
      return v;
    auto key = std::make_pair(v, element);
    if (auto it = casts_.find(key); it != casts_.end())
      return it->second;
    OpBuilder::InsertionGuard guard(b_);
    Operation *def = v.getDefiningOp();
    if (def)
      b_.setInsertionPointAfter(def);
    else if (!lastArgCast_)
      b_.setInsertionPointToStart(&fn_.front());
    else
      b_.setInsertionPointAfter(lastArgCast_);
    Type type = withElement(v.getType(), element);
    Operation *made = nullptr;
    if (auto broadcast = dyn_cast_or_null<BroadcastOp>(def); broadcast && isConstant(v)) {
      // A broadcast constant: broadcast the converted constant.
      Value input = castOf(broadcast.getInput(), element);
      made = b_.create<BroadcastOp>(def->getLoc(), type, input, broadcast.getDimensionsAttr(),
                                    broadcast.getAxesAttr());
    } else if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (dense && isa<FloatType>(element) && isa<FloatType>(dense.getElementType())) {
        auto to = cast<FloatType>(element);
        DenseElementsAttr converted = dense.mapValues(to, [&](const APFloat &x) {
          APFloat y = x;
          bool lost;
          y.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
          return y.bitcastToAPInt();
        });
        made = b_.create<ConstantOp>(def->getLoc(), type, converted, constant.getAxesAttr());
      }
    }
    if (!made) {
      ArrayAttr axes =
          def ? def->getAttrOfType<ArrayAttr>("axes")
              : fn_.getArgAttrOfType<ArrayAttr>(cast<BlockArgument>(v).getArgNumber(), "ein.axes");
      made = b_.create<CastOp>(def ? def->getLoc() : fn_.getLoc(), type, v, axes);
    }
    if (!def)
      lastArgCast_ = made;
    created_.insert(made);
    casts_[key] = made->getResult(0);
    return made->getResult(0);
  }

  func::FuncOp fn_;
  OpBuilder b_;
  Type narrow_, f32_;
  llvm::DenseMap<Value, Type> original_; // every value's type before the rewrite
  llvm::DenseSet<Value> statistics_;     // f32 values computed from sums (and the sums)
  llvm::DenseMap<std::pair<Value, Type>, Value> casts_;
  llvm::SetVector<Operation *> created_;
  Operation *lastArgCast_ = nullptr;
};

struct EinMixedPrecision : ein::impl::EinMixedPrecisionBase<EinMixedPrecision> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const einrt::PrecisionPolicy *policy = einrt::findPrecisionPolicy(this->policy);
    if (!policy) {
      module.emitError("ein-mixed-precision: unknown policy '")
          << this->policy << "'; expected one of: " << einrt::precisionPolicyNames()
          << " (mixed: bf16-mixed)";
      return signalPassFailure();
    }
    if (!*policy->narrow)
      return; // fp32: the program as written
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    Type narrow =
        llvm::StringRef(policy->narrow) == "f16" ? Type(b.getF16Type()) : Type(b.getBF16Type());
    SmallVector<std::string> names(funcs.begin(), funcs.end());
    if (names.empty())
      names.push_back("forward");
    for (const std::string &name : names) {
      auto fn = module.lookupSymbol<func::FuncOp>(name);
      if (!fn || fn.isExternal()) {
        module.emitError("ein-mixed-precision: no function @") << name;
        return signalPassFailure();
      }
      if (fn->hasAttr("ein.precision"))
        continue; // rewritten before
      if (!fn.getBody().hasOneBlock()) {
        fn.emitError("ein-mixed-precision: @") << name << " must have a single block";
        return signalPassFailure();
      }
      Rewriter(fn, narrow).run(policy->narrowParams);
      fn->setAttr("ein.precision", b.getStringAttr(policy->name));
    }
  }
};

} // namespace
