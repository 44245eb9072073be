//===- FoldConstants.cpp - Tables that depend only on dims, at compile time -===//
//
// Evaluates the ops whose value depends on no argument (only ein.iota,
// ein.constant and arithmetic over them: RoPE's angle, cos and sin tables)
// and replaces each such value that other ops read with one ein.constant,
// shared by every reader of an equal table: computed once here rather than
// at every step, stored once in the program. See Passes.td.
//
// Values are computed in double and rounded to their element type after
// every op (exact for + - * / and sqrt in f32; the transcendental functions
// are then correctly rounded, or within an ulp, where a backend's f32
// kernels may be a few ulps off).
//
//===----------------------------------------------------------------------===//
#include "ir/EinOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <map>
#include <optional>

namespace mlir::ein {
#define GEN_PASS_DEF_EINFOLDCONSTANTS
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

/// A tensor known at compile time: its elements in row-major order.
struct Table {
  RankedTensorType type;
  std::vector<double> values;
  bool computed = false; // some op of its subgraph costs FLOPs (worth folding)
};

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The multi-index of flat position `flat` in `shape`.
SmallVector<int64_t> unflatten(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return index;
}

/// Whether the evaluator stores elements of `t` exactly: f32, f64, bf16,
/// f16 (rounded through APFloat) and i32.
bool supportedElement(Type t) {
  return isa<Float32Type, Float64Type, BFloat16Type, Float16Type>(t) || t.isInteger(32);
}

/// `v` as the element type `t` stores it (to nearest even; i32: toward zero).
double roundTo(double v, Type t) {
  if (t.isF64())
    return v;
  if (t.isF32())
    return double(float(v));
  if (auto f = dyn_cast<FloatType>(t)) {
    APFloat a(v);
    bool lost = false;
    a.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    a.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return a.convertToDouble();
  }
  return std::trunc(v); // i32 (casts of table values, which are small)
}

class Evaluator {
public:
  Evaluator(int64_t maxElements) : maxElements_(maxElements) {}

