//===- CpuRowsKernel.cpp - A row group as one CPU kernel ------------------===//
//
// describeRowsKernel: the members of a row group (passes/FuseRows.h) become
// one KernelSpec of op "ein.rows" (codegen/CpuKernelGen.h). genRows: rows
// are the parallel loop; each reduction is one pass over the row (its
// producers evaluated again in that pass, from operands still in L1), in
// the order rowOrder fixes (codegen/RowOrder.h) — the unfused reduce
// kernel's order (reduceRow, shared with it), so a row kernel gives the
// unfused kernels' bits. Per-row nodes are computed once per row, between
// the passes; a last pass computes and stores the per-element results.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuGroupKernel.h"
#include "codegen/CpuKernelBuilder.h"
#include "codegen/RowOrder.h"

#include "ir/EinOps.h"
#include "passes/FuseRows.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

using namespace mlir;

namespace ein::codegen {

//===----------------------------------------------------------------------===//
// Reductions of one row, shared with the reduce kernel
//===----------------------------------------------------------------------===//

Value reduceInitValue(KernelBuilder &g, llvm::StringRef kind, ElemKind k) {
  if (kind == "sum")
    return g.zeroOf(k);
  if (isFloatKind(k))
    return g.f32c(kind == "max" ? -std::numeric_limits<float>::infinity()
                                : std::numeric_limits<float>::infinity());
  return g.i32c(kind == "max" ? std::numeric_limits<int32_t>::min()
                              : std::numeric_limits<int32_t>::max());
}

Value reduceCombineValue(KernelBuilder &g, llvm::StringRef kind, ElemKind k, Value acc, Value x) {
  if (isFloatKind(k) && kind == "sum")
    return g.roundTo(g.b.create<arith::AddFOp>(g.loc, acc, x), k);
  if (isFloatKind(k))
    return kind == "max" ? Value(g.b.create<arith::MaximumFOp>(g.loc, acc, x))
                         : Value(g.b.create<arith::MinimumFOp>(g.loc, acc, x));
  if (kind == "sum")
    return g.addOf(acc, x, k);
  return kind == "max" ? g.maxOf(acc, x, k) : g.minOf(acc, x, k);
}

static_assert(kChunksAt == kRowBlockPartials + 32 && kRowScratch == kChunksAt + kRowChunks,
              "a block's partials, its warps' results, the chunks' results");
static_assert(kRowStage == kRowBlockPartials * 4, "a round of a block's f32 vectors");

bool rowNeedsScratch(llvm::StringRef kind, ElemKind k, int64_t length) {
  return k == ElemKind::F32 && kind == "sum" && !rowOrder(length, k, kind).inOrder;
}

namespace {

/// s[base + l] = s[base + l] + s[base + l + d] for d = 16, 8, 4, 2, 1 and
/// l < d: a warp's xor-shuffle tree as seen from lane 0.
void partialTree(KernelBuilder &g, Value scratch, Value base) {
  for (int64_t d = 16; d > 0; d /= 2)
    g.loop(d, [&](Value l) {
      Value at = g.b.create<arith::AddIOp>(g.loc, base, l);
      Value other = g.b.create<arith::AddIOp>(g.loc, at, g.idx(d));
      Value sum = g.b.create<arith::AddFOp>(g.loc, g.load(scratch, ElemKind::F32, at),
                                            g.load(scratch, ElemKind::F32, other));
      g.store(sum, scratch, ElemKind::F32, at);
    });
}

/// Partials scratch[0, P), set to 0, then partial p combining vectors
/// first + p, first + p + P, ... of `count` vectors of `v` elements (each
/// vector's elements in order): whole rounds of P, then the rest.
void combineInPartials(KernelBuilder &g, Value scratch, int64_t P, int64_t v, Value first,
                       int64_t count, const std::function<Value(Value)> &element, Value stage) {
  OpBuilder &b = g.b;
  Location loc = g.loc;
  g.loop(P, [&](Value p) { g.store(g.f32c(0.0f), scratch, ElemKind::F32, p); });
  auto round = [&](Value firstVector, int64_t n) {
    if (stage) { // the round's n·v elements, in order, into stage[0, n·v)
      Value start = b.create<arith::MulIOp>(loc, firstVector, g.idx(v));
      g.loop(n * v, [&](Value i) {
        g.store(element(b.create<arith::AddIOp>(loc, start, i)), stage, ElemKind::F32, i);
      });
    }
    g.loop(n, [&](Value p) {
      // Vector firstVector + p: from the stage at p·v, else from the row.
      Value q = stage ? p : Value(b.create<arith::AddIOp>(loc, firstVector, p));
      Value base = b.create<arith::MulIOp>(loc, q, g.idx(v));
      Value acc = g.load(scratch, ElemKind::F32, p);
      for (int64_t e = 0; e < v; ++e) {
        Value at = b.create<arith::AddIOp>(loc, base, g.idx(e));
        acc = b.create<arith::AddFOp>(loc, acc,
                                      stage ? g.load(stage, ElemKind::F32, at) : element(at));
      }
      g.store(acc, scratch, ElemKind::F32, p);
    });
  };
  if (count / P > 0)
    g.loop(count / P, [&](Value r) {
      round(b.create<arith::AddIOp>(loc, first, b.create<arith::MulIOp>(loc, r, g.idx(P))), P);
    });
  if (count % P)
    round(b.create<arith::AddIOp>(loc, first, g.idx(count / P * P)), count % P);
}

} // namespace

Value reduceRow(KernelBuilder &g, llvm::StringRef kind, ElemKind k, int64_t length,
                const std::function<Value(Value)> &element, Value scratch, Value stage) {
  OpBuilder &b = g.b;
  Location loc = g.loc;
  if (!rowNeedsScratch(kind, k, length)) // a fold in order (exact in any order but sums)
    return g.loopCarry(length, reduceInitValue(g, kind, k), [&](Value j, Value acc) {
      return reduceCombineValue(g, kind, k, acc, element(j));
    });
  RowOrder order = rowOrder(length, k, kind);
  const int64_t P = order.partials, v = order.vector, vectors = length / v;
  if (order.chunks > 0) {
    // Chunk c: vectors [c·Q, (c + 1)·Q) as 32 partials and a warp's tree,
    // its result at scratch[kChunksAt + c]; then those results as a row.
    const int64_t Q = order.chunkVectors, full = vectors / Q, rest = vectors % Q;
    auto chunk = [&](Value c, int64_t count) {
      combineInPartials(g, scratch, 32, v, b.create<arith::MulIOp>(loc, c, g.idx(Q)), count,
                        element, stage);
      partialTree(g, scratch, g.idx(0));
      g.store(g.load(scratch, ElemKind::F32, g.idx(0)), scratch, ElemKind::F32,
              b.create<arith::AddIOp>(loc, c, g.idx(kChunksAt)));
    };
    if (full > 0)
      g.loop(full, [&](Value c) { chunk(c, Q); });
    if (rest > 0)
      chunk(g.idx(full), rest);
    int64_t filled = full + (rest > 0);
    if (filled < order.chunks) // empty chunks: a sum of nothing
      g.loop(order.chunks - filled, [&](Value c) {
        g.store(g.f32c(0.0f), scratch, ElemKind::F32,
                b.create<arith::AddIOp>(loc, c, g.idx(kChunksAt + filled)));
      });
    return reduceRow(
        g, kind, k, order.chunks,
        [&](Value j) {
          return g.load(scratch, ElemKind::F32, b.create<arith::AddIOp>(loc, j, g.idx(kChunksAt)));
        },
        scratch);
  }
  combineInPartials(g, scratch, P, v, g.idx(0), vectors, element, stage);
  if (P == 32) {
    partialTree(g, scratch, g.idx(0));
    return g.load(scratch, ElemKind::F32, g.idx(0));
  }
  // A block: each warp's 32 partials, then the 32 warps' results.
  g.loop(P / 32, [&](Value w) {
    Value base = b.create<arith::MulIOp>(loc, w, g.idx(32));
    partialTree(g, scratch, base);
    g.store(g.load(scratch, ElemKind::F32, base), scratch, ElemKind::F32,
            b.create<arith::AddIOp>(loc, w, g.idx(P)));
  });
  partialTree(g, scratch, g.idx(P));
  return g.load(scratch, ElemKind::F32, g.idx(P));
}

//===----------------------------------------------------------------------===//
// Describing a row group
//===----------------------------------------------------------------------===//

FailureOr<FusedKernel> describeRowsKernel(ArrayRef<Operation *> members) {
  std::optional<mlir::ein::RowShape> shape;
  for (Operation *op : members)
    if (!shape)
      shape = mlir::ein::rowReductionShape(op);
  if (!shape || members.size() < 2)
    return failure();
  GroupKernelBuilder group("ein.rows", members);
  for (Operation *op : members) {
    mlir::ein::RowLevel level = mlir::ein::rowLevel(op, *shape);
    if (level == mlir::ein::RowLevel::None)
      return failure();
    bool perRow = level == mlir::ein::RowLevel::Row;
    if (auto b = dyn_cast<mlir::ein::BroadcastOp>(op)) {
      int32_t input = group.memberNode(b.getInput());
      if (input < 0)
        return failure(); // spreads a value computed elsewhere
      FusedNode node;
      node.perRow = perRow;
      node.op = "ein.broadcast";
      node.elem = node.operandElem = group.spec().body[size_t(input)].elem;
      node.args.push_back(-(input + 1));
      group.addMember(op, std::move(node));
      continue;
    }
    auto own = describeKernel(op);
    if (failed(own))
      return failure();
    FusedNode node = GroupKernelBuilder::nodeFor(*own);
    node.perRow = perRow;
    bool reduce = isa<mlir::ein::ReduceOp>(op);
    for (OpOperand &use : op->getOpOperands()) {
      // An iota: computed at each element of the row, or once per row (a
      // per-row node reads a value of the rows' shape; a reduction reads
      // the row's elements).
      if (group.readMember(use.get(), node) || group.readIndex(use, *own, perRow && !reduce, node))
        continue;
      mlir::ein::BroadcastRead read = reduce ? mlir::ein::BroadcastRead::Full
                                             : mlir::ein::rowOperandRead(use.get(), level, *shape);
      bool through = read != mlir::ein::BroadcastRead::Full;
      Value source =
          through ? use.get().getDefiningOp<mlir::ein::BroadcastOp>().getInput() : use.get();
      if (through && group.readMember(source, node)) {
        group.fk.inPlaceReads.push_back(&use); // a per-row node, at every element
        continue;
      }
      // A per-row node reads a per-row value as one element per row (a
      // reduction reads the row's elements).
      Access access = through ? accessOf(read) : perRow && !reduce ? Access::Prefix : Access::Full;
      group.readOperand(use, source, access, through, *own, node);
    }
    group.addMember(op, std::move(node));
  }

  // Results: members read after the kernel; for a broadcast read after it,
  // its input (a per-row value: the reader reads it in place, or the lowering
  // materialises the broadcast after the kernel).
  llvm::SmallPtrSet<Operation *, 4> spread;
  for (Operation *op : members)
    if (isa<mlir::ein::BroadcastOp>(op) && group.readOutside(op))
      spread.insert(op->getOperand(0).getDefiningOp());
  for (Operation *op : members)
    if (!isa<mlir::ein::BroadcastOp>(op) && (group.readOutside(op) || spread.count(op)))
      group.addOutput(op);
  FusedKernel &fk = group.fk;
  if (fk.outputs.empty())
    return std::move(fk); // dead code
  fk.spec.outer = shape->rows;
  fk.spec.inner = shape->length;
  group.writeKey("ein.rows<" + std::to_string(shape->rows) + "x" + std::to_string(shape->length) +
                 ">");
  return std::move(fk);
}

//===----------------------------------------------------------------------===//
// Generating the kernel
//===----------------------------------------------------------------------===//

namespace {

class RowsGen {
public:
  RowsGen(KernelBuilder &g, const KernelSpec &s, ArrayRef<Value> in, ArrayRef<Value> outs,
          Value scratch, Value stage)
      : g(g), s(s), in(in), outs(outs), scratch(scratch), stage(stage) {}

