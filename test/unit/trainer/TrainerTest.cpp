//===- TrainerTest.cpp - The training loop on hand-built Programs ---------===//
#include "runtime/train/Trainer.h"
#include "TrainerRig.h"
#include "test/unit/StatusOut.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

using namespace einrt;
using namespace einrt::test;
using namespace einrt::test::rig;

namespace {

double maxRelDiff(const TensorData &a, const TensorData &b) {
  auto x = a.toDoubles(), y = b.toDoubles();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst =
        std::max(worst, std::abs(x[i] - y[i]) / std::max({std::abs(x[i]), std::abs(y[i]), 1e-3}));
  return worst;
}

std::vector<std::string> readLines(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  return lines;
}

TEST(Trainer, LossFallsNextToken) {
  Rig rig(TinyModel{});
  Data data;
  TrainConfig c = baseConfig(150);
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.result.lastStep, 150);
  // Uniform guessing is ln 7 = 1.95; the pattern is learnable.
  EXPECT_LT(o.result.lastLoss, 1.2);
  ASSERT_EQ(o.state.size(), 2u);
  EXPECT_EQ(o.state[0].name, "table");
  EXPECT_EQ(o.state[1].name, "table.m");
}

TEST(Trainer, LossFallsShifted) {
  TinyModel m;
  m.mapping = WindowMapping::Shifted;
  Rig rig(m);
  Data data;
  TrainConfig c = baseConfig(150);
  c.mapping = WindowMapping::Shifted;
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_LT(o.result.lastLoss, 1.5);
}

TEST(Trainer, SameSeedSameRunBitForBit) {
  Data data;
  TrainConfig c = baseConfig(60);
  Rig a(TinyModel{}), b(TinyModel{}), other(TinyModel{});
  Outcome x = train(a, data, c), y = train(b, data, c);
  ASSERT_TRUE(x.ok && y.ok) << x.error << y.error;
  EXPECT_TRUE(sameBits(x.state, y.state));
  EXPECT_EQ(x.result.lastLoss, y.result.lastLoss);
  // The same executors run again from scratch: the same run.
  Outcome again = train(a, data, c);
  EXPECT_TRUE(sameBits(x.state, again.state));
  c.seed = 12;
  Outcome z = train(other, data, c);
  ASSERT_TRUE(z.ok) << z.error;
  EXPECT_FALSE(sameBits(x.state, z.state));
}

// The lecture's experiment: 200 steps in one run, and 100 + resume + 100,
// give identical params bit for bit, with a cosine schedule whose length
// comes from the settings, not from `steps`.
TEST(Trainer, ResumeIsBitExact) {
  Data data;
  TempDir one, two;
  TrainConfig c = baseConfig(200);
  c.schedule.kind = Schedule::Kind::Cosine;
  c.schedule.warmup = 20;
  c.schedule.total = 300;
  c.schedule.minLr = 0.005;
  c.checkpointDir = one.path;
  Rig a(TinyModel{});
  Outcome full = train(a, data, c);
  ASSERT_TRUE(full.ok) << full.error;

  c.checkpointDir = two.path;
  c.steps = 100;
  c.logPath = two.file("log.jsonl");
  Rig b(TinyModel{});
  Outcome first = train(b, data, c);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_FALSE(sameBits(first.state, full.state));

  // A fresh process would have fresh executors.
  Rig fresh(TinyModel{});
  c.steps = 200;
  c.resume = true;
  Outcome second = train(fresh, data, c);
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_EQ(second.result.startStep, 100);
  EXPECT_EQ(second.result.lastStep, 200);
  EXPECT_TRUE(sameBits(second.state, full.state));
  EXPECT_EQ(second.result.lastLoss, full.result.lastLoss);

  // The checkpoints agree too, metadata included.
  std::string error;
  auto ca = valueOf(readCheckpoint(one.file("last.safetensors")));
  auto cb = valueOf(readCheckpoint(two.file("last.safetensors")));
  ASSERT_TRUE(ca && cb) << error;
  EXPECT_EQ(ca->info.step, 200);
  EXPECT_EQ(ca->metadata, cb->metadata);
  // One log line per step, appended across the resume.
  EXPECT_EQ(readLines(two.file("log.jsonl")).size(), 200u);

  // Resuming at the end is nothing to do.
  Outcome done = train(fresh, data, c);
  ASSERT_TRUE(done.ok) << done.error;
  EXPECT_EQ(done.result.lastStep, 200);
  EXPECT_TRUE(sameBits(done.state, full.state));
}

