//===- DecodeStep.cpp - @decode: one position of a causal @forward --------===//
//
// Derives `@decode` from `@forward` (docs/training.md, `einc sample`, "The KV cache"): the
// logits of one position `pos` given the keys and values of the positions
// before it, kept in caches that the step reads and returns updated.
//
// Each value of @forward that depends on a context input gets a role per
// axis: Q, the position being computed (size 1 in @decode), K, the
// positions attended to (size ctx, read from a cache), or none. The roles
// start at the inputs' `ctx` axis and flow through the ops; a contraction
// whose two operands both carry Q on a free axis is attention scores, and
// the causal mask downstream (select(iota s > iota t, -inf, ...)) says
// which operand is the key side: that operand, and any operand contracted
// against a K axis (the values), is read from a cache updated at row pos.
// Values that depend on no input (iota, constants, params, and what is
// computed from them) are rebuilt at the shape their use needs: an iota
// along Q is `pos`, anything else is computed whole and its row pos taken
// (ein.gather), so a position table (wpe) or rotary angles read row pos.
//
// What cannot be decoded so (a reduction or contraction over Q, attention
// without a causal mask, a slice along time...) is no @decode, with the
// reason; the sampler then recomputes the window.
//
//===----------------------------------------------------------------------===//
#include "passes/DecodeStep.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <map>

namespace mlir::ein {
#define GEN_PASS_DEF_EINDECODESTEP
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

enum Role : int8_t { None = 0, Q = 1, K = 2 };
using Roles = SmallVector<int8_t>;

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// `type` with its Q axes of size 1.
RankedTensorType decodedType(RankedTensorType type, ArrayRef<int8_t> roles) {
  SmallVector<int64_t> shape(type.getShape());
  for (size_t i = 0; i < roles.size(); ++i)
    if (roles[i] == Q)
      shape[i] = 1;
  return RankedTensorType::get(shape, type.getElementType());
}

struct DecodeBuilder {
  ModuleOp module;
  func::FuncOp forward, decode;
  OpBuilder b;
  Value pos; // tensor<1xi32>
  std::string whyNot;
  DenseSet<Value> timed;          // @forward values that depend on a context input
  DenseMap<Value, Roles> roles;   // ... their axes' roles
  DenseMap<Value, Value> decoded; // ... their @decode values
  IRMapping whole;                // @forward values that depend on no input, whole
  std::map<std::pair<void *, Roles>, Value> rebuilt; // ... at a use's shape
  DenseMap<Value, Value> cached;                     // key/value operands read from their cache
  SmallVector<Value> cacheResults;

  DecodeBuilder(ModuleOp m, func::FuncOp f) : module(m), forward(f), b(m.getContext()) {}

  std::optional<Location> whyNotAt;
  bool applies = true; // false: nothing reads a window (no `ctx` axis), nothing to cache

  bool fail(Operation *op, const Twine &why) {
    if (whyNot.empty()) {
      whyNotAt = op->getLoc();
      std::string where;
      llvm::raw_string_ostream os(where);
      if (auto at = op->getLoc()->findInstanceOf<FileLineColLoc>())
        os << " at " << at.getFilename().getValue() << ":" << at.getLine() << ":" << at.getColumn();
      whyNot = (why + ": " + op->getName().getStringRef() + where).str();
    }
    return false;
  }

  ArrayAttr axesOf(Value v) {
    if (Operation *op = v.getDefiningOp())
      if (auto a = op->getAttrOfType<ArrayAttr>("axes"))
        return a;
    if (auto arg = dyn_cast<BlockArgument>(v))
      if (auto a = forward.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "ein.axes"))
        if (int64_t(a.size()) == tensorOf(v).getRank())
          return a;
    SmallVector<Attribute> names;
    for (int64_t i = 0; i < tensorOf(v).getRank(); ++i)
      names.push_back(b.getStringAttr("d" + std::to_string(i)));
    return b.getArrayAttr(names);
  }

