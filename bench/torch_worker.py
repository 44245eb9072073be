"""The PyTorch peer of bench/train_step.py: examples/mlp_lm.ein and
examples/gpt.ein written in PyTorch, eager or torch.compile, at a precision.

    python3 bench/torch_worker.py MODEL --data FILE --mode eager|compile
        --precision fp32|bf16-mixed|fp16-mixed --steps N --warmup W --threads T --seed S

Run by train_step.py in a child process (the peers' Python); prints one JSON
line: {"times": [...], "losses": [...], "grad_norms": [...], "params": N,
"saved": {...} (eager)} or {"na": "why"} where this precision cannot run
here. The same shapes, initialiser distributions and optimizer as the .ein
files (the values differ: torch's generator, not einc's).

Mixed precision is what einc's mixed policies do (docs/precision.md): f32
params (the master copy), grads and AdamW state; the forward under
`torch.autocast("cpu", dtype)` (contractions on bf16/f16 casts); fp16-mixed
scales the loss dynamically (torch.amp.GradScaler, as einc's step does).
"""
import argparse
import json
import math
import sys
import time

HALF = {"bf16-mixed": "bfloat16", "fp16-mixed": "float16"}
HALF_GEMM_FLOOR_GFLOPS = 10


def half_gemm_too_slow(torch, dtype):
    """None, or why this CPU cannot run `dtype` GEMMs at a useful speed.
    PyTorch's CPU f16 GEMM without AVX512-FP16/AMX-FP16 is a scalar
    fallback at 1-2 GFLOP/s (a gpt step takes 25 s or more); a native kernel
    runs at tens to hundreds. The floor is absolute, on the best of several
    tries on one thread, so a loaded machine hardly moves it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    a, b = torch.randn(256, 256).to(dtype), torch.randn(256, 256).to(dtype)
    a @ b
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    torch.set_num_threads(threads)
    gflops = 2 * 256 ** 3 / best / 1e9
    if gflops < HALF_GEMM_FLOOR_GFLOPS:
        return (f"torch {str(dtype).split('.')[-1]} GEMM {gflops:.1f} GFLOP/s on this CPU "
                f"(a fallback, under {HALF_GEMM_FLOOR_GFLOPS} GFLOP/s: no AVX512-FP16/AMX-FP16 "
                f"kernel)")
    return None


def saved_bytes(torch, params, batch, run):
    """Bytes of the tensors autograd saves for backward during run(): unique
    storages, parameters and the batch's own storages left out (einc's
    report ledgers those apart); a cast of a param (autocast's working copy,
    a ToCopy node leading to the param's AccumulateGrad) is counted apart,
    as einc's param_copies."""
    skip = {p.untyped_storage().data_ptr() for p in params}
    skip |= {t.untyped_storage().data_ptr() for t in batch}
    param_ids = {id(p) for p in params}
    seen = {}

    def is_param_copy(t):
        fn, copied = t.grad_fn, False
        for _ in range(4):  # through a cast and views to the param's leaf
            if fn is None:
                return False
            if hasattr(fn, "variable"):
                return copied and id(fn.variable) in param_ids
            copied |= type(fn).__name__ == "ToCopyBackward0"
            nxt = [f for f, _ in fn.next_functions if f is not None]
            if len(nxt) != 1:
                return False
            fn = nxt[0]
        return False

    def pack(t):
        storage = t.untyped_storage()
        key = storage.data_ptr()
        if key not in skip and key not in seen:
            seen[key] = (storage.nbytes(), is_param_copy(t))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        run()
    return {"activations": sum(n for n, copy in seen.values() if not copy),
            "param_copies": sum(n for n, copy in seen.values() if copy),
            "tensors": len(seen)}


def build(torch, F, model, param):
    """The model's loss function and its data layout (context, shifted)."""

    def trunc_normal(shape, std, clip=None):
        t = torch.empty(shape)
        if clip is None:
            return torch.nn.init.normal_(t, 0.0, std)
        # einc: resample until within mean ± clip·std (trunc_normal_'s bounds)
        return torch.nn.init.trunc_normal_(t, 0.0, std, -clip * std, clip * std)

    if model == "mlp_lm":
        # examples/mlp_lm.ein
        batch, vocab, window, embed, hidden = 256, 256, 8, 64, 512
        wte = param("wte", trunc_normal((vocab, embed), 1.0, 3))
        w1 = param("w1", trunc_normal((window * embed, hidden), 1 / math.sqrt(window * embed), 3))
        b1 = param("b1", torch.zeros(hidden))
        w2 = param("w2", trunc_normal((hidden, vocab), 1 / math.sqrt(hidden), 3))

        def loss_fn(tokens, targets):
            x = wte[tokens].reshape(batch, window * embed)
            h = torch.relu(x @ w1 + b1)
            logits = h @ w2
            return F.cross_entropy(logits, targets)
        return loss_fn, batch, window, False

    # examples/gpt.ein
    batch, vocab, ctx, d, heads, layers = 16, 256, 128, 256, 4, 4
    hd, ff = d // heads, 4 * d
    wte = param("wte", trunc_normal((vocab, d), 0.02))
    wpe = param("wpe", trunc_normal((ctx, d), 0.02))
    L = []
    for i in range(layers):
        p = f"layer.{i}."
        L.append(dict(
            ln1_g=param(p + "ln1_g", torch.ones(d)),
            ln1_b=param(p + "ln1_b", torch.zeros(d)),
            w_qkv=param(p + "w_qkv", trunc_normal((d, 3 * heads * hd), 0.02)),
            w_o=param(p + "w_o", trunc_normal((heads * hd, d), 0.02 / math.sqrt(2 * layers))),
            ln2_g=param(p + "ln2_g", torch.ones(d)),
            ln2_b=param(p + "ln2_b", torch.zeros(d)),
            w_fc=param(p + "w_fc", trunc_normal((d, ff), 0.02)),
            w_pr=param(p + "w_pr", trunc_normal((ff, d), 0.02 / math.sqrt(2 * layers)))))
    lnf_g = param("lnf_g", torch.ones(d))
    lnf_b = param("lnf_b", torch.zeros(d))
    mask = torch.ones(ctx, ctx, dtype=torch.bool).triu(1)  # s > t

    def loss_fn(idx, targets):
        x = wte[idx] + wpe
        for l in L:
            h = F.layer_norm(x, (d,), l["ln1_g"], l["ln1_b"], 1e-5)
            qkv = (h @ l["w_qkv"]).view(batch, ctx, 3, heads, hd).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
            att = torch.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).reshape(batch, ctx, heads * hd)
            x = x + y @ l["w_o"]
            h = F.layer_norm(x, (d,), l["ln2_g"], l["ln2_b"], 1e-5)
            x = x + F.gelu(h @ l["w_fc"], approximate="tanh") @ l["w_pr"]
        logits = F.layer_norm(x, (d,), lnf_g, lnf_b, 1e-5) @ wte.t()
        return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    return loss_fn, batch, ctx, True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--data", required=True)
    ap.add_argument("--mode", choices=["eager", "compile"], default="eager")
    ap.add_argument("--precision", choices=["fp32", *HALF], default="fp32")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    import contextlib

    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    half = getattr(torch, HALF[a.precision]) if a.precision in HALF else None
    if half is torch.float16:
        why = half_gemm_too_slow(torch, half)
        if why:
            print(json.dumps({"na": why}))
            return 0

    params = {}

    def param(name, tensor):
        params[name] = torch.nn.Parameter(tensor)
        return params[name]

    loss_fn, batch, context, shifted = build(torch, F, a.model, param)
    if a.mode == "compile":
        # Inductor: forward and backward of the loss compiled (AOTAutograd);
        # the optimizer and clipping stay eager. The first (warm-up) steps
        # pay for compiling.
        loss_fn = torch.compile(loss_fn)

    # einc's defaults (docs/training.md, docs/train-step.md): AdamW β 0.9/0.999,
    # eps 1e-8, weight decay 0.01 on matrices (rank ≥ 2) only, clip 1.0, lr 1e-3.
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    all_params = list(params.values())
    # fp16-mixed: einc's dynamic loss scale (2^16, halve and skip on a
    # non-finite gradient, double after 2000 good steps) is GradScaler's.
    scaler = torch.amp.GradScaler("cpu") if half is torch.float16 else None

    def autocast():
        return torch.autocast("cpu", dtype=half) if half else contextlib.nullcontext()

    data = np.memmap(a.data, dtype="<u2", mode="r")
    rng = np.random.default_rng(a.seed)
    span = context + 1

    def draw():
        starts = rng.integers(0, len(data) - span + 1, size=batch)
        rows = np.stack([np.asarray(data[s:s + span], dtype=np.int64) for s in starts])
        rows = torch.from_numpy(rows)
        if shifted:
            return rows[:, :-1], rows[:, 1:]
        return rows[:, :-1], rows[:, -1]

    def step():
        inputs, targets = draw()
        with autocast():
            loss = loss_fn(inputs, targets)
        opt.zero_grad(set_to_none=True)
        if scaler:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            norm = torch.nn.utils.clip_grad_norm_(all_params, 1.0)
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(all_params, 1.0)
            opt.step()
        return loss, norm

    result = {}
    if a.mode == "eager":
        # One untimed step with the hooks on: what autograd saves.
        inputs, targets = draw()

        def forward_backward():
            with autocast():
                loss = loss_fn(inputs, targets)
            loss.backward()
        result["saved"] = saved_bytes(torch, all_params, (inputs, targets), forward_backward)
        opt.zero_grad(set_to_none=True)

    times, losses, norms = [], [], []
    for _ in range(a.warmup + a.steps):
        start = time.perf_counter()
        loss, norm = step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
        norms.append(float(norm))
    result.update({"times": times, "losses": losses, "grad_norms": norms,
                   "threads": torch.get_num_threads(),
                   "params": sum(p.numel() for p in all_params)})
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
