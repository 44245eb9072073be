//===- TrainerShard.cpp - ZeRO-1: each rank the state of its params -------===//
//
// With --shard-optimizer each rank's @apply_update updates only the params
// runtime/base/ShardPlan.h gives it and holds only their optimizer state
// (passes/ShardOptimizer.cpp). After the update the owners broadcast their
// params (with the device's collectives, buffer to buffer on the device); a
// checkpoint gathers the state to rank 0, which writes the file
// one process would write (the same tensors, in the same order, under the
// same config hash), so a sharded run resumes unsharded and the other way.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/ShardPlan.h"
#include "runtime/train/Trainer.h"
#include "runtime/train/TrainerImpl.h"

#include <cstring>
#include <map>

namespace einrt {

using trainer_detail::argText;
using trainer_detail::gather;

namespace {

/// The param (index among `names`) a state slot named "<param>.<slot>"
/// belongs to: the longest param name that prefixes it; -1 for none (the
/// loss scaler's state).
int64_t paramOfState(const std::string &state, const std::vector<std::string> &names) {
  int64_t best = -1;
  for (size_t k = 0; k < names.size(); ++k)
    if (state.size() > names[k].size() + 1 && state.compare(0, names[k].size(), names[k]) == 0 &&
        state[names[k].size()] == '.' && (best < 0 || names[k].size() > names[size_t(best)].size()))
      best = int64_t(k);
  return best;
}

Status sendBlob(Communicator &c, const void *data, int64_t bytes, int to) {
  EINRT_TRY(c.send(&bytes, sizeof bytes, to));
  EINRT_TRY(c.send(data, bytes, to));
  return c.waitSends();
}

Status recvBlob(Communicator &c, std::vector<uint8_t> &out, int from) {
  int64_t bytes = 0;
  EINRT_TRY(c.recv(&bytes, sizeof bytes, from));
  if (bytes < 0 || bytes > (int64_t(1) << 40))
    return Status(StatusCode::Corrupt, "a message of " + std::to_string(bytes) +
                                           " bytes from rank " + std::to_string(from));
  out.resize(size_t(bytes));
  return c.recv(out.data(), bytes, from);
}

/// A tensor as bytes: name, dtype, shape, data (rank 0 assembles the
/// checkpoint from them).
std::vector<uint8_t> pack(const TensorData &t) {
  std::vector<int64_t> head{int64_t(t.name.size()), int64_t(t.dtype), int64_t(t.shape.size()),
                            int64_t(t.bytes.size())};
  head.insert(head.end(), t.shape.begin(), t.shape.end());
  std::vector<uint8_t> out(head.size() * 8 + t.name.size() + t.bytes.size());
  std::memcpy(out.data(), head.data(), head.size() * 8);
  std::memcpy(out.data() + head.size() * 8, t.name.data(), t.name.size());
  if (!t.bytes.empty())
    std::memcpy(out.data() + head.size() * 8 + t.name.size(), t.bytes.data(), t.bytes.size());
  return out;
}

Status unpack(const std::vector<uint8_t> &in, TensorData &t) {
  int64_t head[4];
  if (in.size() < sizeof head)
    return Status(StatusCode::Corrupt, "a truncated tensor message");
  std::memcpy(head, in.data(), sizeof head);
  size_t at = sizeof head;
  if (head[0] < 0 || head[2] < 0 || head[2] > 16 || head[3] < 0 ||
      in.size() != at + size_t(head[2]) * 8 + size_t(head[0]) + size_t(head[3]))
    return Status(StatusCode::Corrupt, "a malformed tensor message");
  t.shape.resize(size_t(head[2]));
  std::memcpy(t.shape.data(), in.data() + at, size_t(head[2]) * 8);
  at += size_t(head[2]) * 8;
  t.name.assign(reinterpret_cast<const char *>(in.data() + at), size_t(head[0]));
  at += size_t(head[0]);
  t.dtype = DType(head[1]);
  t.bytes.assign(in.begin() + std::ptrdiff_t(at), in.end());
  return {};
}

} // namespace

Status Trainer::prepareShards() {
  Impl &I = *impl;
  Communicator &comm = *cfg.comm;
  const int me = comm.rank(), n = comm.size();
  const Program &hp = I.holder->program();
  if (I.holder != progs.apply)
    return Status::invalid("--shard-optimizer shards @apply_update, which this run does not use");
  std::vector<std::string> names;
  std::vector<int64_t> elements;
  for (size_t k = 0; k < I.paramCount; ++k) {
    names.push_back(I.slots[k].name);
    elements.push_back(hp.buffers[I.holderBuf(I.slots[k])].elementCount());
  }
  std::vector<int> owners = shardOwners(elements, n);
  for (size_t k = 0; k < I.paramCount; ++k) {
    Impl::Slot &s = I.slots[k];
    s.owner = owners[k];
    if ((s.owner == me) != s.owned)
      return Status::invalid("@apply_update was sharded for another plan: param '" + s.name +
                             "' is rank " + std::to_string(s.owner) + "'s of " + std::to_string(n) +
                             ", but rank " + std::to_string(me) + "'s program " +
                             (s.owned ? "updates" : "does not update") + " it");
  }
  // This rank's state slots, by param; every state slot must be of a
  // param this rank owns (the scaler's state is everyone's).
  I.paramState.assign(I.paramCount, {});
  std::string mine; // "k\tname:dtype[shape],\n" per owned state slot
  for (size_t i = I.paramCount; i < I.slots.size(); ++i) {
    const Impl::Slot &s = I.slots[i];
    if (s.scaler)
      continue;
    int64_t k = paramOfState(s.name, names);
    if (k < 0 || !I.slots[size_t(k)].owned)
      return Status::invalid(
          "@apply_update holds the optimizer state '" + s.name + "' of " +
          (k < 0 ? "no param" : "another rank's param '" + names[size_t(k)] + "'"));
    I.paramState[size_t(k)].push_back(i);
    mine += std::to_string(k) + "\t" + argText(hp.buffers[I.holderBuf(s)]) + "\n";
  }
  // Every rank's state words, for the config hash one process computes.
  std::map<int64_t, std::string> stateWords;
  for (int r = 0; r < n; ++r) {
    int64_t bytes = r == me ? int64_t(mine.size()) : 0;
    EINRT_TRY(comm.broadcast(&bytes, sizeof bytes, r));
    std::string text = r == me ? mine : std::string(size_t(bytes), '\0');
    if (bytes > 0)
      EINRT_TRY(comm.broadcast(text.data(), bytes, r));
    for (size_t at = 0; at < text.size();) {
      size_t tab = text.find('\t', at), nl = text.find('\n', at);
      if (tab == std::string::npos || nl == std::string::npos || tab > nl)
        return Status(StatusCode::Corrupt,
                      "malformed shard description from rank " + std::to_string(r));
      stateWords[std::stoll(text.substr(at, tab - at))] += text.substr(tab + 1, nl - tab - 1);
      at = nl + 1;
    }
  }
  // One process's @apply_update: params, grads, every param's state in
  // param order, the scaler's state, the scalars.
  std::string args, grads, scaler, scalars;
  for (size_t a = 0; a < hp.arguments.size(); ++a) {
    const Buffer &b = hp.buffers[size_t(hp.arguments[a])];
    if (b.role == BufferRole::Param)
      args += argText(b);
    else if (b.role == BufferRole::Scalar)
      scalars += argText(b);
    else if (b.role == BufferRole::OptState) {
      if (paramOfState(b.name, names) < 0)
        scaler += argText(b);
    } else
      grads += argText(b);
  }
  args += grads;
  for (size_t k = 0; k < I.paramCount; ++k)
    args += stateWords[int64_t(k)];
  I.unshardedArgs = args + scaler + scalars;
  return Status::success();
}

Status Trainer::allGatherParams() {
  Impl &I = *impl;
  if (cfg.collectives) { // device to device: the owner's buffer into every rank's
    for (size_t k = 0; k < I.paramCount; ++k) {
      const Impl::Slot &s = I.slots[k];
      size_t buffer = I.holderBuf(s);
      int64_t bytes = I.holder->elementCount(buffer) * storageBytes(I.holder->storageOf(buffer));
      EINRT_TRY(cfg.collectives->broadcast(I.holder->deviceData(buffer), bytes, s.owner));
    }
    return Status::success();
  }
  Communicator &comm = *cfg.comm;
  std::vector<float> values;
  for (size_t k = 0; k < I.paramCount; ++k) {
    const Impl::Slot &s = I.slots[k];
    size_t buffer = I.holderBuf(s);
    int64_t count = I.holder->elementCount(buffer);
    values.resize(size_t(count));
    if (s.owned)
      EINRT_TRY(gather(*I.holder, buffer, values.data()));
    EINRT_TRY(comm.broadcast(values.data(), count * int64_t(sizeof(float)), s.owner));
    if (!s.owned)
      EINRT_TRY(I.holder->setArgument(s.holderArg, values.data(), values.size()));
  }
  return Status::success();
}

Expected<std::vector<TensorData>> Trainer::gatherState() const {
  const Impl &I = *impl;
  Communicator &comm = *cfg.comm;
  const int me = comm.rank();
  std::vector<TensorData> out;
  auto exportSlot = [&](size_t i) -> Expected<TensorData> {
    Expected<TensorData> t = I.holder->exportBuffer(I.holderBuf(I.slots[i]));
    if (t.ok())
      t->name = I.slots[i].name;
    return t;
  };
  auto keepSlot = [&](size_t i) -> Status {
    Expected<TensorData> t = exportSlot(i);
    if (!t.ok())
      return t.takeStatus();
    out.push_back(t.take());
    return Status::success();
  };
  if (me == 0)
    for (size_t k = 0; k < I.paramCount; ++k) // every param (all-gathered)
      EINRT_TRY(keepSlot(k));
  for (size_t k = 0; k < I.paramCount; ++k) {
    const int owner = I.slots[k].owner;
    if (owner == me && me == 0) {
      for (size_t i : I.paramState[k])
        EINRT_TRY(keepSlot(i));
    } else if (owner == me) { // to rank 0: the count, then each tensor
      int64_t count = int64_t(I.paramState[k].size());
      EINRT_TRY(comm.send(&count, sizeof count, 0));
      EINRT_TRY(comm.waitSends());
      for (size_t i : I.paramState[k]) {
        Expected<TensorData> t = exportSlot(i);
        if (!t.ok())
          return t.takeStatus();
        std::vector<uint8_t> bytes = pack(*t);
        EINRT_TRY(sendBlob(comm, bytes.data(), int64_t(bytes.size()), 0));
      }
    } else if (me == 0) {
      int64_t count = 0;
      EINRT_TRY(comm.recv(&count, sizeof count, owner));
      for (int64_t j = 0; j < count; ++j) {
        std::vector<uint8_t> bytes;
        TensorData t;
        EINRT_TRY(recvBlob(comm, bytes, owner));
        EINRT_TRY(unpack(bytes, t));
        out.push_back(std::move(t));
      }
    }
  }
  if (me == 0)
    for (size_t i = I.paramCount; i < I.slots.size(); ++i)
      if (I.slots[i].scaler)
        EINRT_TRY(keepSlot(i));
  if (me != 0)
    out.clear();
  return out;
}

Expected<std::vector<int64_t>> Trainer::optimizerStateBytes() const {
  const Impl &I = *impl;
  int64_t mine = 0;
  for (size_t i = I.paramCount; i < I.slots.size(); ++i)
    if (!I.slots[i].scaler) {
      const Buffer &b = I.holder->program().buffers[I.holderBuf(I.slots[i])];
      mine += b.elementCount() * dtypeSize(b.dtype);
    }
  std::vector<int64_t> perRank(size_t(ranks()), 0);
  for (int r = 0; r < int(ranks()); ++r) {
    int64_t bytes = cfg.comm && r != cfg.comm->rank() ? 0 : mine;
    if (cfg.comm && ranks() > 1)
      EINRT_TRY(cfg.comm->broadcast(&bytes, sizeof bytes, r));
    perRank[size_t(r)] = bytes;
  }
  return perRank;
}

} // namespace einrt