  ArrayAttr permuted(ArrayAttr axes, ArrayRef<int64_t> perm) {
    SmallVector<Attribute> names;
    for (int64_t p : perm)
      names.push_back(axes[p]);
    return b.getArrayAttr(names);
  }

  /// A value that depends on no input, whole (cloned into @decode once).
  Value wholeOf(Value v) {
    if (Value m = whole.lookupOrNull(v))
      return m;
    Operation *op = v.getDefiningOp();
    for (Value operand : op->getOperands())
      wholeOf(operand);
    b.clone(*op, whole);
    return whole.lookup(v);
  }

  /// Row `pos` of `full` along axis `axis` (size 1 there).
  Value rowAt(Value full, int64_t axis, ArrayAttr axes) {
    Location loc = full.getLoc();
    RankedTensorType type = tensorOf(full);
    int64_t rank = type.getRank();
    SmallVector<int64_t> perm{axis}, inverse(rank);
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        perm.push_back(i);
    for (int64_t i = 0; i < rank; ++i)
      inverse[perm[i]] = i;
    Value front = full;
    ArrayAttr frontAxes = permuted(axes, perm);
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(type.getDimSize(p));
    if (axis != 0)
      front = b.create<TransposeOp>(loc, RankedTensorType::get(shape, type.getElementType()), full,
                                    perm, frontAxes);
    shape[0] = 1;
    Value row = b.create<GatherOp>(loc, RankedTensorType::get(shape, type.getElementType()), front,
                                   pos, frontAxes);
    if (axis == 0)
      return row;
    SmallVector<int64_t> back(type.getShape());
    back[axis] = 1;
    return b.create<TransposeOp>(loc, RankedTensorType::get(back, type.getElementType()), row,
                                 inverse, axes);
  }

  /// A value that depends on no input, at the shape of a use whose axes
  /// have `r`'s roles: an iota along Q is pos; elementwise ops, broadcasts
  /// and transposes are rebuilt at that shape; anything else is computed
  /// whole and its row pos taken.
  Value rebuild(Value v, const Roles &r) {
    if (llvm::none_of(r, [](int8_t x) { return x == Q; }))
      return wholeOf(v);
    auto key = std::make_pair(v.getAsOpaquePointer(), r);
    if (auto it = rebuilt.find(key); it != rebuilt.end())
      return it->second;
    RankedTensorType type = decodedType(tensorOf(v), r);
    Operation *op = v.getDefiningOp();
    Value out;
    if (auto iota = dyn_cast_if_present<IotaOp>(op); iota && r[iota.getDimension()] == Q) {
      Value p = pos;
      if (!type.getElementType().isInteger(32))
        p = b.create<CastOp>(iota.getLoc(), RankedTensorType::get({1}, type.getElementType()), pos,
                             b.getArrayAttr({axesOf(iota)[iota.getDimension()]}));
      out = b.create<BroadcastOp>(iota.getLoc(), type, p,
                                  ArrayRef<int64_t>{int64_t(iota.getDimension())}, axesOf(iota));
    } else if (op && (isa<IotaOp>(op) || op->hasTrait<OpTrait::Elementwise>() ||
                      isa<TransposeOp, BroadcastOp>(op) ||
                      (isa<ConstantOp>(op) &&
                       cast<DenseElementsAttr>(cast<ConstantOp>(op).getValue()).isSplat()))) {
      IRMapping m;
      for (Value operand : op->getOperands()) {
        Roles inner(tensorOf(operand).getRank(), None);
        if (op->hasTrait<OpTrait::Elementwise>())
          inner = r;
        else if (auto t = dyn_cast<TransposeOp>(op))
          for (auto [i, p] : llvm::enumerate(t.getPermutation()))
            inner[p] = r[i];
        else if (auto bc = dyn_cast<BroadcastOp>(op))
          for (auto [i, d] : llvm::enumerate(bc.getDimensions()))
            inner[i] = tensorOf(operand).getDimSize(i) == 1 ? None : r[d];
        m.map(operand, rebuild(operand, inner));
      }
      Operation *copy = b.clone(*op, m);
      copy->getResult(0).setType(type);
      if (auto c = dyn_cast<ConstantOp>(copy))
        c.setValueAttr(cast<DenseElementsAttr>(c.getValue()).resizeSplat(type));
      out = copy->getResult(0);
    } else {
      out = wholeOf(v);
      for (size_t i = 0; i < r.size(); ++i)
        if (r[i] == Q)
          out = rowAt(out, i, axesOf(v));
    }
    rebuilt[key] = out;
    return out;
  }

