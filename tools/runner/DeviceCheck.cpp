//===- DeviceCheck.cpp - `check`: every kernel and GEMM on a device vs the CPU ===//
//
// `NAME check [--backend cuda|cpu]`: for every distinct Kernel and Matmul
// step of the bundle's Programs, the step alone — a Program of its buffers
// and that one step — runs on the reference device (the CPU device with the
// linked kernels, one thread) and on the device under test from the same
// inputs, and the results are held against each other under CheckCompare.h's
// bounds. The inputs are the values the step sees in a whole run of its
// Program on the reference device (params from their initialisers, seeded
// random inputs with ids below the vocab, step 1): every index in range,
// every magnitude the model's own. Each step is then timed on the device
// under test (the step repeated until a run takes about a millisecond,
// median of --repeat runs), and each function run whole there (median of
// --repeat runs, then once per step with profiling) for the time per kernel
// class beside the report's prediction of @train_step. Output: a Markdown
// table on stdout and, with --json FILE, the same as JSON. Exit status 1
// when a step is beyond its bound or fails.
//
//===----------------------------------------------------------------------===//
#include "CheckCompare.h"
#include "DeviceCheckReport.h"
#include "Runner.h"

#include "runtime/base/StrictJson.h"
#include "runtime/core/Init.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

namespace einc::runner {
namespace {

using Clock = std::chrono::steady_clock;

/// A timed run of one step lasts about this long (the step repeated up to
/// kMaxCopies times): launch and synchronisation costs a few microseconds,
/// which would swamp a small kernel timed alone.
constexpr double kTargetSeconds = 1e-3;
constexpr int kMaxCopies = 256;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The report's op kinds, for a step: contractions (Matmul), reductions,
/// elementwise kernels (fused ones too) and data movement (the rest, and
/// every step a device copies or the reference kernels run).
std::string stepClass(const einrt::Step &s) {
  if (s.kind == einrt::StepKind::Matmul)
    return "contraction";
  if (s.kind != einrt::StepKind::Kernel)
    return "data";
  if (s.note.rfind("fused", 0) == 0)
    return "elementwise";
  if (s.note.rfind("rows", 0) == 0) // a row's chain with its reductions: softmax, layernorm
    return "reduction";
  std::string op = s.note.substr(0, s.note.find(' '));
  if (op == "ein.reduce")
    return "reduction";
  static const std::set<std::string> data = {"ein.transpose", "ein.broadcast",   "ein.reshape",
                                             "ein.gather",    "ein.scatter_add", "ein.iota"};
  return data.count(op) ? "data" : "elementwise";
}

/// What makes two steps the same computation: kind, payload and the types
/// and shapes of their buffers.
std::string stepKey(const einrt::Program &p, const einrt::Step &s) {
  std::string key = einrt::stepKindName(s.kind);
  if (s.kind == einrt::StepKind::Kernel) {
    key += " " + std::to_string(s.as<einrt::KernelLaunch>().kernel);
  } else if (s.kind == einrt::StepKind::Matmul) {
    const auto &g = s.as<einrt::GemmDesc>();
    for (int64_t v : {int64_t(g.a), int64_t(g.b), int64_t(g.c), int64_t(g.accumulate), g.batch, g.m,
                      g.n, g.k, int64_t(g.transA), int64_t(g.transB), g.lda, g.ldb, g.ldc,
                      g.strideA, g.strideB, g.strideC, int64_t(g.epilogue)})
      key += " " + std::to_string(v);
    key += " post " + std::to_string(g.post.kernel) + " " + std::to_string(g.post.library);
    for (const einrt::GemmLoop &l : g.outer)
      key += " (" + std::to_string(l.count) + " " + std::to_string(l.strideA) + " " +
             std::to_string(l.strideB) + " " + std::to_string(l.strideC) + ")";
  }
  std::vector<int32_t> buffers = s.inputs;
  for (int32_t b : s.outputs())
    buffers.push_back(b);
  for (int32_t b : buffers) {
    const einrt::Buffer &buf = p.buffers[size_t(b)];
    key += std::string(" ") + einrt::dtypeName(buf.dtype) + "[";
    for (int64_t d : buf.shape)
      key += std::to_string(d) + ",";
    key += "]";
  }
  return key;
}

bool accumulates(const einrt::Step &s) {
  return s.kind == einrt::StepKind::Matmul &&
         s.as<einrt::GemmDesc>().epilogue == einrt::GemmEpilogue::Accumulate;
}

/// The Program of step `s` of `p` alone, `copies` times over: its inputs
/// as arguments (constants stay constants), its outputs as results (an
/// accumulating GEMM's C an argument too, since it is read). A view (a
/// slice's buffer, a concat's part: Buffer::viewOf) has storage of its own
/// there, since the buffer it views is not in that Program; its values are
/// the view's either way. `source[i]` is new buffer i's index in `p`.
einrt::Program stepProgram(const einrt::Program &p, const einrt::Step &s, int copies,
                           std::vector<int32_t> &source) {
  einrt::Program out;
  out.name = p.name + ".step";
  std::map<int32_t, int32_t> index;
  auto add = [&](int32_t b, einrt::BufferRole role) {
    auto it = index.find(b);
    if (it != index.end())
      return it->second;
    einrt::Buffer buf = p.buffers[size_t(b)];
    buf.role = buf.role == einrt::BufferRole::Constant ? buf.role : role;
    buf.init = {};
    buf.viewOf = -1;
    buf.viewOffset = 0;
    out.buffers.push_back(std::move(buf));
    source.push_back(b);
    int32_t n = int32_t(out.buffers.size() - 1);
    index[b] = n;
    if (out.buffers.back().role != einrt::BufferRole::Constant &&
        out.buffers.back().role != einrt::BufferRole::Temp)
      out.arguments.push_back(n);
    return n;
  };
  einrt::Step step = s;
  for (int32_t &b : step.inputs)
    b = add(b, einrt::BufferRole::Input);
  step.output =
      add(s.output, accumulates(s) ? einrt::BufferRole::Accumulator : einrt::BufferRole::Temp);
  if (auto *k = std::get_if<einrt::KernelLaunch>(&step.payload))
    for (int32_t &b : k->extraOutputs)
      b = add(b, einrt::BufferRole::Temp);
  if (auto *g = std::get_if<einrt::GemmDesc>(&step.payload)) {
    // A GEMM's epilogue names its operands among the step's inputs and C,
    // and writes the step's outputs after C.
    einrt::GemmPost &post = g->post;
    for (int32_t &b : post.outputs)
      b = add(b, einrt::BufferRole::Temp);
    auto renumber = [&](int32_t &b) { b = b < 0 ? b : index.at(b); };
    for (int32_t &b : post.operands)
      renumber(b);
    for (int32_t *b : {&post.residual, &post.bias, &post.aux, &post.result})
      renumber(*b);
  }
  for (int32_t b : step.outputs()) {
    out.results.push_back(b);
    out.resultNames.push_back(out.buffers[size_t(b)].name);
  }
  out.steps.assign(size_t(std::max(copies, 1)), step);
  return out;
}

/// Params from their initialisers, random inputs (ids below the vocab),
/// `step` 1 and `lr` 1e-3, any other scalar 1: what a first training step
/// sees.
einrt::Status fillArguments(einrt::Executor &ex, const einrt::ModelBundle &bundle, uint64_t seed) {
  int32_t vocab = int32_t(std::max<int64_t>(bundle.vocab(), 1));
  EINRT_TRY(einrt::initParams(ex, seed));
  EINRT_TRY(einrt::fillRandomInputs(ex, seed + 1, vocab));
  const einrt::Program &p = ex.program();
  for (int32_t a : p.arguments) {
    const einrt::Buffer &b = p.buffers[size_t(a)];
    if (b.role != einrt::BufferRole::Scalar)
      continue;
    std::vector<double> v(size_t(b.elementCount()), b.name == "lr" ? 1e-3 : 1.0);
    EINRT_TRY(ex.write(size_t(a), v.data(), v.size()));
  }
  return einrt::Status();
}

/// What `values` (a whole run's executor) holds in the source buffers of
/// `program`'s arguments, in argument order: copied out once per step.
einrt::Expected<std::vector<einrt::TensorData>> argumentValues(const einrt::Program &program,
                                                               const std::vector<int32_t> &source,
                                                               const einrt::Executor &values) {
  std::vector<einrt::TensorData> out;
  for (int32_t a : program.arguments) {
    auto value = values.exportBuffer(size_t(source[size_t(a)]));
    if (!value.ok())
      return value.takeStatus();
    out.push_back(value.take());
  }
  return out;
}

/// An executor of `program` on `device` with `args` in its arguments (their
/// absolute values with `absolute`).
einrt::Expected<einrt::Executor> loadStep(const einrt::Program &program,
                                          const std::vector<einrt::TensorData> &args,
                                          const std::shared_ptr<einrt::Device> &device,
                                          bool absolute) {
  auto ex = einrt::Executor::create(program, device);
  if (!ex.ok())
    return ex;
  for (size_t i = 0; i < program.arguments.size(); ++i)
    EINRT_TRY(ex->importBuffer(size_t(program.arguments[i]),
                               absolute ? runner::absolute(args[i]) : args[i]));
  return ex;
}

/// Every result of `ex` (run).
einrt::Expected<std::vector<einrt::TensorData>> results(const einrt::Executor &ex) {
  std::vector<einrt::TensorData> out;
  for (int32_t r : ex.program().results) {
    auto value = ex.exportBuffer(size_t(r));
    if (!value.ok())
      return value.takeStatus();
    out.push_back(value.take());
  }
  return out;
}

/// A fresh executor of `program` on `device` with `args`, run once, and its
/// results.
einrt::Expected<std::vector<einrt::TensorData>>
runStep(const einrt::Program &program, const std::vector<einrt::TensorData> &args,
        const std::shared_ptr<einrt::Device> &device, bool absolute,
        std::optional<einrt::Executor> *keep = nullptr) {
  auto ex = loadStep(program, args, device, absolute);
  if (!ex.ok())
    return ex.takeStatus();
  EINRT_TRY(ex->run());
  auto out = results(*ex);
  if (keep && out.ok())
    *keep = ex.take();
  return out;
}

/// Seconds of one run of `ex` (already run once), as the median of
/// `repeat` runs.
einrt::Expected<double> timeRuns(einrt::Executor &ex, int repeat) {
  std::vector<double> samples;
  for (int i = 0; i < repeat; ++i) {
    Clock::time_point start = Clock::now();
    EINRT_TRY(ex.run());
    samples.push_back(since(start));
  }
  return median(samples);
}

class Checker {
public:
  Checker(const RunContext &context, const RunOptions &o, const einrt::ModelBundle &bundle,
          Loaded &reference, Loaded &tested, bool exact)
      : context(context), o(o), bundle(bundle), reference(reference), tested(tested), exact(exact) {
    // The rendered CUDA kernels' entries and launch kinds name the steps
    // (and set their bounds: CheckCompare.h), when the bundle has them.
    if (const std::vector<uint8_t> *section = bundle.kernelSection("cuda"))
      if (auto decoded = einrt::decodeCudaKernelBundle(*section); decoded.ok())
        cuda = decoded.take();
    // The check of the check (test/compile): EINC_CHECK_PERTURB=N flips the
    // last bit of step N-1's tested result, which must then be reported.
    if (const char *v = std::getenv("EINC_CHECK_PERTURB"))
      perturb = std::atoll(v);
  }

