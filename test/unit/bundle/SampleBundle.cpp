//===- SampleBundle.cpp - Hand-built bundles and file surgery, for tests --===//
#include "SampleBundle.h"

#include "runtime/base/Crc32c.h"
#include "runtime/cuda/CudaKernels.h"
#include "test/unit/runtime/ProgramBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace einrt::test {

namespace {

Init normalInit(double mean, double std, double clip) {
  Init in;
  in.kind = "normal";
  in.mean = mean, in.std = std, in.clip = clip;
  return in;
}

} // namespace

Program everyKindProgram() {
  ProgramBuilder pb;
  pb.p.name = "everything";
  const std::vector<int64_t> xs{2, 3};
  int32_t x = pb.arg(DType::F32, xs, "x");
  int32_t ids = pb.arg(DType::I32, {2}, "ids");
  int32_t cond = pb.arg(DType::I1, xs, "mask");
  int32_t wide = pb.arg(DType::F64, xs, "wide");
  int32_t half = pb.arg(DType::F16, {2}, "half");
  int32_t brain = pb.arg(DType::BF16, {2}, "brain");
  int32_t wt = pb.arg(DType::F32, {4, 3}, "w_t");
  auto param = [&](std::vector<int64_t> shape, std::string name, Init init) {
    int32_t b = pb.buffer(DType::F32, std::move(shape), BufferRole::Param, std::move(name));
    pb.p.buffers[b].init = std::move(init);
    pb.p.arguments.push_back(b);
    return b;
  };
  int32_t w = param({3, 4}, "w", normalInit(0.25, 0.02, 2));
  Init uniform;
  uniform.kind = "uniform";
  uniform.low = -0.1, uniform.high = 0.3;
  int32_t table = param({5, 3}, "embed", uniform);
  Init ones;
  ones.kind = "ones";
  int32_t bias = param({4}, "bias", ones);
  int32_t moment = pb.buffer(DType::F32, {2, 4}, BufferRole::OptState, "w.m");
  pb.p.arguments.push_back(moment);
  int32_t lr = pb.buffer(DType::F32, {}, BufferRole::Scalar, "lr");
  pb.p.arguments.push_back(lr);
  const double inf = std::numeric_limits<double>::infinity();
  pb.constant(DType::F32, xs,
              {0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(), 4.9e-324});
  pb.constant(DType::F64, {7}, {0.1});
  pb.constant(DType::I32, {2}, {1, -2});
  pb.constant(DType::F32, {0}, {});
  // After the constants, so the buffers the tests edit keep their indices.
  int32_t sum = pb.buffer(DType::F32, {2, 4}, BufferRole::Accumulator, "w.sum");
  pb.p.arguments.push_back(sum);
  (void)half, (void)brain, (void)lr;

  for (uint8_t k = 0; k < kStepKindCount; ++k) {
    StepKind kind = StepKind(k);
    std::string note = std::string("every-kind.ein:") + std::to_string(k + 1) + ":1";
    switch (stepKindInfo(kind)->rule) {
    case ValidationRule::Contract:
      pb.op(kind, {x, w}, DType::F32, {2, 4}, ContractDims{{}, {}, {1}, {0}}, note);
      break;
    case ValidationRule::Transpose:
      pb.op(kind, {x}, DType::F32, {3, 2}, AxisList{{1, 0}}, note);
      break;
    case ValidationRule::Reshape:
      pb.op(kind, {x}, DType::F32, {6}, NoPayload{}, note);
      break;
    case ValidationRule::Broadcast:
      pb.op(kind, {bias}, DType::F32, {2, 4}, AxisList{{1}}, note);
      break;
    case ValidationRule::Reduce:
      pb.op(kind, {x}, DType::F32, {2}, AxisList{{1}}, note);
      break;
    case ValidationRule::UnaryNumeric:
    case ValidationRule::UnaryFloat:
      pb.op(kind, {x}, DType::F32, xs, NoPayload{}, note);
      break;
    case ValidationRule::BinaryNumeric:
    case ValidationRule::BinaryFloat:
      pb.op(kind, {x, x}, DType::F32, xs, NoPayload{}, note);
      break;
    case ValidationRule::Compare:
      pb.op(kind, {x, x}, DType::I1, xs, NoPayload{}, note);
      break;
    case ValidationRule::Select:
      pb.op(kind, {cond, x, x}, DType::F32, xs, NoPayload{}, note);
      break;
    case ValidationRule::Cast:
      pb.op(kind, {wide}, DType::F32, xs, NoPayload{}, note);
      break;
    case ValidationRule::StochasticRound: {
      int32_t seed = pb.op(StepKind::Cast, {x}, DType::I32, xs, NoPayload{}, note + " (seed)");
      pb.op(kind, {x, seed}, DType::BF16, xs, NoPayload{}, note);
      break;
    }
    case ValidationRule::Quantize:
      pb.op(kind, {x}, DType::F32, xs, QuantizeSpec{"e4m3", 2, 1}, note);
      break;
    case ValidationRule::Iota:
      pb.op(kind, {}, DType::I32, xs, IotaDim{1}, note);
      break;
    case ValidationRule::Gather:
      pb.op(kind, {table, ids}, DType::F32, {2, 3}, NoPayload{}, note);
      break;
    case ValidationRule::ScatterAdd:
      pb.op(kind, {x, ids}, DType::F32, {5, 3}, NoPayload{}, note);
      break;
    case ValidationRule::Slice:
      pb.op(kind, {x}, DType::F32, {1, 3}, SliceOffset{1}, note);
      break;
    case ValidationRule::Concat: {
      // x and a view of its second row (a buffer's view_of, view_offset).
      int32_t row = pb.buffer(DType::F32, {1, 3}, BufferRole::Temp, "x.row1");
      pb.p.buffers[row].viewOf = x;
      pb.p.buffers[row].viewOffset = 3;
      pb.op(kind, {x, row}, DType::F32, {3, 3}, NoPayload{}, note);
      break;
    }
    case ValidationRule::Copy:
      pb.op(kind, {x}, DType::F32, xs, NoPayload{}, note);
      break;
    case ValidationRule::Gemm: {
      // C = x . w, then C' += x . w_t^T into the optimizer state, with an
      // outer loop: every member of GemmDesc and GemmLoop set.
      pb.step(kind, {x, w}, DType::F32, {2, 4}, {{1, 2, 4, 3, 0, 0, 3, 4, 4, 6, 12, 8}}, 0, note);
      GemmDesc g = ProgramBuilder::gemmOf({1, 2, 4, 3, 0, 1, 3, 3, 4, 6, 12, 8}, {1, 5, 6, 7});
      g.epilogue = GemmEpilogue::Accumulate;
      pb.p.steps.emplace_back(kind, std::vector<int32_t>{x, wt}, moment, g, note + " (acc)");
      break;
    }
    case ValidationRule::Launch: {
      int32_t flags = pb.buffer(DType::I1, xs, BufferRole::Temp);
      int32_t counts = pb.buffer(DType::I32, {2}, BufferRole::Temp);
      int32_t out = pb.op(kind, {x, ids}, DType::F32, xs, KernelLaunch{2, {flags, counts}}, note);
      pb.result(flags, "flags");
      pb.result(out, "fused");
      break;
    }
    }
    EXPECT_TRUE(!pb.p.steps.empty() && pb.p.steps.back().kind == kind)
        << "no step built for '" << stepKindName(kind) << "'";
  }
  std::string problem = pb.p.validate().message();
  EXPECT_EQ(problem, "");
  return pb.p;
}

