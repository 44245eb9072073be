//===- CheckCompare.cpp - How closely two devices must agree on one step --===//
#include "CheckCompare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace einc::runner {
namespace {

/// One ulp of a narrow float relative to its value (bf16: 8 significant
/// bits, f16: 11); 0 for the others.
double narrowUlp(einrt::DType t) {
  return t == einrt::DType::BF16 ? 0x1p-7 : t == einrt::DType::F16 ? 0x1p-10 : 0.0;
}

bool contains(const std::string &text, const char *word) {
  return text.find(word) != std::string::npos;
}

/// The ops whose CUDA functions (expf, logf, tanhf, powf, ...: 1 to 4 ulp)
/// are not the CPU kernels' polynomials: runtime/base/ElementwiseOps.def's Ulps
/// rows (exp, log, tanh, pow, ...).
bool transcendental(const std::string &note) {
  bool ulps = false;
#define EIN_ROUNDING_Exact(name)
#define EIN_ROUNDING_Ulps(name) ulps = ulps || contains(note, "ein." name);
#define EIN_UNARY_OP(Kind, name, Types, Rounding, Dsl, Ref, CudaF32, CudaI32, CpuF32, CpuI32)      \
  EIN_ROUNDING_##Rounding(name)
#define EIN_BINARY_OP(Kind, name, Types, Rounding, Ref, CudaF32, CudaI32, CpuF32, CpuI32)          \
  EIN_ROUNDING_##Rounding(name)
#include "runtime/base/ElementwiseOps.def"
#undef EIN_ROUNDING_Exact
#undef EIN_ROUNDING_Ulps
  return ulps;
}

/// Whether element `i` of both tensors holds the same bits.
bool sameBits(const einrt::TensorData &a, const einrt::TensorData &b, int64_t i, int64_t size) {
  return std::memcmp(a.bytes.data() + i * size, b.bytes.data() + i * size, size_t(size)) == 0;
}

std::string describe(int64_t i, double ref, double test, double allowed) {
  char text[200];
  std::snprintf(text, sizeof text, "element %lld: reference %.9g, tested %.9g (allowed %.3g)",
                (long long)i, ref, test, allowed);
  return text;
}

} // namespace

const char *boundKindName(BoundKind k) {
  switch (k) {
  case BoundKind::Exact:
    return "exact";
  case BoundKind::Transcendental:
    return "transcendental";
  case BoundKind::RowSum:
    return "row-sum";
  case BoundKind::Gemm:
    return "gemm";
  case BoundKind::Rows:
    return "rows";
  }
  return "?";
}

StepRule ruleFor(const einrt::Step &step, const einrt::Program &program,
                 const einrt::CudaKernelInfo *cudaKernel, bool exactDevice) {
  StepRule rule;
  rule.why = "bit for bit";
  if (exactDevice)
    return rule;
  if (step.kind == einrt::StepKind::Matmul) {
    const auto &g = step.as<einrt::GemmDesc>();
    rule.kind = BoundKind::Gemm;
    rule.k = g.k;
    rule.why = "2k·2^-24·|A||B| (k " + std::to_string(g.k) + ")";
    if (narrowUlp(g.c) > 0)
      rule.why += " + 1 " + std::string(einrt::dtypeName(g.c)) + " ulp";
    if (g.post.present()) {
      rule.epilogue = true;
      rule.why += ", epilogue";
    }
    return rule;
  }
  if (step.kind != einrt::StepKind::Kernel)
    return rule;
  const std::string &note = cudaKernel && !cudaKernel->note.empty() ? cudaKernel->note : step.note;
  // A row's chain fused whole (the CPU lowering's "rows N ops (...)"): no
  // per-output magnitude to scale a reassociated sum by, so one of the
  // result's scale. Not derived op by op: a bound to tighten once measured.
  if (step.note.rfind("rows ", 0) == 0 && contains(step.note, "ein.reduce")) {
    rule.kind = BoundKind::Rows;
    rule.why = std::string("row chain: 2^-18·max|y|") +
               (transcendental(note) ? " + 2e-6·max|y| (exp/log/tanh/pow)" : "");
    return rule;
  }
  if (transcendental(note)) {
    rule.kind = BoundKind::Transcendental;
    rule.why = "exp/log/tanh/pow: 2e-6·max|y| or 1 narrow ulp";
    return rule;
  }
  // A sum the rows reassociate: f32 result, a warp or a block per row.
  bool rows = cudaKernel && cudaKernel->kind != einrt::CudaLaunchKind::Elements;
  bool sum = cudaKernel && contains(cudaKernel->entry, "reduce_sum");
  if (rows && sum && step.output >= 0 &&
      program.buffers[size_t(step.output)].dtype == einrt::DType::F32) {
    rule.kind = BoundKind::RowSum;
    rule.why =
        std::string("f32 ") + einrt::cudaLaunchKindName(cudaKernel->kind) + " sum: 2^-20·Σ|x|";
  }
  return rule;
}

