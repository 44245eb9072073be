//===- StepKernels.cpp - The kernels of a fused function, and why ---------===//
//
// See StepKernels.h. The stop rules mirror the fusion passes' own checks in
// the order a reader asks them: is it allowed at all (policy), can either
// side fuse (contraction, movement, reduction), and then the conditions of
// ein-fuse-elementwise / ein-fuse-rows (phase, shape, cycle, input budget).
//
//===----------------------------------------------------------------------===//
#include "passes/StepKernels.h"
#include "passes/Analysis.h"
#include "passes/FuseElementwise.h"
#include "passes/FuseRows.h"

#include "ir/EinOps.h"
#include "ir/EinTraits.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <optional>

namespace mlir::ein {

llvm::StringRef kernelKindName(KernelKind kind) {
  switch (kind) {
  case KernelKind::Fused:
    return "fused";
  case KernelKind::Rows:
    return "rows";
  case KernelKind::Epilogue:
    return "matmul+epilogue";
  case KernelKind::Contraction:
    return "matmul";
  case KernelKind::Op:
    return "op";
  case KernelKind::View:
    return "view";
  }
  return "op";
}

llvm::StringRef fusionStopName(FusionStop stop) {
  switch (stop) {
  case FusionStop::Policy:
    return "policy";
  case FusionStop::Contraction:
    return "contraction";
  case FusionStop::Movement:
    return "movement";
  case FusionStop::Reduction:
    return "reduction";
  case FusionStop::Phase:
    return "phase";
  case FusionStop::Shape:
    return "shape";
  case FusionStop::Cycle:
    return "cycle";
  case FusionStop::InputBudget:
    return "input budget";
  case FusionStop::Order:
    return "order";
  }
  return "order";
}

llvm::StringRef fusionStopMeaning(FusionStop stop) {
  switch (stop) {
  case FusionStop::Policy:
    return "the fusion setting leaves it out (epilogues need `on`, row kernels `all`)";
  case FusionStop::Contraction:
    return "a library GEMM reads or writes it: no prologues, and no epilogue took the reader";
  case FusionStop::Movement:
    return "a data-movement op (transpose, gather, scatter_add, iota, a materialised broadcast)";
  case FusionStop::Reduction:
    return "a reduction no row kernel takes (over leading dims, to a scalar, a narrow sum)";
  case FusionStop::Phase:
    return "another phase: fused, a value would stay alive from one phase to the next";
  case FusionStop::Shape:
    return "the two kernels iterate different shapes";
  case FusionStop::Cycle:
    return "a path leaves one kernel and enters the other: as one kernel it would wait on itself";
  case FusionStop::InputBudget:
    return "one kernel would read more buffers than max-inputs";
  case FusionStop::Order:
    return "no rule forbids it: the greedy grouping formed them apart";
  }
  return "";
}

std::vector<StepKernel> stepKernels(Block &body) {
  std::vector<StepKernel> kernels;
  // The group the last kernel is still collecting: a fusion id (Fused,
  // Epilogue) or a row id (Rows).
  std::optional<int64_t> fusion, rows;
  auto start = [&](KernelKind kind, Operation *op, int64_t position) {
    StepKernel k;
    k.kind = kind;
    k.members.push_back(op);
    k.first = k.last = position;
    kernels.push_back(std::move(k));
  };
  int64_t position = 0;
  for (Operation &op : body.without_terminator()) {
    int64_t p = position++;
    if (auto id = op.getAttrOfType<IntegerAttr>(kRowsAttr)) {
      fusion.reset();
      if (rows && *rows == id.getInt()) {
        kernels.back().members.push_back(&op);
        kernels.back().last = p;
      } else {
        start(KernelKind::Rows, &op, p);
      }
      rows = id.getInt();
      continue;
    }
    rows.reset();
    if (auto head = op.getAttrOfType<IntegerAttr>(kEpilogueAttr)) {
      start(KernelKind::Epilogue, &op, p);
      fusion = head.getInt();
      continue;
    }
    if (isFusible(&op)) {
      auto id = op.getAttrOfType<IntegerAttr>(kFusionAttr);
      if (id && fusion && *fusion == id.getInt()) {
        kernels.back().members.push_back(&op);
        kernels.back().last = p;
        continue;
      }
      start(id ? KernelKind::Fused : KernelKind::Op, &op, p);
      fusion = id ? std::optional<int64_t>(id.getInt()) : std::nullopt;
      continue;
    }
    fusion.reset();
    KernelKind kind = KernelKind::Op;
    if (op.hasTrait<OpTrait::ein::EinContraction>())
      kind = KernelKind::Contraction;
    else if ((isa<ReshapeOp, SliceOp>(op) && op.getNumOperands() == 1) || isa<ConstantOp>(op))
      kind = KernelKind::View;
    start(kind, &op, p);
  }
  // Iotas every reader computes from its index are no step.
  llvm::DenseSet<Operation *> computed = computedIndexOps(kernels);
  for (StepKernel &k : kernels)
    if (k.members.size() == 1 && computed.count(k.members.front()))
      k.kind = KernelKind::View;
  return kernels;
}

llvm::DenseSet<Operation *> computedIndexOps(ArrayRef<StepKernel> kernels) {
  if (kernels.empty())
    return {};
  llvm::DenseMap<Operation *, size_t> kernelOf;
  for (size_t k = 0; k < kernels.size(); ++k)
    for (Operation *op : kernels[k].members)
      kernelOf[op] = k;
  return indexOpsComputedInKernels(
      *kernels.front().members.front()->getBlock(), [&](OpOperand &use) {
        auto it = kernelOf.find(use.getOwner());
        return it != kernelOf.end() && computesIndex(kernels[it->second], use);
      });
}

bool computesIndex(const StepKernel &k, OpOperand &use) {
  Operation *owner = use.getOwner();
  // A row kernel's broadcast spreads a per-row value the kernel computes.
  if (isa<BroadcastOp>(owner) || !classifyIndexRead(use.get()))
    return false;
  bool body = k.kind == KernelKind::Fused || k.kind == KernelKind::Rows ||
              k.kind == KernelKind::Epilogue ||
              (k.kind == KernelKind::Op && isFusible(owner) && fusionMarked(*owner->getBlock()));
  return body && llvm::is_contained(k.elementwiseMembers(), owner);
}

namespace {

/// A fusion rule's view of one kernel.
struct Side {
  const StepKernel *kernel = nullptr;
  bool elementwise = false;            // Fused, Epilogue (its group) or a lone fusible op
  std::optional<RowShape> rowShape;    // a Rows kernel's, or a lone row-shaped reduction's
  bool reduction = false;              // a lone reduction
  bool movement = false;               // a lone op that is none of these
  llvm::SmallVector<int64_t, 4> shape; // what it iterates
  Type elementType;
  StringRef phase;
};

Side sideOf(const StepKernel &k) {
  Side s;
  s.kernel = &k;
  Operation *op = k.elementwiseMembers().front();
  s.phase = opPhase(op);
  if (op->getNumResults() > 0)
    if (auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType())) {
      s.shape.assign(t.getShape().begin(), t.getShape().end());
      s.elementType = t.getElementType();
    }
  switch (k.kind) {
  case KernelKind::Fused:
  case KernelKind::Epilogue:
    s.elementwise = true;
    break;
  case KernelKind::Rows:
    for (Operation *m : k.members)
      if (!s.rowShape)
        s.rowShape = rowReductionShape(m);
    if (s.rowShape)
      s.shape = s.rowShape->shape;
    break;
  case KernelKind::Op:
    if (isFusible(op)) {
      s.elementwise = true;
    } else if (isa<ReduceOp>(op)) {
      s.reduction = true;
      s.rowShape = rowReductionShape(op);
      if (auto t = dyn_cast<RankedTensorType>(op->getOperand(0).getType()))
        s.shape.assign(t.getShape().begin(), t.getShape().end());
    } else {
      s.movement = true;
    }
    break;
  default:
    break;
  }
  return s;
}

std::string shapeText(ArrayRef<int64_t> shape, Type element) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (element)
    os << element;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? "x" : "") << shape[i];
  os << "]";
  return s;
}

