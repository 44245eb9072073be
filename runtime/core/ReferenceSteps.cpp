//===- ReferenceSteps.cpp - Reference-kernel steps, dispatched from the table -===//
//
// The switch below is generated from runtime/core/StepKinds.def: elementwise,
// comparison and reduction rows become one loop each over their scalar
// expression (runtime/base/ScalarOps.h); the other reference rows run the kernel
// of their rule (runtime/core/ReferenceKernels.h).
//
// Narrow floats (the semantics in ir/EinOps.td): a bf16/f16 result is
// computed in F and rounded to its format once per op; a narrow sum and
// scatter_add round their accumulator after every addition. Buffers a
// device stores as bf16/f16 bits (the cpu device) are widened to F for the
// step and the result narrowed back (exact: it is already rounded).
//
//===----------------------------------------------------------------------===//
#include "runtime/core/ReferenceSteps.h"

#include "runtime/base/ScalarOps.h"
#include "runtime/core/FloatFormats.h"
#include "runtime/core/Fp8Quantize.h"
#include "runtime/core/ReferenceKernels.h"

#include <algorithm>
#include <type_traits>

namespace einrt {

template <class F> double loadElement(const DeviceSpan &b, int64_t i) {
  switch (b.dtype) {
  case DType::I32:
    return static_cast<const int32_t *>(b.data)[i];
  case DType::I1:
    return static_cast<const uint8_t *>(b.data)[i];
  default:
    return double(static_cast<const F *>(b.data)[i]);
  }
}

template <class F> void storeElement(const DeviceSpan &b, int64_t i, double v) {
  switch (b.dtype) {
  case DType::I32:
    static_cast<int32_t *>(b.data)[i] = truncToI32(v);
    return;
  case DType::I1:
    static_cast<uint8_t *>(b.data)[i] = v != 0 ? 1 : 0;
    return;
  case DType::BF16:
  case DType::F16:
    v = roundToDType(v, b.dtype);
    break;
  default:
    break;
  }
  static_cast<F *>(b.data)[i] = F(v);
}

namespace {

using namespace ref;

/// The rounding a result of dtype `t` gets when stored wider than its format.
RoundFn roundingOf(DType t) {
  if (t == DType::BF16)
    return roundToBF16;
  if (t == DType::F16)
    return roundToF16;
  return nullptr;
}

/// Rounds a freshly computed float result of a narrow dtype to its format.
template <class F> void roundResult(const DeviceSpan &out) {
  if (RoundFn round = roundingOf(out.dtype)) {
    F *y = static_cast<F *>(out.data);
    for (int64_t i = 0; i < out.count; ++i)
      y[i] = F(round(double(y[i])));
  }
}

template <class T> struct Tag {
  using type = T;
};

/// Calls fn(Tag<T>) with T the storage type of dtype `t` (F for floats).
template <class F, class Fn> void withStorage(DType t, Fn &&fn) {
  if (t == DType::I32)
    fn(Tag<int32_t>());
  else if (t == DType::I1)
    fn(Tag<uint8_t>());
  else
    fn(Tag<F>());
}

template <class T> T *data(const DeviceSpan &b) { return static_cast<T *>(b.data); }

struct Args {
  const Step &s;
  const std::vector<DeviceSpan> &in;
  const DeviceSpan &out;
  mutable Status failure; // why the step failed (a bad index: Invalid)
};

/// The error of an elementwise step on a type its row does not take.
std::string notAnElementType(const Args &a) {
  return std::string("'") + dtypeName(a.out.dtype) + "' is not an element type of '" +
         stepKindName(a.s.kind) + "'";
}

constexpr bool kFloatOnly_Numeric = false;
constexpr bool kFloatOnly_Float = true;

// One struct per elementwise row: its scalar expression.
#define EINRT_STEP(Kind, name, Payload, Rule, Runner)
#define EINRT_UNARY(Kind, name, Types, expr)                                                       \
  struct Kind##Op {                                                                                \
    static constexpr bool floatOnly = kFloatOnly_##Types;                                          \
    template <class T> static T apply(T x) { return expr; }                                        \
  };
#define EINRT_BINARY(Kind, name, Types, expr)                                                      \
  struct Kind##Op {                                                                                \
    static constexpr bool floatOnly = kFloatOnly_##Types;                                          \
    template <class T> static T apply(T x, T y, bool &fault) {                                     \
      (void)fault;                                                                                 \
      return expr;                                                                                 \
    }                                                                                              \
  };