/// The "step" of each line of a JSON-lines log.
std::vector<int64_t> loggedSteps(const std::string &path) {
  std::vector<int64_t> steps;
  for (const std::string &l : readLines(path)) {
    size_t at = l.find("\"step\":");
    steps.push_back(at == std::string::npos ? -1 : std::stoll(l.substr(at + 7)));
  }
  return steps;
}

// A run killed at step 30 whose last checkpoint is from step 20 has logged
// 25 and 30; the resume from 20 logs them again. The log is cut back to the
// resumed step first, so each step appears once, as in one uninterrupted run.
TEST(Trainer, ResumeCutsTheLogBackToTheCheckpoint) {
  Data data;
  TempDir d;
  TrainConfig c = baseConfig(20);
  c.checkpointDir = d.path;
  c.logPath = d.file("log.jsonl");
  c.logEvery = 5;
  Rig rig(TinyModel{});
  ASSERT_TRUE(train(rig, data, c).ok);
  std::string kept = d.file("kept.safetensors");
  ASSERT_EQ(std::system(("cp '" + d.file("last.safetensors") + "' '" + kept + "'").c_str()), 0);
  c.steps = 30;
  c.resume = true;
  ASSERT_TRUE(train(rig, data, c).ok);
  // The "crash": last.safetensors is back at step 20, the log at step 30.
  ASSERT_EQ(std::rename(kept.c_str(), d.file("last.safetensors").c_str()), 0);
  c.steps = 40;
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.result.startStep, 20);
  EXPECT_EQ(loggedSteps(d.file("log.jsonl")),
            (std::vector<int64_t>{5, 10, 15, 20, 25, 30, 35, 40}));
}

// The last evaluation is the one at the final step, and it competes for
// best.safetensors like every other.
TEST(Trainer, TheFinalEvaluationCountsForBest) {
  Data data;
  TempDir d;
  TrainConfig c = baseConfig(25);
  c.evalEvery = 10;
  c.checkpointDir = d.path;
  c.logPath = d.file("log.jsonl");
  c.logEvery = 100;
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c, /*withVal=*/true);
  ASSERT_TRUE(o.ok) << o.error;
  // The loss still falls at step 25: the final evaluation is the best.
  ASSERT_TRUE(o.result.lastValLoss && o.result.bestValLoss);
  EXPECT_EQ(*o.result.lastValLoss, *o.result.bestValLoss);
  std::string error;
  auto best = valueOf(readCheckpoint(d.file("best.safetensors")));
  ASSERT_TRUE(best) << error;
  EXPECT_EQ(best->info.step, 25);
  auto last = valueOf(readCheckpoint(d.file("last.safetensors")));
  ASSERT_TRUE(last) << error;
  ASSERT_TRUE(last->info.valLoss);
  EXPECT_EQ(*last->info.valLoss, *o.result.lastValLoss);
  auto lines = readLines(d.file("log.jsonl"));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("\"step\":25,"), std::string::npos);
  EXPECT_NE(lines.back().find("\"val_loss\""), std::string::npos);
}

// A writer killed between creating its temporary file and renaming it
// leaves `last.safetensors.tmp.PID`; the next run removes those whose
// process is gone, and leaves a live process's alone.
TEST(Trainer, StaleTemporariesAreRemovedOnStart) {
  Data data;
  TempDir d;
  std::string dead = d.file("last.safetensors.tmp.999999999"); // > pid_max
  std::string deadBest = d.file("best.safetensors.tmp.999999998");
  std::string live = d.file("last.safetensors.tmp." + std::to_string(getppid()));
  std::string other = d.file("notes.tmp.999999999");
  for (const std::string &f : {dead, deadBest, live, other})
    writeBytes(f, {1, 2, 3});
  TrainConfig c = baseConfig(3);
  c.checkpointDir = d.path;
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  auto exists = [](const std::string &f) { return access(f.c_str(), F_OK) == 0; };
  EXPECT_FALSE(exists(dead));
  EXPECT_FALSE(exists(deadBest));
  EXPECT_TRUE(exists(live));
  EXPECT_TRUE(exists(other));
  EXPECT_TRUE(exists(d.file("last.safetensors")));
}

