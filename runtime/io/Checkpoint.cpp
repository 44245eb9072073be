//===- Checkpoint.cpp - Training checkpoints in safetensors ---------------===//
#include "runtime/io/Checkpoint.h"
#include "runtime/base/LossScaleState.h"
#include "runtime/base/StrictJson.h"
#include "runtime/base/TerminalText.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <unistd.h>

namespace einrt {

const TensorData *Checkpoint::find(const std::string &name) const {
  for (const TensorData &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool parseInt(const std::string &s, int64_t &v) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  v = std::strtoll(s.c_str(), nullptr, 10);
  return true;
}

bool parseOptionalDouble(const std::string &s, std::optional<double> &v) {
  if (s.empty()) {
    v.reset();
    return true;
  }
  char *end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (*end)
    return false;
  v = d;
  return true;
}

} // namespace

std::string checkpointInTheWay(const std::string &dir) {
  std::string path = dir + "/last.safetensors";
  if (::access(path.c_str(), F_OK) != 0)
    return "";
  std::string step = "unreadable";
  if (Expected<Checkpoint> ck = readCheckpoint(path); ck.ok())
    step = "step " + std::to_string(ck->info.step);
  return einrt::quoted(path) + " holds a checkpoint (" + step +
         ") that this run would overwrite: continue it with --resume, or "
         "start over with --overwrite";
}

namespace {

/// "  N <what>: a, b, ... and K more" (the first 16 items).
std::string listLine(const std::vector<std::string> &items, const char *one, const char *many,
                     const char *separator) {
  constexpr size_t kShown = 16;
  std::string line =
      "  " + std::to_string(items.size()) + " " + (items.size() == 1 ? one : many) + ": ";
  for (size_t i = 0; i < items.size() && i < kShown; ++i)
    line += (i ? separator : "") + items[i];
  if (items.size() > kShown)
    line += " and " + std::to_string(items.size() - kShown) + " more";
  return line;
}

} // namespace

std::string checkpointMismatch(const std::vector<TensorData> &tensors,
                               const std::vector<ParamShape> &params) {
  std::map<std::string, const TensorData *> byName;
  for (const TensorData &t : tensors)
    byName[t.name] = &t;
  std::map<std::string, const ParamShape *> paramByName;
  for (const ParamShape &p : params)
    paramByName[p.name] = &p;
  std::vector<std::string> missing, extra, mismatched;
  for (const ParamShape &p : params) {
    auto it = byName.find(p.name);
    if (it == byName.end())
      missing.push_back(p.name + " " + shapeText(p.shape));
    else if (it->second->shape != p.shape)
      mismatched.push_back(p.name + ": checkpoint " + shapeText(it->second->shape) + ", model " +
                           shapeText(p.shape));
  }
  for (const TensorData &t : tensors) {
    if (paramByName.count(t.name))
      continue;
    // The loss scaler's state (a rank-0 tensor each).
    if (isLossScaleState(t.name) && t.shape.empty())
      continue;
    // Optimizer state: P.SLOT of a tensor P of the same shape (an extra P
    // is named itself; its state is not repeated).
    size_t dot = t.name.rfind('.');
    if (dot != std::string::npos) {
      auto owner = byName.find(t.name.substr(0, dot));
      if (owner != byName.end() && owner->second->shape == t.shape)
        continue;
    }
    extra.push_back(t.name + " " + shapeText(t.shape));
  }
  std::string out;
  auto add = [&](const std::string &line) { out += (out.empty() ? "" : "\n") + line; };
  if (!missing.empty())
    add(listLine(missing, "missing param", "missing params", ", "));
  if (!extra.empty())
    add(listLine(extra, "extra tensor (not a param of the model)",
                 "extra tensors (not params of the model)", ", "));
  if (!mismatched.empty())
    add(listLine(mismatched, "shape mismatch", "shape mismatches", "; "));
  return out;
}

std::string hashText(const std::string &text) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

std::string missingChecksums(const std::string &path, const SafetensorsMetadata &metadata,
                             bool checksummed) {
  auto it = metadata.find("einc");
  if (checksummed || it == metadata.end() || it->second == "checkpoint 1")
    return "";
  return "'" + path + "' (" + it->second +
         ") carries no checksums: its header was changed, its tensors cannot be verified";
}

std::string uncheckedNote(const std::string &path, bool checksummed) {
  if (checksummed)
    return "";
  return "note: '" + path +
         "' carries no checksums (written by an einc before they were stored, or by another "
         "writer): its tensors are read unverified";
}

std::string settingsText(const SettingsRecord &settings) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto &[name, value] : settings)
    j[name] = value;
  return dumpJson(j);
}

