//===- CpuKernelGen.cpp - One `ein` op as a loop-nest func.func -----------===//
//
// Semantics follow runtime/core/ReferenceKernels.cpp, operation for operation:
// elementwise results and data movement are bit-identical to the reference
// backend's; f32 sum reductions may be reassociated (vectorised partial
// sums: equal up to rounding), bf16/f16 sums are the reference's fold in
// row-major order with the accumulator rounded after every addition, and
// float max / min are IEEE maximum / minimum (equal up to the sign of a
// zero). Where the reference reports a
// data-dependent error the kernel cannot report, it does something defined
// instead (documented at each place): a gather index out of range gives a
// zero row, a scatter_add index out of range adds nothing, an integer
// division by zero gives 0.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuKernelGen.h"
#include "codegen/CpuKernelBuilder.h"

#include "ir/EinOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <limits>

using namespace mlir;

namespace ein::codegen {

//===----------------------------------------------------------------------===//
// Generating the kernel
//===----------------------------------------------------------------------===//

namespace {

/// The group a reduction splits across threads, or -1: the first group when
/// it is kept (rows of a row-wise reduction), else the second when the first
/// is reduced and the second is the only kept one (columns of a sum over
/// rows, e.g. a bias gradient).
int reduceParallelGroup(const std::vector<ReduceGroup> &groups) {
  if (groups.empty())
    return -1;
  if (!groups[0].reduced)
    return 0;
  if (groups.size() == 2 && !groups[1].reduced)
    return 1;
  return -1;
}

/// Whether a reduction's loops are rows (kept groups) of one trailing
/// reduced run: each output is then one row combined by reduceRow, the
/// order a row kernel (CpuRowsKernel.cpp) and the CUDA renderer share.
bool reducesRows(const std::vector<ReduceGroup> &groups) {
  if (groups.empty() || !groups.back().reduced)
    return false;
  for (size_t i = 0; i + 1 < groups.size(); ++i)
    if (groups[i].reduced)
      return false;
  return true;
}

void genReduce(KernelBuilder &g, const KernelSpec &s, Value in, Value out, Value scratch) {
  ElemKind k = s.result.elem;
  std::vector<ReduceGroup> groups = reduceGroups(s);
  using Group = ReduceGroup;

  // Float sums over leading dims may be reassociated (the loop vectoriser
  // then keeps several partial sums in vector lanes): the result differs
  // from the reference's row-major order by rounding only. Rows (the
  // trailing dims reduced) are combined by reduceRow in RowOrder's order.
  // Float max / min are NaN-propagating maximum / minimum, which give the
  // reference's values in any order (up to the sign of a zero).
  // A narrow sum is a fold in its own type (ir/EinOps.td): each addition
  // rounded, in order; it still vectorises across outputs where the
  // reduced dims are outer ones (a sum over rows).
  auto combine = [&](Value acc, Value x) -> Value {
    if (k == ElemKind::F32 && s.kind == "sum")
      return g.b.create<arith::AddFOp>(g.loc, acc, x, arith::FastMathFlags::reassoc);
    return reduceCombineValue(g, s.kind, k, acc, x);
  };
  Value init = reduceInitValue(g, s.kind, k);

  if (s.operands[0].count() == 0) {
    g.loop(s.result.count(), [&](Value o) { g.store(init, out, k, o); });
    return;
  }
  // In parallel, over one kept group (reduceParallelGroup): iteration i
  // owns the outputs [i·stride, (i+1)·stride), initialised here by the same
  // call; each output still accumulates its inputs in the same order.
  int parallelGroup = g.parBegin ? reduceParallelGroup(groups) : -1;
  if (parallelGroup >= 0) {
    int64_t stride = groups[size_t(parallelGroup)].outStride;
    OpBuilder &b = g.b;
    Value lo = b.create<arith::MulIOp>(g.loc, g.parBegin, g.idx(stride));
    Value hi = b.create<arith::MulIOp>(g.loc, g.parEnd, g.idx(stride));
    g.loopRange(lo, hi, [&](Value o) { g.store(init, out, k, o); });
  } else {
    g.loop(s.result.count(), [&](Value o) { g.store(init, out, k, o); });
  }

  // The innermost run, if reduced, accumulates in a register.
  bool tailReduced = !groups.empty() && groups.back().reduced;
  std::vector<Group> outer(groups.begin(), groups.end() - (tailReduced ? 1 : 0));
  std::vector<int64_t> outerShape;
  for (const Group &gr : outer)
    outerShape.push_back(gr.size);
  g.nest(
      outerShape,
      [&](ArrayRef<Value> ivs) {
        Value inOff, outOff;
        for (size_t i = 0; i < outer.size(); ++i) {
          inOff = g.mulAdd(inOff, ivs[i], outer[i].inStride);
          outOff = g.mulAdd(outOff, ivs[i], outer[i].outStride);
        }
        outOff = g.orZero(outOff);
        Value acc = g.load(out, k, outOff);
        if (tailReduced && reducesRows(groups)) {
          const Group &t = groups.back();
          Value row = reduceRow(
              g, s.kind, k, t.size,
              [&](Value j) { return g.load(in, k, g.orZero(g.mulAdd(inOff, j, t.inStride))); },
              scratch);
          acc = reduceCombineValue(g, s.kind, k, acc, row);
        } else if (tailReduced) {
          const Group &t = groups.back();
          acc = g.loopCarry(t.size, acc, [&](Value j, Value a) {
            Value at = g.orZero(g.mulAdd(inOff, j, t.inStride));
            return combine(a, g.load(in, k, at));
          });
        } else {
          acc = combine(acc, g.load(in, k, g.orZero(inOff)));
        }
        g.store(acc, out, k, outOff);
      },
      parallelGroup);
}

} // namespace

/// A fused kernel (describeFusedKernel): one loop over the elements — or,
/// with Prefix / Suffix operands, outer × inner — evaluating the body's
/// nodes in order, each operand loaded once per element, the output nodes
/// stored.
void genFused(KernelBuilder &g, const KernelSpec &s, ArrayRef<Value> in, ArrayRef<Value> outs) {
  OpBuilder &b = g.b;
  Location loc = g.loc;
  auto body = [&](Value i, Value o, Value k) {
    SmallVector<Value> operandValues(s.operands.size());
    SmallVector<Value> nodeValues(s.body.size());
    auto operand = [&](int32_t j) -> Value {
      if (!operandValues[j]) {
        const KernelTensor &t = s.operands[j];
        Value at = t.access == Access::Scalar   ? g.idx(0)
                   : t.access == Access::Prefix ? o
                   : t.access == Access::Suffix ? k
                                                : i;
        operandValues[j] = g.load(in[j], t.elem, at);
      }
      return operandValues[j];
    };
    auto arg = [&](const FusedNode &n, size_t a) -> Value {
      int32_t r = n.args[a];
      return r >= 0 ? operand(r) : nodeValues[-r - 1];
    };
    for (size_t k2 = 0; k2 < s.body.size(); ++k2) {
      const FusedNode &n = s.body[k2];
      llvm::StringRef op = n.op;
      Value v;
      if (isUnary(op))
        v = g.unary(op, arg(n, 0), n.elem);
      else if (isBinary(op))
        v = g.binary(op, arg(n, 0), arg(n, 1), n.elem);
      else if (op == "ein.cmp")
        v = g.compare(n.kind, arg(n, 0), arg(n, 1), n.operandElem);
      else if (op == "ein.select")
        v = b.create<arith::SelectOp>(loc, arg(n, 0), arg(n, 1), arg(n, 2));
      else if (op == "ein.stochastic_round")
        v = g.stochasticRound(arg(n, 0), arg(n, 1), i, n.elem);
      else if (op == "ein.iota")
        v = g.indexValue(i, n.stride, n.size, s.result.count(), n.elem);
      else // ein.cast
        v = g.cast(arg(n, 0), n.operandElem, n.elem);
      // Every narrow value rounded where it is made, as the unfused kernel
      // stores it (a select picks values already rounded).
      if (op != "ein.select" && op != "ein.stochastic_round")
        v = g.roundTo(v, n.elem);
      nodeValues[k2] = v;
    }
    for (size_t t = 0; t < s.outputNodes.size(); ++t) {
      const KernelTensor &r = t == 0 ? s.result : s.extraResults[t - 1];
      Value v = nodeValues[s.outputNodes[t]];
      if (roundedWhereMade(s.body[s.outputNodes[t]]))
        g.storeRounded(v, outs[t], r.elem, i);
      else // a select may pick a loaded bf16 NaN with a payload: store rounds it
        g.store(v, outs[t], r.elem, i);
    }
  };
  g.armParallel();
  if (s.outer <= 0)
    return g.loop(s.result.count(), [&](Value i) { body(i, Value(), Value()); });
  g.loop(s.outer, [&](Value o) {
    g.loop(s.inner, [&](Value k) {
      Value i = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, o, g.idx(s.inner)), k);
      body(i, o, k);
    });
  });
}