TEST(Trainer, ResumeWithoutCheckpointIsAnError) {
  Data data;
  TempDir d;
  TrainConfig c = baseConfig(10);
  c.checkpointDir = d.file("ck");
  c.resume = true;
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  EXPECT_EQ(o.code, StatusCode::NotFound);
  EXPECT_NE(o.error.find("nothing to resume"), std::string::npos) << o.error;
}

// The checkpoint directory and its parents are created; a file in the way is
// an error before the first step, naming the directory and the reason.
TEST(Trainer, CheckpointDirectoryIsCreatedOrRefused) {
  Data data;
  TempDir d;
  TrainConfig c = baseConfig(10);
  c.checkpointDir = d.file("runs/a/ck");
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_TRUE(std::filesystem::exists(d.file("runs/a/ck/last.safetensors")));
  {
    std::ofstream(d.file("afile")) << "x";
  }
  c.checkpointDir = d.file("afile");
  o = train(rig, data, c);
  EXPECT_EQ(o.code, StatusCode::Io);
  EXPECT_NE(o.error.find("cannot create the checkpoint directory '" + d.file("afile") +
                         "': Not a directory"),
            std::string::npos)
      << o.error;
  EXPECT_EQ(o.result.lastStep, 0);
}

TEST(Trainer, ResumeWithOtherSettingsIsRefused) {
  Data data;
  TempDir d;
  TrainConfig c = baseConfig(10);
  c.checkpointDir = d.path;
  Rig rig(TinyModel{});
  ASSERT_TRUE(train(rig, data, c).ok);
  c.steps = 20;
  c.resume = true;
  c.seed = 99;
  Outcome o = train(rig, data, c);
  EXPECT_EQ(o.code, StatusCode::Invalid);
  EXPECT_NE(o.error.find("other training settings"), std::string::npos) << o.error;
  c.allowConfigChange = true;
  EXPECT_TRUE(train(rig, data, c).ok);
}

TEST(Trainer, ResumeWithoutOptimizerStateNeedsReset) {
  Data data;
  TempDir d;
  TrainConfig c = baseConfig(30);
  c.checkpointDir = d.path;
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c);
  ASSERT_TRUE(o.ok) << o.error;
  // Rewrite `last` with the params only (as an exported model would be).
  std::string error;
  auto ck = valueOf(readCheckpoint(d.file("last.safetensors")));
  ASSERT_TRUE(ck) << error;
  std::vector<TensorData> paramsOnly = {*ck->find("table")};
  ASSERT_TRUE(writeCheckpoint(d.file("last.safetensors"), paramsOnly, ck->info).ok());

  c.steps = 40;
  c.resume = true;
  Rig again(TinyModel{});
  Outcome refused = train(again, data, c);
  EXPECT_EQ(refused.code, StatusCode::Invalid);
  EXPECT_NE(refused.error.find("has no optimizer state ('table.m')"), std::string::npos)
      << refused.error;
  EXPECT_NE(refused.error.find("reset_optimizer"), std::string::npos);

  c.resetOptimizer = true;
  Outcome reset = train(again, data, c);
  ASSERT_TRUE(reset.ok) << reset.error;
  EXPECT_EQ(reset.result.lastStep, 40);
  // The optimizer restarted: its update count is 10, not 40.
  auto after = valueOf(readCheckpoint(d.file("last.safetensors")));
  ASSERT_TRUE(after) << error;
  EXPECT_EQ(after->info.step, 40);
  EXPECT_EQ(after->info.optimizerStep, 10);
}

