//===- CostAnalysis.cpp - Per-op FLOP and byte ledger of a function -------===//
//
// analyzeCosts (passes/Analysis.h): every op of a function's body, in order
// (the terminator aside), with its FLOPs and transcendentals
// (CostOpInterface), the bytes it reads and writes under a precision policy,
// its kind, its phase (`ein.phase`, "forward" when absent), its layer
// (`ein.layer`) and its source location. The definitions are in
// docs/analyses.md.
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis.h"
#include "passes/Fp8Contractions.h"

#include "ir/EinOps.h"
#include "ir/EinTraits.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"

namespace mlir::ein {

int64_t irByteWidth(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  if (!t.isIntOrFloat())
    return 0;
  return (t.getIntOrFloatBitWidth() + 7) / 8;
}

/// Bytes of `type` under `width`: elements × width(element type); 0 for a
/// type that is not a statically shaped tensor.
int64_t valueBytes(Type type, const ByteWidth &width) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return shaped.getNumElements() * width(shaped.getElementType());
}

StringRef opPhase(Operation *op) {
  if (auto phase = op->getAttrOfType<StringAttr>(kPhaseAttr))
    return phase.getValue();
  return "forward";
}

std::string opLocation(Operation *op) {
  auto fileLoc = op->getLoc()->findInstanceOf<FileLineColLoc>();
  if (!fileLoc)
    return "";
  return (fileLoc.getFilename().getValue() + ":" + Twine(fileLoc.getLine()) + ":" +
          Twine(fileLoc.getColumn()))
      .str();
}

static std::string opKind(Operation *op) {
  if (op->hasTrait<OpTrait::ein::EinContraction>())
    return "contraction";
  if (op->hasTrait<OpTrait::ein::EinReduction>())
    return "reduction";
  if (op->hasTrait<OpTrait::Elementwise>())
    return "elementwise";
  return "data";
}

std::vector<OpCost> analyzeCosts(func::FuncOp fn, const ByteWidth &width) {
  std::vector<OpCost> costs;
  if (fn.isExternal())
    return costs;
  Block &body = fn.front();
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    OpCost c;
    c.op = &op;
    c.name = op.getName().getStringRef().str();
    c.kind = opKind(&op);
    c.phase = opPhase(&op).str();
    if (auto layer = op.getAttrOfType<StringAttr>("ein.layer"))
      c.layer = layer.getValue().str();
    c.location = opLocation(&op);
    if (auto cost = dyn_cast<CostOpInterface>(&op)) {
      c.flops = cost.getFlops();
      c.transcendentals = cost.getTranscendentals();
    }
    if (!isa<ReshapeOp, SliceOp>(op)) { // views: no bytes
      for (Type t : op.getOperandTypes())
        c.bytesRead += valueBytes(t, width);
      for (Type t : op.getResultTypes())
        c.bytesWritten += valueBytes(t, width);
    }
    c.isModelFlop = c.kind == "contraction" && (c.phase == "forward" || c.phase == "backward");
    if (std::optional<int64_t> fp8 = fp8ContractionBytesRead(&op)) { // passes/Fp8Contractions.h
      c.fp8 = true;
      c.bytesRead = *fp8;
    }
    if (auto fp8 = fp8QuantizeBytes(&op, width)) { // written as fp8; the identity one is a view
      c.bytesRead = fp8->first;
      c.bytesWritten = fp8->second;
    }
    costs.push_back(std::move(c));
  }
  return costs;
}

} // namespace mlir::ein
