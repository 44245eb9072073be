//===- StepCheck.h - One step against its kind's validation rule -*- C++ -*-===//
//
// The per-step part of Program::validate (runtime/core/ProgramValidate.cpp):
// a step checked against its kind's rule (StepKinds.def's Rule column).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_STEPCHECK_H
#define EINC_RUNTIME_STEPCHECK_H

#include "runtime/core/Program.h"

#include <string>

namespace einrt {

/// "" when `s` (a step of `p` whose buffer indices are in range) keeps its
/// kind's rule: the payload's type, the arity, the element types and the
/// shapes its kernel reads and writes; else the problem, without the step's
/// prefix (validate adds it).
std::string checkStepRule(const Program &p, const Step &s);

} // namespace einrt

#endif // EINC_RUNTIME_STEPCHECK_H