  void run() {
    g.armParallel();
    g.loop(s.outer, [&](Value r) {
      row = r;
      rowBase = g.b.create<arith::MulIOp>(g.loc, r, g.idx(s.inner));
      perRow.assign(s.body.size(), Value());
      ensured.assign(s.body.size(), 0);
      rowOperands.assign(s.operands.size(), Value());
      for (size_t j = 0; j < s.operands.size(); ++j) // per-row and scalar reads, once
        if (s.operands[j].access == Access::Prefix || s.operands[j].access == Access::Scalar)
          rowOperands[j] = g.load(in[j], s.operands[j].elem,
                                  s.operands[j].access == Access::Prefix ? row : g.idx(0));
      std::vector<size_t> elementOutputs;
      for (size_t t = 0; t < s.outputNodes.size(); ++t) {
        const FusedNode &n = s.body[s.outputNodes[t]];
        if (n.perRow)
          g.store(rowValue(s.outputNodes[t]), outs[t], resultOf(t).elem, row);
        else
          elementOutputs.push_back(t);
      }
      if (elementOutputs.empty())
        return;
      for (size_t t : elementOutputs)
        ensurePerRowInputs(-(s.outputNodes[t] + 1));
      g.loop(s.inner, [&](Value j) {
        Element e = element(j);
        for (size_t t : elementOutputs) {
          Value v = elementValue(-(s.outputNodes[t] + 1), e);
          if (roundedWhereMade(s.body[s.outputNodes[t]]))
            g.storeRounded(v, outs[t], resultOf(t).elem, e.flat);
          else
            g.store(v, outs[t], resultOf(t).elem, e.flat);
        }
      });
    });
  }

private:
  /// One element of the row inside a pass: its index in the row and in the
  /// tensor, and the values computed for it so far.
  struct Element {
    Value j, flat;
    std::vector<Value> nodes, operands;
  };