  /// `v` in @decode where its use needs roles `r`; null (and whyNot) when
  /// a timed value has others.
  Value operand(Operation *user, Value v, const Roles &r) {
    if (!timed.contains(v))
      return rebuild(v, r);
    if (roles[v] == r)
      return decoded[v];
    // A broadcast's new axes take the roles of the axes they meet.
    if (auto bc = v.getDefiningOp<BroadcastOp>()) {
      const Roles &have = roles[v];
      bool fits = true;
      for (size_t i = 0; i < r.size(); ++i) {
        auto mapped = llvm::find(bc.getDimensions(), int64_t(i));
        bool fresh = mapped == bc.getDimensions().end() ||
                     tensorOf(bc.getInput()).getDimSize(mapped - bc.getDimensions().begin()) == 1;
        fits &= have[i] == r[i] || (fresh && have[i] == None);
      }
      if (fits)
        return b.create<BroadcastOp>(bc.getLoc(), decodedType(tensorOf(v), r),
                                     decoded[bc.getInput()], bc.getDimensions(), axesOf(v));
    }
    return fail(user, "its operands' time axes do not line up"), Value();
  }

  /// The key side of attention scores `att` whose result axes `a` and `c`
  /// are both positions: the axis the causal mask downstream masks where it
  /// is greater than the other (select(cmp gt(iota s, iota t), -inf, .)).
  std::optional<int64_t> keyAxis(Value att, int64_t a, int64_t c) {
    SmallVector<Value> work{att};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second || seen.size() > 64)
        continue;
      for (Operation *user : v.getUsers()) {
        if (auto sel = dyn_cast<SelectOp>(user); sel && sel.getOnFalse() == v) {
          auto cmp = sel.getCond().getDefiningOp<CmpOp>();
          auto lhs = cmp ? cmp.getLhs().getDefiningOp<IotaOp>() : IotaOp();
          auto rhs = cmp ? cmp.getRhs().getDefiningOp<IotaOp>() : IotaOp();
          if (!lhs || !rhs || !isNegInfSplat(sel.getOnTrue()))
            continue;
          int64_t l = lhs.getDimension(), h = rhs.getDimension();
          if (!((l == a && h == c) || (l == c && h == a)))
            continue;
          if (cmp.getPredicate() == CmpPredicate::gt)
            return l;
          if (cmp.getPredicate() == CmpPredicate::lt)
            return h;
          continue;
        }
        if (user->hasTrait<OpTrait::Elementwise>() && user->getNumResults() == 1 &&
            tensorOf(user->getResult(0)).getShape() == tensorOf(v).getShape())
          work.push_back(user->getResult(0));
      }
    }
    return std::nullopt;
  }

  static bool isNegInfSplat(Value v) {
    if (auto bc = v.getDefiningOp<BroadcastOp>())
      v = bc.getInput();
    auto c = v.getDefiningOp<ConstantOp>();
    auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
    return dense && dense.isSplat() && isa<FloatType>(dense.getElementType()) &&
           dense.getSplatValue<APFloat>().isInfinity() &&
           dense.getSplatValue<APFloat>().isNegative();
  }

  /// Timed `x` (one Q axis, no K) as its whole window: a cache argument
  /// with row pos replaced by x's decoded row; the updated cache is a
  /// result of @decode.
  Value cacheOf(Operation *user, Value x) {
    if (Value c = cached.lookup(x))
      return c;
    const Roles &r = roles[x];
    int64_t axis = -1;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r[i] == K)
        return fail(user, "a key/value operand already spans the window"), Value();
      if (r[i] == Q)
        axis = i;
    }
    if (axis < 0)
      return fail(user, "attention reads a value with no time axis"), Value();
    RankedTensorType type = tensorOf(x);
    Location loc = x.getLoc();
    ArrayAttr axes = axesOf(x);
    size_t index = cacheResults.size();
    std::string name = "cache." + std::to_string(index);
    decode.insertArgument(decode.getNumArguments(), type,
                          b.getDictionaryAttr({b.getNamedAttr("ein.kind", b.getStringAttr("cache")),
                                               b.getNamedAttr("ein.name", b.getStringAttr(name)),
                                               b.getNamedAttr("ein.axes", axes)}),
                          loc);
    Value in = decode.getArgument(decode.getNumArguments() - 1);
    auto i32 = RankedTensorType::get(type.getShape(), b.getI32Type());
    Value at = b.create<BroadcastOp>(loc, i32, pos, ArrayRef<int64_t>{axis}, axes);
    Value iota = b.create<IotaOp>(loc, i32, axis, axes);
    auto i1 = RankedTensorType::get(type.getShape(), b.getI1Type());
    Value here = b.create<CmpOp>(loc, i1, CmpPredicate::eq, iota, at, axes);
    SmallVector<int64_t> all;
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.push_back(i);
    Value row = b.create<BroadcastOp>(loc, type, decoded[x], all, axes);
    Value out = b.create<SelectOp>(loc, type, here, row, in, axes);
    cacheResults.push_back(out);
    cached[x] = out;
    return out;
  }

  bool contract(ContractOp op) {
    Value lhs = op.getLhs(), rhs = op.getRhs();
    Roles rl = timed.contains(lhs) ? roles[lhs] : Roles(tensorOf(lhs).getRank(), None);
    Roles rr = timed.contains(rhs) ? roles[rhs] : Roles(tensorOf(rhs).getRank(), None);
    auto freeOf = [](ArrayRef<int64_t> batch, ArrayRef<int64_t> contracted, int64_t rank) {
      SmallVector<int64_t> free;
      for (int64_t i = 0; i < rank; ++i)
        if (!llvm::is_contained(batch, i) && !llvm::is_contained(contracted, i))
          free.push_back(i);
      return free;
    };
    SmallVector<int64_t> lFree = freeOf(op.getLhsBatch(), op.getLhsContract(), rl.size());
    SmallVector<int64_t> rFree = freeOf(op.getRhsBatch(), op.getRhsContract(), rr.size());
    auto qFree = [](ArrayRef<int64_t> free, const Roles &r) -> int64_t {
      for (int64_t i : free)
        if (r[i] == Q)
          return i;
      return -1;
    };
    bool cacheL = false, cacheR = false;
    int64_t lq = qFree(lFree, rl), rq = qFree(rFree, rr);
    if (lq >= 0 && rq >= 0) { // attention scores: which side is the key?
      int64_t nb = op.getLhsBatch().size();
      int64_t la = nb + llvm::find(lFree, lq) - lFree.begin();
      int64_t ra = nb + lFree.size() + (llvm::find(rFree, rq) - rFree.begin());
      std::optional<int64_t> key = keyAxis(op.getResult(), la, ra);
      if (!key)
        return fail(op, "attention with no causal mask (causal(att, \"t s\"))");
      (*key == la ? cacheL : cacheR) = true;
    }
    for (auto [a, c] : llvm::zip(op.getLhsContract(), op.getRhsContract())) {
      if (rl[a] == Q && rr[c] == Q)
        return fail(op, "a contraction over time that is not attention");
      cacheL |= rl[a] == Q && rr[c] == K;
      cacheR |= rr[c] == Q && rl[a] == K;
    }
    Value l = cacheL ? cacheOf(op, lhs) : Value(), r = cacheR ? cacheOf(op, rhs) : Value();
    if ((cacheL && !l) || (cacheR && !r))
      return false;
    auto toK = [](Roles x) {
      for (int8_t &role : x)
        if (role == Q)
          role = K;
      return x;
    };
    if (cacheL)
      rl = toK(rl);
    if (cacheR)
      rr = toK(rr);
    if (!l)
      l = operand(op, lhs, rl);
    if (!r)
      r = operand(op, rhs, rr);
    if (!l || !r)
      return false;
    Roles out;
    for (auto [a, c] : llvm::zip(op.getLhsBatch(), op.getRhsBatch())) {
      if (rl[a] != rr[c])
        return fail(op, "batch axes with different time roles");
      out.push_back(rl[a]);
    }
    for (auto [a, c] : llvm::zip(op.getLhsContract(), op.getRhsContract()))
      if (rl[a] != rr[c])
        return fail(op, "a contraction over time that is not attention");
    for (int64_t i : lFree)
      out.push_back(rl[i]);
    for (int64_t i : rFree)
      out.push_back(rr[i]);
    IRMapping m; // lhs and rhs may be one value, read from @decode as two
    m.map(lhs, l);
    m.map(rhs, r);
    if (!emit(op, m, out))
      return false;
    decoded[op.getResult()].getDefiningOp()->setOperands({l, r});
    return true;
  }

  /// Clones timed `op` with its operands mapped by `m`, its result at
  /// the decoded shape of roles `r`.
  bool emit(Operation *op, IRMapping &m, const Roles &r) {
    if (llvm::count(r, int8_t(Q)) > 1)
      return fail(op, "a value with two query-time axes");
    Operation *copy = b.clone(*op, m);
    Value result = op->getResult(0);
    copy->getResult(0).setType(decodedType(tensorOf(result), r));
    roles[result] = r;
    decoded[result] = copy->getResult(0);
    return true;
  }

  /// The roles of reshape `from`'s result axes: an axis with a role must
  /// stay one axis (the same row-major prefix before and after it).
  std::optional<Roles> reshaped(ArrayRef<int64_t> in, const Roles &r, ArrayRef<int64_t> out) {
    Roles result(out.size(), None);
    for (size_t i = 0; i < in.size(); ++i) {
      if (r[i] == None)
        continue;
      int64_t before = 1;
      for (size_t k = 0; k < i; ++k)
        before *= in[k];
      int64_t prefix = 1;
      bool found = false;
      for (size_t j = 0; j < out.size() && !found; ++j) {
        if (prefix == before && out[j] == in[i]) {
          result[j] = r[i];
          found = true;
        }
        prefix *= out[j];
      }
      if (!found)
        return std::nullopt;
    }
    return result;
  }

  bool step(Operation *op) {
    bool anyTimed = llvm::any_of(op->getOperands(), [&](Value v) { return timed.contains(v); });
    if (!anyTimed)
      return true; // rebuilt where a timed op uses it
    if (op->getNumResults() != 1)
      return fail(op, "an op with several results");
    Value result = op->getResult(0);
    timed.insert(result);
    if (auto c = dyn_cast<ContractOp>(op))
      return contract(c);
    IRMapping m;
    auto mapAs = [&](Value v, const Roles &r) {
      Value d = operand(op, v, r);
      if (d)
        m.map(v, d);
      return bool(d);
    };
    if (op->hasTrait<OpTrait::Elementwise>() || isa<StopGradientOp, ConcatOp>(op)) {
      Roles r(tensorOf(result).getRank(), None);
      for (Value v : op->getOperands())
        if (timed.contains(v))
          for (size_t i = 0; i < r.size(); ++i)
            if (r[i] == None)
              r[i] = roles[v][i];
      if (isa<ConcatOp>(op) && r[0] != None)
        return fail(op, "a concat along time");
      for (Value v : op->getOperands())
        if (!mapAs(v, r))
          return false;
      return emit(op, m, r);
    }
    Value in = op->getOperand(0);
    Roles ri = roles[in];
    if (!mapAs(in, ri))
      return false;
    Roles r(tensorOf(result).getRank(), None);
    if (auto bc = dyn_cast<BroadcastOp>(op)) {
      for (auto [i, d] : llvm::enumerate(bc.getDimensions()))
        r[d] = ri[i];
    } else if (auto t = dyn_cast<TransposeOp>(op)) {
      for (auto [i, p] : llvm::enumerate(t.getPermutation()))
        r[i] = ri[p];
    } else if (auto red = dyn_cast<ReduceOp>(op)) {
      ArrayRef<int64_t> dims = red.getDimensions();
      size_t j = 0;
      for (size_t i = 0; i < ri.size(); ++i) {
        if (llvm::is_contained(dims, int64_t(i))) {
          if (ri[i] == Q)
            return fail(op, "a reduction over time");
        } else {
          r[j++] = ri[i];
        }
      }
    } else if (isa<ReshapeOp>(op)) {
      std::optional<Roles> out = reshaped(tensorOf(in).getShape(), ri, tensorOf(result).getShape());
      if (!out)
        return fail(op, "a reshape that merges the time axis");
      r = *out;
    } else if (isa<SliceOp>(op)) {
      if (ri[0] != None)
        return fail(op, "a slice along time");
      r = ri;
    } else if (auto g = dyn_cast<GatherOp>(op)) {
      if (timed.contains(g.getTable()))
        return fail(op, "a gather from a table that depends on the input");
      Value idx = g.getIndices();
      Roles ix = roles[idx];
      if (!mapAs(idx, ix))
        return false;
      std::copy(ix.begin(), ix.end(), r.begin());
    } else {
      return fail(op, "an op the decode step does not know");
    }
    return emit(op, m, r);
  }

  /// Builds @decode; false (and whyNot) when the model cannot decode.
  bool build() {
    func::ReturnOp ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    int64_t logits = -1;
    for (unsigned i = 0; i < forward.getNumResults(); ++i)
      if (auto n = forward.getResultAttrOfType<StringAttr>(i, "ein.name");
          n && n.getValue() == "logits")
        logits = i;
    if (logits < 0)
      return fail(forward, "@forward has no `logits` output");
    Value target = ret.getOperand(logits);

    // The ops the logits need.
    DenseSet<Operation *> needed;
    SmallVector<Value> work{target};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Operation *op = v.getDefiningOp();
      if (op && needed.insert(op).second)
        for (Value operand : op->getOperands())
          work.push_back(operand);
    }

    // The signature: context inputs (ctx axis of size 1), pos, the params.
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    SmallVector<std::pair<BlockArgument, Roles>> args;
    for (BlockArgument a : forward.getArguments()) {
      auto kind = forward.getArgAttrOfType<StringAttr>(a.getArgNumber(), "ein.kind");
      bool used = llvm::any_of(a.getUsers(), [&](Operation *u) { return needed.contains(u); });
      if (kind && kind.getValue() == "input") {
        if (!used)
          continue;
        auto axes = forward.getArgAttrOfType<ArrayAttr>(a.getArgNumber(), "ein.axes");
        Roles r(tensorOf(a).getRank(), None);
        for (size_t i = 0; axes && i < axes.size(); ++i)
          if (auto s = dyn_cast<StringAttr>(axes[i]); s && s.getValue() == "ctx")
            r[i] = Q;
        if (llvm::count(r, int8_t(Q)) != 1)
          return applies = false, fail(forward, "an input the logits read has no `ctx` axis");
        args.push_back({a, r});
        types.push_back(decodedType(tensorOf(a), r));
      } else {
        args.push_back({a, {}});
        types.push_back(a.getType());
      }
      attrs.push_back(forward.getArgAttrDict(a.getArgNumber()));
    }
    if (llvm::none_of(args, [](auto &a) { return !a.second.empty(); }))
      return applies = false, fail(forward, "the logits read no input with a `ctx` axis");
    types.push_back(RankedTensorType::get({1}, b.getI32Type()));
    attrs.push_back(b.getDictionaryAttr({b.getNamedAttr("ein.kind", b.getStringAttr("input")),
                                         b.getNamedAttr("ein.name", b.getStringAttr("pos")),
                                         b.getNamedAttr("ein.axes", b.getStrArrayAttr({"pos"}))}));

    b.setInsertionPointToEnd(module.getBody());
    decode = b.create<func::FuncOp>(forward.getLoc(), "decode", b.getFunctionType(types, {}));
    decode.setAllArgAttrs(attrs);
    Block *body = decode.addEntryBlock();
    b.setInsertionPointToStart(body);
    for (auto [i, a] : llvm::enumerate(args)) {
      Value arg = body->getArgument(i);
      if (a.second.empty()) {
        whole.map(a.first, arg);
      } else {
        timed.insert(a.first);
        roles[a.first] = a.second;
        decoded[a.first] = arg;
      }
    }
    pos = body->getArgument(args.size());

    for (Operation &op : forward.getBody().front().without_terminator())
      if (needed.contains(&op) && !step(&op))
        return false;
    if (!timed.contains(target) || llvm::count(roles[target], int8_t(Q)) != 1)
      return applies = false, fail(forward, "the logits have no time axis");

    SmallVector<Value> results{decoded[target]};
    results.append(cacheResults);
    b.create<func::ReturnOp>(forward.getLoc(), results);
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    decode.setFunctionType(b.getFunctionType(decode.getArgumentTypes(), resultTypes));
    decode.setResultAttrs(0, forward.getResultAttrDict(logits));
    decode.setResultAttr(0, "ein.axes", axesOf(target));
    for (size_t i = 0; i < cacheResults.size(); ++i)
      decode.setResultAttr(i + 1, "ein.name", b.getStringAttr("cache." + std::to_string(i)));
    eraseDead();
    return true;
  }

  void eraseDead() {
    SmallVector<Operation *> ops;
    for (Operation &op : decode.getBody().front().without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty())
        op->erase();
  }
};