/// Whether every member of `k` fits a row kernel of `shape` (rowLevel).
bool fitsRows(const StepKernel &k, const RowShape &shape) {
  return llvm::all_of(k.elementwiseMembers(),
                      [&](Operation *op) { return rowLevel(op, shape) != RowLevel::None; });
}

class Explainer {
public:
  Explainer(ArrayRef<StepKernel> kernels, const FusionPolicy &policy)
      : kernels(kernels), policy(policy) {
    for (size_t k = 0; k < kernels.size(); ++k)
      for (Operation *op : kernels[k].members)
        kernelOf[op] = int32_t(k);
    // Edges skip views: a read of a reshape of a value is a read of it.
    readers.resize(kernels.size());
    for (size_t a = 0; a < kernels.size(); ++a) {
      if (kernels[a].kind == KernelKind::View)
        continue;
      llvm::SmallVector<Operation *, 8> work(kernels[a].members.begin(), kernels[a].members.end());
      llvm::DenseSet<Operation *> seen;
      while (!work.empty()) {
        Operation *op = work.pop_back_val();
        for (Operation *user : op->getUsers()) {
          auto it = kernelOf.find(user);
          if (it == kernelOf.end() || it->second == int32_t(a))
            continue;
          if (kernels[it->second].kind == KernelKind::View) {
            if (seen.insert(user).second)
              work.push_back(user);
            continue;
          }
          readers[a].try_emplace(it->second, user);
        }
      }
    }
  }