  Element element(Value j) {
    Element e;
    e.j = j;
    e.flat = g.b.create<arith::AddIOp>(g.loc, rowBase, j);
    e.nodes.assign(s.body.size(), Value());
    e.operands.assign(s.operands.size(), Value());
    return e;
  }

  const KernelTensor &resultOf(size_t t) const { return t == 0 ? s.result : s.extraResults[t - 1]; }

  /// Computes (at row scope, before any pass needing them) the per-row
  /// values that `arg`'s per-element expression reads.
  void ensurePerRowInputs(int32_t arg) {
    if (arg >= 0 || ensured[size_t(-arg - 1)])
      return;
    ensured[size_t(-arg - 1)] = 1;
    const FusedNode &n = s.body[size_t(-arg - 1)];
    if (n.perRow) {
      rowValue(-arg - 1);
      return;
    }
    for (int32_t a : n.args)
      ensurePerRowInputs(a);
  }

  /// A per-row node's value for the current row: a reduction is a pass over
  /// the row (reduceRow, combined with the initial value as the reduce
  /// kernel combines it with its output's).
  Value rowValue(int32_t k) {
    if (perRow[k])
      return perRow[k];
    const FusedNode &n = s.body[size_t(k)];
    Value v;
    if (n.op == "ein.reduce") {
      ensurePerRowInputs(n.args[0]);
      Value r = reduceRow(
          g, n.kind, n.elem, s.inner,
          [&](Value j) {
            Element e = element(j);
            return elementValue(n.args[0], e);
          },
          scratch, stage);
      v = reduceCombineValue(g, n.kind, n.elem, reduceInitValue(g, n.kind, n.elem), r);
    } else {
      SmallVector<Value, 3> args;
      for (int32_t a : n.args)
        args.push_back(a >= 0 ? rowOperands[size_t(a)] : rowValue(-a - 1));
      v = compute(n, args, row);
    }
    perRow[k] = v;
    return v;
  }

