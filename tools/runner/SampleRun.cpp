//===- SampleRun.cpp - `sample`: text from a trained model ----------------===//
//
// The forward's two i32 inputs are the context and the targets (as the
// trainer maps windows, runtime/io/TokenData.h):
//
//   next_token: the context is the last `window` tokens (left-padded with
//               '\n' while the text is shorter); the logits [batch, vocab]
//               predict the next token.
//   shifted:    the context holds the last n ≤ ctx tokens at positions
//               0..n-1 (zeros after them; a causal model does not look
//               ahead); the logits at position n-1 predict the next token.
//
// Every row of the batch gets the same context (the compiler lowers the
// forward with batch 1 for sampling, where the model has a `batch` dim).
// The targets are zeros (the loss is not used). A token is drawn from
// softmax(logits / T) restricted to the top K logits (ties: the lower id),
// with an einrt::Rng stream seeded by --seed, so a seed fixes the text.
//
// With `decode` (shifted windows; passes/DecodeStep.cpp), while the text
// fits the window the logits come from the decode step, one new position a
// call with the keys and values of the others cached (SampleDecode.h): the
// same logits up to f32 rounding, without recomputing the window. Once the
// window slides every position moves, and the forward recomputes it.
//
//===----------------------------------------------------------------------===//
#include "Runner.h"
#include "SampleDecode.h"

#include "runtime/base/TerminalText.h"
#include "runtime/core/Init.h"
#include "runtime/core/Safetensors.h"
#include "runtime/io/Checkpoint.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>

