//===- CpuLowering.cpp - An `ein` function as a CPU-backend Program -------===//
//
// Starts from the reference lowering (codegen/ReferenceLowering.h), so that
// buffers, roles, names, arguments and results are the reference backend's
// exactly, then replaces its steps one by one, walking the function's ops in
// the same order:
//
//   ein.contract   → a Matmul step (cblas_sgemm per batch matrix), planned
//                    from the operands' row-major layouts; an operand BLAS
//                    cannot read in place is first permuted by a transpose
//                    kernel into a temporary (the plan is a GemmDesc);
//   ein.reshape    → nothing: later steps read the input buffer (the same
//                    row-major bytes), unless the result is returned;
//   ein.slice      → nothing: its buffer is a view of the input's at the
//                    rows' offset (Buffer::viewOf), unless it is returned
//                    (then a Copy step from such a view);
//   ein.concat     → nothing for the inputs whose producers write them in
//                    place (their buffers become views of the result's:
//                    passes/ConcatInPlace.h), a Copy step into a view of
//                    the result's rows for each other input;
//   ein.quantize   → its reference step (runtime/core/Fp8Quantize.h), as is;
//   a fusion group → one Kernel step (describeFusedKernel) at its last op;
//   ein.iota       → nothing where every reader is a fused or row kernel
//                    computing it from its index (and so for reshapes and
//                    broadcasts of one read only so);
//   any other op   → a Kernel step launching KernelCompiler::add(op).
//
// The Matmul plan is codegen/CpuGemmPlan.h's.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuLowering.h"
#include "codegen/CpuEpilogue.h"
#include "codegen/CpuGemmPlan.h"
#include "codegen/CpuKernelGen.h"
#include "codegen/CpuViews.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include "codegen/ReferenceLowering.h"
#include "ir/EinOps.h"
#include "passes/ConcatInPlace.h"
#include "passes/FuseElementwise.h"
#include "passes/FuseRows.h"
#include "passes/StepKernels.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace mlir;
using einrt::Buffer;
using einrt::BufferRole;
using einrt::DType;
using einrt::Step;
using einrt::StepKind;

namespace ein::codegen {
namespace {

using Dims = std::vector<int64_t>;

bool isF64(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  return t.isF64();
}

constexpr const char *kNoF64 =
    "the CPU backend runs f32, bf16 and f16, not f64; use --backend reference";

/// The runtime dtype of a float tensor's elements (f32, bf16 or f16 here).
DType floatDType(Type t) {
  Type e = cast<ShapedType>(t).getElementType();
  return e.isBF16() ? DType::BF16 : e.isF16() ? DType::F16 : DType::F32;
}

class Lowering {
public:
  Lowering(func::FuncOp fn, KernelCompiler &kernels) : fn_(fn), kernels_(kernels) {}