  CheckResult run(const std::vector<const einrt::BundledProgram *> &programs);

private:
  void checkFunction(const einrt::Program &p, CheckResult &out);
  void checkStep(const einrt::Program &p, size_t index, const einrt::Executor &values,
                 StepResult &r);
  void timeStep(const einrt::Program &p, const einrt::Step &s,
                const std::vector<einrt::TensorData> &args, std::optional<einrt::Executor> &ex,
                StepResult &r);
  void profileFunction(const einrt::Program &p, FunctionResult &f);
  void progress(const std::string &line) const {
    std::cerr << context.tool << " check: " << line << std::endl;
  }

  const RunContext &context;
  const RunOptions &o;
  const einrt::ModelBundle &bundle;
  std::optional<einrt::CudaKernelBundle> cuda;
  Loaded &reference, &tested;
  bool exact;
  int64_t perturb = 0;
  std::map<std::string, size_t> seen; // step key -> index in CheckResult::steps
};

CheckResult Checker::run(const std::vector<const einrt::BundledProgram *> &programs) {
  CheckResult out;
  for (const einrt::BundledProgram *bp : programs) {
    FunctionResult f;
    f.name = bp->program.name;
    out.functions.push_back(f);
    Clock::time_point start = Clock::now();
    if (!o.checkNoCompare)
      checkFunction(bp->program, out);
    if (o.checkRepeat > 0)
      profileFunction(bp->program, out.functions.back());
    progress("@" + f.name + " done in " + fixed(since(start), 1) + " s");
  }
  return out;
}

void Checker::checkFunction(const einrt::Program &p, CheckResult &out) {
  FunctionResult &f = out.functions.back();
  // The whole run on the reference device, every buffer kept.
  auto values = einrt::Executor::create(p, reference.device, /*useArena=*/false);
  einrt::Status ran = values.ok() ? fillArguments(*values, bundle, o.seed) : values.status();
  if (ran.ok())
    ran = values->run();
  if (!ran.ok()) {
    f.error = "the reference run failed: " + ran.message();
    progress("@" + p.name + ": " + f.error);
    return;
  }
  size_t fresh = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const einrt::Step &s = p.steps[i];
    if (s.kind != einrt::StepKind::Kernel && s.kind != einrt::StepKind::Matmul)
      continue;
    std::string key = stepKey(p, s);
    if (auto it = seen.find(key); it != seen.end()) {
      ++out.steps[it->second].occurrences;
      continue;
    }
    seen[key] = out.steps.size();
    out.steps.emplace_back();
    StepResult &r = out.steps.back();
    r.function = p.name;
    r.index = int64_t(i);
    checkStep(p, i, *values, r);
    ++fresh;
  }
  progress("@" + p.name + ": " + std::to_string(fresh) + " new distinct steps compared");
}

void Checker::checkStep(const einrt::Program &p, size_t index, const einrt::Executor &values,
                        StepResult &r) {
  const einrt::Step &s = p.steps[index];
  r.note = s.note;
  r.cls = stepClass(s);
  const einrt::CudaKernelInfo *info = nullptr;
  if (s.kind == einrt::StepKind::Kernel) {
    int64_t k = s.as<einrt::KernelLaunch>().kernel;
    r.kernel = k;
    if (cuda && k >= 0 && k < int64_t(cuda->kernels.size())) {
      info = &cuda->kernels[size_t(k)];
      r.what = info->entry;
      r.launch = einrt::cudaLaunchKindName(info->kind);
    } else {
      r.what = "kernel " + std::to_string(k);
    }
  } else {
    const auto &g = s.as<einrt::GemmDesc>();
    r.what = "gemm " + std::to_string(g.matrices()) + "x" + std::to_string(g.m) + "x" +
             std::to_string(g.n) + "x" + std::to_string(g.k) + (g.transA ? " Aᵀ" : "") +
             (g.transB ? " Bᵀ" : "") + (accumulates(s) ? " +=" : "");
    r.flops = g.flops();
  }
  std::set<int32_t> touched(s.inputs.begin(), s.inputs.end());
  for (int32_t b : s.outputs())
    touched.insert(b);
  for (int32_t b : touched)
    r.bytes += p.buffers[size_t(b)].elementCount() * einrt::dtypeSize(p.buffers[size_t(b)].dtype);
  if (accumulates(s)) // C is read as well as written
    r.bytes += p.buffers[size_t(s.output)].elementCount() *
               einrt::dtypeSize(p.buffers[size_t(s.output)].dtype);
  const einrt::Buffer &out = p.buffers[size_t(s.output)];
  r.result = std::string(einrt::dtypeName(out.dtype)) + "[";
  for (size_t d = 0; d < out.shape.size(); ++d)
    r.result += (d ? "x" : "") + std::to_string(out.shape[d]);
  r.result += "]";
  r.rule = ruleFor(s, p, info, exact);

  std::vector<int32_t> source;
  einrt::Program one = stepProgram(p, s, 1, source);
  auto arguments = argumentValues(one, source, values);
  if (!arguments.ok()) {
    r.error = "the reference run's values: " + arguments.status().message();
    return;
  }
  const std::vector<einrt::TensorData> &args = *arguments;
  auto wanted = runStep(one, args, reference.device, false);
  if (!wanted.ok()) {
    r.error = "on the reference device: " + wanted.status().message();
    return;
  }
  std::optional<einrt::Executor> test;
  auto tried = runStep(one, args, tested.device, false, &test);
  if (!tried.ok()) {
    r.error = "on " + tested.device->name() + ": " + tried.status().message();
    return;
  }
  std::vector<einrt::TensorData> &want = *wanted, &got = *tried, magnitude;
  if (perturb == int64_t(index) + 1 && !got.empty() && !got[0].bytes.empty())
    got[0].bytes[got[0].bytes.size() - 1] ^= 0x01; // the check of the check: one element off
  if (r.rule.kind == BoundKind::Gemm) {            // |A|·|B| (+ |C|) on the reference device
    auto abs = runStep(one, args, reference.device, true);
    if (!abs.ok()) {
      r.error = "the |A|·|B| product: " + abs.status().message();
      return;
    }
    magnitude = abs.take();
  }
  r.compared = true;
  for (size_t t = 0; t < want.size() && t < got.size(); ++t) {
    std::vector<double> scale;
    if (r.rule.kind == BoundKind::RowSum) {
      if (auto in = values.exportBuffer(size_t(s.inputs[0])); in.ok())
        scale = rowMagnitudes(*in, want[t]);
    } else if (r.rule.kind == BoundKind::Gemm && !magnitude.empty()) {
      // An epilogue's results (m x n like C) scale with C's |A|·|B|.
      scale = magnitude[0].toDoubles();
    }
    Comparison c = compareResults(want[t], got[t], r.rule, scale);
    r.elements += c.elements;
    r.differing += c.differing;
    r.outside += c.outside;
    r.maxError = std::max(r.maxError, c.maxError);
    r.worstRatio = std::max(r.worstRatio, c.worstRatio);
    if (r.problem.empty() && !c.problem.empty())
      r.problem = (want.size() > 1 ? "result " + std::to_string(t) + ": " : "") + c.problem;
  }
  timeStep(p, s, args, test, r);
}

void Checker::timeStep(const einrt::Program &p, const einrt::Step &s,
                       const std::vector<einrt::TensorData> &args,
                       std::optional<einrt::Executor> &ex, StepResult &r) {
  if (o.checkRepeat <= 0)
    return;
  auto failed = [&](const einrt::Status &s) {
    r.error = "timing on " + tested.device->name() + ": " + s.message();
  };
  // The compared executor (run once) again: a second run (the cuda device
  // records it as a graph), then a third timed to size the repetition.
  if (einrt::Status s = ex->run(); !s.ok())
    return failed(s);
  einrt::Expected<double> single = timeRuns(*ex, 1);
  if (!single.ok())
    return failed(single.status());
  int copies =
      int(std::clamp(std::ceil(kTargetSeconds / std::max(*single, 1e-7)), 1.0, double(kMaxCopies)));
  if (copies > 1) {
    ex.reset();
    std::vector<int32_t> source;
    einrt::Program many = stepProgram(p, s, copies, source);
    auto loaded = loadStep(many, args, tested.device, false);
    if (!loaded.ok())
      return failed(loaded.status());
    ex = loaded.take();
    for (int warm = 0; warm < 2; ++warm)
      if (einrt::Status s = ex->run(); !s.ok())
        return failed(s);
  }
  einrt::Expected<double> seconds = timeRuns(*ex, int(o.checkRepeat));
  if (!seconds.ok())
    return failed(seconds.status());
  r.copies = copies;
  r.seconds = *seconds / copies;
}

void Checker::profileFunction(const einrt::Program &p, FunctionResult &f) {
  auto failed = [&](const char *what, const einrt::Status &s) {
    f.error += (f.error.empty() ? "" : "; ") + std::string(what) + s.message();
  };
  auto ex = einrt::Executor::create(p, tested.device);
  if (!ex.ok())
    return failed("the whole run: ", ex.status());
  einrt::Status ran = fillArguments(*ex, bundle, o.seed);
  for (int warm = 0; warm < 2 && ran.ok(); ++warm)
    ran = ex->run();
  if (!ran.ok())
    return failed("the whole run: ", ran);
  einrt::Expected<double> runSeconds = timeRuns(*ex, int(o.checkRepeat));
  if (!runSeconds.ok())
    return failed("the whole run: ", runSeconds.status());
  f.runSeconds = *runSeconds;
  ex->setProfiling(true);
  ex->resetProfile();
  for (int i = 0; i < o.checkRepeat; ++i)
    if (einrt::Status s = ex->run(); !s.ok())
      return failed("the profiled run: ", s);
  const std::vector<double> &seconds = ex->stepSeconds();
  for (size_t i = 0; i < p.steps.size() && i < seconds.size(); ++i) {
    double t = seconds[i] / double(std::max<int64_t>(ex->profiledRuns(), 1));
    f.byClass[stepClass(p.steps[i])] += t;
    f.profiledSeconds += t;
    ++f.stepsByClass[stepClass(p.steps[i])];
  }
  f.steps = int64_t(p.steps.size());
}

} // namespace