#define EINRT_COMPARE(Kind, name, expr)                                                            \
  struct Kind##Op {                                                                                \
    template <class T> static bool apply(T a, T b) { return expr; }                                \
  };
#define EINRT_REDUCE(Kind, name, reduceKind)
#include "runtime/core/StepKinds.def"

/// Whether T may run a row: numeric rows take floats and i32, float rows
/// floats only; none takes i1.
template <class Op, class T> constexpr bool applies() {
  return !std::is_same<T, uint8_t>::value && (!Op::floatOnly || isFloatT<T>());
}

template <class F, class Op> bool unaryStep(const Args &a) {
  bool ok = true;
  withStorage<F>(a.out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (applies<Op, T>()) {
      const T *x = data<T>(a.in[0]);
      T *y = data<T>(a.out);
      for (int64_t i = 0; i < a.out.count; ++i)
        y[i] = Op::template apply<T>(x[i]);
      if constexpr (isFloatT<T>())
        roundResult<T>(a.out);
    } else {
      ok = false;
      a.failure = Status::invalid(notAnElementType(a));
    }
  });
  return ok;
}

template <class F, class Op> bool binaryStep(const Args &a) {
  bool ok = true;
  withStorage<F>(a.out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (applies<Op, T>()) {
      const T *x = data<T>(a.in[0]), *y = data<T>(a.in[1]);
      T *z = data<T>(a.out);
      bool fault = false;
      for (int64_t i = 0; i < a.out.count; ++i) {
        z[i] = Op::template apply<T>(x[i], y[i], fault);
        if (fault) {
          ok = false;
          a.failure = Status::invalid("integer division by zero at element " + std::to_string(i));
          return;
        }
      }
      if constexpr (isFloatT<T>())
        roundResult<T>(a.out);
    } else {
      ok = false;
      a.failure = Status::invalid(notAnElementType(a));
    }
  });
  return ok;
}

template <class F, class Op> bool compareStep(const Args &a) {
  withStorage<F>(a.in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = data<T>(a.in[0]), *y = data<T>(a.in[1]);
    uint8_t *z = data<uint8_t>(a.out);
    for (int64_t i = 0; i < a.out.count; ++i)
      z[i] = Op::template apply<T>(x[i], y[i]) ? 1 : 0;
  });
  return true;
}

template <class F> bool reduceStep(ReduceKind kind, const Args &a) {
  bool ok = true;
  withStorage<F>(a.out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same<T, uint8_t>::value)
      reduce<T>(kind, data<T>(a.in[0]), *a.in[0].shape, a.s.as<AxisList>().axes, data<T>(a.out),
                roundingOf(a.out.dtype));
    else
      ok = false, a.failure = Status::invalid("reduce needs a float or i32 element type");
  });
  return ok;
}