  FailureOr<einrt::Program> run() {
    Block &body = fn_.getBody().front();
    for (BlockArgument arg : body.getArguments())
      if (isF64(arg.getType()))
        return fn_.emitError(kNoF64)
               << " (argument " << arg.getArgNumber() << " is " << arg.getType() << ")";
    for (Operation &op : body.without_terminator()) {
      SmallVector<Type> types(op.getOperandTypes());
      types.append(op.getResultTypes().begin(), op.getResultTypes().end());
      for (Type t : types)
        if (isF64(t))
          return op.emitError(kNoF64) << " (this op has type " << t << ")";
    }

    auto reference = lowerToProgram(fn_);
    if (failed(reference))
      return failure();
    ref_ = std::move(*reference);
    program_ = ref_;
    program_.steps.clear();

    // The reference lowering emits one step per op, constants excepted, in
    // body order.
    size_t next = 0;
    for (Operation &op : body.without_terminator()) {
      if (isa<mlir::ein::ConstantOp>(op))
        continue;
      if (next >= ref_.steps.size() ||
          ref_.steps[next].note.rfind(op.getName().getStringRef().str(), 0) != 0)
        return op.emitError("internal error: the reference lowering's steps do not "
                            "follow the function's ops");
      stepOf_[&op] = &ref_.steps[next++];
    }
    if (next != ref_.steps.size())
      return fn_.emitError("internal error: the reference lowering has steps without ops");
    if (failed(collectFusionRuns(body)))
      return failure();
    // Iotas every reader computes from its index: no step writes them.
    computedIndex_ = mlir::ein::indexOpsComputedInKernels(
        body, [&](OpOperand &use) { return indexReads_.count(&use); });
    for (Operation &op : body.without_terminator()) {
      if (auto id = op.getAttrOfType<IntegerAttr>(mlir::ein::kFusionAttr))
        epilogueOps_[id.getInt()].push_back(&op);
      if (auto head = op.getAttrOfType<IntegerAttr>(mlir::ein::kEpilogueAttr))
        products_[head.getInt()] = op.getResult(0);
    }

    for (Operation &op : body.without_terminator()) {
      if (isa<mlir::ein::ConstantOp>(op))
        continue;
      const Step &s = *stepOf_.lookup(&op);
      if (computedIndex_.count(&op))
        continue;
      // A broadcast that every user reads in place (see operandAccess and
      // the fused kernels' reads) is never materialised.
      // (A row kernel's own broadcast is its kernel's: that kernel runs at
      // its run's last op, which may be the broadcast.)
      if (isa<mlir::ein::BroadcastOp>(op) && !op.use_empty() && !runOf_.count(&op) &&
          llvm::all_of(op.getUses(), [&](OpOperand &use) { return readsInPlace(use); }))
        continue;
      if (auto run = runEndingAt_.find(&op); run != runEndingAt_.end()) {
        lowerFused(fused_[run->second]);
        if (failed(closeEpilogue(runIds_[run->second], fused_[run->second].outputs.empty())) ||
            failed(materializeSpreads(run->second)))
          return failure();
        continue;
      }
      if (runOf_.count(&op))
        continue; // runs as part of its fused kernel (at the run's last op)
      // A reshape of a row-major buffer is the same bytes: later steps read
      // the input buffer itself (unless the reshape is a function result,
      // which needs a buffer of its own).
      if (isa<mlir::ein::ReshapeOp>(op) && !llvm::is_contained(program_.results, s.output)) {
        alias_[s.output] = resolve(s.inputs[0]);
        continue;
      }
      if (auto slice = dyn_cast<mlir::ein::SliceOp>(op)) {
        // Rows of the input as typed: its buffer may be a reshape's source.
        auto type = cast<RankedTensorType>(slice.getInput().getType());
        int64_t row = type.getDimSize(0) > 0 ? type.getNumElements() / type.getDimSize(0) : 0;
        lowerSliceAsView(program_, resolve(s.inputs[0]), s.output, slice.getOffset() * row, s.note);
        continue;
      }
      if (auto concat = dyn_cast<mlir::ein::ConcatOp>(op)) {
        std::vector<int32_t> parts;
        for (int32_t in : s.inputs)
          parts.push_back(resolve(in));
        lowerConcatInViews(
            program_, parts, s.output, mlir::ein::concatInputsInPlace(concat),
            [&](int32_t b) { return written(b); }, s.note);
        continue;
      }
      if (isa<mlir::ein::QuantizeOp>(op)) { // the reference kernel (runtime/core/Fp8Quantize.h)
        program_.steps.push_back(s);
        continue;
      }
      if (failed(isa<mlir::ein::ContractOp>(op) ? lowerContract(cast<mlir::ein::ContractOp>(op), s)
                                                : lowerKernel(&op, s)))
        return failure();
      // A contraction heading an epilogue waits for it (ein-fuse-epilogues
      // put the group right after it); a lone epilogue op joins it now.
      if (auto head = op.getAttrOfType<IntegerAttr>(mlir::ein::kEpilogueAttr)) {
        pending_[head.getInt()] = std::move(program_.steps.back());
        program_.steps.pop_back();
      } else if (auto id = op.getAttrOfType<IntegerAttr>(mlir::ein::kFusionAttr);
                 id && pending_.count(id.getInt()) && !isa<mlir::ein::ContractOp>(op)) {
        if (failed(closeEpilogue(id.getInt(), false)))
          return failure();
      }
    }
    if (!pending_.empty())
      return fn_.emitError("internal error: the epilogue of a contraction (group ")
             << pending_.begin()->first << ") does not follow it";
    for (Step &step : program_.steps) {
      for (int32_t &in : step.inputs)
        in = resolve(in);
      if (auto *g = std::get_if<einrt::GemmDesc>(&step.payload))
        for (int32_t &in : g->post.operands)
          in = resolve(in);
    }

    einrt::Status problem = program_.validate();
    if (!problem.ok())
      return fn_.emitError("internal error: the lowered CPU program is invalid: ")
             << problem.message();
    return std::move(program_);
  }

private:
  /// The kernels of the step partition (passes/StepKernels.h, the one the
  /// report and remat price): each row group and each fusion group of two
  /// or more elementwise ops (an epilogue's included) becomes one fused
  /// kernel; a group of one op runs as that op's kernel. A row group that
  /// cannot be described is an error, never lowered op by op.
  LogicalResult collectFusionRuns(Block &body) {
    auto add = [&](FusedKernel fk, ArrayRef<Operation *> members, int64_t runId) {
      int64_t index = int64_t(fused_.size());
      runIds_.push_back(runId);
      for (Operation *m : members)
        runOf_[m] = index;
      runEndingAt_[members.back()] = index;
      inPlace_.insert(fk.inPlaceReads.begin(), fk.inPlaceReads.end());
      indexReads_.insert(fk.indexReads.begin(), fk.indexReads.end());
      fused_.push_back(std::move(fk));
      return index;
    };
    std::vector<mlir::ein::StepKernel> kernels = mlir::ein::stepKernels(body);
    // Row kernels first, then fusion groups: the kernels' numbering.
    for (const mlir::ein::StepKernel &k : kernels) {
      if (k.kind != mlir::ein::KernelKind::Rows || k.members.size() < 2)
        continue;
      auto fk = describeRowsKernel(k.members);
      if (failed(fk))
        return k.members.front()->emitError("internal error: row group ")
               << k.members.front()->getAttrOfType<IntegerAttr>(mlir::ein::kRowsAttr).getInt()
               << " of " << k.members.size() << " ops is no row kernel";
      int64_t index = add(std::move(*fk), k.members, -1); // never an epilogue
      rowsMembers_[index] = SmallVector<Operation *>(k.members.begin(), k.members.end());
    }
    for (const mlir::ein::StepKernel &k : kernels) {
      if (k.kind != mlir::ein::KernelKind::Fused && k.kind != mlir::ein::KernelKind::Epilogue)
        continue;
      ArrayRef<Operation *> members = k.elementwiseMembers();
      if (members.size() < 2)
        continue;
      auto fk = describeFusedKernel(members);
      if (failed(fk))
        return failure();
      add(std::move(*fk), members,
          members.front()->getAttrOfType<IntegerAttr>(mlir::ein::kFusionAttr).getInt());
    }
    // Where fusion ran, an elementwise op alone reading an iota: a fused
    // kernel of one op, computing the iota from the element's index
    // (passes/StepKernels.h, computesIndex).
    if (!mlir::ein::fusionMarked(body))
      return success();
    for (Operation &op : body.without_terminator()) {
      bool readsIndex = llvm::any_of(
          op.getOperands(), [](Value v) { return mlir::ein::classifyIndexRead(v).has_value(); });
      if (runOf_.count(&op) || !mlir::ein::isFusible(&op) || !readsIndex)
        continue;
      auto fk = describeFusedKernel({&op});
      if (failed(fk))
        return failure();
      auto id = op.getAttrOfType<IntegerAttr>(mlir::ein::kFusionAttr);
      add(std::move(*fk), {&op}, id ? id.getInt() : -1);
    }
    return success();
  }

