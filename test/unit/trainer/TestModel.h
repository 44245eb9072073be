//===- TestModel.h - A tiny language model's Programs, built by hand ------===//
//
// A bigram-sum model with one param `table` [V, V]:
//   next_token: logits[b, :] = Σ_w table[tokens[b, w], :]      targets [B]
//   shifted:    logits[b, c, :] = table[tokens[b, c], :]        targets [B, C]
//   loss = mean cross-entropy (max-subtracted log-sum-exp)
// and its gradient written out by hand: d logits = (softmax − onehot) / N,
// d table = scatter_add of d logits onto the token rows.
//
// The optimizer: SGD with momentum 0.9 and bias correction, so both the
// optimizer state `table.m` and the step t matter:
//   m' = 0.9 m + g;  p' = p − lr / (1 − 0.9^t) · m'
// grad_norm = sqrt(Σ g²) (no clipping). With `nanAtStep` = s, @train_step's
// loss becomes NaN from step s on (it adds 0 · sqrt(s − 0.5 − t)).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_TRAINER_TESTMODEL_H
#define EINC_TEST_UNIT_TRAINER_TESTMODEL_H

#include "runtime/ProgramBuilder.h"
#include "runtime/io/TokenData.h"

#include <array>

namespace einrt {
namespace test {

struct TinyModel {
  WindowMapping mapping = WindowMapping::NextToken;
  int64_t batch = 4;
  int64_t context = 3;
  int64_t vocab = 7;
  double nanAtStep = 0; // 0: never

  std::vector<int64_t> targetShape() const {
    if (mapping == WindowMapping::NextToken)
      return {batch};
    return {batch, context};
  }

  struct Core {
    int32_t tokens, targets, table;
    int32_t loss, dtable = -1;
  };

  /// Arguments tokens, targets, table; the loss, and with `withGrad` the
  /// gradient of table.
  Core core(ProgramBuilder &b, bool withGrad) const {
    Core c;
    const DType F = DType::F32, I = DType::I32;
    const int64_t B = batch, C = context, V = vocab;
    std::vector<int64_t> T = targetShape();
    const int64_t r = int64_t(T.size());
    std::vector<int64_t> TV = T;
    TV.push_back(V);
    int64_t n = 1;
    for (int64_t d : T)
      n *= d;
    std::vector<int64_t> lead; // 0 .. r-1
    for (int64_t d = 0; d < r; ++d)
      lead.push_back(d);

    c.tokens = b.arg(I, {B, C}, "tokens");
    c.targets = b.arg(I, T, "targets");
    c.table = b.buffer(F, {V, V}, BufferRole::Param, "table");
    b.p.buffers[c.table].init.kind = "normal";
    b.p.buffers[c.table].init.std = 0.5;
    b.p.arguments.push_back(c.table);

    int32_t g = b.step(StepKind::Gather, {c.table, c.tokens}, F, {B, C, V});
    int32_t logits =
        mapping == WindowMapping::NextToken ? b.step(StepKind::ReduceSum, {g}, F, TV, {{1}}) : g;
    int32_t mx = b.step(StepKind::ReduceMax, {logits}, F, T, {{r}});
    int32_t mxb = b.step(StepKind::Broadcast, {mx}, F, TV, {lead});
    int32_t z = b.step(StepKind::Sub, {logits, mxb}, F, TV);
    int32_t e = b.step(StepKind::Exp, {z}, F, TV);
    int32_t s = b.step(StepKind::ReduceSum, {e}, F, T, {{r}});
    int32_t ls = b.step(StepKind::Log, {s}, F, T);
    int32_t io = b.step(StepKind::Iota, {}, I, TV, {}, r);
    int32_t tb = b.step(StepKind::Broadcast, {c.targets}, I, TV, {lead});
    int32_t eq = b.step(StepKind::CmpEq, {io, tb}, DType::I1, TV);
    int32_t oh = b.step(StepKind::Cast, {eq}, F, TV);
    int32_t zo = b.step(StepKind::Mul, {z, oh}, F, TV);
    int32_t zt = b.step(StepKind::ReduceSum, {zo}, F, T, {{r}});
    int32_t nll = b.step(StepKind::Sub, {ls, zt}, F, T);
    int32_t total = b.step(StepKind::ReduceSum, {nll}, F, {}, {lead});
    int32_t inv = b.constant(F, {}, {1.0 / double(n)});
    c.loss = b.step(StepKind::Mul, {total, inv}, F, {});
    if (!withGrad)
      return c;
    int32_t sb = b.step(StepKind::Broadcast, {s}, F, TV, {lead});
    int32_t p = b.step(StepKind::Div, {e, sb}, F, TV);
    int32_t pm = b.step(StepKind::Sub, {p, oh}, F, TV);
    int32_t invb = b.step(StepKind::Broadcast, {inv}, F, TV, {{}});
    int32_t dl = b.step(StepKind::Mul, {pm, invb}, F, TV);
    int32_t dg = mapping == WindowMapping::NextToken
                     ? b.step(StepKind::Broadcast, {dl}, F, {B, C, V}, {{0, 2}})
                     : dl;
    c.dtable = b.step(StepKind::ScatterAdd, {dg, c.tokens}, F, {V, V});
    return c;
  }