/// buildDecodeStep, with where in @forward it failed.
LogicalResult build(ModuleOp module, std::string &whyNot, Location &where, bool &applies) {
  applies = true;
  where = module.getLoc();
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal()) {
    whyNot = "the module has no @forward";
    return failure();
  }
  if (module.lookupSymbol("decode")) {
    whyNot = "a symbol @decode already exists";
    return failure();
  }
  DecodeBuilder builder(module, forward);
  if (builder.build())
    return success();
  if (builder.decode)
    builder.decode.erase();
  whyNot = builder.whyNot;
  applies = builder.applies;
  if (builder.whyNotAt)
    where = *builder.whyNotAt;
  return failure();
}

struct EinDecodeStep : mlir::ein::impl::EinDecodeStepBase<EinDecodeStep> {
  void runOnOperation() override {
    std::string whyNot;
    Location where = getOperation().getLoc();
    bool applies = true;
    if (failed(build(getOperation(), whyNot, where, applies))) {
      emitError(where, "ein-decode-step: ") << whyNot;
      signalPassFailure();
    }
  }
};

} // namespace

namespace mlir::ein {

LogicalResult buildDecodeStep(ModuleOp module, std::string &whyNot, bool *applies) {
  Location where = module.getLoc();
  bool any = true;
  LogicalResult built = build(module, whyNot, where, any);
  if (applies)
    *applies = any;
  return built;
}

} // namespace mlir::ein