  /// The buffer holding `buffer`'s bytes (itself, unless it is an aliased
  /// reshape result).
  int32_t resolve(int32_t buffer) const {
    for (auto it = alias_.find(buffer); it != alias_.end(); it = alias_.find(buffer))
      buffer = it->second;
    return buffer;
  }

  /// Whether a step lowered so far (or a Matmul waiting for its epilogue)
  /// writes `buffer`.
  bool written(int32_t buffer) const {
    auto writes = [&](const Step &step) { return llvm::is_contained(step.outputs(), buffer); };
    return llvm::any_of(program_.steps, writes) ||
           llvm::any_of(pending_, [&](const auto &p) { return writes(p.second); });
  }

  /// Whether `use` reads its broadcast operand's input in place.
  bool readsInPlace(OpOperand &use) {
    if (runOf_.count(use.getOwner()))
      return inPlace_.count(&use);
    return operandAccess(use.getOwner(), use.getOperandNumber()) != Access::Full;
  }

  /// A broadcast of a row kernel read after it where a reader cannot read
  /// it in place: its own kernel step after the row kernel, from the input
  /// the row kernel writes (describeRowsKernel).
  LogicalResult materializeSpreads(int64_t run) {
    auto it = rowsMembers_.find(run);
    if (it == rowsMembers_.end())
      return success();
    for (Operation *op : it->second) {
      if (!isa<mlir::ein::BroadcastOp>(op))
        continue;
      bool needed = llvm::any_of(op->getUses(), [&](OpOperand &use) {
        auto owner = runOf_.find(use.getOwner());
        return (owner == runOf_.end() || owner->second != run) && !readsInPlace(use);
      });
      if (needed && failed(lowerKernel(op, *stepOf_.lookup(op))))
        return failure();
    }
    return success();
  }