  /// An operand or node's value at element `e` (inside a pass).
  Value elementValue(int32_t arg, Element &e) {
    if (arg >= 0) {
      const KernelTensor &t = s.operands[size_t(arg)];
      if (t.access == Access::Prefix || t.access == Access::Scalar)
        return rowOperands[size_t(arg)];
      if (!e.operands[size_t(arg)])
        e.operands[size_t(arg)] =
            g.load(in[size_t(arg)], t.elem, t.access == Access::Suffix ? e.j : e.flat);
      return e.operands[size_t(arg)];
    }
    size_t k = size_t(-arg - 1);
    const FusedNode &n = s.body[k];
    if (n.perRow)
      return perRow[k];
    if (!e.nodes[k]) {
      if (n.op == "ein.broadcast") {
        e.nodes[k] = elementValue(n.args[0], e);
      } else {
        SmallVector<Value, 3> args;
        for (int32_t a : n.args)
          args.push_back(elementValue(a, e));
        e.nodes[k] = compute(n, args, e.flat);
      }
    }
    return e.nodes[k];
  }

  /// An elementwise node's value, rounded as genFused rounds it.
  Value compute(const FusedNode &n, ArrayRef<Value> args, Value index) {
    llvm::StringRef op = n.op;
    Value v;
    if (isUnary(op))
      v = g.unary(op, args[0], n.elem);
    else if (isBinary(op))
      v = g.binary(op, args[0], args[1], n.elem);
    else if (op == "ein.cmp")
      v = g.compare(n.kind, args[0], args[1], n.operandElem);
    else if (op == "ein.select")
      v = g.b.create<arith::SelectOp>(g.loc, args[0], args[1], args[2]);
    else if (op == "ein.stochastic_round")
      v = g.stochasticRound(args[0], args[1], index, n.elem);
    else if (op == "ein.iota") // at the row's index for a per-row node
      v = g.indexValue(index, n.stride, n.size, n.perRow ? s.outer : s.outer * s.inner, n.elem);
    else // ein.cast
      v = g.cast(args[0], n.operandElem, n.elem);
    if (op != "ein.select" && op != "ein.stochastic_round")
      v = g.roundTo(v, n.elem);
    return v;
  }

