//===- ProgramBuilder.h - Small Programs for the runtime tests ------------===//
#ifndef EINC_TEST_UNIT_RUNTIME_PROGRAMBUILDER_H
#define EINC_TEST_UNIT_RUNTIME_PROGRAMBUILDER_H

#include "runtime/core/Executor.h"
#include "runtime/core/Program.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace einrt {
namespace test {

struct ProgramBuilder {
  Program p;

  int32_t buffer(DType t, std::vector<int64_t> shape, BufferRole role, std::string name = "") {
    Buffer b;
    b.name = name.empty() ? "%" + std::to_string(p.buffers.size()) : name;
    b.dtype = t;
    b.shape = std::move(shape);
    b.role = role;
    p.buffers.push_back(b);
    return int32_t(p.buffers.size() - 1);
  }
  /// An Input argument.
  int32_t arg(DType t, std::vector<int64_t> shape, std::string name = "") {
    int32_t b = buffer(t, std::move(shape), BufferRole::Input,
                       name.empty() ? "arg" + std::to_string(p.arguments.size()) : name);
    p.arguments.push_back(b);
    return b;
  }
  int32_t constant(DType t, std::vector<int64_t> shape, std::vector<double> values) {
    int32_t b = buffer(t, std::move(shape), BufferRole::Constant);
    p.buffers[b].constant = std::move(values);
    return b;
  }
  /// Appends a step writing a fresh Temp buffer; returns the buffer.
  int32_t op(StepKind k, std::vector<int32_t> inputs, DType t, std::vector<int64_t> shape,
             StepPayload payload, std::string note = "") {
    int32_t out = buffer(t, std::move(shape), BufferRole::Temp);
    p.steps.emplace_back(k, std::move(inputs), out, std::move(payload),
                         note.empty() ? std::string("test ") + stepKindName(k) : note);
    return out;
  }
  /// The same with the payload in shorthand: `lists` are its integer lists
  /// in field order (an axis list; contraction dims; a GEMM plan {batch, M,
  /// N, K, transA, transB, lda, ldb, ldc, strideA, strideB, strideC} and
  /// optional outer loops {count, strideA, strideB, strideC}...), `scalar`
  /// an iota's dimension, a kernel's index or a slice's offset.
  int32_t step(StepKind k, std::vector<int32_t> inputs, DType t, std::vector<int64_t> shape,
               std::vector<std::vector<int64_t>> lists = {}, int64_t scalar = 0,
               std::string note = "") {
    StepPayload payload = payloadOf(k, lists, scalar);
    if (auto *g = std::get_if<GemmDesc>(&payload); g && inputs.size() == 2) {
      g->a = p.buffers[inputs[0]].dtype; // the shorthand's types are the buffers'
      g->b = p.buffers[inputs[1]].dtype;
      g->c = t;
    }
    return op(k, std::move(inputs), t, std::move(shape), std::move(payload), std::move(note));
  }
  void result(int32_t b, std::string name = "") {
    p.results.push_back(b);
    p.resultNames.push_back(name.empty() ? "r" + std::to_string(p.results.size() - 1) : name);
  }

  static GemmDesc gemmOf(const std::vector<int64_t> &plan, const std::vector<int64_t> &loops = {}) {
    GemmDesc g;
    auto at = [&](size_t i) { return i < plan.size() ? plan[i] : 0; };
    g.batch = at(0), g.m = at(1), g.n = at(2), g.k = at(3);
    g.transA = at(4) != 0, g.transB = at(5) != 0;
    g.lda = at(6), g.ldb = at(7), g.ldc = at(8);
    g.strideA = at(9), g.strideB = at(10), g.strideC = at(11);
    for (size_t i = 0; i + 3 < loops.size(); i += 4)
      g.outer.push_back({loops[i], loops[i + 1], loops[i + 2], loops[i + 3]});
    return g;
  }

  static StepPayload payloadOf(StepKind k, const std::vector<std::vector<int64_t>> &lists,
                               int64_t scalar) {
    auto list = [&](size_t i) { return i < lists.size() ? lists[i] : std::vector<int64_t>{}; };
    StepPayload payload = defaultPayload(k);
    if (auto *a = std::get_if<AxisList>(&payload))
      a->axes = list(0);
    else if (auto *c = std::get_if<ContractDims>(&payload))
      *c = ContractDims{list(0), list(1), list(2), list(3)};
    else if (auto *i = std::get_if<IotaDim>(&payload))
      i->dimension = scalar;
    else if (auto *l = std::get_if<KernelLaunch>(&payload))
      l->kernel = scalar;
    else if (auto *o = std::get_if<SliceOffset>(&payload))
      o->offset = scalar;
    else if (std::holds_alternative<GemmDesc>(payload))
      payload = gemmOf(list(0), list(1));
    return payload;
  }
};

/// Buffer `b` of `ex` copied out (empty, with a test failure, on an error).
inline std::vector<double> valuesOf(const Executor &ex, size_t b) {
  Expected<std::vector<double>> v = ex.read(b);
  EINC_EXPECT_OK(v);
  return v.ok() ? v.take() : std::vector<double>{};
}

} // namespace test
} // namespace einrt

#endif