  /// The kernel step just lowered for fusion group `id` becomes the
  /// epilogue (GemmDesc::post) of the Matmul step waiting for it, if one
  /// is, and the Matmul takes its place; `dead`: the group has no kernel.
  LogicalResult closeEpilogue(int64_t id, bool dead) {
    auto it = pending_.find(id);
    if (it == pending_.end())
      return success();
    Step matmul = std::move(it->second);
    pending_.erase(it);
    if (dead) {
      program_.steps.push_back(std::move(matmul));
      return success();
    }
    Step kernel = std::move(program_.steps.back());
    program_.steps.pop_back();
    einrt::GemmDesc &g = matmul.as<einrt::GemmDesc>();
    const einrt::KernelLaunch &launch = kernel.as<einrt::KernelLaunch>();
    g.post.kernel = launch.kernel;
    g.post.operands = kernel.inputs;
    g.post.outputs = {kernel.output};
    g.post.outputs.insert(g.post.outputs.end(), launch.extraOutputs.begin(),
                          launch.extraOutputs.end());
    for (size_t i = 0; i < kernel.inputs.size(); ++i) {
      int32_t b = kernel.inputs[i];
      if (b != matmul.output && !llvm::is_contained(llvm::ArrayRef(matmul.inputs).drop_front(2), b))
        matmul.inputs.push_back(b);
    }
    EpilogueBuffers buffers;
    buffers.operand = [&](Operation *reader, Value value) -> int32_t {
      const Step *s = stepOf_.lookup(reader);
      for (OpOperand &use : reader->getOpOperands())
        if (use.get() == value) {
          if (readsInPlace(use))
            return resolve(stepOf_.lookup(value.getDefiningOp())->inputs[0]);
          return resolve(s->inputs[use.getOperandNumber()]);
        }
      return -1;
    };
    buffers.result = [&](Value result) {
      return resolve(stepOf_.lookup(result.getDefiningOp())->output);
    };
    classifyEpilogue(matmul, products_.lookup(id), epilogueOps_.lookup(id), buffers);
    matmul.note += std::string(kEpilogueNote) + kernel.note;
    program_.steps.push_back(std::move(matmul));
    return success();
  }

  void lowerFused(const FusedKernel &fk) {
    if (fk.outputs.empty())
      return; // nothing reads the group
    Step k;
    k.kind = StepKind::Kernel;
    einrt::KernelLaunch launch;
    for (size_t j = 0; j < fk.inputUses.size(); ++j) {
      OpOperand *use = fk.inputUses[j];
      const Step *reader = stepOf_.lookup(use->getOwner());
      k.inputs.push_back(fk.throughBroadcast[j]
                             ? stepOf_.lookup(use->get().getDefiningOp())->inputs[0]
                             : reader->inputs[use->getOperandNumber()]);
    }
    for (size_t r = 0; r < fk.outputs.size(); ++r) {
      int32_t buffer = stepOf_.lookup(fk.outputs[r])->output;
      if (r == 0)
        k.output = buffer;
      else
        launch.extraOutputs.push_back(buffer);
    }
    launch.kernel = kernels_.add(fk.spec);
    k.payload = std::move(launch);
    // "fused 7 ops (ein.mul ein.add ...) at f.ein:3:5": where the first
    // result's op is.
    k.note = (fk.spec.op == "ein.rows" ? "rows " : "fused ") + std::to_string(fk.spec.body.size()) +
             " ops (";
    for (size_t n = 0; n < fk.spec.body.size(); ++n)
      k.note += (n ? " " : "") + fk.spec.body[n].op;
    k.note += ")";
    std::string first = stepOf_.lookup(fk.outputs.front())->note;
    if (size_t at = first.find(" at "); at != std::string::npos)
      k.note += first.substr(at);
    program_.steps.push_back(std::move(k));
  }

  LogicalResult lowerKernel(Operation *op, const Step &s) {
    auto index = kernels_.add(op);
    if (failed(index))
      return failure();
    Step k;
    k.kind = StepKind::Kernel;
    k.inputs = s.inputs;
    // Scalar operands: the broadcast's rank-0 input instead of its output.
    for (OpOperand &use : op->getOpOperands())
      if (operandAccess(op, use.getOperandNumber()) != Access::Full)
        k.inputs[use.getOperandNumber()] = stepOf_.lookup(use.get().getDefiningOp())->inputs[0];
    k.output = s.output;
    k.payload = einrt::KernelLaunch{*index, {}};
    k.note = s.note;
    program_.steps.push_back(std::move(k));
    return success();
  }

