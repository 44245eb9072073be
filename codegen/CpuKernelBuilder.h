//===- CpuKernelBuilder.h - Loops and scalar ops for CPU kernels -*- C++ -*-===//
//
// The building blocks codegen/CpuKernelGen.cpp assembles kernels from: index
// arithmetic, loads and stores of f32 / bf16 / f16 / i32 / i1 (bytes)
// elements (narrow floats widened to f32 on load, rounded to nearest even
// on store: bf16 with integer operations, f16 by arith.truncf, which is
// F16C's vcvtps2ph on x86-64-v3), loops
// (one of which may run over the kernel's [begin, end) range), and every
// scalar operation with the reference backend's semantics (NaN-propagating
// max/min, saturating float → i32, defined integer division by zero).
// Internal to codegen/.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUKERNELBUILDER_H
#define EINC_CODEGEN_CPUKERNELBUILDER_H

#include "codegen/CpuKernelGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <functional>
#include <limits>
#include <vector>

namespace ein::codegen {

using mlir::APFloat;
using mlir::ArrayRef;
using mlir::FloatAttr;
using mlir::Location;
using mlir::MemRefType;
using mlir::OpBuilder;
using mlir::SmallVector;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;
namespace arith = mlir::arith;
namespace math = mlir::math;
namespace memref = mlir::memref;
namespace scf = mlir::scf;

/// Builds a kernel's loops and scalar arithmetic (arith/math/scf/memref
/// ops) with the reference kernels' semantics, element kind by element kind.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &b;
  Location loc;

  Type f32() { return b.getF32Type(); }
  Type i32() { return b.getI32Type(); }
  Type i1() { return b.getI1Type(); }
  Type valueType(ElemKind k) { return isFloatKind(k) ? f32() : k == ElemKind::I32 ? i32() : i1(); }
  Type storageType(ElemKind k) {
    if (k == ElemKind::I1)
      return b.getI8Type();
    if (k == ElemKind::BF16)
      return b.getI16Type();
    if (k == ElemKind::F16)
      return b.getF16Type();
    return valueType(k);
  }
  MemRefType memrefOf(const KernelTensor &t) {
    return MemRefType::get({t.count()}, storageType(t.elem));
  }