TrainSettings nonDefaultSettings() {
  TrainSettings s;
  for (const SettingInfo &info : trainSettingTable()) {
    std::string problem;
    if (info.isWord()) {
      std::string choices = info.choices;
      problem = setTrainWord(s, info, choices.substr(choices.rfind(' ') + 1));
    } else {
      problem = setTrainNumber(s, info, info.min + (info.isCount() ? 3 : 0.125));
    }
    EXPECT_EQ(problem, "") << info.key;
  }
  return s;
}

ModelBundle sampleBundle() {
  ModelBundle b;
  b.writtenBy = "einc 0.1.0 (test)";
  b.modelName = "every_kind";
  b.sourceName = "every-kind.ein";
  b.source = std::string("dims { vocab = 5 }\n# \xff\xfe not UTF-8, and a NUL: ") + '\0' + "\n";
  b.dims = {{"vocab", 5}, {"d", 3}};
  b.settings = nonDefaultSettings();
  b.window = WindowMapping::Shifted;
  b.programs.push_back({"cpu", everyKindProgram()});
  ProgramBuilder ref;
  ref.p.name = "forward";
  int32_t a = ref.arg(DType::F32, {3}, "a");
  ref.result(ref.op(StepKind::Exp, {a}, DType::F32, {3}, NoPayload{}), "loss");
  b.programs.push_back({"reference", ref.p});
  for (const char *target : {"x86-64-v3", "x86-64-v2"}) {
    KernelObject k;
    k.name = std::string("cpu/") + target;
    k.kernelCount = 3;
    k.metadata = {{"symbol_prefix", "every_kind"}, {"format", "elf64-x86-64"}};
    for (int i = 0; i < 300; ++i)
      k.bytes.push_back(uint8_t(i * 7 + target[7]));
    b.kernelObjects.push_back(k);
  }
  // The CUDA rendering of the same 3-kernel table: each kernel's parameter
  // count is what the program's launches of it pass.
  CudaKernelBundle cuda;
  const CudaLaunchKind kinds[] = {CudaLaunchKind::Elements, CudaLaunchKind::WarpRows,
                                  CudaLaunchKind::BlockRows};
  for (int i = 0; i < 3; ++i)
    cuda.kernels.push_back({"k" + std::to_string(i) + "_fused_exp", kinds[i], 4096 + i, 768, 4, 2,
                            "ein.exp at every-kind.ein:" + std::to_string(i + 1) + ":1"});
  for (const Step &s : b.programs[0].program.steps)
    if (const auto *launch = std::get_if<KernelLaunch>(&s.payload))
      cuda.kernels[size_t(launch->kernel)].params =
          int32_t(s.inputs.size() + 1 + launch->extraOutputs.size());
  cuda.source = "extern \"C\" __global__ void k0_fused_exp(float *a, float *b) {}\n";
  cuda.images.push_back({"sm_80", false,
                         std::string("\x7f"
                                     "ELF\0\0cubin",
                                     11)});
  cuda.images.push_back({"compute_90", true, ".version 9.0\n.target sm_90\n"});
  cuda.compilerVersion = "13.0";
  b.kernelSections["cuda"] = encodeCudaKernelBundle(cuda).take();
  b.reportJson = R"({"model": "every_kind", "flops": {"total": 1.5e9}})";
  return b;
}

