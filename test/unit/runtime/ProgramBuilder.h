//===- ProgramBuilder.h - Small Programs for the runtime tests ------------===//
#ifndef EINC_TEST_UNIT_RUNTIME_PROGRAMBUILDER_H
#define EINC_TEST_UNIT_RUNTIME_PROGRAMBUILDER_H

#include "runtime/Program.h"

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
  int32_t step(StepKind k, std::vector<int32_t> inputs, DType t, std::vector<int64_t> shape,
               std::vector<std::vector<int64_t>> lists = {}, int64_t scalar = 0,
               std::string note = "") {
    int32_t out = buffer(t, std::move(shape), BufferRole::Temp);
    Step s;
    s.kind = k;
    s.inputs = std::move(inputs);
    s.output = out;
    s.lists = std::move(lists);
    s.scalar = scalar;
    s.note = note.empty() ? std::string("test ") + stepKindName(k) : note;
    p.steps.push_back(s);
    return out;
  }
  void result(int32_t b, std::string name = "") {
    p.results.push_back(b);
    p.resultNames.push_back(name.empty() ? "r" + std::to_string(p.results.size() - 1) : name);
  }
};

} // namespace test
} // namespace einrt

#endif