TEST(Trainer, NonFiniteLossStopsAndKeepsLastGoodCheckpoint) {
  Data data;
  TempDir d;
  TinyModel m;
  m.nanAtStep = 7;
  Rig rig(m);
  TrainConfig c = baseConfig(20);
  c.checkpointDir = d.path;
  c.checkpointEvery = 2;
  c.logPath = d.file("log.jsonl");
  Outcome o = train(rig, data, c);
  EXPECT_FALSE(o.ok);
  EXPECT_TRUE(o.result.stoppedNonFinite);
  EXPECT_EQ(o.result.lastStep, 6);
  EXPECT_NE(o.error.find("step 7: the loss is not finite"), std::string::npos) << o.error;
  std::string error;
  auto ck = valueOf(readCheckpoint(d.file("last.safetensors")));
  ASSERT_TRUE(ck) << error;
  EXPECT_EQ(ck->info.step, 6);
  // The params held are the last good ones (not step 7's).
  std::vector<double> v = ck->find("table")->toDoubles();
  for (double x : v)
    EXPECT_TRUE(std::isfinite(x));
  EXPECT_TRUE(sameBits({*ck->find("table"), *ck->find("table.m")}, o.state));
  auto lines = readLines(d.file("log.jsonl"));
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_NE(lines.back().find("\"loss\":null"), std::string::npos) << lines.back();
}

TEST(Trainer, NonFiniteGradNormStops) {
  Data data;
  Rig rig(TinyModel{});
  TrainConfig c = baseConfig(5);
  c.schedule.lr = NAN;                  // lr NaN: the params become NaN, then the loss
  EXPECT_FALSE(train(rig, data, c).ok); // refused by validate
  c.schedule.lr = 1e38;
  Outcome o = train(rig, data, c);
  EXPECT_FALSE(o.ok);
  EXPECT_TRUE(o.result.stoppedNonFinite) << o.error;
  EXPECT_NE(o.error.find("not finite"), std::string::npos) << o.error;
}

