//===- ReferenceLowering.cpp - An `ein` function as a runtime Program -----===//
//
// Each op becomes one Step of the kind runtime/core/StepKinds.def names after it
// (`ein.exp` -> "exp", `ein.reduce` of kind max -> "reduce_max", `ein.cmp`
// lt -> "cmp_lt"); the ops whose steps carry a payload fill it from their
// attributes (the TypeSwitch below), every other op maps by name alone, so
// a new elementwise op needs no rule here. Arguments become buffers with
// the role their `ein.kind` gives; constants become Constant buffers.
//
//===----------------------------------------------------------------------===//
#include "codegen/ReferenceLowering.h"

#include "ir/EinOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>

using namespace mlir;
using einrt::Buffer;
using einrt::BufferRole;
using einrt::DType;
using einrt::Step;
using einrt::StepKind;

namespace ein::codegen {
namespace {

std::optional<DType> dtypeOf(Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF16())
    return DType::F16;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(32))
    return DType::I32;
  if (t.isInteger(1))
    return DType::I1;
  return std::nullopt;
}

std::vector<int64_t> list(llvm::ArrayRef<int64_t> a) { return {a.begin(), a.end()}; }

BufferRole roleOf(llvm::StringRef kind) {
  if (kind == "param")
    return BufferRole::Param;
  if (kind == "opt_state")
    return BufferRole::OptState;
  if (kind == "accumulator")
    return BufferRole::Accumulator;
  if (kind == "step" || kind == "lr" || kind == "seed")
    return BufferRole::Scalar;
  return BufferRole::Input;
}

einrt::Init initOf(DictionaryAttr dict) {
  einrt::Init init;
  if (!dict)
    return init;
  if (auto kind = dict.getAs<StringAttr>("kind"))
    init.kind = kind.str();
  auto number = [&](llvm::StringRef key, double &out) {
    if (auto f = dict.getAs<FloatAttr>(key))
      out = f.getValueAsDouble();
  };
  number("mean", init.mean);
  number("std", init.std);
  number("clip", init.clip);
  number("low", init.low);
  number("high", init.high);
  return init;
}

class Lowering {
public:
  explicit Lowering(func::FuncOp fn) : fn_(fn) {}

  FailureOr<einrt::Program> run() {
    program_.name = fn_.getSymName().str();
    Block &body = fn_.getBody().front();
    for (BlockArgument arg : body.getArguments()) {
      auto b = newBuffer(arg, fn_);
      if (failed(b))
        return failure();
      Buffer &buf = program_.buffers[*b];
      buf.role = BufferRole::Input;
      if (auto attrs = fn_.getArgAttrDict(arg.getArgNumber())) {
        if (auto name = attrs.getAs<StringAttr>("ein.name"))
          buf.name = name.str();
        if (auto kind = attrs.getAs<StringAttr>("ein.kind"))
          buf.role = roleOf(kind.getValue());
        buf.init = initOf(attrs.getAs<DictionaryAttr>("ein.init"));
      }
      if (buf.name.empty())
        buf.name = "arg" + std::to_string(arg.getArgNumber());
      program_.arguments.push_back(*b);
    }
    for (Operation &op : body.without_terminator())
      if (failed(lower(&op)))
        return failure();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret)
      return fn_.emitError("expected func.return");
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      program_.results.push_back(buffers_.lookup(v));
      std::string name = "result" + std::to_string(i);
      if (auto attrs = fn_.getResultAttrDict(i))
        if (auto n = attrs.getAs<StringAttr>("ein.name"))
          name = n.str();
      program_.resultNames.push_back(name);
    }
    einrt::Status problem = program_.validate();
    if (!problem.ok())
      return fn_.emitError("internal error: the lowered program is invalid: ") << problem.message();
    return std::move(program_);
  }

