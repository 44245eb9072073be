//===- Program.cpp - Program ABI helpers: dtypes and step-kind names -------===//
//
// Program::validate() is in ProgramValidate.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/Program.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace einrt {

int64_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F64:
    return 8;
  case DType::I1:
    return 1;
  }
  return 0;
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I1:
    return "i1";
  }
  return "?";
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::BF16 || t == DType::F16 || t == DType::F64;
}

const char *stepKindName(StepKind k) {
  switch (k) {
  case StepKind::Contract:
    return "contract";
  case StepKind::Transpose:
    return "transpose";
  case StepKind::Reshape:
    return "reshape";
  case StepKind::Broadcast:
    return "broadcast";
  case StepKind::ReduceSum:
    return "reduce_sum";
  case StepKind::ReduceMax:
    return "reduce_max";
  case StepKind::ReduceMin:
    return "reduce_min";
  case StepKind::Neg:
    return "neg";
  case StepKind::Exp:
    return "exp";
  case StepKind::Log:
    return "log";
  case StepKind::Tanh:
    return "tanh";
  case StepKind::Sqrt:
    return "sqrt";
  case StepKind::Rsqrt:
    return "rsqrt";
  case StepKind::Abs:
    return "abs";
  case StepKind::Add:
    return "add";
  case StepKind::Sub:
    return "sub";
  case StepKind::Mul:
    return "mul";
  case StepKind::Div:
    return "div";
  case StepKind::Max:
    return "max";
  case StepKind::Min:
    return "min";
  case StepKind::Pow:
    return "pow";
  case StepKind::CmpEq:
    return "cmp_eq";
  case StepKind::CmpNe:
    return "cmp_ne";
  case StepKind::CmpLt:
    return "cmp_lt";
  case StepKind::CmpLe:
    return "cmp_le";
  case StepKind::CmpGt:
    return "cmp_gt";
  case StepKind::CmpGe:
    return "cmp_ge";
  case StepKind::Select:
    return "select";
  case StepKind::Cast:
    return "cast";
  case StepKind::Iota:
    return "iota";
  case StepKind::Gather:
    return "gather";
  case StepKind::ScatterAdd:
    return "scatter_add";
  case StepKind::Copy:
    return "copy";
  case StepKind::Matmul:
    return "matmul";
  case StepKind::Kernel:
    return "kernel";
  }
  return "unknown";
}

} // namespace einrt