void generateKernel(const KernelSpec &s, llvm::StringRef name, ModuleOp module) {
  OpBuilder b(module.getContext());
  Location loc = b.getUnknownLoc();
  b.setInsertionPointToEnd(module.getBody());
  KernelBuilder g(b, loc);

  SmallVector<Type> argTypes;
  for (const KernelTensor &t : s.operands)
    argTypes.push_back(g.memrefOf(t));
  argTypes.push_back(g.memrefOf(s.result));
  for (const KernelTensor &t : s.extraResults)
    argTypes.push_back(g.memrefOf(t));
  argTypes.push_back(b.getIndexType()); // begin
  argTypes.push_back(b.getIndexType()); // end
  auto fn = b.create<func::FuncOp>(loc, name, b.getFunctionType(argTypes, TypeRange{}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> args(entry->getArguments().begin(), entry->getArguments().end() - 2);
  if (parallelExtent(s) > 1) {
    g.parBegin = entry->getArgument(entry->getNumArguments() - 2);
    g.parEnd = entry->getArgument(entry->getNumArguments() - 1);
  }
  // reduceRow's partials, on the stack once per call.
  Value scratch;
  bool rowsScratch = s.op == "ein.rows" && rowsNeedScratch(s);
  if (s.op == "ein.reduce" && s.operands[0].count() > 0) {
    std::vector<ReduceGroup> groups = reduceGroups(s);
    rowsScratch = reducesRows(groups) && rowNeedsScratch(s.kind, s.result.elem, groups.back().size);
  }
  if (rowsScratch)
    scratch = b.create<memref::AllocaOp>(loc, MemRefType::get({kRowScratch}, b.getF32Type()));
  if (s.op == "ein.rows") {
    size_t nin = s.operands.size();
    genRows(g, s, ArrayRef<Value>(args).take_front(nin), ArrayRef<Value>(args).drop_front(nin),
            scratch);
    b.create<func::ReturnOp>(loc);
    assert(!g.parArmed && "a parallel loop was armed but never created");
    return;
  }
  if (s.op == "ein.fused") {
    size_t nin = s.operands.size();
    genFused(g, s, ArrayRef<Value>(args).take_front(nin), ArrayRef<Value>(args).drop_front(nin));
    b.create<func::ReturnOp>(loc);
    assert(!g.parArmed && "a parallel loop was armed but never created");
    return;
  }
  SmallVector<Value> in(args.begin(), args.end() - 1);
  Value out = args.back();
  ElemKind rk = s.result.elem;
  int64_t n = s.result.count();
  llvm::StringRef op = s.op;
  // Where operand j is read: element i, or element 0 of a scalar operand
  // (a rank-0 buffer broadcast in registers; see operandAccess). A Prefix or
  // Suffix operand is read through `blocked` below.
  Value zero;
  Value blockIndex; // the current index into the blocked operand
  auto at = [&](size_t j, Value i) -> Value {
    Access a = s.operands[j].access;
    if (a == Access::Prefix || a == Access::Suffix)
      return blockIndex;
    if (a != Access::Scalar || n == 1)
      return i;
    if (!zero)
      zero = b.create<arith::ConstantIndexOp>(loc, 0);
    return zero;
  };
  // Elementwise loops: flat, or — with a Prefix/Suffix operand — a nest of
  // outer × inner whose blocked operand is indexed by o (Prefix) or k (Suffix).
  int blocked = -1;
  for (size_t j = 0; j < s.operands.size(); ++j)
    if (s.operands[j].access == Access::Prefix || s.operands[j].access == Access::Suffix)
      blocked = int(j);
  auto elementwiseLoop = [&](const std::function<void(Value)> &body) {
    g.armParallel();
    if (blocked < 0)
      return g.loop(n, body);
    int64_t cnt = s.operands[blocked].count();
    bool prefix = s.operands[blocked].access == Access::Prefix;
    int64_t outer = prefix ? cnt : n / cnt, inner = prefix ? n / cnt : cnt;
    g.loop(outer, [&](Value o) {
      g.loop(inner, [&](Value k) {
        Value base = b.create<arith::MulIOp>(loc, o, b.create<arith::ConstantIndexOp>(loc, inner));
        Value i = b.create<arith::AddIOp>(loc, base, k);
        blockIndex = prefix ? o : k;
        body(i);
      });
    });
  };

  if (isUnary(op)) {
    g.armParallel();
    g.loop(n, [&](Value i) { g.store(g.unary(op, g.load(in[0], rk, i), rk), out, rk, i); });
  } else if (isBinary(op)) {
    elementwiseLoop([&](Value i) {
      Value x = g.load(in[0], rk, at(0, i)), y = g.load(in[1], rk, at(1, i));
      g.store(g.binary(op, x, y, rk), out, rk, i);
    });
  } else if (op == "ein.cmp") {
    ElemKind k = s.operands[0].elem;
    elementwiseLoop([&](Value i) {
      Value x = g.load(in[0], k, at(0, i)), y = g.load(in[1], k, at(1, i));
      g.store(g.compare(s.kind, x, y, k), out, rk, i);
    });
  } else if (op == "ein.select") {
    elementwiseLoop([&](Value i) {
      Value c = g.load(in[0], ElemKind::I1, at(0, i));
      Value v = b.create<arith::SelectOp>(loc, c, g.load(in[1], rk, at(1, i)),
                                          g.load(in[2], rk, at(2, i)));
      g.store(v, out, rk, i);
    });
  } else if (op == "ein.cast") {
    ElemKind from = s.operands[0].elem;
    g.armParallel();
    g.loop(n, [&](Value i) { g.store(g.cast(g.load(in[0], from, i), from, rk), out, rk, i); });
  } else if (op == "ein.stochastic_round") {
    elementwiseLoop([&](Value i) {
      Value x = g.load(in[0], ElemKind::F32, at(0, i));
      Value seed = g.load(in[1], ElemKind::I32, at(1, i));
      g.store(g.stochasticRound(x, seed, i, rk), out, rk, i);
    });
  } else if (op == "ein.reshape") {
    g.armParallel();
    g.loop(n, [&](Value i) { g.move(in[0], i, out, i); });
  } else if (op == "ein.transpose") {
    // out dim i = in dim perm[i]: walk the output, read the input strided.
    std::vector<int64_t> is = stridesOf(s.operands[0].shape);
    std::vector<int64_t> os = stridesOf(s.result.shape);
    g.armParallel();
    g.nest(s.result.shape, [&](ArrayRef<Value> ivs) {
      Value inOff, outOff;
      for (size_t i = 0; i < ivs.size(); ++i) {
        inOff = g.mulAdd(inOff, ivs[i], is[s.dims[i]]);
        outOff = g.mulAdd(outOff, ivs[i], os[i]);
      }
      g.move(in[0], g.orZero(inOff), out, g.orZero(outOff));
    });
  } else if (op == "ein.broadcast") {
    const std::vector<int64_t> &inShape = s.operands[0].shape;
    std::vector<int64_t> is = stridesOf(inShape);
    std::vector<int64_t> os = stridesOf(s.result.shape);
    // Input stride per result dim (0 where it broadcasts).
    std::vector<int64_t> stride(s.result.shape.size(), 0);
    for (size_t k = 0; k < s.dims.size(); ++k)
      if (inShape[k] != 1)
        stride[s.dims[k]] = is[k];
    g.armParallel();
    g.nest(s.result.shape, [&](ArrayRef<Value> ivs) {
      Value inOff, outOff;
      for (size_t i = 0; i < ivs.size(); ++i) {
        inOff = g.mulAdd(inOff, ivs[i], stride[i]);
        outOff = g.mulAdd(outOff, ivs[i], os[i]);
      }
      g.move(in[0], g.orZero(inOff), out, g.orZero(outOff));
    });
  } else if (op == "ein.reduce") {
    genReduce(g, s, in[0], out, scratch);
  } else if (op == "ein.iota") {
    std::vector<int64_t> os = stridesOf(s.result.shape);
    g.armParallel();
    g.nest(s.result.shape, [&](ArrayRef<Value> ivs) {
      Value outOff;
      for (size_t i = 0; i < ivs.size(); ++i)
        outOff = g.mulAdd(outOff, ivs[i], os[i]);
      Value v = b.create<arith::IndexCastOp>(loc, b.getI64Type(), ivs[s.scalar]);
      v = isFloatKind(rk) ? Value(b.create<arith::SIToFPOp>(loc, g.f32(), v))
                          : Value(b.create<arith::TruncIOp>(loc, g.i32(), v));
      g.store(v, out, rk, g.orZero(outOff));
    });
  } else if (op == "ein.gather") {
    // out[i, j] = table[ids[i], j]; an index outside [0, rows) gives a row of
    // zeros (the reference reports an error; callers validate ids first).
    const KernelTensor &table = s.operands[0];
    int64_t rows = table.shape[0];
    int64_t rowSize = rows ? table.count() / rows : 0;
    int64_t ids = s.operands[1].count();
    g.armParallel();
    if (rowSize > 0)
      g.loop(ids, [&](Value i) {
        Value id = g.load(in[1], ElemKind::I32, i);
        Value ok = g.rowInRange(id, rows);
        Value outBase = b.create<arith::MulIOp>(loc, i, g.idx(rowSize));
        auto ifOp = b.create<scf::IfOp>(loc, ok, /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Value row = b.create<arith::IndexCastOp>(loc, b.getIndexType(), id);
          Value inBase = b.create<arith::MulIOp>(loc, row, g.idx(rowSize));
          g.loop(rowSize, [&](Value j) {
            g.move(in[0], b.create<arith::AddIOp>(loc, inBase, j), out,
                   b.create<arith::AddIOp>(loc, outBase, j));
          });
          b.setInsertionPointToStart(ifOp.elseBlock());
          Value zero = g.zeroOf(rk);
          g.loop(rowSize, [&](Value j) {
            g.store(zero, out, rk, b.create<arith::AddIOp>(loc, outBase, j));
          });
        }
      });
  } else if (op == "ein.scatter_add") {
    // out = 0; out[ids[i], j] += updates[i, j]; an index outside [0, rows)
    // adds nothing (the reference reports an error).
    int64_t rows = s.result.shape[0];
    int64_t rowSize = rows ? n / rows : 0;
    int64_t ids = s.operands[1].count();
    Value zero = g.zeroOf(rk);
    // In parallel over the columns j: every call zeroes and adds its own
    // columns of every row, so repeated ids never race.
    Value jLo = g.parBegin ? g.parBegin : g.idx(0);
    Value jHi = g.parBegin ? g.parEnd : g.idx(rowSize);
    auto columns = [&](const std::function<void(Value)> &body) { g.loopRange(jLo, jHi, body); };
    if (rowSize > 0)
      g.loop(rows, [&](Value r) {
        Value base = b.create<arith::MulIOp>(loc, r, g.idx(rowSize));
        columns([&](Value j) { g.store(zero, out, rk, b.create<arith::AddIOp>(loc, base, j)); });
      });
    if (rowSize > 0)
      g.loop(ids, [&](Value i) {
        Value id = g.load(in[1], ElemKind::I32, i);
        Value ok = g.rowInRange(id, rows);
        auto ifOp = b.create<scf::IfOp>(loc, ok, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value row = b.create<arith::IndexCastOp>(loc, b.getIndexType(), id);
        Value outBase = b.create<arith::MulIOp>(loc, row, g.idx(rowSize));
        Value inBase = b.create<arith::MulIOp>(loc, i, g.idx(rowSize));
        columns([&](Value j) {
          Value at = b.create<arith::AddIOp>(loc, outBase, j);
          Value u = g.load(in[0], rk, b.create<arith::AddIOp>(loc, inBase, j));
          g.store(g.addOf(g.load(out, rk, at), u, rk), out, rk, at);
        });
      });
  }
  b.create<func::ReturnOp>(loc);
  assert(!g.parArmed && "a parallel loop was armed but never created");
}

int64_t parallelExtent(const KernelSpec &s) {
  llvm::StringRef op = s.op;
  int64_t n = s.result.count();
  if (op == "ein.fused")
    return s.outer > 0 ? s.outer : n;
  if (op == "ein.rows")
    return s.outer;
  if (isUnary(op) || op == "ein.cast" || op == "ein.reshape")
    return n;
  if (isBinary(op) || op == "ein.cmp" || op == "ein.select" || op == "ein.stochastic_round") {
    for (const KernelTensor &t : s.operands)
      if (t.access == Access::Prefix)
        return t.count();
      else if (t.access == Access::Suffix)
        return t.count() ? n / t.count() : 1;
    return n;
  }
  if (op == "ein.transpose" || op == "ein.broadcast" || op == "ein.iota")
    return s.result.shape.empty() ? 1 : s.result.shape[0];
  if (op == "ein.gather")
    return s.operands[0].shape.empty() || s.operands[0].shape[0] == 0 || s.operands[0].count() == 0
               ? 1
               : s.operands[1].count();
  if (op == "ein.reduce") {
    if (s.operands[0].count() == 0)
      return 1;
    std::vector<ReduceGroup> groups = reduceGroups(s);
    int group = reduceParallelGroup(groups);
    return group < 0 ? 1 : groups[size_t(group)].size;
  }
  if (op == "ein.scatter_add") { // over the columns: ids may repeat rows
    int64_t rows = s.result.shape.empty() ? 0 : s.result.shape[0];
    return rows > 0 ? std::max<int64_t>(1, n / rows) : 1;
  }
  return 1;
}

} // namespace ein::codegen