/// The reference kernel of a rule that is not elementwise.
template <class F> bool ruleStep(ValidationRule rule, const Args &a) {
  const DeviceSpan &out = a.out;
  bool ok = true;
  auto numeric = [&](const char *what, auto &&fn) {
    withStorage<F>(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same<T, uint8_t>::value)
        fn(tag);
      else
        ok = false,
        a.failure = Status::invalid(std::string(what) + " needs a float or i32 element type");
    });
  };
  switch (rule) {
  case ValidationRule::Contract: {
    const ContractDims &d = a.s.as<ContractDims>();
    contract<F>(data<F>(a.in[0]), *a.in[0].shape, data<F>(a.in[1]), *a.in[1].shape, d.lhsBatch,
                d.rhsBatch, d.lhsContract, d.rhsContract, data<F>(out), *out.shape);
    roundResult<F>(out); // F sums, one rounding
    return true;
  }
  case ValidationRule::Transpose:
    withStorage<F>(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      transpose<T>(data<T>(a.in[0]), *a.in[0].shape, a.s.as<AxisList>().axes, data<T>(out));
    });
    return true;
  case ValidationRule::Reshape:
  case ValidationRule::Copy:
    withStorage<F>(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      copy<T>(data<T>(a.in[0]), data<T>(out), out.count);
    });
    return true;
  case ValidationRule::Broadcast:
    withStorage<F>(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      broadcast<T>(data<T>(a.in[0]), *a.in[0].shape, a.s.as<AxisList>().axes, data<T>(out),
                   *out.shape);
    });
    return true;
  case ValidationRule::Select:
    withStorage<F>(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      select<T>(data<uint8_t>(a.in[0]), data<T>(a.in[1]), data<T>(a.in[2]), data<T>(out),
                out.count);
    });
    return true;
  case ValidationRule::Cast:
    // Through double, which holds every f32, i32 and i1 value exactly;
    // storeElement applies the target's rounding/truncation rules.
    for (int64_t i = 0; i < out.count; ++i)
      storeElement<F>(out, i, loadElement<F>(a.in[0], i));
    return true;
  case ValidationRule::StochasticRound:
    // Unrounded narrow buffers (Executor::setRoundLowPrecision(false)) are
    // plain floats: the input passes through.
    for (int64_t i = 0; i < out.count; ++i) {
      float x = float(loadElement<F>(a.in[0], i));
      uint32_t bits = stochasticBits(int32_t(loadElement<F>(a.in[1], i)), i);
      double v = out.dtype == DType::BF16  ? stochasticRoundBF16(x, bits)
                 : out.dtype == DType::F16 ? stochasticRoundF16(x, bits)
                                           : x;
      storeElement<F>(out, i, v);
    }
    return true;
  case ValidationRule::Quantize:
    a.failure = quantizeStep<F>(a.s.as<QuantizeSpec>(), a.in[0], out);
    return a.failure.ok();
  case ValidationRule::Iota:
    numeric("iota", [&](auto tag) {
      using T = typename decltype(tag)::type;
      iota<T>(data<T>(out), *out.shape, a.s.as<IotaDim>().dimension);
      if constexpr (isFloatT<T>())
        roundResult<T>(out);
    });
    return ok;
  case ValidationRule::Gather:
    withStorage<F>(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      a.failure = gather<T>(data<T>(a.in[0]), *a.in[0].shape, data<int32_t>(a.in[1]), a.in[1].count,
                            data<T>(out));
      ok = a.failure.ok();
    });
    return ok;
  case ValidationRule::Slice: // rows are runs of elements: a copy from the first
    withStorage<F>(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      int64_t row = a.in[0].count / std::max<int64_t>(1, (*a.in[0].shape)[0]);
      copy<T>(data<T>(a.in[0]) + a.s.as<SliceOffset>().offset * row, data<T>(out), out.count);
    });
    return true;
  case ValidationRule::Concat:
    withStorage<F>(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      int64_t at = 0;
      for (const DeviceSpan &part : a.in) {
        copy<T>(data<T>(part), data<T>(out) + at, part.count);
        at += part.count;
      }
    });
    return true;
  case ValidationRule::ScatterAdd:
    numeric("scatter_add", [&](auto tag) {
      using T = typename decltype(tag)::type;
      a.failure =
          scatterAdd<T>(data<T>(a.in[0]), data<int32_t>(a.in[1]), a.in[1].count, data<T>(out),
                        *out.shape, isFloatT<T>() ? roundingOf(out.dtype) : nullptr);
      ok = a.failure.ok();
    });
    return ok;
  default:
    a.failure = Status::internal(std::string("'") + stepKindName(a.s.kind) +
                                 "' steps are not run by the reference kernels");
    return false;
  }
}