namespace einc::runner {
namespace {

/// Index of the token drawn from `logits`.
int32_t draw(const std::vector<double> &logits, double temperature, int64_t topK, einrt::Rng &rng) {
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  if (topK > 0 && static_cast<size_t>(topK) < ids.size()) {
    std::stable_sort(ids.begin(), ids.end(),
                     [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    ids.resize(topK);
    std::sort(ids.begin(), ids.end());
  }
  double top = -INFINITY;
  for (int32_t i : ids)
    top = std::max(top, logits[i]);
  std::vector<double> weights;
  double sum = 0;
  for (int32_t i : ids) {
    double w = std::exp((logits[i] - top) / temperature);
    weights.push_back(w);
    sum += w;
  }
  double u = rng.uniform() * sum;
  for (size_t k = 0; k < ids.size(); ++k) {
    if (u < weights[k])
      return ids[k];
    u -= weights[k];
  }
  return ids.back();
}

} // namespace

int sample(const RunContext &context, const RunOptions &o, const einrt::ModelBundle &bundle,
           const einrt::TrainSettings &settings, const std::string &function,
           const Backend &backend, const std::string &decode) {
  auto fail = [&](const std::string &message) { return context.fail("sample", message); };
  Loaded loaded;
  std::vector<std::string> functions{function};
  if (!decode.empty())
    functions.push_back(decode);
  if (einrt::Status ok = load(bundle, functions, backend, loaded); !ok.ok())
    return fail(ok.message());
  einrt::Executor &ex = *loaded.executors.front();
  const einrt::Program &p = ex.program();

  std::optional<einrt::WindowMapping> mapping;
  if (settings.data)
    mapping = einrt::parseWindowMapping(*settings.data);
  if (!mapping) {
    einrt::Expected<einrt::WindowMapping> inferred = einrt::inferWindowMapping(p);
    if (!inferred.ok())
      return fail("cannot tell which input is the context: " + inferred.status().message());
    mapping = *inferred;
  }
  einrt::Expected<einrt::WindowLayout> layout = einrt::windowLayout(p, *mapping);
  if (!layout.ok())
    return fail(layout.status().message());

  // The logits: the result named "logits", else the first output of the
  // right rank (next_token: [batch, vocab]; shifted: [batch, ctx, vocab]).
  size_t rank = *mapping == einrt::WindowMapping::NextToken ? 2 : 3;
  int64_t logitsResult = -1;
  for (size_t r = 1; r < p.results.size(); ++r)
    if (p.resultNames[r] == "logits")
      logitsResult = r;
  for (size_t r = 1; r < p.results.size() && logitsResult < 0; ++r)
    if (p.buffers[p.results[r]].shape.size() == rank)
      logitsResult = r;
  if (logitsResult < 0)
    return fail("@forward has no logits output (`output logits` of rank " + std::to_string(rank) +
                ")");
  const std::vector<int64_t> &logitsShape = p.buffers[p.results[logitsResult]].shape;
  if (logitsShape.size() != rank)
    return fail("the output 'logits' has rank " + std::to_string(logitsShape.size()) +
                ", expected " + std::to_string(rank) + " for " +
                einrt::windowMappingName(*mapping) + " windows");
  int64_t outVocab = logitsShape.back();
  int64_t vocab = bundle.vocab();
  if (vocab == 0)
    vocab = outVocab;

  // The params, by name, from the checkpoint.
  einrt::SafetensorsMetadata metadata;
  bool checksummed = false;
  auto tensors = einrt::readSafetensors(o.checkpoint, metadata, &checksummed);
  if (!tensors.ok())
    return fail("cannot read " + einrt::quoted(o.checkpoint) + ": " + tensors.status().message());
  if (std::string missing = einrt::missingChecksums(o.checkpoint, metadata, checksummed);
      !missing.empty())
    return fail(missing);
  if (std::string note = einrt::uncheckedNote(o.checkpoint, checksummed); !note.empty())
    std::cerr << context.tool << " sample: " << note << "\n";
  // Every param with its shape and nothing else but optimizer state: a
  // checkpoint of another model (other layers, other dims) is refused.
  std::vector<einrt::ParamShape> params;
  for (int32_t a : p.arguments)
    if (p.buffers[a].role == einrt::BufferRole::Param)
      params.push_back({p.buffers[a].name, p.buffers[a].shape});
  std::string mismatch = einrt::checkpointMismatch(*tensors, params);
  if (!mismatch.empty())
    return fail(einrt::quoted(o.checkpoint) +
                " does not fit the model (is it a checkpoint of it? --set the dims it was "
                "trained with):\n" +
                mismatch);
  for (auto &loadedEx : loaded.executors) {
    const einrt::Program &into = loadedEx->program();
    for (int32_t a : into.arguments) {
      const einrt::Buffer &b = into.buffers[a];
      if (b.role != einrt::BufferRole::Param)
        continue;
      auto t = std::find_if(tensors->begin(), tensors->end(),
                            [&](const einrt::TensorData &t) { return t.name == b.name; });
      if (t == tensors->end())
        return fail(einrt::quoted(o.checkpoint) + " has no " + einrt::quoted(b.name));
      if (einrt::Status imported = loadedEx->importBuffer(a, *t); !imported.ok())
        return fail("cannot load " + einrt::quoted(b.name) + " from " +
                    einrt::quoted(o.checkpoint) + ": " + imported.message());
    }
  }
  // The decode step, for shifted windows.
  std::optional<DecodeSession> session;
  if (!decode.empty() && *mapping == einrt::WindowMapping::Shifted) {
    auto opened =
        DecodeSession::open(*loaded.executors[1], p.buffers[p.arguments[layout->contextArg]].name);
    if (!opened.ok())
      return fail(opened.status().message());
    session = opened.take();
  }

  int64_t ctx = layout->context, batch = layout->batch;
  std::vector<int32_t> tokens;
  for (unsigned char c : o.prompt)
    tokens.push_back(c);
  for (int32_t t : tokens)
    if (t >= vocab)
      return fail("the prompt has byte " + std::to_string(t) + ", not below the vocab " +
                  std::to_string(vocab));
  std::ostream &out = std::cout;
  out << o.prompt;
  out.flush();
  std::vector<int32_t> contextBuf(batch * ctx, 0), targets;
  size_t targetCount = 1;
  for (int64_t d : p.buffers[p.arguments[layout->targetArg]].shape)
    targetCount *= d;
  targets.assign(targetCount, 0);
  if (einrt::Status set = ex.setArgument(layout->targetArg, targets.data(), targets.size());
      !set.ok())
    return fail(set.message());
  einrt::Rng rng = einrt::Rng::forStream(o.seed, "sample");
  std::vector<double> logits(outVocab), all;
  auto drawNext = [&]() {
    for (double l : logits)
      if (!std::isfinite(l))
        return einrt::Status::invalid("the logits are not finite");
    int32_t next = draw(logits, o.temperature, o.topK, rng);
    tokens.push_back(next);
    out.put(static_cast<char>(next & 0xff));
    if (next == '\n')
      out.flush();
    return einrt::Status();
  };
  for (int64_t n = 0; n < o.sampleTokens; ++n) {
    int64_t position; // the logits row that predicts the next token
    if (*mapping == einrt::WindowMapping::NextToken) {
      for (int64_t i = 0; i < ctx; ++i) {
        int64_t from = static_cast<int64_t>(tokens.size()) - ctx + i;
        contextBuf[i] = from >= 0 ? tokens[from] : '\n';
      }
      position = 0;
    } else {
      int64_t have = std::min<int64_t>(ctx, tokens.size());
      if (have == 0) {
        contextBuf[0] = '\n';
        have = 1;
      }
      for (int64_t i = 0; i < ctx; ++i)
        contextBuf[i] = i < have && !tokens.empty() ? tokens[tokens.size() - have + i]
                        : i < have                  ? '\n'
                                                    : 0;
      position = have - 1;
      if (session && int64_t(tokens.size()) <= ctx) {
        std::vector<int32_t> window(contextBuf.begin(), contextBuf.begin() + have);
        if (einrt::Status ran = session->logitsAfter(window, logits); !ran.ok())
          return fail(ran.message());
        if (einrt::Status drawn = drawNext(); !drawn.ok())
          return fail(drawn.message());
        continue;
      }
    }
    // Every row gets the same context.
    for (int64_t r = 1; r < batch; ++r)
      std::copy(contextBuf.begin(), contextBuf.begin() + ctx, contextBuf.begin() + r * ctx);
    if (einrt::Status set =
            ex.setArgument(layout->contextArg, contextBuf.data(), contextBuf.size());
        !set.ok())
      return fail(set.message());
    if (einrt::Status ran = ex.run(); !ran.ok())
      return fail(ran.message());
    einrt::Expected<std::vector<double>> read = ex.read(size_t(p.results[logitsResult]));
    if (!read.ok())
      return fail(read.status().message());
    all = read.take();
    for (int64_t v = 0; v < outVocab; ++v)
      logits[v] = all[size_t(position * outVocab + v)];
    if (einrt::Status drawn = drawNext(); !drawn.ok())
      return fail(drawn.message());
  }
  out << "\n";
  out.flush();
  return 0;
}

} // namespace einc::runner
