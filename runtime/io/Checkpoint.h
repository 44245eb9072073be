//===- Checkpoint.h - Training checkpoints in safetensors -----------------===//
//
// A checkpoint is a safetensors file (loadable by PyTorch's safetensors
// reader) holding every param and optimizer-state tensor under the Program's
// argument names (`layer.0.w`, `layer.0.w.m`, ...) in their Program dtypes
// (with loss scaling also the scaler's rank-0 `loss_scale`, `good_steps`,
// `skipped_steps`: runtime/base/LossScaleState.h), and string metadata:
//   format        "pt"
//   einc          "checkpoint 2" (1: before checksums and settings)
//   crc32c.NAME   each tensor's checksum (runtime/core/Safetensors.h)
//   step          the last completed step (decimal)
//   optimizer_step the optimizer's update count t (differs from step only
//                 after a resume with reset_optimizer)
//   sampler       the training window sampler's state (rows + Rng, hex)
//   schedule      Schedule::describe()
//   settings      the settings a resume must match, by name: a JSON object
//                 of strings ({"seed": "0", "lr": "0.001", ...})
//   config_hash   16 hex digits: FNV-1a of `settings`
//   val_loss      the last validation loss ("" if none)
//   best_val_loss the lowest validation loss so far ("" if none)
// Writes are atomic (writeSafetensors: temporary file, fsync, rename, fsync
// of the directory), so a kill at any moment leaves the previous file whole.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CHECKPOINT_H
#define EINC_RUNTIME_CHECKPOINT_H

#include "runtime/core/Executor.h"
#include "runtime/core/Safetensors.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace einrt {

/// Settings by name, in a fixed order (what a resume must keep).
using SettingsRecord = std::vector<std::pair<std::string, std::string>>;

struct CheckpointInfo {
  int64_t step = 0;
  int64_t optimizerStep = 0;
  std::string sampler;
  std::string schedule;
  std::optional<SettingsRecord> settings; // none in a format-1 checkpoint
  std::string configHash;                 // of `settings` (format 1: of other text)
  std::optional<double> valLoss;
  std::optional<double> bestValLoss;
};

struct Checkpoint {
  CheckpointInfo info;
  std::vector<TensorData> tensors;
  SafetensorsMetadata metadata; // everything but the checksums, unknown keys included
  bool checksummed = false;     // its tensors were verified (format 1: none to verify)
  /// The tensor named `name`, or null.
  const TensorData *find(const std::string &name) const;
};

/// For the loaders of einc's safetensors files (resume, --init-from,
/// sample, run --load), after readSafetensors verified the checksums that
/// `path` carried: the refusal of an einc checkpoint of format 2 or later
/// that carries none (its header was changed), else "".
std::string missingChecksums(const std::string &path, const SafetensorsMetadata &metadata,
                             bool checksummed);
/// "" for a checksummed file; else a one-line note that `path`'s tensors
/// were read unverified (a format-1 checkpoint, or another writer's file),
/// for the loaders to print.
std::string uncheckedNote(const std::string &path, bool checksummed);

/// The settings record as the checkpoint stores it (a JSON object), and
/// its config hash (FNV-1a of that text).
std::string settingsText(const SettingsRecord &settings);
std::string settingsHash(const SettingsRecord &settings);

/// The settings of `recorded` (a checkpoint's) that `now` differs in, one
/// "NAME OLD, now NEW" each ("(none)" where one side lacks it), in `now`'s
/// order then the recorded-only ones; the first `limit`, then "and K more".
/// "" when they agree.
std::string settingsDifference(const SettingsRecord &recorded, const SettingsRecord &now,
                               size_t limit = 8);

/// The metadata map for `info` (doubles printed with 17 significant digits).
SafetensorsMetadata checkpointMetadata(const CheckpointInfo &info);

/// Writes `tensors` with `info` atomically to `path` (writeSafetensors's
/// failure, naming the file and the step).
Status writeCheckpoint(const std::string &path, const std::vector<TensorData> &tensors,
                       const CheckpointInfo &info);

/// Reads a checkpoint; fails naming the file: readSafetensors's NotFound,
/// Io or OutOfMemory, and Corrupt for a corrupt file (a tensor that fails
/// its checksum named), a format-2 checkpoint without checksums, missing or
/// malformed `step` metadata or a malformed `settings`. Other keys are
/// optional.
Expected<Checkpoint> readCheckpoint(const std::string &path);

/// "" when `dir` holds no `last.safetensors`; else the refusal of a fresh run
/// that would overwrite it, naming the file, its step and the two ways on
/// (--resume, --overwrite).
std::string checkpointInTheWay(const std::string &dir);

/// A param a checkpoint must hold for a model.
struct ParamShape {
  std::string name;
  std::vector<int64_t> shape;
};

/// "" when `tensors` fit the model's `params`: each param is there with its
/// shape, and every other tensor is optimizer state (`P.SLOT`, e.g.
/// `layer.0.w.m`, with the shape of tensor P) or the loss scaler's (rank 0,
/// named in runtime/base/LossScaleState.h). Else one line per kind of
/// problem, each starting with two spaces (the first 16 entries of each):
///   "  N missing params: w1 [512, 256], ..."
///   "  N extra tensors (not params of the model): layer.1.w [..], ..."
///   "  N shape mismatches: w1: checkpoint [512, 512], model [512, 256]; ..."
std::string checkpointMismatch(const std::vector<TensorData> &tensors,
                               const std::vector<ParamShape> &params);

/// FNV-1a 64 of `text` as 16 hex digits.
std::string hashText(const std::string &text);

} // namespace einrt

#endif // EINC_RUNTIME_CHECKPOINT_H
