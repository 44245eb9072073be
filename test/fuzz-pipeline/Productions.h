//===- Productions.h - The expression productions, by file -----*- C++ -*-===//
//
// Each production makes a float tensor expression with exactly the axes it is
// asked for (in order), or declines (std::nullopt) when it cannot. The table
// that picks them is in ExprProductions.cpp; einops and composites (softmax,
// attention, gathers, functions, ...) are in CompositeProductions.cpp; views
// (pieces of unpackings, transposes, broadcasts) read by each kind of
// consumer in ViewProductions.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_FUZZ_PIPELINE_PRODUCTIONS_H
#define EINC_TEST_FUZZ_PIPELINE_PRODUCTIONS_H

#include "GeneratorCore.h"

namespace einc::pipelinefuzz {

/// `axes` without the entries of `drop`.
Axes without(const Axes &axes, const Axes &drop);
bool has(const Axes &axes, const std::string &a);
/// A random subset of `axes`, in random order.
Axes subset(Gen &g, const Axes &axes);
/// "\"lhs -> rhs\"": a pattern (composites written as groups, as a declared
/// shape spells them).
std::string quoted(const std::string &lhs, const std::string &rhs);

std::optional<Val> reduce(Gen &g, const Axes &want, int depth);
std::optional<Val> einsum(Gen &g, const Axes &want, int depth);
std::optional<Val> rearrange(Gen &g, const Axes &want, int depth);
std::optional<Val> repeat(Gen &g, const Axes &want, int depth);
std::optional<Val> stack(Gen &g, const Axes &want, int depth);
std::optional<Val> positions(Gen &g, const Axes &want, int depth);
std::optional<Val> softmax(Gen &g, const Axes &want, int depth);
std::optional<Val> causal(Gen &g, const Axes &want, int depth);
std::optional<Val> logSoftmax(Gen &g, const Axes &want, int depth);
std::optional<Val> where(Gen &g, const Axes &want, int depth);
std::optional<Val> attention(Gen &g, const Axes &want, int depth);
std::optional<Val> logsumexp(Gen &g, const Axes &want, int depth);
std::optional<Val> gather(Gen &g, const Axes &want, int depth);
std::optional<Val> fnCall(Gen &g, const Axes &want, int depth);
std::optional<Val> again(Gen &g, const Axes &want, int depth);
std::optional<Val> besideStatistic(Gen &g, const Axes &want, int depth);
/// A view (ViewProductions.cpp's table) read by a consumer (its other table).
std::optional<Val> viewRead(Gen &g, const Axes &want, int depth);

} // namespace einc::pipelinefuzz

#endif // EINC_TEST_FUZZ_PIPELINE_PRODUCTIONS_H
