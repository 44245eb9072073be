//===- Fp8Contractions.cpp - ein-fp8-contractions: the fp8 setting --------===//
//
// See Fp8Contractions.h. Each contraction C = contract(a, b) becomes
//
//   qa = ein.quantize e4m3 a block 32 axis <a's last contracted dim>
//   qb = ein.quantize e4m3 b block 32 axis <b's last contracted dim>
//   c  = ein.contract qa, qb ...
//   C' = ein.quantize none c grad e5m2 block 32 axis <c's last dim>
//
// and C's users read C'. (tensor scaling: block 0 axis 0 everywhere.)
//
//===----------------------------------------------------------------------===//
#include "passes/Fp8Contractions.h"

#include "ir/EinInterfaces.h"
#include "ir/EinOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <algorithm>

namespace mlir::ein {

std::optional<Fp8Scaling> parseFp8Scaling(llvm::StringRef word) {
  if (word == "none")
    return Fp8Scaling::None;
  if (word == "block")
    return Fp8Scaling::Block;
  if (word == "tensor")
    return Fp8Scaling::Tensor;
  return std::nullopt;
}

namespace {

bool isQuantized(Value v) {
  auto q = v.getDefiningOp<QuantizeOp>();
  return q && q.getFormat() != Fp8Format::none;
}

/// `ein.quantize format v` (the gradient `grad`), blocks along `axis` or
/// per tensor.
Value quantize(OpBuilder &b, Location loc, Value v, Fp8Format format, Fp8Format grad,
               Fp8Scaling scaling, int64_t axis) {
  bool block = scaling == Fp8Scaling::Block && axis >= 0;
  auto q = b.create<QuantizeOp>(loc, v, format, grad, block ? kFp8BlockSize : 0, block ? axis : 0,
                                GradientOpInterface::getAxisNames(v));
  return q.getResult();
}

int64_t lastOf(ArrayRef<int64_t> dims) {
  return dims.empty() ? -1 : *std::max_element(dims.begin(), dims.end());
}

} // namespace

int64_t applyFp8Contractions(func::FuncOp fn, Fp8Scaling scaling) {
  if (scaling == Fp8Scaling::None || fn.isExternal())
    return 0;
  SmallVector<ContractOp> contracts;
  fn.walk([&](ContractOp c) {
    if (!isQuantized(c.getLhs()) && !isQuantized(c.getRhs()))
      contracts.push_back(c);
  });
  for (ContractOp c : contracts) {
    OpBuilder b(c);
    Location loc = c.getLoc();
    Value lhs = quantize(b, loc, c.getLhs(), Fp8Format::e4m3, Fp8Format::none, scaling,
                         lastOf(c.getLhsContract()));
    Value rhs = quantize(b, loc, c.getRhs(), Fp8Format::e4m3, Fp8Format::none, scaling,
                         lastOf(c.getRhsContract()));
    c.getLhsMutable().assign(lhs);
    c.getRhsMutable().assign(rhs);
    b.setInsertionPointAfter(c);
    int64_t rank = c.getType().getRank();
    Value out = quantize(b, loc, c.getResult(), Fp8Format::none, Fp8Format::e5m2, scaling,
                         rank > 0 ? rank - 1 : -1);
    c.getResult().replaceAllUsesExcept(out, out.getDefiningOp());
    // Costs and reports attribute the new ops to the contraction's layer.
    if (Attribute layer = c->getAttr("ein.layer"))
      for (Value v : {lhs, rhs, out})
        v.getDefiningOp()->setAttr("ein.layer", layer);
  }
  return int64_t(contracts.size());
}

namespace {

/// The bytes of `q`'s result stored as fp8: one per element, plus one E8M0
/// byte per block or one f32 per tensor.
int64_t fp8Bytes(QuantizeOp q) {
  auto type = q.getType();
  int64_t elements = type.getNumElements(), block = int64_t(q.getBlock());
  if (block == 0)
    return elements + 4;
  if (elements == 0)
    return 0;
  int64_t n = type.getDimSize(int64_t(q.getAxis()));
  return elements + elements / n * ((n + block - 1) / block);
}

} // namespace

std::optional<int64_t> fp8ContractionBytesRead(Operation *op) {
  if (!isa<ContractOp>(op))
    return std::nullopt;
  int64_t bytes = 0;
  for (Value v : op->getOperands()) {
    auto q = v.getDefiningOp<QuantizeOp>();
    if (!q || q.getFormat() == Fp8Format::none)
      return std::nullopt;
    bytes += fp8Bytes(q);
  }
  return bytes;
}

std::optional<std::pair<int64_t, int64_t>>
fp8QuantizeBytes(Operation *op, const std::function<int64_t(Type)> &width) {
  auto q = dyn_cast<QuantizeOp>(op);
  if (!q)
    return std::nullopt;
  if (q.getFormat() == Fp8Format::none)
    return std::make_pair(int64_t(0), int64_t(0));
  auto type = q.getInput().getType();
  return std::make_pair(type.getNumElements() * width(type.getElementType()), fp8Bytes(q));
}

namespace {

struct EinFp8Contractions : PassWrapper<EinFp8Contractions, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EinFp8Contractions)

  EinFp8Contractions() = default;
  EinFp8Contractions(const EinFp8Contractions &other) : PassWrapper(other) {}
  explicit EinFp8Contractions(StringRef s) { scaling = s.str(); }

  StringRef getArgument() const override { return "ein-fp8-contractions"; }
  StringRef getDescription() const override {
    return "fp8 contractions: E4M3 operands, E5M2 incoming gradients (ein.quantize)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<EinDialect, func::FuncDialect>();
  }

  void runOnOperation() override {
    std::optional<Fp8Scaling> s = parseFp8Scaling(scaling);
    if (!s) {
      getOperation().emitError() << "ein-fp8-contractions: scaling must be none, block or "
                                    "tensor, got '"
                                 << scaling << "'";
      return signalPassFailure();
    }
    auto fn = getOperation().lookupSymbol<func::FuncOp>(funcName);
    if (!fn) {
      getOperation().emitError() << "ein-fp8-contractions: no function @" << funcName;
      return signalPassFailure();
    }
    applyFp8Contractions(fn, *s);
  }

  Option<std::string> scaling{*this, "scaling", llvm::cl::desc("block | tensor | none"),
                              llvm::cl::init("block")};
  Option<std::string> funcName{*this, "func", llvm::cl::desc("the function to rewrite"),
                               llvm::cl::init("forward")};
};

} // namespace

std::unique_ptr<Pass> createEinFp8Contractions(StringRef scaling) {
  return std::make_unique<EinFp8Contractions>(scaling);
}

void registerEinFp8ContractionsPass() { PassRegistration<EinFp8Contractions>(); }

} // namespace mlir::ein