  /// The table `op` computes, when all its operands are tables and the op
  /// is one the evaluator knows; otherwise none.
  std::optional<Table> evaluate(Operation *op, ArrayRef<const Table *> in) {
    if (op->getNumResults() != 1)
      return std::nullopt;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape() || !supportedElement(type.getElementType()) ||
        type.getNumElements() > maxElements_)
      return std::nullopt;
    for (const Table *t : in)
      if (!t)
        return std::nullopt;
    Table out{type, {}, false};
    for (const Table *t : in)
      out.computed |= t->computed;
    Type et = type.getElementType();
    int64_t n = type.getNumElements();
    auto unary = [&](double (*f)(double)) {
      out.computed = true;
      for (double x : in[0]->values)
        out.values.push_back(roundTo(f(x), et));
      return true;
    };
    auto binary = [&](double (*f)(double, double)) {
      out.computed = true;
      for (int64_t i = 0; i < n; ++i)
        out.values.push_back(roundTo(f(in[0]->values[i], in[1]->values[i]), et));
      return true;
    };
    bool ok =
        TypeSwitch<Operation *, bool>(op)
            .Case([&](ConstantOp c) {
              auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
              if (!dense)
                return false;
              if (isa<FloatType>(et))
                for (APFloat v : dense.getValues<APFloat>())
                  out.values.push_back(v.convertToDouble());
              else
                for (APInt v : dense.getValues<APInt>())
                  out.values.push_back(double(v.getSExtValue()));
              return true;
            })
            .Case([&](IotaOp iota) {
              int64_t dim = iota.getDimension();
              for (int64_t i = 0; i < n; ++i)
                out.values.push_back(double(unflatten(i, type.getShape())[dim]));
              return true;
            })
            .Case([&](CastOp) {
              Type from = in[0]->type.getElementType();
              if (isa<FloatType>(from) && !isa<FloatType>(et))
                return false; // float to i32: not a table's business
              for (double x : in[0]->values)
                out.values.push_back(roundTo(x, et));
              return true;
            })
            .Case([&](ReshapeOp) {
              out.values = in[0]->values;
              return true;
            })
            .Case([&](TransposeOp t) {
              ArrayRef<int64_t> perm = t.getPermutation();
              SmallVector<int64_t> inStrides = stridesOf(in[0]->type.getShape());
              for (int64_t i = 0; i < n; ++i) {
                SmallVector<int64_t> idx = unflatten(i, type.getShape());
                int64_t at = 0;
                for (size_t d = 0; d < perm.size(); ++d)
                  at += idx[d] * inStrides[perm[d]];
                out.values.push_back(in[0]->values[at]);
              }
              return true;
            })
            .Case([&](BroadcastOp b) {
              ArrayRef<int64_t> dims = b.getDimensions();
              ArrayRef<int64_t> inShape = in[0]->type.getShape();
              SmallVector<int64_t> inStrides = stridesOf(inShape);
              for (int64_t i = 0; i < n; ++i) {
                SmallVector<int64_t> idx = unflatten(i, type.getShape());
                int64_t at = 0;
                for (size_t d = 0; d < dims.size(); ++d)
                  at += (inShape[d] == 1 ? 0 : idx[dims[d]]) * inStrides[d];
                out.values.push_back(in[0]->values[at]);
              }
              return true;
            })
            .Case([&](NegOp) { return unary([](double x) { return -x; }); })
            .Case([&](ExpOp) { return unary([](double x) { return std::exp(x); }); })
            .Case([&](LogOp) { return unary([](double x) { return std::log(x); }); })
            .Case([&](TanhOp) { return unary([](double x) { return std::tanh(x); }); })
            .Case([&](SqrtOp) { return unary([](double x) { return std::sqrt(x); }); })
            .Case([&](RsqrtOp) { return unary([](double x) { return 1 / std::sqrt(x); }); })
            .Case([&](AbsOp) { return unary([](double x) { return std::fabs(x); }); })
            .Case([&](SinOp) { return unary([](double x) { return std::sin(x); }); })
            .Case([&](CosOp) { return unary([](double x) { return std::cos(x); }); })
            .Case([&](AddOp) { return binary([](double a, double b) { return a + b; }); })
            .Case([&](SubOp) { return binary([](double a, double b) { return a - b; }); })
            .Case([&](MulOp) { return binary([](double a, double b) { return a * b; }); })
            .Case([&](DivOp) {
              if (!isa<FloatType>(et))
                return false; // integer division's rounding: left to the backend
              return binary([](double a, double b) { return a / b; });
            })
            .Case([&](MaxOp) { return binary([](double a, double b) { return std::max(a, b); }); })
            .Case([&](MinOp) { return binary([](double a, double b) { return std::min(a, b); }); })
            .Case([&](PowOp) { return binary([](double a, double b) { return std::pow(a, b); }); })
            .Case([&](ContractOp c) { return contract(c, *in[0], *in[1], out); })
            .Default([](Operation *) { return false; });
    if (!ok || int64_t(out.values.size()) != n)
      return std::nullopt;
    return out;
  }

private:
  /// ein.contract's result (batch, lhs free, rhs free dims), summed in
  /// double, rounded once.
  bool contract(ContractOp c, const Table &lhs, const Table &rhs, Table &out) {
    ArrayRef<int64_t> lb = c.getLhsBatch(), rb = c.getRhsBatch();
    ArrayRef<int64_t> lc = c.getLhsContract(), rc = c.getRhsContract();
    ArrayRef<int64_t> ls = lhs.type.getShape(), rs = rhs.type.getShape();
    auto freeDims = [](int64_t rank, ArrayRef<int64_t> batch, ArrayRef<int64_t> contracted) {
      SmallVector<int64_t> free;
      for (int64_t d = 0; d < rank; ++d)
        if (!llvm::is_contained(batch, d) && !llvm::is_contained(contracted, d))
          free.push_back(d);
      return free;
    };
    SmallVector<int64_t> lf = freeDims(ls.size(), lb, lc), rf = freeDims(rs.size(), rb, rc);
    SmallVector<int64_t> contractShape;
    int64_t contractCount = 1;
    for (int64_t d : lc) {
      contractShape.push_back(ls[d]);
      contractCount *= ls[d];
    }
    int64_t n = out.type.getNumElements();
    if (contractCount * n > (int64_t(1) << 26))
      return false; // not a table: left to the step
    SmallVector<int64_t> lStrides = stridesOf(ls), rStrides = stridesOf(rs);
    Type et = out.type.getElementType();
    out.computed = true;
    for (int64_t i = 0; i < n; ++i) {
      SmallVector<int64_t> idx = unflatten(i, out.type.getShape());
      int64_t lBase = 0, rBase = 0, r = 0;
      for (size_t k = 0; k < lb.size(); ++k, ++r) {
        lBase += idx[r] * lStrides[lb[k]];
        rBase += idx[r] * rStrides[rb[k]];
      }
      for (int64_t d : lf)
        lBase += idx[r++] * lStrides[d];
      for (int64_t d : rf)
        rBase += idx[r++] * rStrides[d];
      double sum = 0;
      for (int64_t j = 0; j < contractCount; ++j) {
        SmallVector<int64_t> cidx = unflatten(j, contractShape);
        int64_t la = lBase, ra = rBase;
        for (size_t k = 0; k < lc.size(); ++k) {
          la += cidx[k] * lStrides[lc[k]];
          ra += cidx[k] * rStrides[rc[k]];
        }
        sum += lhs.values[la] * rhs.values[ra];
      }
      out.values.push_back(roundTo(sum, et));
    }
    return true;
  }

