//===- Program.h - The Program ABI: buffers and an ordered list of steps --===//
//
// What codegen/ produces and runtime/ executes. Plain C++ (no MLIR, no LLVM):
// a compiled executable carries this header's data and the runtime only.
//
// A Program is a list of typed buffers and a list of steps in execution
// order. Each step reads input buffers and writes one output buffer (a fused
// Kernel step may write more); the kinds, their payloads and their rules are
// one table, runtime/core/StepKinds.def. The primitive kinds map one to one onto
// the `ein` ops, so the reference executor has one kernel per kind; compiled
// backends add matrix-library (Matmul: a GemmDesc) and compiled-kernel
// (Kernel) steps.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_PROGRAM_H
#define EINC_RUNTIME_PROGRAM_H

#include "runtime/base/Status.h"
#include "runtime/core/DType.h"
#include "runtime/core/StepPayloads.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace einrt {

/// Why a buffer exists; arguments and results are listed in Program order.
enum class BufferRole : uint8_t {
  Input,       // data fed each step (tokens, targets)
  Param,       // model parameters
  OptState,    // optimizer state (moments, ...)
  Accumulator, // sums carried from call to call (gradient accumulation)
  Scalar,      // runtime scalars passed as arguments (step, lr)
  Constant,    // holds `constant` bytes, set once
  Temp,        // produced by a step
};

/// How a Param buffer is initialised (from the model's `~` initialiser).
struct Init {
  std::string kind = "zeros";         // normal | uniform | zeros | ones
  double mean = 0, std = 0, clip = 0; // normal; clip in standard deviations (0: none)
  double low = 0, high = 0;           // uniform
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("kind", self.kind);
    visit("mean", self.mean);
    visit("std", self.std);
    visit("clip", self.clip);
    visit("low", self.low);
    visit("high", self.high);
  }
};

struct Buffer {
  std::string name; // argument/result name, or "%N" for temporaries
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  BufferRole role = BufferRole::Temp;
  /// Constant buffers: the values in row-major order, or one value that
  /// fills the whole buffer.
  std::vector<double> constant;
  Init init; // Param buffers
  /// A view (the CPU backend's slices and the inputs of a concat written in
  /// place, codegen/CpuLowering.cpp): its elements are those of buffer
  /// `viewOf` from element `viewOffset` on, in its dtype; it has no storage
  /// of its own (runtime/core/Arena.h keeps the viewed buffer live as long as
  /// its views). A view is a temporary of a buffer that is no view; -1:
  /// the buffer is no view.
  int32_t viewOf = -1;
  int64_t viewOffset = 0;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("name", self.name);
    visit("dtype", self.dtype);
    visit("shape", self.shape);
    visit("role", self.role);
    visit("constant", self.constant);
    visit("init", self.init);
    visit("view_of", self.viewOf);
    visit("view_offset", self.viewOffset);
  }
  int64_t elementCount() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// One kind per primitive `ein` op, and the compiled backends' two:
/// generated from runtime/core/StepKinds.def, which says what each carries and
/// who runs it.
enum class StepKind : uint8_t {
#define EINRT_STEP(Kind, name, Payload, Rule, Runner) Kind,
#include "runtime/core/StepKinds.def"
};
constexpr uint8_t kStepKindCount = 0
#define EINRT_STEP(Kind, name, Payload, Rule, Runner) +1
#include "runtime/core/StepKinds.def"
    ;

/// The structural checks of Program::validate, one per shape of step
/// (StepKinds.def's Rule column).
enum class ValidationRule : uint8_t {
  Contract,
  Transpose,
  Reshape,
  Broadcast,
  Reduce,
  UnaryNumeric,
  UnaryFloat,
  BinaryNumeric,
  BinaryFloat,
  Compare,
  Select,
  Cast,
  StochasticRound,
  Quantize,
  Iota,
  Gather,
  ScatterAdd,
  Slice,
  Concat,
  Copy,
  Gemm,
  Launch,
};

/// Who runs a kind: the reference kernels (host devices), a device's matrix
/// library, or a device's compiled kernels.
enum class StepRunner : uint8_t { Reference, Gemm, Launch };

using StepPayload = std::variant<NoPayload, AxisList, ContractDims, IotaDim, GemmDesc, KernelLaunch,
                                 QuantizeSpec, SliceOffset>;

/// A kind's row of StepKinds.def.
struct StepKindInfo {
  const char *name;
  uint8_t payloadIndex; // the StepPayload alternative it carries
  ValidationRule rule;
  StepRunner runner;
};
/// Null for a value outside the table (e.g. from a corrupt file).
const StepKindInfo *stepKindInfo(StepKind k);
const char *stepKindName(StepKind k);
/// The kind named `name` (StepKinds.def's name column), if any.
bool stepKindByName(const char *name, StepKind &kind);
/// An empty payload of the type `kind` carries.
StepPayload defaultPayload(StepKind kind);

/// A compiled kernel: `args[i]` points to a variable holding the data pointer
/// of the step's i-th buffer (its inputs in order, then its outputs), and
/// the two entries after those to int64_t variables `begin` and `end`: the
/// call computes iterations [begin, end) of the kernel's parallel loop.
using KernelFn = void (*)(void **args);

/// A kernel and the trip count of its parallel loop: calls over disjoint
/// ranges covering [0, extent) may run at the same time and together
/// compute the whole step. An extent of 1 means one call does everything.
struct KernelEntry {
  KernelEntry(KernelFn fn = nullptr, int64_t extent = 1) : fn(fn), extent(extent) {}
  KernelFn fn;
  int64_t extent;
};

struct Step {
  StepKind kind = StepKind::Copy;
  std::vector<int32_t> inputs; // buffer indices
  int32_t output = -1;         // buffer index
  StepPayload payload;         // the type StepKinds.def gives the kind
  std::string note;            // the op and source location, for errors and traces

  Step() = default;
  Step(StepKind kind, std::vector<int32_t> inputs, int32_t output, StepPayload payload = {},
       std::string note = {})
      : kind(kind), inputs(std::move(inputs)), output(output), payload(std::move(payload)),
        note(std::move(note)) {}

  /// The payload as `P` (validate() has checked the type).
  template <class P> const P &as() const { return std::get<P>(payload); }
  template <class P> P &as() { return std::get<P>(payload); }
  /// Every buffer the step writes: the output, then a kernel's extra outputs.
  std::vector<int32_t> outputs() const;

  /// `kind` comes before `payload`: a reader picks the payload's type from it.
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("kind", self.kind);
    visit("inputs", self.inputs);
    visit("output", self.output);
    visit("payload", self.payload);
    visit("note", self.note);
  }
};

struct Program {
  std::string name; // the function lowered, e.g. "forward", "train_step"
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<int32_t> arguments; // buffer indices, in function-argument order
  std::vector<int32_t> results;   // buffer indices, in function-result order
  std::vector<std::string> resultNames;

  /// Checks indices, shapes and dtypes of every step: Invalid with the
  /// first problem (so a corrupt Program is an error, never a crash).
  Status validate() const;

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("name", self.name);
    visit("buffers", self.buffers);
    visit("steps", self.steps);
    visit("arguments", self.arguments);
    visit("results", self.results);
    visit("result_names", self.resultNames);
  }
};

/// Member by member through the fields visitors, doubles bit for bit
/// (runtime/base/Fields.h's `identical`).
bool operator==(const Program &a, const Program &b);
inline bool operator!=(const Program &a, const Program &b) { return !(a == b); }

} // namespace einrt

#endif // EINC_RUNTIME_PROGRAM_H