namespace {
uint32_t get32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t get64(const uint8_t *p) { return uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32; }
void put(std::vector<uint8_t> &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(uint8_t(v >> (8 * i)));
}
} // namespace

FileParts splitFile(const std::vector<uint8_t> &file) {
  FileParts parts;
  EXPECT_GE(file.size(), 40u);
  EXPECT_EQ(std::string(file.begin(), file.begin() + 8), "EINCPROG");
  parts.version = get32(&file[8]);
  uint32_t w = get32(&file[12]);
  parts.writer.assign(file.begin() + 16, file.begin() + 16 + w);
  size_t at = (16 + w + 7) / 8 * 8;
  uint64_t h = get64(&file[at]), d = get64(&file[at + 8]);
  EXPECT_EQ(at + 16 + h + d + 4, file.size());
  parts.header.assign(file.begin() + at + 16, file.begin() + at + 16 + h);
  parts.data.assign(file.begin() + at + 16 + h, file.begin() + at + 16 + h + d);
  return parts;
}

std::vector<uint8_t> joinFile(const FileParts &parts) {
  std::vector<uint8_t> out{'E', 'I', 'N', 'C', 'P', 'R', 'O', 'G'};
  put(out, parts.version, 4);
  put(out, parts.writer.size(), 4);
  out.insert(out.end(), parts.writer.begin(), parts.writer.end());
  while (out.size() % 8 != 0)
    out.push_back(0);
  put(out, parts.header.size(), 8);
  put(out, parts.data.size(), 8);
  out.insert(out.end(), parts.header.begin(), parts.header.end());
  out.insert(out.end(), parts.data.begin(), parts.data.end());
  put(out, crc32c(out.data(), out.size()), 4);
  return out;
}

void fixChecksum(std::vector<uint8_t> &file) {
  uint32_t crc = crc32c(file.data(), file.size() - 4);
  for (int i = 0; i < 4; ++i)
    file[file.size() - 4 + i] = uint8_t(crc >> (8 * i));
}

std::vector<uint8_t> editHeader(const std::vector<uint8_t> &file,
                                const std::function<void(nlohmann::json &)> &edit) {
  FileParts parts = splitFile(file);
  nlohmann::json header = nlohmann::json::parse(parts.header);
  edit(header);
  parts.header = header.dump();
  return joinFile(parts);
}

} // namespace einrt::test