// The lecture's check: the average of k micro-batches' gradients equals the
// gradient of the batch made of them, within float rounding.
TEST(Trainer, AccumulatedGradientsEqualLargeBatch) {
  Data data;
  TinyModel big;
  big.batch = 8;
  TinyModel small = big;
  small.batch = 2;
  Rig acc(small, 4);
  TrainConfig c = baseConfig(1);
  c.accumulate = 4;
  std::string error;
  auto t = valueOf(Trainer::create(c, acc.programs(), *data.train, nullptr));
  ASSERT_TRUE(t);
  TrainResult r;
  Status ran = (*t)->run(r);
  ASSERT_TRUE(ran.ok()) << ran.message();
  EXPECT_EQ((*t)->tokensPerStep(), 8);
  auto gradients = valueOf((*t)->lastGradients());
  ASSERT_TRUE(gradients);
  const std::vector<std::vector<double>> &grads = *gradients;
  ASSERT_EQ(grads.size(), 1u);
  const std::vector<double> &g = grads[0];

  // The large batch: the same windows (same seed, rows in order), the same
  // initial params.
  auto ex = statusOut(Executor::create(big.grad(), Precision::F32), error);
  ASSERT_TRUE(ex) << error;
  ASSERT_TRUE(statusOut(initParams(*ex, c.seed), error)) << error;
  auto layout = valueOf(windowLayout(ex->program(), WindowMapping::NextToken));
  ASSERT_TRUE(layout);
  auto sampler = valueOf(WindowSampler::create(*data.train, *layout, c.seed, 7));
  ASSERT_TRUE(sampler);
  Status fed = sampler->feed(*ex);
  ASSERT_TRUE(fed.ok()) << fed.message();
  ASSERT_TRUE(statusOut(ex->run(), error)) << error;
  std::vector<double> want;
  ASSERT_TRUE(statusOut(ex->read(size_t(ex->program().results[1])), want, error)) << error;
  ASSERT_EQ(want.size(), g.size());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    worst = std::max(worst, std::abs(g[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  EXPECT_GT(scale, 1e-3);
  EXPECT_LT(worst, 1e-6 * scale) << worst;
  double loss;
  ASSERT_TRUE(statusOut(ex->readScalar(0), loss, error)) << error;
  EXPECT_NEAR(r.lastLoss, loss, 1e-6);
}

TEST(Trainer, AccumulationTrainsLikeTheLargeBatch) {
  Data data;
  TinyModel big;
  big.batch = 8;
  TinyModel small = big;
  small.batch = 2;
  Rig one(big), acc(small, 4);
  TrainConfig c = baseConfig(30);
  Outcome a = train(one, data, c);
  c.accumulate = 4;
  Outcome b = train(acc, data, c);
  ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
  EXPECT_LT(maxRelDiff(a.state[0], b.state[0]), 1e-4);
  EXPECT_LT(maxRelDiff(a.state[1], b.state[1]), 1e-4);
  EXPECT_NEAR(a.result.lastLoss, b.result.lastLoss, 1e-5);
}

TEST(Trainer, AccumulationResumesBitExact) {
  Data data;
  TinyModel small;
  small.batch = 2;
  TempDir one, two;
  TrainConfig c = baseConfig(40);
  c.accumulate = 3;
  c.checkpointDir = one.path;
  Rig a(small, 3), b(small, 3), fresh(small, 3);
  Outcome full = train(a, data, c);
  ASSERT_TRUE(full.ok) << full.error;
  c.checkpointDir = two.path;
  c.steps = 15;
  ASSERT_TRUE(train(b, data, c).ok);
  c.steps = 40;
  c.resume = true;
  Outcome rest = train(fresh, data, c);
  ASSERT_TRUE(rest.ok) << rest.error;
  EXPECT_TRUE(sameBits(rest.state, full.state));
}

TEST(Trainer, EvaluationKeepsBestAndLogsValLoss) {
  Data data;
  TempDir d;
  TrainConfig c = baseConfig(40);
  c.evalEvery = 10;
  c.evalSteps = 3;
  c.logEvery = 5;
  c.checkpointDir = d.path;
  c.logPath = d.file("log.jsonl");
  Rig rig(TinyModel{});
  Outcome o = train(rig, data, c, /*withVal=*/true);
  ASSERT_TRUE(o.ok) << o.error;
  ASSERT_TRUE(o.result.bestValLoss && o.result.lastValLoss);
  auto lines = readLines(d.file("log.jsonl"));
  ASSERT_EQ(lines.size(), 8u); // steps 5, 10, ..., 40
  int withVal = 0;
  for (const std::string &l : lines) {
    EXPECT_NE(l.find("\"tokens_per_second\":"), std::string::npos) << l;
    withVal += l.find("\"val_loss\"") != std::string::npos;
  }
  EXPECT_EQ(withVal, 4);
  std::string error;
  auto best = valueOf(readCheckpoint(d.file("best.safetensors")));
  ASSERT_TRUE(best) << error;
  ASSERT_TRUE(best->info.bestValLoss);
  EXPECT_EQ(*best->info.bestValLoss, *o.result.bestValLoss);
  EXPECT_EQ(best->info.step % 10, 0);

  // Evaluation is deterministic (the same batches each time) and leaves the
  // training stream alone: a run with evaluation trains like one without.
  Rig plain(TinyModel{});
  TrainConfig q = baseConfig(40);
  Outcome p = train(plain, data, q);
  EXPECT_TRUE(sameBits(p.state, o.state));
}

TEST(Trainer, BadTokenAnywhereIsFoundBeforeTheFirstStep) {
  // A bad id far from the windows the first steps draw (the last of 2 M
  // tokens): create() scans the whole file, not only the windows drawn, so a
  // run never dies at step ~400 with nothing saved. The validation file too.
  TempDir d;
  std::vector<uint16_t> tokens = patternTokens(2000000, 7);
  tokens.back() = 9;
  writeBytes(d.file("bad.bin"), tokenBytes(tokens));
  writeBytes(d.file("good.bin"), tokenBytes(patternTokens(1000, 7)));
  auto bad = valueOf(TokenFile::open(d.file("bad.bin")));
  auto good = valueOf(TokenFile::open(d.file("good.bin")));
  ASSERT_TRUE(bad && good);
  Rig rig(TinyModel{});
  TrainConfig c = baseConfig(3);
  std::string error =
      failureOf(Trainer::create(c, rig.programs(), *bad, nullptr), StatusCode::Invalid);
  EXPECT_NE(error.find(d.file("bad.bin") + ": token 1999999 (byte offset "
                                           "3999998) is 9, not below the "
                                           "vocabulary size 7"),
            std::string::npos)
      << error;
  c.evalEvery = 1;
  error = failureOf(Trainer::create(c, rig.programs(), *good, &*bad), StatusCode::Invalid);
  EXPECT_NE(error.find(d.file("bad.bin") + ": token 1999999"), std::string::npos) << error;
}

// A checkpoint stages params and optimizer state twice (a copy and the
// serialised file): create() checks that against the memory left instead of
// aborting at the first checkpoint, hours in. Under an address-space limit
// 2 MiB above what the process uses, a 512 x 512 table (2 MiB with its
// momentum, 4 MiB staged) is refused with the numbers; without checkpoints
// nothing is staged. In a child process, so the limit stays there.
TEST(Trainer, CheckpointStagingIsCheckedAgainstAvailableMemory) {
  EXPECT_EXIT(
      {
        TinyModel m;
        m.vocab = 512;
        Rig rig(m);
        TempDir d;
        writeBytes(d.file("t.bin"), tokenBytes(patternTokens(1000, 512)));
        auto f = valueOf(TokenFile::open(d.file("t.bin")));
        std::ifstream status("/proc/self/status");
        int64_t vmKb = 0;
        for (std::string l; std::getline(status, l);)
          if (l.rfind("VmSize:", 0) == 0)
            vmKb = std::atoll(l.c_str() + 7);
        struct rlimit rl;
        getrlimit(RLIMIT_AS, &rl);
        rl.rlim_cur = rlim_t(vmKb * 1024 + (int64_t(2) << 20));
        if (!f || setrlimit(RLIMIT_AS, &rl) != 0)
          std::exit(3);
        TrainConfig c = baseConfig(1);
        c.vocab = 512;
        c.checkpointDir = d.path;
        Status staged = Trainer::create(c, rig.programs(), *f, nullptr).status();
        const std::string &error = staged.message();
        if (staged.code() != StatusCode::OutOfMemory ||
            error.find(
                "the trainer (checkpoint staging) needs 4.0 MiB (4194304 bytes) but only ") ==
                std::string::npos ||
            error.find("ulimit -v") == std::string::npos)
          std::exit(4);
        c.checkpointDir.clear();
        if (!Trainer::create(c, rig.programs(), *f, nullptr).ok())
          std::exit(5);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Trainer, CreateChecksProgramsAndData) {
  Data data;
  Rig rig(TinyModel{});
  TrainConfig c = baseConfig(3);
  c.accumulate = 2;
  std::string error =
      failureOf(Trainer::create(c, rig.programs(), *data.train, nullptr), StatusCode::Invalid);
  EXPECT_NE(error.find("needs the @accumulate_grad and @apply_update"), std::string::npos) << error;
  c.accumulate = 1;
  c.mapping = WindowMapping::Shifted;
  error = failureOf(Trainer::create(c, rig.programs(), *data.train, nullptr), StatusCode::Invalid);
  EXPECT_NE(error.find("shifted mapping"), std::string::npos) << error;
  c.mapping = WindowMapping::NextToken;
  c.schedule.kind = Schedule::Kind::Cosine; // total 0
  error = failureOf(Trainer::create(c, rig.programs(), *data.train, nullptr), StatusCode::Invalid);
  EXPECT_NE(error.find("cosine"), std::string::npos) << error;
}

TEST(Trainer, ProgressReportsEveryLoggedStep) {
  Data data;
  std::ostringstream out;
  TrainConfig c = baseConfig(6);
  c.logEvery = 2;
  c.progress.style = ProgressStyle::Plain;
  c.progress.out = &out;
  Rig rig(TinyModel{});
  ASSERT_TRUE(train(rig, data, c).ok);
  std::string s = out.str();
  EXPECT_NE(s.find("step 2/6 loss"), std::string::npos) << s;
  EXPECT_NE(s.find("step 6/6 loss"), std::string::npos) << s;
  EXPECT_EQ(s.find("step 3/6"), std::string::npos) << s;
  EXPECT_NE(s.find("tok/s"), std::string::npos) << s;
}

} // namespace