std::vector<double> rowMagnitudes(const einrt::TensorData &input, const einrt::TensorData &output) {
  int64_t n = output.elementCount(), total = input.elementCount();
  std::vector<double> out(size_t(n), 0.0);
  if (n == 0)
    return out;
  std::vector<double> x = input.toDoubles();
  int64_t length = total / n;
  const auto &is = input.shape, &os = output.shape;
  bool leadingKept = os.size() <= is.size() && std::equal(os.begin(), os.end(), is.begin());
  bool trailingKept = os.size() <= is.size() && std::equal(os.rbegin(), os.rend(), is.rbegin());
  // Each output i folds x[i*length + j] (trailing dims reduced) or
  // x[j*n + i] (leading ones); where the shapes do not say which, both
  // are summed and the larger kept (a bound, never tighter than the truth).
  bool tryRows = leadingKept || !trailingKept, tryColumns = trailingKept || !leadingKept;
  for (int64_t i = 0; i < n; ++i) {
    double rows = 0, columns = 0;
    for (int64_t j = 0; j < length; ++j) {
      if (tryRows)
        rows += std::fabs(x[size_t(i * length + j)]);
      if (tryColumns)
        columns += std::fabs(x[size_t(j * n + i)]);
    }
    out[size_t(i)] = std::max(rows, columns);
  }
  return out;
}

double maxMagnitude(const einrt::TensorData &t) {
  double m = 0;
  for (double v : t.toDoubles())
    if (std::isfinite(v))
      m = std::max(m, std::fabs(v));
  return m;
}

Comparison compareResults(const einrt::TensorData &reference, const einrt::TensorData &tested,
                          const StepRule &rule, const std::vector<double> &magnitudes) {
  Comparison c;
  c.elements = reference.elementCount();
  if (reference.dtype != tested.dtype || reference.shape != tested.shape ||
      reference.bytes.size() != tested.bytes.size()) {
    c.problem = "the results differ in type or shape";
    c.outside = c.elements;
    c.worstRatio = std::numeric_limits<double>::infinity();
    return c;
  }
  int64_t size = einrt::dtypeSize(reference.dtype);
  std::vector<double> ref = reference.toDoubles(), test = tested.toDoubles();
  double ulp = narrowUlp(reference.dtype);
  bool transcendentalSlack =
      rule.kind == BoundKind::Transcendental || rule.kind == BoundKind::Rows || rule.epilogue;
  double scale = transcendentalSlack ? std::max(1.0, maxMagnitude(reference)) : 0;
  // Gemm: each side within k·u·S of the exact sums (u = 2^-24); 1% over
  // for S itself being an f32 (or narrow) GEMM's result.
  double gemm = rule.kind == BoundKind::Gemm
                    ? 2.0 * double(rule.k) * 0x1p-24 * 1.01 * (rule.epilogue ? 1.2 : 1.0)
                    : 0;
  for (int64_t i = 0; i < c.elements; ++i) {
    double a = ref[size_t(i)], b = test[size_t(i)];
    if (sameBits(reference, tested, i, size))
      continue;
    if ((std::isnan(a) && std::isnan(b)) || a == b) { // NaN payloads, zero signs
      continue;
    }
    ++c.differing;
    double allowed = 0;
    switch (rule.kind) {
    case BoundKind::Exact:
      break;
    case BoundKind::Transcendental:
      allowed = ulp > 0 ? ulp * std::max(std::fabs(a), std::fabs(b)) : 2e-6 * scale;
      break;
    case BoundKind::RowSum:
      allowed = i < int64_t(magnitudes.size()) ? 0x1p-20 * magnitudes[size_t(i)] : 0;
      break;
    case BoundKind::Rows:
      allowed = (0x1p-18 + 2e-6) * scale + ulp * std::max(std::fabs(a), std::fabs(b));
      break;
    case BoundKind::Gemm:
      allowed = (i < int64_t(magnitudes.size()) ? gemm * magnitudes[size_t(i)] : 0) +
                ulp * std::max(std::fabs(a), std::fabs(b)) + (rule.epilogue ? 2e-6 * scale : 0);
      break;
    }
    double error = std::fabs(a - b);
    bool finite = std::isfinite(a) && std::isfinite(b);
    if (finite)
      c.maxError = std::max(c.maxError, error);
    double ratio = !finite       ? std::numeric_limits<double>::infinity()
                   : allowed > 0 ? error / allowed
                   : error > 0   ? std::numeric_limits<double>::infinity()
                                 : 0.0;
    c.worstRatio = std::max(c.worstRatio, ratio);
    if (!(finite && error <= allowed)) {
      if (c.outside++ == 0)
        c.problem = describe(i, a, b, allowed);
    }
  }
  return c;
}

einrt::TensorData absolute(const einrt::TensorData &t) {
  einrt::TensorData out = t;
  int64_t size = einrt::dtypeSize(t.dtype);
  if (!einrt::isFloat(t.dtype) || size < 2)
    return out;
  // Little-endian: the sign is the top bit of each element's last byte.
  for (size_t at = size_t(size - 1); at < out.bytes.size(); at += size_t(size))
    out.bytes[at] &= 0x7F;
  return out;
}

} // namespace einc::runner