  Value idx(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value f32c(float v) { return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(v)); }
  Value i32c(int32_t v) { return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(v)); }
  Value nan() {
    return b.create<arith::ConstantOp>(
        loc, FloatAttr::get(f32(), APFloat::getQNaN(APFloat::IEEEsingle())));
  }
  Value zeroOf(ElemKind k) {
    if (isFloatKind(k))
      return f32c(0.0f);
    if (k == ElemKind::I32)
      return i32c(0);
    return b.create<arith::ConstantOp>(loc, b.getBoolAttr(false));
  }

  /// 0 <= id < rows, for an i32 row index.
  Value rowInRange(Value id, int64_t rows) {
    return b.create<arith::AndIOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, id, i32c(0)),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, id, i32c(int32_t(rows))));
  }

  /// a * c + acc on index values, folding trivial factors.
  Value mulAdd(Value acc, Value a, int64_t c) {
    if (c == 0)
      return acc;
    Value term = c == 1 ? a : Value(b.create<arith::MulIOp>(loc, a, idx(c)));
    return acc ? Value(b.create<arith::AddIOp>(loc, acc, term)) : term;
  }
  Value orZero(Value v) { return v ? v : idx(0); }

  Value i32c(uint32_t v) { return i32c(int32_t(v)); }

  /// Element `at` as a value: i1 from its byte, narrow floats widened to f32
  /// (exact).
  Value load(Value mem, ElemKind k, Value at) {
    Value v = b.create<memref::LoadOp>(loc, mem, ValueRange{at});
    if (k == ElemKind::I1)
      v = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v,
                                  b.create<arith::ConstantOp>(loc, b.getI8IntegerAttr(0)));
    if (k == ElemKind::BF16) {
      Value wide = b.create<arith::ExtUIOp>(loc, i32(), v);
      v = b.create<arith::BitcastOp>(loc, f32(), b.create<arith::ShLIOp>(loc, wide, i32c(16)));
    }
    if (k == ElemKind::F16)
      v = b.create<arith::ExtFOp>(loc, f32(), v);
    return v;
  }
  /// Stores a value into element `at`, rounding an f32 to a narrow kind.
  void store(Value v, Value mem, ElemKind k, Value at) {
    if (k == ElemKind::I1)
      v = b.create<arith::ExtUIOp>(loc, b.getI8Type(), v);
    if (k == ElemKind::BF16)
      v = b.create<arith::TruncIOp>(loc, b.getI16Type(), bf16Bits(v));
    if (k == ElemKind::F16)
      v = b.create<arith::TruncFOp>(loc, b.getF16Type(), v);
    b.create<memref::StoreOp>(loc, v, mem, ValueRange{at});
  }
  /// Stores `v`, already a value of kind `k` (roundTo's result: a bf16's
  /// low half is clear and a NaN is the quiet one), as store(v) would
  /// store it: a bf16 as its high half, without rounding it again.
  void storeRounded(Value v, Value mem, ElemKind k, Value at) {
    if (k != ElemKind::BF16)
      return store(v, mem, k, at);
    Value high = b.create<arith::ShRUIOp>(loc, b.create<arith::BitcastOp>(loc, i32(), v), i32c(16));
    b.create<memref::StoreOp>(loc, b.create<arith::TruncIOp>(loc, b.getI16Type(), high), mem,
                              ValueRange{at});
  }
  /// Element `at` copied as stored (data movement: no conversion).
  void move(Value from, Value fromAt, Value to, Value toAt) {
    Value v = b.create<memref::LoadOp>(loc, from, ValueRange{fromAt});
    b.create<memref::StoreOp>(loc, v, to, ValueRange{toAt});
  }

  /// 0x7FFF + lsb, lsb bit 16 of `u`: 0x8000 where it is set, else 0x7FFF
  /// (a test and a blend: one vector operation fewer than shift and mask
  /// then add).
  Value roundingBias(Value u) {
    Value odd = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                        b.create<arith::AndIOp>(loc, u, i32c(0x10000)), i32c(0));
    return b.create<arith::SelectOp>(loc, odd, i32c(0x8000), i32c(0x7FFF));
  }
  /// The bf16 encoding of f32 `x` in the high half of an i32 (the low half
  /// is not cleared): round to nearest even on the bits (u + 0x7FFF + lsb;
  /// an overflow carries into the exponent and gives infinity), NaN as the
  /// quiet NaN with x's sign: runtime/core/FloatFormats' bf16Bits.
  Value bf16InHighHalf(Value x) {
    Value u = b.create<arith::BitcastOp>(loc, i32(), x);
    Value sum = b.create<arith::AddIOp>(loc, u, roundingBias(u));
    Value quiet = b.create<arith::OrIOp>(loc, b.create<arith::AndIOp>(loc, u, i32c(0x80000000u)),
                                         i32c(0x7FC00000u));
    Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
    return b.create<arith::SelectOp>(loc, isNan, quiet, sum);
  }
  /// The bf16 encoding of f32 `x`, in the low 16 bits of an i32 (a store).
  Value bf16Bits(Value x) { return b.create<arith::ShRUIOp>(loc, bf16InHighHalf(x), i32c(16)); }
  /// The f32 that bf16Bits(x) is (every bf16 value a fused kernel makes):
  /// the low half cleared, never shifted down and back up.
  Value bf16Rounded(Value x) {
    return b.create<arith::BitcastOp>(
        loc, f32(), b.create<arith::AndIOp>(loc, bf16InHighHalf(x), i32c(0xFFFF0000u)));
  }
  /// An f32 rounded to what kind `k` holds, still as f32 (identity for f32):
  /// every narrow-typed value a fused kernel makes goes through this.
  Value roundTo(Value x, ElemKind k) {
    if (k == ElemKind::BF16)
      return bf16Rounded(x);
    if (k == ElemKind::F16)
      return b.create<arith::ExtFOp>(loc, f32(),
                                     Value(b.create<arith::TruncFOp>(loc, b.getF16Type(), x)));
    return x;
  }

  /// An iota's value at element `index` (an index value below `count`):
  /// (index / stride) % size, as i32 or, for a float kind, as f32 (not yet
  /// rounded to `k`). 32-bit arithmetic where `count` allows: a cheaper
  /// division by a constant.
  Value indexValue(Value index, int64_t stride, int64_t size, int64_t count, ElemKind k) {
    bool narrow = count <= int64_t(std::numeric_limits<uint32_t>::max());
    Type t = narrow ? i32() : Type(b.getI64Type());
    auto constant = [&](int64_t v) -> Value {
      return narrow ? i32c(uint32_t(v))
                    : Value(b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(v)));
    };
    Value v = b.create<arith::IndexCastUIOp>(loc, t, index);
    if (stride != 1)
      v = b.create<arith::DivUIOp>(loc, v, constant(stride));
    v = b.create<arith::RemUIOp>(loc, v, constant(size));
    if (isFloatKind(k))
      return b.create<arith::SIToFPOp>(loc, f32(), v);
    return narrow ? v : Value(b.create<arith::TruncIOp>(loc, i32(), v));
  }

  /// murmur3's 32-bit finaliser.
  Value mix32(Value h) {
    auto xorShift = [&](Value v, int s) {
      return b.create<arith::XOrIOp>(loc, v, b.create<arith::ShRUIOp>(loc, v, i32c(s)));
    };
    h = b.create<arith::MulIOp>(loc, xorShift(h, 16), i32c(0x85EBCA6Bu));
    h = b.create<arith::MulIOp>(loc, xorShift(h, 13), i32c(0xC2B2AE35u));
    return xorShift(h, 16);
  }
  /// ein.stochastic_round of f32 `x` with i32 `seed` at element `index` (an
  /// index value), rounded to kind `k` and returned as f32: exactly
  /// runtime/core/FloatFormats' stochasticBits and stochasticRoundBF16 / F16.
  Value stochasticRound(Value x, Value seed, Value index, ElemKind k) {
    Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
    Value lo = b.create<arith::TruncIOp>(loc, i32(), i64);
    Value hi = b.create<arith::TruncIOp>(
        loc, i32(),
        b.create<arith::ShRUIOp>(loc, i64,
                                 b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(32))));
    Value key = mix32(
        b.create<arith::AddIOp>(loc, seed, b.create<arith::MulIOp>(loc, hi, i32c(0x85EBCA77u))));
    Value bits = mix32(
        b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, lo, i32c(0x9E3779B1u)), key));
    Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
    Value u = b.create<arith::BitcastOp>(loc, i32(), x);
    if (k == ElemKind::BF16) {
      Value up = b.create<arith::AddIOp>(loc, u, b.create<arith::ShRUIOp>(loc, bits, i32c(16)));
      Value r = b.create<arith::AndIOp>(loc, up, i32c(0xFFFF0000u));
      Value quiet = b.create<arith::OrIOp>(loc, b.create<arith::AndIOp>(loc, u, i32c(0x80000000u)),
                                           i32c(0x7FC00000u));
      return b.create<arith::BitcastOp>(loc, f32(),
                                        b.create<arith::SelectOp>(loc, isNan, quiet, r));
    }
    // f16: q = 2^(max(e, -14) - 10) the spacing at |x|, in exact f32 steps.
    Value a = b.create<math::AbsFOp>(loc, x);
    Value au = b.create<arith::BitcastOp>(loc, i32(), a);
    Value e = b.create<arith::SubIOp>(
        loc, b.create<arith::AndIOp>(loc, b.create<arith::ShRUIOp>(loc, au, i32c(23)), i32c(0xFF)),
        i32c(127));
    Value qe = b.create<arith::SubIOp>(loc, b.create<arith::MaxSIOp>(loc, e, i32c(-14)), i32c(10));
    auto pow2 = [&](Value exponent) {
      Value biased = b.create<arith::AddIOp>(loc, exponent, i32c(127));
      return b.create<arith::BitcastOp>(loc, f32(), b.create<arith::ShLIOp>(loc, biased, i32c(23)));
    };
    Value q = pow2(qe);
    Value inv = pow2(b.create<arith::SubIOp>(loc, i32c(0), qe));
    Value s = b.create<arith::MulFOp>(loc, a, inv);
    Value fl = b.create<math::FloorOp>(loc, s);
    Value frac = b.create<arith::SubFOp>(loc, s, fl);
    Value draw = b.create<arith::MulFOp>(
        loc, b.create<arith::SIToFPOp>(loc, f32(), b.create<arith::ShRUIOp>(loc, bits, i32c(8))),
        f32c(0x1p-24f));
    Value up = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, draw, frac);
    Value r = b.create<arith::MulFOp>(
        loc,
        b.create<arith::AddFOp>(loc, fl,
                                b.create<arith::SelectOp>(loc, up, f32c(1.0f), f32c(0.0f))),
        q);
    return b.create<math::CopySignOp>(loc, r, x);
  }

  /// The kernel's [begin, end) arguments: the next loop() created after
  /// armParallel() runs over that range instead of [0, n) (the executor
  /// splits the parallel loop's iterations across threads).
  Value parBegin, parEnd;
  bool parArmed = false;
  void armParallel() { parArmed = parBegin != nullptr; }

  /// for (iv = 0; iv < n; ++iv) body(iv)
  void loop(int64_t n, const std::function<void(Value)> &body) {
    Value lo = idx(0), hi = idx(n);
    if (parArmed) {
      lo = parBegin;
      hi = parEnd;
      parArmed = false;
    }
    loopRange(lo, hi, body);
  }

  /// for (iv = lo; iv < hi; ++iv) body(iv)
  void loopRange(Value lo, Value hi, const std::function<void(Value)> &body) {
    b.create<scf::ForOp>(loc, lo, hi, idx(1), ValueRange{},
                         [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                           OpBuilder::InsertionGuard g(b);
                           b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                           body(iv);
                           b.create<scf::YieldOp>(loc);
                         });
  }

  /// for (iv = 0; iv < n; ++iv) acc = body(iv, acc); returns the final acc.
  Value loopCarry(int64_t n, Value init, const std::function<Value(Value, Value)> &body) {
    auto f =
        b.create<scf::ForOp>(loc, idx(0), idx(n), idx(1), ValueRange{init},
                             [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
                               OpBuilder::InsertionGuard g(b);
                               b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
                               Value next = body(iv, args[0]);
                               b.create<scf::YieldOp>(loc, ValueRange{next});
                             });
    return f.getResult(0);
  }

  /// Nested loops over `shape` in row-major order.
  /// With `parallelDim` >= 0, that dim's loop runs over [begin, end).
  void nest(const std::vector<int64_t> &shape, const std::function<void(ArrayRef<Value>)> &body,
            int parallelDim = -1) {
    SmallVector<Value> ivs;
    std::function<void(size_t)> rec = [&](size_t d) {
      if (d == shape.size()) {
        body(ivs);
        return;
      }
      if (int(d) == parallelDim)
        armParallel();
      loop(shape[d], [&](Value iv) {
        ivs.push_back(iv);
        rec(d + 1);
        ivs.pop_back();
      });
    };
    rec(0);
  }

  // Max/min as the reference: NaN if either is NaN, else a > b ? a : b
  // (a < b ? a : b for min).
  Value maxOf(Value a, Value c, ElemKind k) { return extremum(a, c, k, true); }
  Value minOf(Value a, Value c, ElemKind k) { return extremum(a, c, k, false); }
  Value extremum(Value a, Value c, ElemKind k, bool max) {
    if (k == ElemKind::I32)
      return b.create<arith::SelectOp>(
          loc,
          b.create<arith::CmpIOp>(loc, max ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt,
                                  a, c),
          a, c);
    Value pick = b.create<arith::CmpFOp>(
        loc, max ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, a, c);
    Value r = b.create<arith::SelectOp>(loc, pick, a, c);
    Value un = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, a, c);
    return b.create<arith::SelectOp>(loc, un, nan(), r);
  }
  Value addOf(Value a, Value c, ElemKind k) {
    if (isFloatKind(k))
      return b.create<arith::AddFOp>(loc, a, c);
    return b.create<arith::AddIOp>(loc, a, c); // wraps
  }

  // The elementwise ops: runtime/base/ElementwiseOps.def's CPU columns. An op
  // not in the table is an internal error, never another op's code.