bool narrowStorage(const DeviceSpan &b) {
  return b.storage == StorageType::BF16 || b.storage == StorageType::F16;
}

/// `b` widened into `wide` (F elements): the span the kernels read.
template <class F> DeviceSpan widened(const DeviceSpan &b, std::vector<F> &wide) {
  const uint16_t *bits = static_cast<const uint16_t *>(b.data);
  wide.resize(size_t(b.count));
  for (int64_t i = 0; i < b.count; ++i)
    wide[i] = F(b.storage == StorageType::BF16 ? bf16FromBits(bits[i]) : f16FromBits(bits[i]));
  DeviceSpan w = b;
  w.storage = std::is_same<F, double>::value ? StorageType::F64 : StorageType::F32;
  w.data = wide.data();
  return w;
}

template <class F>
Status runOnStorage(const Step &s, const std::vector<DeviceSpan> &inputs, const DeviceSpan &output);

} // namespace

template <class F>
Status runReferenceStep(const Step &s, const std::vector<DeviceSpan> &inputs,
                        const DeviceSpan &output) {
  bool narrow = narrowStorage(output);
  for (const DeviceSpan &in : inputs)
    narrow = narrow || narrowStorage(in);
  if (!narrow)
    return runOnStorage<F>(s, inputs, output);
  std::vector<std::vector<F>> wide(inputs.size() + 1);
  std::vector<DeviceSpan> in(inputs);
  for (size_t i = 0; i < in.size(); ++i)
    if (narrowStorage(in[i]))
      in[i] = widened<F>(in[i], wide[i]);
  if (!narrowStorage(output))
    return runOnStorage<F>(s, in, output);
  DeviceSpan out = widened<F>(output, wide.back());
  EINRT_TRY(runOnStorage<F>(s, in, out));
  uint16_t *bits = static_cast<uint16_t *>(output.data);
  for (int64_t i = 0; i < output.count; ++i) {
    double v = double(wide.back()[size_t(i)]);
    bits[i] = output.storage == StorageType::BF16 ? bf16Bits(v) : f16Bits(v);
  }
  return Status::success();
}

namespace {

template <class F> bool runKind(Args &a) {
  switch (a.s.kind) {
#define EINRT_STEP(Kind, name, Payload, Rule, Runner)                                              \
  case StepKind::Kind:                                                                             \
    return ruleStep<F>(ValidationRule::Rule, a);
#define EINRT_UNARY(Kind, name, Types, expr)                                                       \
  case StepKind::Kind:                                                                             \
    return unaryStep<F, Kind##Op>(a);
#define EINRT_BINARY(Kind, name, Types, expr)                                                      \
  case StepKind::Kind:                                                                             \
    return binaryStep<F, Kind##Op>(a);
#define EINRT_COMPARE(Kind, name, expr)                                                            \
  case StepKind::Kind:                                                                             \
    return compareStep<F, Kind##Op>(a);
#define EINRT_REDUCE(Kind, name, reduceKind)                                                       \
  case StepKind::Kind:                                                                             \
    return reduceStep<F>(ReduceKind::reduceKind, a);
#include "runtime/core/StepKinds.def"
  }
  return false;
}

template <class F>
Status runOnStorage(const Step &s, const std::vector<DeviceSpan> &inputs,
                    const DeviceSpan &output) {
  Args a{s, inputs, output, Status::success()};
  if (runKind<F>(a))
    return Status::success();
  if (a.failure.ok())
    return Status::internal("unknown step kind");
  return a.failure;
}

} // namespace

template double loadElement<float>(const DeviceSpan &, int64_t);
template double loadElement<double>(const DeviceSpan &, int64_t);
template void storeElement<float>(const DeviceSpan &, int64_t, double);
template void storeElement<double>(const DeviceSpan &, int64_t, double);
template Status runReferenceStep<float>(const Step &, const std::vector<DeviceSpan> &,
                                        const DeviceSpan &);
template Status runReferenceStep<double>(const Step &, const std::vector<DeviceSpan> &,
                                         const DeviceSpan &);

} // namespace einrt