  std::vector<KernelBoundary> run() {
    std::vector<KernelBoundary> out;
    for (size_t a = 0; a < kernels.size(); ++a)
      for (auto [b, reader] : readers[a]) {
        KernelBoundary boundary;
        boundary.from = int32_t(a);
        boundary.to = b;
        explain(kernels[a], kernels[b], reader, boundary);
        out.push_back(std::move(boundary));
      }
    return out;
  }

private:
  void explain(const StepKernel &ka, const StepKernel &kb, Operation *reader, KernelBoundary &out) {
    auto stop = [&](FusionStop s, std::string detail = "") {
      out.stop = s;
      out.detail = std::move(detail);
    };
    Side a = sideOf(ka), b = sideOf(kb);
    if (!policy.elementwise)
      return stop(FusionStop::Policy, "fusion = off");
    // A GEMM reading a value: no fusion rule has prologues.
    if (reader->hasTrait<OpTrait::ein::EinContraction>())
      return stop(FusionStop::Contraction, "read by a GEMM");
    if (ka.kind == KernelKind::Contraction) {
      bool candidate = b.elementwise && a.phase == b.phase && a.shape == b.shape;
      if (candidate && !policy.epilogues)
        return stop(FusionStop::Policy, "an epilogue needs fusion = on");
      if (kb.kind == KernelKind::Rows && !policy.epilogues && a.phase == b.phase)
        return stop(FusionStop::Policy, "an epilogue needs fusion = on");
      return stop(FusionStop::Contraction,
                  candidate ? "its reader took another product" : "no epilogue of this reader");
    }
    if (a.movement || b.movement) {
      Operation *op = (a.movement ? ka : kb).members.front();
      return stop(FusionStop::Movement, op->getName().getStringRef().str());
    }
    for (const Side *s : {&a, &b})
      if (s->reduction) {
        if (!s->rowShape)
          return stop(FusionStop::Reduction, "not over trailing dims of an f32/i32 input");
        if (!policy.rows)
          return stop(FusionStop::Policy, "row kernels need fusion = all");
      }
    if (ka.kind == KernelKind::Rows && !policy.rows)
      return stop(FusionStop::Policy, "row kernels need fusion = all");
    // A reduction to a scalar or of chunked rows ends its kernel, which
    // takes only producers the reduction alone reads (FuseRows.h).
    if (a.rowShape && rowKernelTakesProducersOnly(*a.rowShape))
      return stop(FusionStop::Reduction,
                  a.rowShape->lead == 0
                      ? std::string("a reduction to a scalar ends its kernel")
                      : "a reduction of rows of " + std::to_string(kChunkedRowsFrom) +
                            " or more elements ends its kernel");
    if (b.rowShape && rowKernelTakesProducersOnly(*b.rowShape))
      return stop(FusionStop::Reduction,
                  "a reduction to a scalar or of rows of " + std::to_string(kChunkedRowsFrom) +
                      " or more takes only elementwise producers that it alone reads");
    // ein-fuse-rows leaves a contraction's epilogue to it.
    if ((ka.kind == KernelKind::Epilogue && b.rowShape) ||
        (kb.kind == KernelKind::Epilogue && a.rowShape))
      return stop(FusionStop::Contraction, "a row kernel never takes a GEMM's epilogue");
    if (a.phase != b.phase)
      return stop(FusionStop::Phase, (a.phase + " → " + b.phase).str());
    // Shape: the same iteration space, or the other side fits the rows.
    bool same = a.shape == b.shape;
    if (a.rowShape && !b.rowShape)
      same = fitsRows(kb, *a.rowShape);
    else if (b.rowShape && !a.rowShape)
      same = fitsRows(ka, *b.rowShape);
    else if (a.rowShape && b.rowShape)
      same = *a.rowShape == *b.rowShape;
    if (!same)
      return stop(FusionStop::Shape,
                  shapeText(a.shape, a.elementType) + " vs " + shapeText(b.shape, b.elementType));
    if (int32_t via = pathAround(out.from, out.to); via >= 0) {
      out.via = via;
      return stop(FusionStop::Cycle);
    }
    size_t inputs = inputCount(ka, kb);
    if (inputs > policy.maxInputs)
      return stop(FusionStop::InputBudget, "would read " + std::to_string(inputs) + " buffers > " +
                                               std::to_string(policy.maxInputs));
    stop(FusionStop::Order);
  }

