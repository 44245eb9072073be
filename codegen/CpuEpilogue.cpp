//===- CpuEpilogue.cpp - A GEMM epilogue's typed reading ------------------===//
//
// classifyEpilogue: whether the ops of a contraction's epilogue group
// (ein-fuse-epilogues) are exactly a matrix library's epilogue,
//   pre = alpha · C + residual + bias,  result = activation(pre),  aux = pre,
// and which buffers play which part (GemmPost's typed fields). The kernel
// stays the computation every device can run; the typed reading is set
// only when it describes the same values:
//
//   scale       ein.mul by a scalar constant, or ein.div by one that is a
//               power of two (x / c = x · (1/c) exactly); first, on C
//   residual    ein.add of a tensor shaped like C (read whole)
//   bias        ein.add of a vector of N broadcast over the rows
//   relu        ein.max with a scalar constant 0
//   gelu        the 9 ops of the `gelu` composite (dsl/Builtins.cpp):
//               0.5·x · (1 + tanh(√(2/π)·(x + 0.044715·x³))) on the value
//
// every op of the group consumed in that order, and the values read after
// the group among {result, pre}. Anything else leaves `library` unset.
//
//===----------------------------------------------------------------------===//
#include "codegen/CpuEpilogue.h"

#include "ir/EinOps.h"
#include "passes/FuseElementwise.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace ein::codegen {
namespace {

/// The value of a scalar constant `v` reads: an ein.broadcast of a rank-0
/// ein.constant, or a splat ein.constant.
std::optional<double> scalarConstant(Value v) {
  if (auto b = v.getDefiningOp<mlir::ein::BroadcastOp>())
    v = b.getInput();
  auto c = v.getDefiningOp<mlir::ein::ConstantOp>();
  if (!c)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool near(std::optional<double> v, double want) {
  return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want);
}

/// The other operand of binary `op` when one of them is `x`.
std::optional<Value> other(Operation *op, Value x) {
  if (op->getNumOperands() != 2)
    return std::nullopt;
  if (op->getOperand(0) == x)
    return op->getOperand(1);
  if (op->getOperand(1) == x)
    return op->getOperand(0);
  return std::nullopt;
}

/// `op` is the binary op T with `x` and a scalar constant near `c`.
template <class T> bool scaledBy(Operation *op, Value x, double c) {
  auto o = isa<T>(op) ? other(op, x) : std::nullopt;
  return o && near(scalarConstant(*o), c);
}

/// The ops of gelu(x) (the composite's 9) when `y` is its value.
std::optional<SmallVector<Operation *, 9>> matchGelu(Value y, Value x) {
  auto outer = y.getDefiningOp<mlir::ein::MulOp>();
  if (!outer)
    return std::nullopt;
  for (int h = 0; h < 2; ++h) {
    Operation *half = outer->getOperand(h).getDefiningOp();
    Operation *onePlus = outer->getOperand(1 - h).getDefiningOp();
    if (!half || !onePlus || !scaledBy<mlir::ein::MulOp>(half, x, 0.5))
      continue;
    auto tanhValue = isa<mlir::ein::AddOp>(onePlus) ? std::optional<Value>() : std::nullopt;
    for (int k = 0; k < 2 && isa<mlir::ein::AddOp>(onePlus); ++k)
      if (near(scalarConstant(onePlus->getOperand(k)), 1.0))
        tanhValue = onePlus->getOperand(1 - k);
    auto tanh = tanhValue ? tanhValue->getDefiningOp<mlir::ein::TanhOp>() : nullptr;
    if (!tanh)
      continue;
    Operation *scaled = tanh.getInput().getDefiningOp();
    if (!scaled || !isa<mlir::ein::MulOp>(scaled))
      continue;
    Operation *inner = nullptr;
    for (int k = 0; k < 2; ++k)
      if (near(scalarConstant(scaled->getOperand(k)), std::sqrt(2.0 / M_PI)))
        inner = scaled->getOperand(1 - k).getDefiningOp();
    if (!inner || !isa<mlir::ein::AddOp>(inner))
      continue;
    auto cubicTerm = other(inner, x);
    Operation *term = cubicTerm ? cubicTerm->getDefiningOp() : nullptr;
    if (!term || !isa<mlir::ein::MulOp>(term))
      continue;
    Operation *cube = nullptr;
    for (int k = 0; k < 2; ++k)
      if (near(scalarConstant(term->getOperand(k)), 0.044715))
        cube = term->getOperand(1 - k).getDefiningOp();
    if (!cube || !isa<mlir::ein::MulOp>(cube))
      continue;
    auto squareValue = other(cube, x);
    Operation *square = squareValue ? squareValue->getDefiningOp() : nullptr;
    if (!square || !isa<mlir::ein::MulOp>(square) || square->getOperand(0) != x ||
        square->getOperand(1) != x)
      continue;
    return SmallVector<Operation *, 9>{square, cube,    term, inner, scaled,
                                       tanh,   onePlus, half, outer};
  }
  return std::nullopt;
}

} // namespace

