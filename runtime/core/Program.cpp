//===- Program.cpp - Program ABI helpers: dtypes and step-kind names -------===//
//
// The step-kind table (StepKinds.def) as data, and Program equality;
// Program::validate() is in ProgramValidate.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Program.h"
#include "runtime/base/Fields.h"

#include <cstring>
#include <type_traits>

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

namespace {

/// The position of `T` among a variant's alternatives.
template <class T, class... Ts> constexpr uint8_t alternativeIndex(std::variant<Ts...> *) {
  constexpr bool matches[] = {std::is_same_v<T, Ts>...};
  for (uint8_t i = 0; i < sizeof...(Ts); ++i)
    if (matches[i])
      return i;
  return 255;
}
template <class T> constexpr uint8_t payloadIndex() {
  return alternativeIndex<T>(static_cast<StepPayload *>(nullptr));
}

constexpr StepKindInfo kKinds[] = {
#define EINRT_STEP(Kind, name, Payload, Rule, Runner)                                              \
  {name, payloadIndex<Payload>(), ValidationRule::Rule, StepRunner::Runner},
#include "runtime/core/StepKinds.def"
};
static_assert(sizeof(kKinds) / sizeof(kKinds[0]) == kStepKindCount);

} // namespace

const StepKindInfo *stepKindInfo(StepKind k) {
  return uint8_t(k) < kStepKindCount ? &kKinds[uint8_t(k)] : nullptr;
}

const char *stepKindName(StepKind k) {
  const StepKindInfo *info = stepKindInfo(k);
  return info ? info->name : "unknown";
}

bool stepKindByName(const char *name, StepKind &kind) {
  for (uint8_t k = 0; k < kStepKindCount; ++k)
    if (std::strcmp(kKinds[k].name, name) == 0) {
      kind = StepKind(k);
      return true;
    }
  return false;
}

StepPayload defaultPayload(StepKind kind) {
  switch (kind) {
#define EINRT_STEP(Kind, name, Payload, Rule, Runner)                                              \
  case StepKind::Kind:                                                                             \
    return Payload{};
#include "runtime/core/StepKinds.def"
  }
  return NoPayload{};
}

std::vector<int32_t> Step::outputs() const {
  std::vector<int32_t> all{output};
  if (const auto *launch = std::get_if<KernelLaunch>(&payload))
    all.insert(all.end(), launch->extraOutputs.begin(), launch->extraOutputs.end());
  if (const auto *gemm = std::get_if<GemmDesc>(&payload))
    all.insert(all.end(), gemm->post.outputs.begin(), gemm->post.outputs.end());
  return all;
}

bool operator==(const Program &a, const Program &b) { return identical(a, b); }

} // namespace einrt