  KernelBuilder &g;
  const KernelSpec &s;
  ArrayRef<Value> in, outs;
  Value scratch, stage;
  Value row, rowBase;
  std::vector<Value> perRow, rowOperands;
  std::vector<char> ensured;
};

} // namespace

bool rowsNeedScratch(const KernelSpec &s) {
  return llvm::any_of(s.body, [&](const FusedNode &n) {
    return n.op == "ein.reduce" && rowNeedsScratch(n.kind, n.elem, s.inner);
  });
}

void genRows(KernelBuilder &g, const KernelSpec &s, ArrayRef<Value> in, ArrayRef<Value> outs,
             Value scratch) {
  // Elements read from 16-bit or byte operands are staged (reduceRow): the
  // loop vectoriser loads every 4th one of them a lane at a time, while
  // f32 and i32 ones it loads as whole vectors and deinterleaves.
  Value stage;
  bool narrowReads = llvm::any_of(s.operands, [](const KernelTensor &t) {
    return t.access != Access::Prefix && t.access != Access::Scalar &&
           (isNarrowKind(t.elem) || t.elem == ElemKind::I1);
  });
  if (scratch && narrowReads)
    stage = g.b.create<memref::AllocaOp>(g.loc, MemRefType::get({kRowStage}, g.f32()));
  RowsGen(g, s, in, outs, scratch, stage).run();
}

} // namespace ein::codegen