int check(const RunContext &context, const RunOptions &o, const einrt::ModelBundle &bundle,
          const Backend &referenceBackend, const Backend &testedBackend) {
  auto fail = [&](const std::string &message) { return context.fail("check", message); };
  std::vector<const einrt::BundledProgram *> programs;
  for (const einrt::BundledProgram &bp : bundle.programs) {
    bool wanted = o.checkFunctions.empty() ||
                  std::find(o.checkFunctions.begin(), o.checkFunctions.end(), bp.program.name) !=
                      o.checkFunctions.end();
    if (wanted && bp.backend == referenceBackend.kind->programLowering())
      programs.push_back(&bp);
  }
  for (const std::string &name : o.checkFunctions)
    if (!bundle.find(name))
      return fail("the compiled model has no @" + name);
  if (programs.empty())
    return fail("no Program lowered for the CPU backend to check");

  std::string error;
  Loaded reference, tested;
  if (einrt::Status loaded = load(bundle, {}, referenceBackend, reference); !loaded.ok())
    return fail(loaded.message());
  if (einrt::Status loaded = load(bundle, {}, testedBackend, tested); !loaded.ok())
    return fail(loaded.message());
  bool exact = testedBackend.kind->exactAsHostKernels();
  CheckSummary summary;
  summary.tool = context.tool;
  summary.model = bundle.sourceName;
  summary.tested = tested.device->name();
  summary.testedDescription =
      exact ? "cpu, " + std::to_string(tested.threads) + " threads" : tested.description;
  summary.reference = "cpu, " + std::to_string(reference.threads) + " thread" +
                      (reference.threads == 1 ? "" : "s") + ", the linked kernels";
  if (!bundle.reportJson.empty()) {
    auto report = einrt::parseStrictJson(bundle.reportJson.data(), bundle.reportJson.size());
    if (report.ok())
      summary.prediction = predictionOf(*report);
  }

  Checker checker(context, o, bundle, reference, tested, exact);
  CheckResult result = checker.run(programs);
  if (o.copyMiB > 0)
    result.copy =
        measureCopy(*tested.device, o.copyMiB << 20, int(std::max<int64_t>(o.checkRepeat, 1)));
  writeMarkdown(std::cout, summary, result);
  if (!o.checkJson.empty())
    if (einrt::Status written = writeJson(o.checkJson, summary, result); !written.ok())
      return fail(written.message());
  return result.passed() ? 0 : 1;
}

} // namespace einc::runner