#define EIN_FLOAT_ONLY floatOnly(op)
  Value unary(llvm::StringRef op, Value x, ElemKind k) {
    bool i32 = k == ElemKind::I32;
#define EIN_UNARY_OP(Kind, name, Types, Rounding, Dsl, Ref, CudaF32, CudaI32, CpuF32, CpuI32)      \
  if (op == "ein." name)                                                                           \
    return i32 ? Value(CpuI32) : Value(CpuF32);
#include "runtime/base/ElementwiseOps.def"
    notElementwise(op, "unary");
  }
  Value binary(llvm::StringRef op, Value x, Value y, ElemKind k) {
    bool i32 = k == ElemKind::I32;
#define EIN_BINARY_OP(Kind, name, Types, Rounding, Ref, CudaF32, CudaI32, CpuF32, CpuI32)          \
  if (op == "ein." name)                                                                           \
    return i32 ? Value(CpuI32) : Value(CpuF32);
#include "runtime/base/ElementwiseOps.def"
    notElementwise(op, "binary");
  }
#undef EIN_FLOAT_ONLY

  [[noreturn]] static void notElementwise(llvm::StringRef op, const char *arity) {
    llvm::report_fatal_error(llvm::Twine("internal error: ") + op + " is not a " + arity +
                             " elementwise op of runtime/base/ElementwiseOps.def");
  }
  [[noreturn]] static Value floatOnly(llvm::StringRef op) {
    llvm::report_fatal_error(llvm::Twine("internal error: ") + op +
                             " takes float tensors only, got i32");
  }
  Value negI32(Value x) { return b.create<arith::SubIOp>(loc, i32c(0), x); } // wraps
  // Integer division: the reference reports y == 0 as an error; here the
  // result is 0. INT_MIN / -1 gives INT_MIN (wrapping), as the reference.
  Value divI32(Value x, Value y) {
    Value yZero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, i32c(0));
    Value xMin = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x,
                                         i32c(std::numeric_limits<int32_t>::min()));
    Value yMinus1 = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, i32c(-1));
    Value overflow = b.create<arith::AndIOp>(loc, xMin, yMinus1);
    Value unsafe = b.create<arith::OrIOp>(loc, yZero, overflow);
    Value safeY = b.create<arith::SelectOp>(loc, unsafe, i32c(1), y);
    Value q = b.create<arith::DivSIOp>(loc, x, safeY);
    return b.create<arith::SelectOp>(loc, yZero, i32c(0), q);
  }

  Value compare(llvm::StringRef pred, Value x, Value y, ElemKind k) {
    if (isFloatKind(k)) {
      // C++ comparisons: ordered, except != (true when either is NaN).
      arith::CmpFPredicate p = llvm::StringSwitch<arith::CmpFPredicate>(pred)
                                   .Case("eq", arith::CmpFPredicate::OEQ)
                                   .Case("ne", arith::CmpFPredicate::UNE)
                                   .Case("lt", arith::CmpFPredicate::OLT)
                                   .Case("le", arith::CmpFPredicate::OLE)
                                   .Case("gt", arith::CmpFPredicate::OGT)
                                   .Default(arith::CmpFPredicate::OGE);
      return b.create<arith::CmpFOp>(loc, p, x, y);
    }
    bool u = k == ElemKind::I1; // i1 compares as unsigned bytes
    arith::CmpIPredicate p =
        llvm::StringSwitch<arith::CmpIPredicate>(pred)
            .Case("eq", arith::CmpIPredicate::eq)
            .Case("ne", arith::CmpIPredicate::ne)
            .Case("lt", u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt)
            .Case("le", u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle)
            .Case("gt", u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
            .Default(u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge);
    return b.create<arith::CmpIOp>(loc, p, x, y);
  }

  /// A cast's value; a narrow float result is rounded by the caller (store
  /// or roundTo), float to float is otherwise the f32 value itself.
  Value cast(Value x, ElemKind from, ElemKind to) {
    if (from == to || (isFloatKind(from) && isFloatKind(to)))
      return x;
    if (to == ElemKind::I1) {
      if (isFloatKind(from)) // != 0 (NaN is true)
        return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x, f32c(0.0f));
      return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, i32c(0));
    }
    if (from == ElemKind::I1)
      return isFloatKind(to) ? Value(b.create<arith::UIToFPOp>(loc, f32(), x))
                             : Value(b.create<arith::ExtUIOp>(loc, i32(), x));
    if (isFloatKind(to)) // i32 → f32, round to nearest
      return b.create<arith::SIToFPOp>(loc, f32(), x);
    // f32 → i32: toward zero, saturating, NaN → 0 (FloatFormats' truncToI32).
    Value t = b.create<arith::FPToSIOp>(loc, i32(), x);
    Value hi = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, x, f32c(2147483648.0f));
    Value lo = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, x, f32c(-2147483648.0f));
    Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
    t = b.create<arith::SelectOp>(loc, hi, i32c(std::numeric_limits<int32_t>::max()), t);
    t = b.create<arith::SelectOp>(loc, lo, i32c(std::numeric_limits<int32_t>::min()), t);
    return b.create<arith::SelectOp>(loc, isNan, i32c(0), t);
  }
};

