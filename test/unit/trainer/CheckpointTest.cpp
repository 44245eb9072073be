//===- CheckpointTest.cpp - Checkpoint files and atomic writes ------------===//
#include "runtime/io/Checkpoint.h"
#include "TrainerTestUtil.h"

#include <chrono>
#include <csignal>
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace einrt;
using namespace einrt::test;

namespace {

TensorData tensor(const std::string &name, int64_t n, double fill) {
  std::vector<double> v(size_t(n), fill);
  return TensorData::fromDoubles(name, DType::F32, {n}, v.data());
}

TEST(Checkpoint, MetadataRoundTrip) {
  TempDir d;
  CheckpointInfo info;
  info.step = 120;
  info.optimizerStep = 20;
  info.sampler = "rows:3;rng:abc";
  info.schedule = "constant lr=0.001 warmup=0";
  info.configHash = hashText("x");
  info.valLoss = 1.0 / 3.0;
  Status written =
      writeCheckpoint(d.file("c.safetensors"), {tensor("w", 4, 1.5), tensor("w.m", 4, 0)}, info);
  ASSERT_TRUE(written.ok()) << written.message();
  auto c = readCheckpoint(d.file("c.safetensors"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->info.step, 120);
  EXPECT_EQ(c->info.optimizerStep, 20);
  EXPECT_EQ(c->info.sampler, info.sampler);
  EXPECT_EQ(c->info.schedule, info.schedule);
  EXPECT_EQ(c->info.configHash, info.configHash);
  ASSERT_TRUE(c->info.valLoss);
  EXPECT_EQ(*c->info.valLoss, 1.0 / 3.0); // 17 digits: exact
  EXPECT_FALSE(c->info.bestValLoss);
  EXPECT_EQ(c->metadata.at("format"), "pt");
  ASSERT_TRUE(c->find("w.m"));
  EXPECT_EQ(c->find("w")->toDoubles()[3], 1.5);
  EXPECT_FALSE(c->find("v"));
  EXPECT_EQ(hashText("x").size(), 16u);
  EXPECT_NE(hashText("x"), hashText("y"));
}

bool hasTemporary(const TempDir &d) {
  bool found = false;
  if (DIR *dir = opendir(d.path.c_str())) {
    while (dirent *e = readdir(dir))
      found |= std::string(e->d_name).find(".tmp") != std::string::npos;
    closedir(dir);
  }
  return found;
}

TEST(Checkpoint, MissingStepIsAnError) {
  TempDir d;
  ASSERT_TRUE(
      writeSafetensors(d.file("p.safetensors"), {tensor("w", 2, 0)}, {{"format", "pt"}}).ok());
  std::string error = failureOf(readCheckpoint(d.file("p.safetensors")), StatusCode::Corrupt);
  EXPECT_NE(error.find("'step'"), std::string::npos) << error;
  error = failureOf(readCheckpoint(d.file("none.safetensors")), StatusCode::NotFound);
  EXPECT_NE(error.find("none.safetensors"), std::string::npos) << error;
}

// A writer killed at a random moment of an atomic write leaves the previous
// checkpoint whole: the file at `path` always parses, as the old or the new.
TEST(Checkpoint, KillDuringWriteLeavesPreviousWhole) {
  TempDir d;
  const std::string path = d.file("last.safetensors");
  CheckpointInfo old;
  old.step = 1;
  ASSERT_TRUE(writeCheckpoint(path, {tensor("w", 16, 1.0)}, old).ok());
  const int64_t big = 8 << 20; // 32 MB: the write takes a while
  int midWrite = 0;            // kills that left a temporary file: caught mid-write
  for (int trial = 0; trial < 4; ++trial) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Built once: the loop's time goes to writing.
      std::vector<TensorData> tensors = {tensor("w", big, 2.0)};
      CheckpointInfo info;
      for (int64_t step = 2;; ++step) {
        info.step = step;
        writeCheckpoint(path, tensors, info).ignore();
      }
    }
    // Wait until the child is inside a write (its temporary file exists),
    // then kill it a little later: 0, 3, 10, 30 ms into the write.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!hasTemporary(d) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    const int delays[] = {0, 3, 10, 30};
    std::this_thread::sleep_for(std::chrono::milliseconds(delays[trial]));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
    if (DIR *dir = opendir(d.path.c_str())) {
      while (dirent *e = readdir(dir))
        if (std::string(e->d_name).find(".tmp") != std::string::npos) {
          ++midWrite;
          unlink(d.file(e->d_name).c_str());
        }
      closedir(dir);
    }
    auto c = readCheckpoint(path);
    ASSERT_TRUE(c.ok()) << "trial " << trial << ": " << c.status().message();
    const TensorData *w = c->find("w");
    ASSERT_TRUE(w);
    std::vector<double> v = w->toDoubles();
    if (c->info.step == 1) {
      EXPECT_EQ(v.size(), 16u);
    } else {
      EXPECT_EQ(int64_t(v.size()), big);
      EXPECT_EQ(v.front(), 2.0);
      EXPECT_EQ(v.back(), 2.0);
    }
  }
  EXPECT_GT(midWrite, 0) << "no kill landed inside a write";
}

} // namespace