  /// A kernel on a path from `a` to `b` other than the edge a → b, or -1.
  /// Kernels are in a topological order: the walk stops at `b`'s index.
  int32_t pathAround(int32_t a, int32_t b) {
    for (auto [first, reader] : readers[a]) {
      (void)reader;
      if (first == b || first > b)
        continue;
      llvm::SmallVector<int32_t, 16> work{first};
      llvm::DenseSet<int32_t> seen{first};
      while (!work.empty()) {
        int32_t k = work.pop_back_val();
        for (auto [next, r] : readers[k]) {
          (void)r;
          if (next == b)
            return first;
          if (next < b && seen.insert(next).second)
            work.push_back(next);
        }
      }
    }
    return -1;
  }

  /// The distinct buffers the two kernels would read as one (a broadcast
  /// read in place counts as its input).
  size_t inputCount(const StepKernel &ka, const StepKernel &kb) {
    llvm::DenseSet<Operation *> members(ka.members.begin(), ka.members.end());
    members.insert(kb.members.begin(), kb.members.end());
    llvm::SmallSetVector<Value, 32> inputs;
    for (const StepKernel *k : {&ka, &kb})
      for (Operation *op : k->members)
        for (Value v : op->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (def && members.count(def))
            continue;
          if (classifyBroadcastRead(v).read != BroadcastRead::Full)
            v = v.getDefiningOp<BroadcastOp>().getInput();
          inputs.insert(v);
        }
    return inputs.size();
  }

  ArrayRef<StepKernel> kernels;
  const FusionPolicy &policy;
  llvm::DenseMap<Operation *, int32_t> kernelOf;
  /// Per kernel: the kernels reading its values (through views), each with
  /// the first op of it that does, in kernel order.
  std::vector<std::map<int32_t, Operation *>> readers;
};

} // namespace

std::vector<KernelBoundary> fusionBoundaries(ArrayRef<StepKernel> kernels,
                                             const FusionPolicy &policy) {
  return Explainer(kernels, policy).run();
}

} // namespace mlir::ein
