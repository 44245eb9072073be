"""The JAX/XLA peer of bench/train_step.py: examples/mlp_lm.ein and
examples/gpt.ein written in JAX, the whole training step (forward, backward,
global-norm clipping at 1.0, AdamW with einc's defaults) one jax.jit.

    python3 bench/jax_worker.py MODEL --data FILE [--precision P] --steps N --warmup W
                                --threads T --seed S

Run by train_step.py in a child process (the virtual environment's Python,
where `pip install jax` put jaxlib's CPU build); prints one JSON line:
{"times": [...], "losses": [...], "grad_norms": [...], "params": N}. The
shapes, initialiser distributions and optimizer are train_step.py's torch
worker's (and so einc's); the values differ (another generator).

--precision bf16-mixed / fp16-mixed: einc's mixed policies (docs/precision.md)
written out, as JAX has no autocast: params, grads and AdamW state f32 (the
master copy); the forward casts the params to bf16/f16 once at its top and
computes in that type, with layer norm's statistics, softmax and the
cross-entropy in f32 (their results cast back); fp16-mixed scales the loss
dynamically inside the jit (2^16, halve and skip the update on a
non-finite gradient, double after 2000 good steps: einc's and GradScaler's
rule).
"""
import argparse
import json
import math
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--precision", choices=["fp32", "bf16-mixed", "fp16-mixed"], default="fp32")
    a = ap.parse_args()
    # XLA's CPU thread pool: the cores this process may use (the driver sets
    # the affinity to --threads cores), and Eigen off at one thread.
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:a.threads])
    if a.threads == 1:
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + \
            " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    import jax
    import jax.numpy as jnp
    import numpy as np

    half = {"bf16-mixed": jnp.bfloat16, "fp16-mixed": jnp.float16}.get(a.precision)
    key = jax.random.PRNGKey(a.seed)
    params = {}

    def init(name, shape, std=None, clip=None, value=None):
        nonlocal key
        key, sub = jax.random.split(key)
        if value is not None:
            params[name] = jnp.full(shape, value, jnp.float32)
        elif clip is None:
            params[name] = std * jax.random.normal(sub, shape, jnp.float32)
        else:
            params[name] = std * jax.random.truncated_normal(sub, -clip, clip, shape, jnp.float32)

    def layer_norm(x, g, b):
        dtype = x.dtype  # statistics in f32 under the mixed policies
        x = x.astype(jnp.float32)
        mu = jnp.mean(x, -1, keepdims=True)
        xc = x - mu
        var = jnp.mean(xc * xc, -1, keepdims=True)
        return (xc * jax.lax.rsqrt(var + 1e-5)).astype(dtype) * g + b

    def softmax(x):
        return jax.nn.softmax(x.astype(jnp.float32), -1).astype(x.dtype)

    def cross_entropy(logits, targets):
        logits = logits.astype(jnp.float32)
        lse = jax.nn.logsumexp(logits, -1)
        picked = jnp.take_along_axis(logits, targets[..., None], -1)[..., 0]
        return jnp.mean(lse - picked)

    if a.model == "mlp_lm":
        batch, vocab, window, embed, hidden = 256, 256, 8, 64, 512
        init("wte", (vocab, embed), 1.0, 3)
        init("w1", (window * embed, hidden), 1 / math.sqrt(window * embed), 3)
        init("b1", (hidden,), value=0.0)
        init("w2", (hidden, vocab), 1 / math.sqrt(hidden), 3)
        context, shifted = window, False

        def loss_fn(p, tokens, targets):
            p = working_copy(p)
            x = p["wte"][tokens].reshape(batch, window * embed)
            h = jax.nn.relu(x @ p["w1"] + p["b1"])
            return cross_entropy(h @ p["w2"], targets)
    else:
        batch, vocab, ctx, d, heads, layers = 16, 256, 128, 256, 4, 4
        hd, ff = d // heads, 4 * d
        init("wte", (vocab, d), 0.02)
        init("wpe", (ctx, d), 0.02)
        for i in range(layers):
            q = f"layer.{i}."
            init(q + "ln1_g", (d,), value=1.0)
            init(q + "ln1_b", (d,), value=0.0)
            init(q + "w_qkv", (d, 3 * heads * hd), 0.02)
            init(q + "w_o", (heads * hd, d), 0.02 / math.sqrt(2 * layers))
            init(q + "ln2_g", (d,), value=1.0)
            init(q + "ln2_b", (d,), value=0.0)
            init(q + "w_fc", (d, ff), 0.02)
            init(q + "w_pr", (ff, d), 0.02 / math.sqrt(2 * layers))
        init("lnf_g", (d,), value=1.0)
        init("lnf_b", (d,), value=0.0)
        mask = jnp.triu(jnp.ones((ctx, ctx), bool), 1)
        context, shifted = ctx, True

        def loss_fn(p, idx, targets):
            p = working_copy(p)
            x = p["wte"][idx] + p["wpe"]
            for i in range(layers):
                q = f"layer.{i}."
                h = layer_norm(x, p[q + "ln1_g"], p[q + "ln1_b"])
                qkv = (h @ p[q + "w_qkv"]).reshape(batch, ctx, 3, heads, hd).transpose(2, 0, 3, 1, 4)
                att = (qkv[0] @ jnp.swapaxes(qkv[1], -1, -2)) / math.sqrt(hd)
                att = softmax(jnp.where(mask, -jnp.inf, att))
                y = (att @ qkv[2]).transpose(0, 2, 1, 3).reshape(batch, ctx, heads * hd)
                x = x + y @ p[q + "w_o"]
                h = layer_norm(x, p[q + "ln2_g"], p[q + "ln2_b"])
                x = x + jax.nn.gelu(h @ p[q + "w_fc"], approximate=True) @ p[q + "w_pr"]
            logits = layer_norm(x, p["lnf_g"], p["lnf_b"]) @ p["wte"].T
            return cross_entropy(logits, targets)

    # The mixed policies' working copy: every param cast once (its VJP casts
    # the gradient back to f32).
    def working_copy(p):
        return p if half is None else {k: v.astype(half) for k, v in p.items()}

    # einc's defaults: AdamW β 0.9/0.999, eps 1e-8, weight decay 0.01 on
    # rank >= 2 params, clipping at global norm 1.0, lr 1e-3.
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
    decay = {k: (0.01 if v.ndim >= 2 else 0.0) for k, v in params.items()}
    state = {"m": jax.tree_util.tree_map(jnp.zeros_like, params),
             "v": jax.tree_util.tree_map(jnp.zeros_like, params), "t": jnp.zeros((), jnp.float32),
             "loss_scale": jnp.float32(2.0 ** 16 if half == jnp.float16 else 1.0),
             "good": jnp.zeros((), jnp.int32)}

    @jax.jit
    def step(p, s, inputs, targets):
        ls = s["loss_scale"]
        if half == jnp.float16:
            loss, g = jax.value_and_grad(lambda *x: loss_fn(*x) * ls)(p, inputs, targets)
            loss, g = loss / ls, {k: x / ls for k, x in g.items()}
        else:
            loss, g = jax.value_and_grad(loss_fn)(p, inputs, targets)
        norm = jnp.sqrt(sum(jnp.sum(x * x) for x in jax.tree_util.tree_leaves(g)))
        scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
        t = s["t"] + 1
        m = {k: b1 * s["m"][k] + (1 - b1) * g[k] * scale for k in p}
        v = {k: b2 * s["v"][k] + (1 - b2) * jnp.square(g[k] * scale) for k in p}
        new = {k: p[k] - lr * (decay[k] * p[k] + (m[k] / (1 - b1 ** t)) /
                               (jnp.sqrt(v[k] / (1 - b2 ** t)) + eps)) for k in p}
        out = {"m": m, "v": v, "t": t, "loss_scale": ls, "good": s["good"] + 1}
        if half == jnp.float16:  # a non-finite gradient skips the update, halves the scale
            finite = jnp.isfinite(norm)
            keep = lambda a, b: jax.tree_util.tree_map(lambda x, y: jnp.where(finite, x, y), a, b)
            new, out = keep(new, p), keep(out, s)
            grow = finite & (out["good"] >= 2000)
            out["loss_scale"] = jnp.where(finite, jnp.where(grow, 2 * ls, ls), ls / 2)
            out["good"] = jnp.where(finite & ~grow, s["good"] + 1, 0)
        return new, out, loss, norm

    data = np.memmap(a.data, dtype="<u2", mode="r")
    rng = np.random.default_rng(a.seed)
    span = context + 1

    def draw():
        starts = rng.integers(0, len(data) - span + 1, size=batch)
        rows = np.stack([np.asarray(data[s:s + span], dtype=np.int32) for s in starts])
        if shifted:
            return rows[:, :-1], rows[:, 1:]
        return rows[:, :-1], rows[:, -1]

    times, losses, norms = [], [], []
    for _ in range(a.warmup + a.steps):
        start = time.perf_counter()
        inputs, targets = draw()
        params, state, loss, norm = step(params, state, inputs, targets)
        loss = float(loss)  # waits for the step
        times.append(time.perf_counter() - start)
        losses.append(loss)
        norms.append(float(norm))
    print(json.dumps({"times": times, "losses": losses, "grad_norms": norms,
                      "threads": a.threads, "jax": jax.__version__,
                      "params": int(sum(v.size for v in params.values()))}))


if __name__ == "__main__":
    sys.exit(main())