TEST(Checkpoint, MismatchNamesMissingExtraAndShapes) {
  std::vector<TensorData> ck = {tensor("w", 3, 0),    tensor("w.m", 3, 0), tensor("w.v", 3, 0),
                                tensor("b", 2, 0),    tensor("b.m", 5, 0), tensor("old", 4, 0),
                                tensor("old.m", 4, 0)};
  // Params w [3] and b [2] with their state: a fit (b.m has the wrong
  // shape for b's state: extra).
  std::vector<ParamShape> params = {{"w", {3}}, {"b", {2}}};
  EXPECT_EQ(checkpointMismatch(ck, params),
            "  2 extra tensors (not params of the model): b.m [5], old [4]");
  ck.erase(ck.begin() + 4, ck.end());
  EXPECT_EQ(checkpointMismatch(ck, params), "");
  params = {{"w", {4}}, {"b", {2}}, {"c", {1}}};
  EXPECT_EQ(checkpointMismatch(ck, params), "  1 missing param: c [1]\n"
                                            "  1 shape mismatch: w: checkpoint [3], model [4]");
}

namespace {

/// A checkpoint as an einc before checksums wrote it (`format` its `einc`
/// metadata): one tensor w = [1, 2], step 3, no checksums.
std::string uncheckedCheckpoint(const TempDir &d, const std::string &format) {
  std::string header = "{\"__metadata__\":{\"einc\":\"" + format +
                       "\",\"step\":\"3\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2],"
                       "\"data_offsets\":[0,8]}}";
  std::vector<uint8_t> file;
  for (int i = 0; i < 8; ++i)
    file.push_back(uint8_t(uint64_t(header.size()) >> (8 * i)));
  file.insert(file.end(), header.begin(), header.end());
  const float w[2] = {1, 2};
  const uint8_t *p = reinterpret_cast<const uint8_t *>(w);
  file.insert(file.end(), p, p + 8);
  std::string path = d.file(format == "checkpoint 1" ? "old.safetensors" : "stripped.safetensors");
  writeBytes(path, file);
  return path;
}

} // namespace

// Checkpoints carry checksums and the settings record (format 2); a format-1
// checkpoint (none of either) is read with a note, a format-2 one stripped
// of its checksums is refused.
TEST(Checkpoint, FormatTwoCarriesChecksumsAndSettings) {
  TempDir d;
  CheckpointInfo info;
  info.step = 4;
  info.settings = SettingsRecord{{"seed", "1"}, {"dim d", "8"}, {"argument w", "f32[4]"}};
  info.configHash = settingsHash(*info.settings);
  ASSERT_TRUE(writeCheckpoint(d.file("c.safetensors"), {tensor("w", 4, 1.5)}, info).ok());
  auto c = readCheckpoint(d.file("c.safetensors"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->checksummed);
  EXPECT_EQ(c->metadata.at("einc"), "checkpoint 2");
  EXPECT_EQ(c->info.settings, info.settings); // in the order written
  EXPECT_EQ(uncheckedNote(d.file("c.safetensors"), c->checksummed), "");

  std::string old = uncheckedCheckpoint(d, "checkpoint 1");
  auto o = readCheckpoint(old);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_FALSE(o->checksummed);
  EXPECT_FALSE(o->info.settings);
  EXPECT_EQ(o->find("w")->toDoubles(), (std::vector<double>{1, 2}));
  EXPECT_EQ(uncheckedNote(old, false),
            "note: '" + old +
                "' carries no checksums (written by an einc before they were stored, or by "
                "another writer): its tensors are read unverified");

  std::string stripped = uncheckedCheckpoint(d, "checkpoint 2");
  EXPECT_EQ(failureOf(readCheckpoint(stripped), StatusCode::Corrupt),
            "checkpoint '" + stripped +
                "' (checkpoint 2) carries no checksums: its header was changed, its "
                "tensors cannot be verified");
}

TEST(Checkpoint, SettingsDifferenceNamesEachChange) {
  SettingsRecord was = {{"seed", "0"}, {"lr", "0.001"}, {"dim d", "8"}, {"gone", "x"}};
  SettingsRecord now = {{"seed", "0"}, {"lr", "0.003"}, {"dim d", "16"}, {"fusion", "off"}};
  EXPECT_EQ(settingsDifference(was, was), "");
  EXPECT_EQ(settingsDifference(was, now), "lr '0.001', now '0.003'; dim d '8', now '16'; fusion "
                                          "(none), now 'off'; gone 'x', now (none)");
  EXPECT_EQ(settingsDifference(was, now, 2),
            "lr '0.001', now '0.003'; dim d '8', now '16' and 2 more");
  EXPECT_NE(settingsHash(was), settingsHash(now));
}