  int64_t maxElements_;
};

/// `table` as a dense attribute of its type.
DenseElementsAttr toAttr(const Table &table) {
  Type et = table.type.getElementType();
  if (auto f = dyn_cast<FloatType>(et)) {
    SmallVector<APFloat> values;
    for (double v : table.values) {
      APFloat a(v);
      bool lost = false;
      a.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(a);
    }
    return DenseElementsAttr::get(table.type, values);
  }
  SmallVector<APInt> values;
  for (double v : table.values)
    values.push_back(APInt(32, uint64_t(int64_t(v)), /*isSigned=*/true));
  return DenseElementsAttr::get(table.type, values);
}

struct EinFoldConstants : mlir::ein::impl::EinFoldConstantsBase<EinFoldConstants> {
  using EinFoldConstantsBase::EinFoldConstantsBase;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal() || !fn.getBody().hasOneBlock())
      return;
    Block &body = fn.getBody().front();
    Evaluator eval(maxElements);
    llvm::DenseMap<Value, Table> tables;
    for (Operation &op : body.without_terminator()) {
      SmallVector<const Table *> in;
      for (Value operand : op.getOperands()) {
        auto it = tables.find(operand);
        in.push_back(it == tables.end() ? nullptr : &it->second);
      }
      if (std::optional<Table> t = eval.evaluate(&op, in))
        tables.try_emplace(op.getResult(0), std::move(*t));
    }

    // The tables an op outside them reads: each becomes one constant at the
    // top of the body, one per distinct value and axes. A broadcast is not
    // materialised (its input is: the backends read broadcasts in place),
    // nor a table no arithmetic computed (an iota is computed in the kernels
    // that read it, for free).
    OpBuilder b(&body, body.begin());
    std::map<std::pair<const void *, const void *>, Value> shared;
    auto constantFor = [&](Value v) -> Value {
      const Table &t = tables.find(v)->second;
      DenseElementsAttr value = toAttr(t);
      auto axes = v.getDefiningOp()->getAttrOfType<ArrayAttr>("axes");
      Value &c = shared[{value.getAsOpaquePointer(), axes ? axes.getAsOpaquePointer() : nullptr}];
      if (!c)
        c = b.create<ConstantOp>(v.getLoc(), value.getType(), value, axes).getResult();
      return c;
    };
    // (The uses first: materialising changes them.)
    SmallVector<OpOperand *> frontier;
    for (Operation &op : body)
      for (OpOperand &use : op.getOpOperands())
        if (tables.count(use.get()) && !(op.getNumResults() == 1 && tables.count(op.getResult(0))))
          frontier.push_back(&use);
    for (OpOperand *use : frontier) {
      Value v = use->get();
      // Through broadcasts to what they broadcast.
      while (auto bc = v.getDefiningOp<BroadcastOp>()) {
        use = &bc->getOpOperand(0);
        v = use->get();
      }
      auto it = tables.find(v);
      if (it == tables.end() || !it->second.computed || v.getDefiningOp<ConstantOp>())
        continue;
      use->set(constantFor(v));
    }
    // What only the tables read is dead now; a broadcast of a table stays
    // (it reads the new constant).
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && op->getNumResults() == 1 && tables.count(op->getResult(0)))
        op->erase();
  }
};

} // namespace
