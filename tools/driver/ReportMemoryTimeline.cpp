//===- ReportMemoryTimeline.cpp - Live bytes of the step by category -----===//
//
// The report's memory over the step (Report::liveAfter) split by what each
// buffer of the @train_step Program holds. The Program's buffers are the
// lowering's (codegen/ReferenceLowering.h, loweredValues): an argument or
// an op's result of @train_step, so each has an `ein.kind` or a defining op
// with its phase (passes/Analysis.h, opPhase):
//
//   resident  param / opt_state / input arguments, and the results by their
//             `ein.kind` (the updated params and state); the rest (scalars,
//             constants, the loss) is "other";
//   arena     a recompute clone's value: recompute; a forward value that a
//             backward or recompute op reads (through reshapes and slices,
//             which are views): saved; a backward value an optimizer op
//             reads: grads; anything else (a backend's transposes too):
//             other.
//
// Each step's phase is that of the op whose value it writes.
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "codegen/ReferenceLowering.h"
#include "ir/EinOps.h"
#include "passes/Analysis.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <functional>

using namespace mlir;

namespace einc {
namespace {

enum class Held { Grads, Saved, Recompute, Other };

/// Whether an op reading `v`, or a view (reshape, slice) of it, satisfies
/// `reader`.
bool readBy(Value v, const std::function<bool(Operation *)> &reader) {
  for (Operation *user : v.getUsers()) {
    if (isa<mlir::ein::ReshapeOp, mlir::ein::SliceOp>(user) && readBy(user->getResult(0), reader))
      return true;
    if (reader(user))
      return true;
  }
  return false;
}

Held heldBy(Value v) {
  Operation *def = v ? v.getDefiningOp() : nullptr;
  if (!def)
    return Held::Other;
  StringRef phase = mlir::ein::opPhase(def);
  if (phase == "recompute")
    return Held::Recompute;
  auto inPhase = [](std::initializer_list<StringRef> phases) {
    return [phases](Operation *op) {
      StringRef p = mlir::ein::opPhase(op);
      return llvm::is_contained(phases, p);
    };
  };
  if (phase == "forward" && readBy(v, inPhase({"backward", "recompute"})))
    return Held::Saved;
  if (phase == "backward" && readBy(v, inPhase({"optimizer"})))
    return Held::Grads;
  return Held::Other;
}

} // namespace

ReportMemoryTimeline memoryTimeline(func::FuncOp fn, const einrt::Program &step,
                                    const einrt::MemoryPlan &plan,
                                    const einrt::StorageSizes &sizes) {
  ReportMemoryTimeline t;
  std::vector<Value> values = ::ein::codegen::loweredValues(fn);
  // A buffer holds its value when the lowering kept the layout (its
  // element count agrees); any other buffer is the backend's own.
  auto valueOf = [&](size_t b) -> Value {
    if (b >= values.size() || !values[b])
      return Value();
    auto type = dyn_cast<ShapedType>(values[b].getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() != step.buffers[b].elementCount())
      return Value();
    return values[b];
  };

  // The resident block.
  std::vector<StringRef> resultKind(step.buffers.size());
  for (size_t i = 0; i < step.results.size(); ++i)
    if (auto kind = fn.getResultAttrOfType<StringAttr>(unsigned(i), "ein.kind"))
      if (step.results[i] >= 0 && size_t(step.results[i]) < resultKind.size())
        resultKind[size_t(step.results[i])] = kind.getValue();
  for (size_t b = 0; b < step.buffers.size(); ++b) {
    const einrt::Buffer &buffer = step.buffers[b];
    if (b >= plan.residentOffset.size() || plan.residentOffset[b] < 0 || buffer.viewOf >= 0)
      continue;
    int64_t bytes = einrt::alignArena(buffer.elementCount() * sizes.of(buffer.dtype));
    StringRef kind = resultKind[b];
    if (buffer.role == einrt::BufferRole::Param || kind == "param")
      t.params += bytes;
    else if (buffer.role == einrt::BufferRole::OptState || kind == "opt_state")
      t.optimizerState += bytes;
    else if (buffer.role == einrt::BufferRole::Input)
      t.inputs += bytes;
    else
      t.otherResident += bytes;
  }

  // The arena: each temporary's bytes over its live steps, by category.
  size_t n = step.steps.size();
  std::vector<int64_t> delta[4];
  for (auto &d : delta)
    d.assign(n + 1, 0);
  for (const einrt::LiveRange &range : plan.temporaries) {
    std::vector<int64_t> &d = delta[int(heldBy(valueOf(size_t(range.id))))];
    d[size_t(range.first)] += range.bytes;
    d[size_t(range.last) + 1] -= range.bytes;
  }
  std::vector<int64_t> *series[4] = {&t.grads, &t.saved, &t.recompute, &t.other};
  for (int c = 0; c < 4; ++c) {
    int64_t live = 0;
    series[c]->resize(n);
    for (size_t i = 0; i < n; ++i)
      (*series[c])[i] = (live += delta[c][i]);
  }

  // The phases: each step's is that of the op whose value it writes (a
  // step writing none of them, a backend's transpose, takes the one before).
  std::string phase = "forward";
  for (size_t i = 0; i < n; ++i) {
    for (int32_t out : step.steps[i].outputs()) {
      Value v = out >= 0 ? valueOf(size_t(out)) : Value();
      if (Operation *def = v ? v.getDefiningOp() : nullptr) {
        phase = mlir::ein::opPhase(def).str();
        break;
      }
    }
    if (t.phases.empty() || t.phases.back().phase != phase)
      t.phases.push_back(ReportPhaseRun{phase, int64_t(i), int64_t(i)});
    else
      t.phases.back().last = int64_t(i);
  }
  return t;
}

} // namespace einc