private:
  FailureOr<int32_t> newBuffer(Value v, Operation *at) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    auto dtype = type ? dtypeOf(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !dtype)
      return at->emitError("cannot lower a value of type ") << v.getType();
    Buffer b;
    b.dtype = *dtype;
    b.shape = list(type.getShape());
    b.name = "%" + std::to_string(program_.buffers.size());
    program_.buffers.push_back(std::move(b));
    int32_t index = program_.buffers.size() - 1;
    buffers_[v] = index;
    return index;
  }

  /// One step of the kind named `name`, carrying `payload`.
  LogicalResult emit(Operation *op, llvm::StringRef name, einrt::StepPayload payload = {}) {
    StepKind kind;
    if (!einrt::stepKindByName(name.str().c_str(), kind) ||
        einrt::stepKindInfo(kind)->runner != einrt::StepRunner::Reference)
      return op->emitError("the reference backend has no step kind '") << name << "'";
    if (einrt::stepKindInfo(kind)->payloadIndex != payload.index())
      return op->emitError("internal error: the step kind '")
             << name << "' carries another payload than this op's";
    auto out = newBuffer(op->getResult(0), op);
    if (failed(out))
      return failure();
    std::vector<int32_t> inputs;
    for (Value operand : op->getOperands())
      inputs.push_back(buffers_.lookup(operand));
    program_.steps.emplace_back(kind, std::move(inputs), *out, std::move(payload), describeOp(op));
    return success();
  }

  LogicalResult lowerConstant(mlir::ein::ConstantOp op) {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return op.emitError("only dense constants can be lowered");
    auto out = newBuffer(op.getResult(), op);
    if (failed(out))
      return failure();
    Buffer &b = program_.buffers[*out];
    b.role = BufferRole::Constant;
    Type et = dense.getElementType();
    if (dense.isSplat()) {
      if (isa<FloatType>(et))
        b.constant.push_back(dense.getSplatValue<APFloat>().convertToDouble());
      else
        b.constant.push_back(static_cast<double>(dense.getSplatValue<APInt>().getSExtValue()));
      return success();
    }
    if (isa<FloatType>(et)) {
      for (APFloat v : dense.getValues<APFloat>())
        b.constant.push_back(v.convertToDouble());
    } else {
      for (APInt v : dense.getValues<APInt>())
        b.constant.push_back(
            static_cast<double>(et.isInteger(1) ? v.getZExtValue() : v.getSExtValue()));
    }
    return success();
  }

  /// The ops whose steps carry a payload; every other op is the step kind
  /// of its name.
  LogicalResult lower(Operation *op) {
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](mlir::ein::ContractOp o) {
          return emit(o, "contract",
                      einrt::ContractDims{list(o.getLhsBatch()), list(o.getRhsBatch()),
                                          list(o.getLhsContract()), list(o.getRhsContract())});
        })
        .Case([&](mlir::ein::TransposeOp o) {
          return emit(o, "transpose", einrt::AxisList{list(o.getPermutation())});
        })
        .Case([&](mlir::ein::BroadcastOp o) {
          return emit(o, "broadcast", einrt::AxisList{list(o.getDimensions())});
        })
        .Case([&](mlir::ein::ReduceOp o) {
          return emit(o, ("reduce_" + mlir::ein::stringifyReduceKind(o.getKind())).str(),
                      einrt::AxisList{list(o.getDimensions())});
        })
        .Case([&](mlir::ein::CmpOp o) {
          return emit(o, ("cmp_" + mlir::ein::stringifyCmpPredicate(o.getPredicate())).str());
        })
        .Case([&](mlir::ein::IotaOp o) {
          return emit(o, "iota", einrt::IotaDim{static_cast<int64_t>(o.getDimension())});
        })
        .Case([&](mlir::ein::QuantizeOp o) {
          return emit(o, "quantize",
                      einrt::QuantizeSpec{mlir::ein::stringifyFp8Format(o.getFormat()).str(),
                                          int64_t(o.getBlock()), int64_t(o.getAxis())});
        })
        .Case([&](mlir::ein::SliceOp o) {
          return emit(o, "slice", einrt::SliceOffset{int64_t(o.getOffset())});
        })
        .Case([&](mlir::ein::ConstantOp o) { return lowerConstant(o); })
        .Default([&](Operation *o) -> LogicalResult {
          if (o->getDialect() != o->getContext()->getLoadedDialect<mlir::ein::EinDialect>() ||
              o->getNumResults() != 1)
            return o->emitError("the reference backend cannot run this op");
          return emit(o, o->getName().stripDialect());
        });
  }

  func::FuncOp fn_;
  einrt::Program program_;
  llvm::DenseMap<Value, int32_t> buffers_;
};

} // namespace

std::string describeOp(Operation *op) {
  std::string s = op->getName().getStringRef().str();
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    s += " at " + loc.getFilename().str() + ":" + std::to_string(loc.getLine()) + ":" +
         std::to_string(loc.getColumn());
  return s;
}

std::vector<Value> loweredValues(func::FuncOp fn) {
  std::vector<Value> values;
  if (fn.getBody().empty())
    return values;
  Block &body = fn.getBody().front();
  values.assign(body.getArguments().begin(), body.getArguments().end());
  // newBuffer: one buffer per op, for its (single) result.
  for (Operation &op : body.without_terminator())
    values.push_back(op.getNumResults() == 1 ? op.getResult(0) : Value());
  return values;
}

FailureOr<einrt::Program> lowerToProgram(func::FuncOp fn) {
  if (fn.getBody().empty())
    return fn.emitError("cannot lower a function without a body");
  return Lowering(fn).run();
}

} // namespace ein::codegen