/// Whether node `n`'s value is rounded to its kind where it is computed
/// (KernelBuilder::roundTo), so that storing it needs no second rounding:
/// every elementwise node but a select (which may pick a loaded value) and
/// a stochastic rounding; not a reduction (a bf16 max is a loaded value) or
/// a broadcast.
inline bool roundedWhereMade(const FusedNode &n) {
  return n.op != "ein.select" && n.op != "ein.stochastic_round" && n.op != "ein.reduce" &&
         n.op != "ein.broadcast";
}

/// The initial value of a `kind` reduction ("sum", "max", "min") of `k`.
Value reduceInitValue(KernelBuilder &g, llvm::StringRef kind, ElemKind k);
/// `acc` combined with `x` by a `kind` reduction of `k`: exact (never
/// reassociated), a narrow sum rounded after the addition, float max / min
/// NaN-propagating.
Value reduceCombineValue(KernelBuilder &g, llvm::StringRef kind, ElemKind k, Value acc, Value x);
/// Whether reduceRow needs its scratch (an f32 sum combined in partials).
bool rowNeedsScratch(llvm::StringRef kind, ElemKind k, int64_t length);
/// One row of `length` elements (`element(j)` the j-th, j an index)
/// combined in codegen/RowOrder.h's order from the reduction's initial
/// value; `scratch`: a memref<kRowScratch x f32> where rowNeedsScratch.
/// With `stage` (a memref<kRowStage x f32>), each round of the partials
/// first computes its elements in order into `stage`, then combines them
/// from there: the same values in the same order, but the elements are
/// computed in a loop over consecutive elements, which the vectoriser
/// widens with whole-vector loads, where the partials' loop reads every
/// `vector`-th element (narrow and i1 operands: one scalar load per lane).
Value reduceRow(KernelBuilder &g, llvm::StringRef kind, ElemKind k, int64_t length,
                const std::function<Value(Value)> &element, Value scratch, Value stage = {});
/// The f32 elements reduceRow's scratch holds: a block's partials, its
/// warps' results, and the chunks' results of a chunked row
/// (codegen/RowOrder.h), from kChunksAt.
inline constexpr int64_t kChunksAt = 1024 + 32;
inline constexpr int64_t kRowScratch = kChunksAt + 2048;
/// The f32 elements of reduceRow's `stage`: one round of a block's
/// partials (kRowBlockPartials vectors of up to 4 f32 elements).
inline constexpr int64_t kRowStage = 1024 * 4;

/// Whether an "ein.rows" kernel needs reduceRow's scratch.
bool rowsNeedScratch(const KernelSpec &spec);
/// The loops of an "ein.rows" kernel (codegen/CpuRowsKernel.cpp).
void genRows(KernelBuilder &g, const KernelSpec &spec, ArrayRef<Value> in, ArrayRef<Value> outs,
             Value scratch);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUKERNELBUILDER_H