void classifyEpilogue(einrt::Step &matmul, Value product, ArrayRef<Operation *> members,
                      const EpilogueBuffers &buffers) {
  einrt::GemmPost &post = matmul.as<einrt::GemmDesc>().post;
  const int64_t n = matmul.as<einrt::GemmDesc>().n;
  llvm::SmallPtrSet<Operation *, 16> left(members.begin(), members.end());
  // The single member reading `v`, if exactly one does.
  auto nextUser = [&](Value v) -> Operation * {
    Operation *found = nullptr;
    for (Operation *u : v.getUsers())
      if (left.count(u)) {
        if (found && found != u)
          return nullptr;
        found = u;
      }
    return found;
  };
  einrt::GemmPost typed = post;
  Value v = product;
  bool scaled = false;
  while (Operation *op = nextUser(v)) {
    auto o = other(op, v);
    Operation *def = o ? o->getDefiningOp() : nullptr;
    if (!o || *o == v || (def && left.count(def)) || mlir::ein::classifyIndexRead(*o))
      break; // the other operand must be a buffer from outside the group (not
             // an iota the kernel computes)
    std::optional<double> c = scalarConstant(*o);
    mlir::ein::BroadcastReadInfo read = mlir::ein::classifyBroadcastRead(*o);
    if (!scaled && v == product && typed.residual < 0 && typed.bias < 0 && c &&
        isa<mlir::ein::MulOp>(op)) {
      typed.alpha = *c;
    } else if (!scaled && v == product && c && isa<mlir::ein::DivOp>(op) &&
               op->getOperand(0) == v && *c != 0 && std::ldexp(1.0, std::ilogb(*c)) == *c) {
      typed.alpha = 1.0 / *c; // a power of two: x / c == x · (1/c) exactly
    } else if (isa<mlir::ein::AddOp>(op) && typed.residual < 0 && typed.bias < 0 &&
               read.read == mlir::ein::BroadcastRead::Full && o->getType() == product.getType()) {
      typed.residual = buffers.operand(op, *o);
    } else if (isa<mlir::ein::AddOp>(op) && typed.bias < 0 &&
               read.read == mlir::ein::BroadcastRead::Suffix && read.count == n) {
      typed.bias = buffers.operand(op, *o);
    } else {
      break;
    }
    scaled = scaled || isa<mlir::ein::MulOp, mlir::ein::DivOp>(op);
    left.erase(op);
    v = op->getResult(0);
  }
  // The activation, on `pre`.
  Value pre = v, result = v;
  if (Operation *op = nextUser(v)) {
    if (auto o = other(op, v); isa<mlir::ein::MaxOp>(op) && o && scalarConstant(*o) == 0.0) {
      typed.activation = einrt::GemmActivation::Relu;
      left.erase(op);
      result = op->getResult(0);
    } else {
      // gelu's last op reads its half and its 1 + tanh: find it from any reader of v.
      for (Operation *m : members)
        if (left.count(m) && isa<mlir::ein::MulOp>(m))
          if (auto ops = matchGelu(m->getResult(0), v);
              ops && llvm::all_of(*ops, [&](Operation *g) { return left.count(g); })) {
            typed.activation = einrt::GemmActivation::Gelu;
            for (Operation *g : *ops)
              left.erase(g);
            result = m->getResult(0);
            break;
          }
    }
  }
  if (!left.empty())
    return; // ops the reading does not cover
  // What is read after the group: the result, and the pre-activation as aux.
  llvm::SmallPtrSet<Operation *, 16> inGroup(members.begin(), members.end());
  auto readOutside = [&](Value x) {
    return llvm::any_of(x.getUsers(), [&](Operation *u) { return !inGroup.count(u); });
  };
  typed.result = buffers.result(result);
  if (pre != result && readOutside(pre))
    typed.aux = pre == product ? matmul.output : buffers.result(pre);
  // C itself read after the group is the aux, or nothing a library writes.
  if (readOutside(product) && typed.aux != matmul.output)
    return;
  for (int32_t out : post.outputs)
    if (out != typed.result && out != typed.aux)
      return;
  typed.library = true;
  post = typed;
}

} // namespace ein::codegen