std::string settingsHash(const SettingsRecord &settings) {
  return hashText(settingsText(settings));
}

std::string settingsDifference(const SettingsRecord &recorded, const SettingsRecord &now,
                               size_t limit) {
  std::map<std::string, std::string> before(recorded.begin(), recorded.end());
  std::vector<std::string> changes;
  auto change = [&](const std::string &name, const std::string *was, const std::string *is) {
    changes.push_back(name + " " + (was ? "'" + *was + "'" : "(none)") + ", now " +
                      (is ? "'" + *is + "'" : "(none)"));
  };
  std::set<std::string> seen;
  for (const auto &[name, value] : now) {
    seen.insert(name);
    auto it = before.find(name);
    if (it == before.end())
      change(name, nullptr, &value);
    else if (it->second != value)
      change(name, &it->second, &value);
  }
  for (const auto &[name, value] : recorded)
    if (!seen.count(name))
      change(name, &value, nullptr);
  std::string out;
  for (size_t i = 0; i < changes.size() && i < limit; ++i)
    out += (i ? "; " : "") + changes[i];
  if (changes.size() > limit)
    out += " and " + std::to_string(changes.size() - limit) + " more";
  return out;
}

SafetensorsMetadata checkpointMetadata(const CheckpointInfo &info) {
  SafetensorsMetadata m;
  m["format"] = "pt";
  m["einc"] = "checkpoint 2";
  m["step"] = std::to_string(info.step);
  m["optimizer_step"] = std::to_string(info.optimizerStep);
  m["sampler"] = info.sampler;
  m["schedule"] = info.schedule;
  if (info.settings)
    m["settings"] = settingsText(*info.settings);
  m["config_hash"] = info.configHash;
  m["val_loss"] = info.valLoss ? num(*info.valLoss) : "";
  m["best_val_loss"] = info.bestValLoss ? num(*info.bestValLoss) : "";
  return m;
}

Status writeCheckpoint(const std::string &path, const std::vector<TensorData> &tensors,
                       const CheckpointInfo &info) {
  return writeSafetensors(path, tensors, checkpointMetadata(info))
      .withContext("cannot write checkpoint " + einrt::quoted(path) + " at step " +
                   std::to_string(info.step) + ": ");
}

Expected<Checkpoint> readCheckpoint(const std::string &path) {
  Checkpoint c;
  Expected<std::vector<TensorData>> tensors = readSafetensors(path, c.metadata, &c.checksummed);
  if (!tensors.ok())
    return tensors.takeStatus().withContext("cannot read checkpoint " + einrt::quoted(path) + ": ");
  c.tensors = tensors.take();
  auto get = [&](const char *key) {
    auto it = c.metadata.find(key);
    return it == c.metadata.end() ? std::string() : it->second;
  };
  auto bad = [&](const std::string &key) {
    return Status(StatusCode::Corrupt, "checkpoint " + einrt::quoted(path) +
                                           ": malformed or missing metadata " + einrt::quoted(key) +
                                           " (" + einrt::quoted(get(key.c_str())) + ")");
  };
  // Format 2 and later always carry checksums: none means the header was
  // rewritten, and the data can no longer be trusted.
  if (std::string missing = missingChecksums(path, c.metadata, c.checksummed); !missing.empty())
    return Status(StatusCode::Corrupt, "checkpoint " + missing);
  if (!parseInt(get("step"), c.info.step))
    return bad("step");
  if (c.metadata.count("settings")) {
    std::vector<std::string> names; // in the file's order
    const std::string &text = c.metadata["settings"];
    Expected<nlohmann::json> parsed = parseStrictJson(text.data(), text.size(), &names);
    if (!parsed.ok() || !parsed->is_object())
      return bad("settings");
    nlohmann::json j = parsed.take();
    SettingsRecord record;
    for (const std::string &name : names) {
      const nlohmann::json &value = j[name];
      if (!value.is_string())
        return bad("settings");
      record.emplace_back(name, value.get<std::string>());
    }
    c.info.settings = std::move(record);
  }
  if (get("optimizer_step").empty())
    c.info.optimizerStep = c.info.step;
  else if (!parseInt(get("optimizer_step"), c.info.optimizerStep))
    return bad("optimizer_step");
  c.info.sampler = get("sampler");
  c.info.schedule = get("schedule");
  c.info.configHash = get("config_hash");
  if (!parseOptionalDouble(get("val_loss"), c.info.valLoss))
    return bad("val_loss");
  if (!parseOptionalDouble(get("best_val_loss"), c.info.bestValLoss))
    return bad("best_val_loss");
  return c;
}

} // namespace einrt
