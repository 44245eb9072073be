//===- SmallExamples.h - The examples at sizes a unit test runs -*- C++ -*-===//
//
// examples/mlp_lm.ein, examples/gpt.ein and examples/llama.ein with `--set` overrides small
// enough for a unit test to compile and run them many times (vocabulary 64,
// so random token ids below 64 are valid). One table for every suite that
// runs the models: the CPU lowering against the reference (cpu-unit), the
// kernel objects against the JIT (cpu-unit, whose JIT then finds the same
// kernels in its cache) and the cuBLASLt mapping (cuda-unit). A target using
// it defines EINC_SOURCE_DIR, the source tree's root.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_PIPELINE_SMALLEXAMPLES_H
#define EINC_TEST_UNIT_PIPELINE_SMALLEXAMPLES_H

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace einc::testing {

struct SmallExample {
  const char *file; // under examples/
  std::vector<std::pair<std::string, std::string>> overrides;
};

inline const std::vector<SmallExample> &smallExamples() {
  static const std::vector<SmallExample> models = {
      {"mlp_lm.ein", {{"batch", "8"}, {"hidden", "32"}, {"vocab", "64"}}},
      {"gpt.ein",
       {{"batch", "2"},
        {"ctx", "16"},
        {"vocab", "64"},
        {"layers", "2"},
        {"d", "32"},
        {"heads", "4"}}},
      {"llama.ein",
       {{"batch", "2"},
        {"ctx", "16"},
        {"vocab", "64"},
        {"layers", "2"},
        {"d", "32"},
        {"heads", "4"},
        {"kv_heads", "2"}}},
  };
  return models;
}

/// The text of examples/`name` ("" when it cannot be read).
inline std::string readExample(const std::string &name) {
  std::ifstream in(std::string(EINC_SOURCE_DIR) + "/examples/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace einc::testing

#endif
