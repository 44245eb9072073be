//===- RunSettingsTest.cpp - What an executable may change at run time ----===//
//
// An executable of `einc compile` takes `--set` of the settings the table
// marks SettingTime::Run and refuses the others (tools/runner/Runner.h
// runSettings). That is only right if no run-time setting changes the
// compiled Programs: here every run-time setting, changed, is compiled by
// compileModel as einc compile compiles, and the Programs must be identical;
// every compiled-in setting that the backend runs must change them.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"
#include "tools/runner/Distributed.h"
#include "tools/runner/Runner.h"

#include "dsl/Elaborator.h"

#include "mlir/IR/MLIRContext.h"

#include "runtime/cuda/CudaDevice.h"

#include <gtest/gtest.h>

#include <map>

namespace {

struct Model {
  std::string file;
  std::vector<std::pair<std::string, std::string>> dims;
};

const Model kModels[] = {
    {"mlp_lm", {{"batch", "4"}, {"embed", "8"}, {"hidden", "16"}}},
    {"gpt", {{"d", "16"}, {"heads", "2"}, {"ctx", "8"}, {"batch", "2"}, {"layers", "1"}}},
};

/// The Programs einc compile builds for the model with `extra` --set; null
/// when the front end refuses the setting (a value the backend cannot run).
std::optional<einrt::ModelBundle>
compile(const Model &m, const std::vector<std::pair<std::string, std::string>> &extra) {
  einc::CompileRequest request;
  request.modelPath = std::string(EINC_SOURCE_DIR) + "/examples/" + m.file + ".ein";
  request.overrides = m.dims;
  request.overrides.insert(request.overrides.end(), extra.begin(), extra.end());
  mlir::MLIRContext context;
  ein::dsl::registerElaboratorDialects(context);
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return std::nullopt;
  auto module = fe.lower(context, request.overrides, request.use);
  if (!module)
    return std::nullopt;
  request.functions = einc::runner::trainFunctionNames(fe.settings, /*withForward=*/true);
  request.jit = false;
  einc::CompiledModel compiled;
  request.settings = fe.settings;
  request.frontend = &fe;
  if (!einc::compileModel(*module, request, compiled))
    return std::nullopt;
  return std::move(compiled.bundle);
}

bool samePrograms(const einrt::ModelBundle &a, const einrt::ModelBundle &b) {
  if (a.programs.size() != b.programs.size())
    return false;
  for (size_t i = 0; i < a.programs.size(); ++i)
    if (a.programs[i].program != b.programs[i].program)
      return false;
  return true;
}

/// A value other than the default for every setting.
const std::map<std::string, std::string> kChanged = {
    {"optimizer", "sgd"},
    {"lr", "0.02"},
    {"min_lr", "0.0005"},
    {"beta1", "0.8"},
    {"beta2", "0.99"},
    {"eps", "1e-6"},
    {"weight_decay", "0.1"},
    {"decay", "all"},
    {"no_decay", "w*"},
    {"lr_scale", "w*:0.5"},
    {"freeze", "wte"},
    {"cooldown", "0.5"},
    {"momentum", "0.5"}, // SGD's: compared under optimizer=sgd
    {"clip", "0.5"},
    {"schedule", "constant"},
    {"warmup", "3"},
    {"steps", "7"},
    {"accumulate", "2"},
    {"eval_every", "3"},
    {"eval_steps", "2"},
    {"checkpoint_every", "5"},
    {"seed", "9"},
    {"data", ""}, // each model's own mapping, named (mlp_lm next_token, gpt shifted)
    {"precision", "bf16"},
    {"remat", "full"},
    {"fusion", "off"},
    {"fp8", "block"},
    {"tf32", "on"},
};

std::string changed(const Model &m, const std::string &key) {
  if (key == "data")
    return m.file == "gpt" ? "shifted" : "next_token";
  return kChanged.at(key);
}

TEST(RunSettings, EverySettingHasAChangedValue) {
  for (const einrt::SettingInfo &info : einrt::trainSettingTable())
    EXPECT_TRUE(kChanged.count(info.key)) << info.key << " needs a value in kChanged";
}

TEST(RunSettings, RunTimeSettingsLeaveTheProgramsAsCompiled) {
  for (const Model &m : kModels) {
    auto base = compile(m, {});
    ASSERT_TRUE(base) << m.file;
    for (const einrt::SettingInfo &info : einrt::trainSettingTable()) {
      if (info.time != einrt::SettingTime::Run)
        continue;
      auto other = compile(m, {{info.key, changed(m, info.key)}});
      ASSERT_TRUE(other) << m.file << " " << info.key;
      EXPECT_TRUE(samePrograms(*base, *other))
          << m.file << ": the run-time setting " << info.key << "=" << changed(m, info.key)
          << " changes the compiled Programs (an executable would ignore it)";
    }
  }
}

TEST(RunSettings, CompiledSettingsChangeThePrograms) {
  // Each compiled-in setting changes the Programs of at least one model
  // (momentum under optimizer=sgd, whose setting it is).
  int compared = 0;
  for (const einrt::SettingInfo &info : einrt::trainSettingTable()) {
    if (info.time != einrt::SettingTime::Compiled)
      continue;
    bool underSgd = std::string(info.key) == "momentum", ran = false, changes = false;
    for (const Model &m : kModels) {
      std::vector<std::pair<std::string, std::string>> sets;
      if (underSgd)
        sets.push_back({"optimizer", "sgd"});
      auto before = compile(m, sets);
      sets.push_back({info.key, changed(m, info.key)});
      auto after = compile(m, sets);
      ASSERT_TRUE(before) << m.file;
      if (!after)
        continue; // refused for execution (precision bf16): nothing runs it
      ran = true;
      changes |= !samePrograms(*before, *after);
    }
    if (!ran)
      continue;
    EXPECT_TRUE(changes) << info.key << "=" << kChanged.at(info.key)
                         << " leaves the Programs as they were: is it a run-time setting?";
    ++compared;
  }
  EXPECT_GE(compared, 10);
}

TEST(RunSettings, Tf32ReachesTheCudaDevice) {
  // The setting is read where the device opens (einc run, train, sample and
  // the executables): f32 GEMMs as CUBLAS_COMPUTE_32F_FAST_TF32 only when on.
  einrt::TrainSettings s;
  auto tf32 = [](const einrt::TrainSettings &s) {
    return einrt::cudaDeviceOptions(einc::runner::deviceOptions(einc::runner::RunOptions{}, s))
        .tf32;
  };
  EXPECT_FALSE(tf32(s));
  ASSERT_EQ(einrt::setTrainText(s, "tf32", "on"), "");
  EXPECT_TRUE(tf32(s));
  EXPECT_NE(einrt::setTrainText(s, "tf32", "fast"), "");
}

einrt::ModelBundle smallBundle() {
  einrt::ModelBundle b;
  b.dims = {{"batch", 16}, {"hidden", 32}};
  b.settings.lr = 0.003;
  b.settings.given = {"lr"};
  return b;
}

std::string refusal(const std::vector<std::pair<std::string, std::string>> &sets) {
  einc::runner::RunOptions o;
  o.overrides = sets;
  einrt::Expected<einrt::TrainSettings> s = einc::runner::runSettings(smallBundle(), o);
  EXPECT_EQ(s.status().code(), einrt::StatusCode::Invalid);
  return s.status().message();
}

TEST(RunSettings, ExecutablesTakeRunTimeSettingsOnly) {
  einc::runner::RunOptions o;
  o.overrides = {
      {"seed", "4"}, {"lr", "0.01"}, {"lr", "0.02"}, {"hidden", "32"}, {"optimizer", "adamw"}};
  einrt::Expected<einrt::TrainSettings> applied = einc::runner::runSettings(smallBundle(), o);
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  const einrt::TrainSettings s = applied.take();
  EXPECT_EQ(s.lr, 0.02); // the last --set of a key wins
  EXPECT_EQ(s.seed, 4);
  EXPECT_EQ(s.optimizer, "adamw");
  // As einc's front end marks them: given, in the table's order.
  EXPECT_EQ(s.given, (std::vector<std::string>{"optimizer", "lr", "seed"}));

  EXPECT_EQ(refusal({{"optimizer", "sgd"}}),
            "--set optimizer=sgd: the setting 'optimizer' is compiled into this executable "
            "(optimizer=adamw): recompile the model for that (einc compile MODEL.ein --set "
            "optimizer=sgd -o NAME)");
  EXPECT_EQ(refusal({{"batch", "8"}}),
            "--set batch=8: the dim 'batch' is compiled into this executable (batch=16): "
            "recompile the model for that (einc compile MODEL.ein --set batch=8 -o NAME)");
  EXPECT_EQ(refusal({{"layers", "2"}}), "--set layers=2: no dim or train setting named 'layers'");
  EXPECT_NE(refusal({{"lr", "-1"}}).find("--set lr=-1: 'lr' (peak learning rate) must be in"),
            std::string::npos);
  EXPECT_NE(refusal({{"clip", "2"}}).find("the setting 'clip' is compiled into"),
            std::string::npos);
}

} // namespace