  /// One operand's part of the plan for a given K order.
  LogicalResult lowerContract(mlir::ein::ContractOp op, const Step &s) {
    GemmPlan plan = planGemm(program_.buffers[s.inputs[0]].shape,
                             program_.buffers[s.inputs[1]].shape, s.as<einrt::ContractDims>());
    int32_t aBuf = s.inputs[0], bBuf = s.inputs[1];
    if (plan.transpose[0]) {
      auto t = transposeKernel(op, op.getLhs(), aBuf, *plan.transpose[0], "lhs");
      if (failed(t))
        return failure();
      aBuf = *t;
    }
    if (plan.transpose[1]) {
      auto t = transposeKernel(op, op.getRhs(), bBuf, *plan.transpose[1], "rhs");
      if (failed(t))
        return failure();
      bBuf = *t;
    }
    // Narrow operands and results: the device converts them to f32 around
    // its f32 GEMM (f32 sums, one rounding of the result: ir/EinOps.td).
    einrt::GemmDesc g = std::move(plan.gemm);
    g.a = program_.buffers[aBuf].dtype;
    g.b = program_.buffers[bBuf].dtype;
    g.c = program_.buffers[s.output].dtype;
    program_.steps.emplace_back(StepKind::Matmul, std::vector<int32_t>{aBuf, bBuf}, s.output,
                                std::move(g), s.note);
    return success();
  }

  /// Adds a Kernel step permuting buffer `input` (the value `operand`) by
  /// `perm` into a new temporary; returns its buffer index. The kernel is
  /// described by an ein.transpose built in a scratch module (the compiler
  /// keeps a plain description, not the op).
  FailureOr<int32_t> transposeKernel(mlir::ein::ContractOp contract, Value operand, int32_t input,
                                     const Dims &perm, const char *which) {
    auto type = cast<RankedTensorType>(operand.getType());
    Dims shape;
    for (int64_t d : perm)
      shape.push_back(type.getDimSize(d));
    MLIRContext *ctx = contract.getContext();
    OpBuilder builder(ctx);
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(contract.getLoc());
    builder.setInsertionPointToEnd(scratch->getBody());
    auto fn = builder.create<func::FuncOp>(contract.getLoc(), "transpose",
                                           builder.getFunctionType({type}, {}));
    Block *entry = fn.addEntryBlock();
    builder.setInsertionPointToEnd(entry);
    auto t = builder.create<mlir::ein::TransposeOp>(contract.getLoc(), type.clone(shape),
                                                    entry->getArgument(0), perm, ArrayAttr());
    auto index = kernels_.add(t);
    if (failed(index))
      return failure();

    Buffer buf;
    buf.dtype = floatDType(type);
    buf.shape = shape;
    buf.role = BufferRole::Temp;
    buf.name = "%" + std::to_string(program_.buffers.size());
    program_.buffers.push_back(std::move(buf));
    int32_t out = program_.buffers.size() - 1;

    Step k;
    k.kind = StepKind::Kernel;
    k.inputs = {input};
    k.output = out;
    k.payload = einrt::KernelLaunch{*index, {}};
    k.note = describeOp(contract) + " (" + which + " transposed for BLAS)";
    program_.steps.push_back(std::move(k));
    return out;
  }

  func::FuncOp fn_;
  KernelCompiler &kernels_;
  einrt::Program ref_;
  llvm::DenseMap<Operation *, const Step *> stepOf_;        // op -> its reference step
  std::vector<FusedKernel> fused_;                          // the fused runs
  llvm::DenseMap<Operation *, int64_t> runOf_;              // member -> its run
  llvm::DenseMap<Operation *, int64_t> runEndingAt_;        // last member -> its run
  llvm::DenseSet<OpOperand *> inPlace_;                     // fused reads of broadcasts
  llvm::DenseSet<OpOperand *> indexReads_;                  // fused reads of iotas
  llvm::DenseSet<Operation *> computedIndex_;               // iotas (and views) no step writes
  llvm::DenseMap<int32_t, int32_t> alias_;                  // reshape result -> its input
  std::vector<int64_t> runIds_;                             // the fusion group of each run
  std::map<int64_t, SmallVector<Operation *>> rowsMembers_; // row kernel run -> its ops
  std::map<int64_t, Step> pending_;                         // group -> the Matmul it ends
  llvm::DenseMap<int64_t, SmallVector<Operation *>> epilogueOps_; // group -> its ops
  llvm::DenseMap<int64_t, Value> products_; // epilogue group -> the product it reads
  einrt::Program program_;
};

} // namespace

FailureOr<einrt::Program> lowerToCpuProgram(func::FuncOp fn, KernelCompiler &kernels) {
  if (fn.getBody().empty())
    return fn.emitError("cannot lower a function without a body");
  return Lowering(fn, kernels).run();
}

} // namespace ein::codegen