  /// grad_norm, then the momentum update; returns {norm, p', m'}.
  std::array<int32_t, 3> update(ProgramBuilder &b, int32_t p, int32_t g, int32_t m, int32_t step,
                                int32_t lr) const {
    const DType F = DType::F32;
    const int64_t V = vocab;
    int32_t g2 = b.step(StepKind::Mul, {g, g}, F, {V, V});
    int32_t ss = b.step(StepKind::ReduceSum, {g2}, F, {}, {{0, 1}});
    int32_t norm = b.step(StepKind::Sqrt, {ss}, F, {});
    int32_t beta = b.constant(F, {}, {0.9});
    int32_t betab = b.step(StepKind::Broadcast, {beta}, F, {V, V}, {{}});
    int32_t mb = b.step(StepKind::Mul, {m, betab}, F, {V, V});
    int32_t m2 = b.step(StepKind::Add, {mb, g}, F, {V, V});
    int32_t bt = b.step(StepKind::Pow, {beta, step}, F, {});
    int32_t one = b.constant(F, {}, {1.0});
    int32_t bc = b.step(StepKind::Sub, {one, bt}, F, {});
    int32_t rate = b.step(StepKind::Div, {lr, bc}, F, {});
    int32_t rb = b.step(StepKind::Broadcast, {rate}, F, {V, V}, {{}});
    int32_t delta = b.step(StepKind::Mul, {m2, rb}, F, {V, V});
    int32_t p2 = b.step(StepKind::Sub, {p, delta}, F, {V, V});
    return {norm, p2, m2};
  }

  int32_t scalar(ProgramBuilder &b, const char *name) const {
    int32_t s = b.buffer(DType::F32, {}, BufferRole::Scalar, name);
    b.p.arguments.push_back(s);
    return s;
  }
  int32_t optState(ProgramBuilder &b) const {
    int32_t m = b.buffer(DType::F32, {vocab, vocab}, BufferRole::OptState, "table.m");
    b.p.arguments.push_back(m);
    return m;
  }

