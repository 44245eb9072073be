//===- ProgramGenerator.h - Random valid .ein programs ----------*- C++ -*-===//
//
// The pipeline fuzzer's generator: from a seed, the source text of a random
// model that the front end must accept (einc check). The program is built
// from tables of productions (ExprProductions.cpp: tensor expressions;
// StatementProductions.cpp: statements, loops, functions, losses, the
// `train { }` section) over small dims (sizes 1..5), tracking each value's
// axis names and an interval holding its values, so that log, sqrt, rsqrt
// and division only see positive operands, exp only bounded ones, and the
// gradients stay finite.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_PROGRAMGENERATOR_H
#define EINC_TEST_FUZZ_PIPELINE_PROGRAMGENERATOR_H

#include <cstdint>
#include <set>
#include <string>

namespace einc::pipelinefuzz {

struct GeneratedProgram {
  std::string text;
  /// The productions the program used ("einsum", "softmax", "for", ...).
  std::set<std::string> features;
};

GeneratedProgram generateProgram(uint64_t seed);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_PROGRAMGENERATOR_H
