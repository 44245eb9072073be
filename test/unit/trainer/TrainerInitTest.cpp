//===- TrainerInitTest.cpp - New runs from a checkpoint, resumes refused --===//
//
// `initFrom` (--init-from): a new run from another run's params, with or
// without its optimizer state; and a resume with changed settings refused
// with each change named.
//
//===----------------------------------------------------------------------===//
#include "TrainerRig.h"

#include <gtest/gtest.h>

using namespace einrt;
using namespace einrt::test;
using namespace einrt::test::rig;

namespace {

/// 30 steps of a TinyModel into `dir`; its last checkpoint.
Checkpoint trainedCheckpoint(Data &data, const TempDir &dir) {
  TrainConfig c = baseConfig(30);
  c.checkpointDir = dir.path;
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  EXPECT_TRUE(o.ok) << o.error;
  std::string error;
  auto ck = valueOf(readCheckpoint(dir.file("last.safetensors")));
  EXPECT_TRUE(ck) << error;
  return ck ? *ck : Checkpoint{};
}

bool allZero(const TensorData &t) {
  for (double v : t.toDoubles())
    if (v != 0)
      return false;
  return true;
}

TEST(TrainerInit, TakesTheParamsAndStartsTheOptimizerAtZero) {
  Data data;
  TempDir one, two;
  Checkpoint ck = trainedCheckpoint(data, one);
  ASSERT_TRUE(ck.find("table") && ck.find("table.m"));
  // Other settings than the checkpoint's run: no resume, so no objection.
  TrainConfig c = baseConfig(0);
  c.seed = 99;
  c.schedule.lr = 0.01;
  c.checkpointDir = two.path;
  c.initFrom = one.file("last.safetensors");
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.result.startStep, 0);
  ASSERT_EQ(o.state.size(), 2u);
  EXPECT_EQ(o.state[0].bytes, ck.find("table")->bytes);
  EXPECT_FALSE(allZero(*ck.find("table.m")));
  EXPECT_TRUE(allZero(o.state[1]));

  // Trained on: a new run of its own, from step 1 with update count 1.
  c.steps = 10;
  c.overwrite = true;
  Rig again(TinyModel{});
  Outcome trained = train(again, data, c);
  ASSERT_TRUE(trained.ok) << trained.error;
  std::string error;
  auto last = valueOf(readCheckpoint(two.file("last.safetensors")));
  ASSERT_TRUE(last) << error;
  EXPECT_EQ(last->info.step, 10);
  EXPECT_EQ(last->info.optimizerStep, 10);
}

TEST(TrainerInit, KeepOptimizerTakesTheStateAndItsUpdateCount) {
  Data data;
  TempDir one, two;
  Checkpoint ck = trainedCheckpoint(data, one);
  TrainConfig c = baseConfig(0);
  c.checkpointDir = two.path;
  c.initFrom = one.file("last.safetensors");
  c.keepOptimizer = true;
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_TRUE(sameBits(o.state, {*ck.find("table"), *ck.find("table.m")}));

  c.steps = 10;
  c.overwrite = true;
  Rig again(TinyModel{});
  ASSERT_TRUE(train(again, data, c).ok);
  std::string error;
  auto last = valueOf(readCheckpoint(two.file("last.safetensors")));
  ASSERT_TRUE(last) << error;
  EXPECT_EQ(last->info.step, 10);
  EXPECT_EQ(last->info.optimizerStep, 40); // the checkpoint's 30, then 10 more
}

// The source may be the run's own `last`, replaced by --overwrite: it is
// read before the old checkpoints are removed.
TEST(TrainerInit, FromTheFolderItOverwrites) {
  Data data;
  TempDir one;
  Checkpoint ck = trainedCheckpoint(data, one);
  TrainConfig c = baseConfig(0);
  c.checkpointDir = one.path;
  c.overwrite = true;
  c.initFrom = one.file("last.safetensors");
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.state[0].bytes, ck.find("table")->bytes);
}

TEST(TrainerInit, RefusesACheckpointThatDoesNotFit) {
  Data data;
  TempDir d;
  std::vector<double> values(36, 0.5), extra(3, 1.0);
  std::string error;
  CheckpointInfo info;
  info.step = 5;
  ASSERT_TRUE(writeCheckpoint(d.file("other.safetensors"),
                              {TensorData::fromDoubles("table", DType::F32, {6, 6}, values.data()),
                               TensorData::fromDoubles("bias", DType::F32, {3}, extra.data())},
                              info)
                  .ok())
      << error;
  TrainConfig c = baseConfig(5);
  c.checkpointDir = d.file("ck");
  c.initFrom = d.file("other.safetensors");
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  EXPECT_EQ(o.code, StatusCode::Invalid);
  EXPECT_NE(o.error.find("--init-from '" + c.initFrom + "' does not fit the model"),
            std::string::npos)
      << o.error;
  EXPECT_NE(o.error.find("table: checkpoint [6, 6], model [7, 7]"), std::string::npos) << o.error;
  EXPECT_NE(o.error.find("extra tensor (not a param of the model): bias [3]"), std::string::npos)
      << o.error;
}

TEST(TrainerInit, KeepOptimizerNeedsTheState) {
  Data data;
  TempDir one, two;
  Checkpoint ck = trainedCheckpoint(data, one);
  std::string error;
  ASSERT_TRUE(writeCheckpoint(one.file("params.safetensors"), {*ck.find("table")}, ck.info).ok());
  TrainConfig c = baseConfig(5);
  c.checkpointDir = two.path;
  c.initFrom = one.file("params.safetensors");
  c.keepOptimizer = true;
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  EXPECT_EQ(o.code, StatusCode::Invalid);
  EXPECT_NE(o.error.find("lacks the optimizer state this run's optimizer keeps ('table.m [7, 7]')"),
            std::string::npos)
      << o.error;
  c.keepOptimizer = false; // the params alone are enough for a fresh optimizer
  Rig again(TinyModel{});
  Outcome fresh = train(again, data, c);
  EXPECT_TRUE(fresh.ok) << fresh.error;
}

// A resume names each setting that changed, with both values.
TEST(TrainerInit, ResumeNamesTheChangedSettings) {
  Data data;
  TempDir d;
  TrainConfig c = baseConfig(10);
  c.checkpointDir = d.path;
  c.settings = {{"dim d", "8"}, {"lr", "0.001"}, {"optimizer", "adamw"}};
  Rig rig(TinyModel{});
  ASSERT_TRUE(train(rig, data, c).ok);
  c.steps = 20;
  c.resume = true;
  c.seed = 12;
  c.settings = {{"dim d", "8"}, {"lr", "0.003"}, {"optimizer", "adamw"}, {"fusion", "off"}};
  Rig again(TinyModel{});
  Outcome o = train(again, data, c);
  EXPECT_EQ(o.code, StatusCode::Invalid);
  EXPECT_NE(o.error.find("was written with other training settings (seed '11', now '12'; lr "
                         "'0.001', now '0.003'; fusion (none), now 'off')"),
            std::string::npos)
      << o.error;
  EXPECT_NE(o.error.find("use --init-from " + d.file("last.safetensors")), std::string::npos)
      << o.error;
  // The same settings resume.
  c.seed = 11;
  c.settings = {{"dim d", "8"}, {"lr", "0.001"}, {"optimizer", "adamw"}};
  Rig same(TinyModel{});
  Outcome resumed = train(same, data, c);
  EXPECT_TRUE(resumed.ok) << resumed.error;
}

} // namespace