  Program forward() const {
    ProgramBuilder b;
    b.p.name = "forward";
    Core c = core(b, false);
    b.result(c.loss, "loss");
    return b.p;
  }
  Program grad() const {
    ProgramBuilder b;
    b.p.name = "grad";
    Core c = core(b, true);
    b.result(c.loss, "loss");
    b.result(c.dtable, "table");
    return b.p;
  }
  Program trainStep() const {
    ProgramBuilder b;
    b.p.name = "train_step";
    Core c = core(b, true);
    int32_t m = optState(b);
    int32_t step = scalar(b, "step");
    int32_t lr = scalar(b, "lr");
    auto [norm, p2, m2] = update(b, c.table, c.dtable, m, step, lr);
    int32_t loss = c.loss;
    if (nanAtStep > 0) {
      int32_t lim = b.constant(DType::F32, {}, {nanAtStep - 0.5});
      int32_t d = b.step(StepKind::Sub, {lim, step}, DType::F32, {});
      int32_t sq = b.step(StepKind::Sqrt, {d}, DType::F32, {});
      int32_t zero = b.constant(DType::F32, {}, {0.0});
      int32_t z = b.step(StepKind::Mul, {sq, zero}, DType::F32, {});
      loss = b.step(StepKind::Add, {loss, z}, DType::F32, {});
    }
    b.result(loss, "loss");
    b.result(norm, "grad_norm");
    b.result(p2, "table");
    b.result(m2, "table.m");
    return b.p;
  }
  /// (tokens, targets, table, loss, table: accumulators) -> (loss', table'):
  /// each accumulator plus its value divided by `micro` (as
  /// passes/AccumulateGrad.cpp builds it).
  Program accumulate(int64_t micro) const {
    ProgramBuilder b;
    b.p.name = "accumulate_grad";
    Core c = core(b, true);
    int32_t lossSum = b.buffer(DType::F32, {}, BufferRole::Accumulator, "loss");
    int32_t gradSum = b.buffer(DType::F32, {vocab, vocab}, BufferRole::Accumulator, "table");
    b.p.arguments.push_back(lossSum);
    b.p.arguments.push_back(gradSum);
    int32_t inv = b.constant(DType::F32, {}, {1.0 / double(micro)});
    int32_t lossPart = b.step(StepKind::Mul, {c.loss, inv}, DType::F32, {});
    int32_t invb = b.step(StepKind::Broadcast, {inv}, DType::F32, {vocab, vocab}, {{}});
    int32_t gradPart = b.step(StepKind::Mul, {c.dtable, invb}, DType::F32, {vocab, vocab});
    b.result(b.step(StepKind::Add, {lossSum, lossPart}, DType::F32, {}), "loss");
    b.result(b.step(StepKind::Add, {gradSum, gradPart}, DType::F32, {vocab, vocab}), "table");
    return b.p;
  }
  /// (table, table_grad, table.m, step, lr) -> (grad_norm, table', table.m')
  Program apply() const {
    ProgramBuilder b;
    b.p.name = "apply_update";
    int32_t p = b.buffer(DType::F32, {vocab, vocab}, BufferRole::Param, "table");
    b.p.arguments.push_back(p);
    int32_t g = b.arg(DType::F32, {vocab, vocab}, "table.grad");
    int32_t m = optState(b);
    int32_t step = scalar(b, "step");
    int32_t lr = scalar(b, "lr");
    auto [norm, p2, m2] = update(b, p, g, m, step, lr);
    b.result(norm, "grad_norm");
    b.result(p2, "table");
    b.result(m2, "table.m");
    return b.p;
  }
  /// ZeRO-1's @apply_update on a rank that owns no param (as
  /// passes/ShardOptimizer.cpp leaves it): (table, table_grad, step, lr)
  /// -> (grad_norm); the owner sends table'.
  Program applyOwningNothing() const {
    ProgramBuilder b;
    b.p.name = "apply_update";
    int32_t p = b.buffer(DType::F32, {vocab, vocab}, BufferRole::Param, "table");
    b.p.arguments.push_back(p);
    int32_t g = b.arg(DType::F32, {vocab, vocab}, "table.grad");
    scalar(b, "step");
    scalar(b, "lr");
    int32_t g2 = b.step(StepKind::Mul, {g, g}, DType::F32, {vocab, vocab});
    int32_t ss = b.step(StepKind::ReduceSum, {g2}, DType::F32, {}, {{0, 1}});
    b.result(b.step(StepKind::Sqrt, {ss}, DType::F32, {}), "grad_norm");
    return b.p;
  }
};

} // namespace test
} // namespace einrt

#endif
