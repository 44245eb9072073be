#!/usr/bin/env python3
"""The GPU peers of `scripts/gpu-check`: PyTorch eager and torch.compile on the
model einc trains there, plus the machine's ceilings as PyTorch sees them.

    python3 bench/gpu_peers.py --out peers.json [--device cuda]
        [--batch 8 --ctx 1024 --d 768 --layers 12 --heads 12 --vocab 50304]
        [--steps 20 --warmup 5] [--modes eager,compile] [--gemm 8192x8192x8192,...]

The model is examples/gpt.ein written in PyTorch (pre-LayerNorm, causal
attention, tanh-GELU MLP, tied embeddings, learned positions; einc's
initialisers and AdamW defaults: β 0.9/0.999, eps 1e-8, weight decay 0.01 on
matrices, clip 1.0, lr 1e-3), trained in bf16-mixed as einc's policy does it:
fp32 master weights and optimizer state, matmuls in bf16 with fp32
accumulation (torch.autocast(bfloat16)). Attention is written out (matmul,
mask, softmax, matmul) as gpt.ein writes it, not through
scaled_dot_product_attention, so both sides do the same arithmetic; a third
mode, `sdpa`, measures the flash-attention path for reference.

A step is forward, backward, clipping and the optimizer step on one random
batch already on the device; each step ends with a device synchronisation.
Medians over --steps after --warmup (torch.compile's compilation falls in the
warm-up). Also measured: device-to-device copy bandwidth (a 1 GiB copy), and
torch.matmul TFLOP/s on each --gemm shape in bf16 and fp32 (TF32 off), so
that einc's cuBLASLt numbers have a same-run anchor.

Writes one JSON document, again after each measurement (the ceilings first, so that a
caller's timeout during torch.compile keeps them and eager); prints a short table. Needs only
PyTorch.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time


def build_model(torch, a, device):
    """Parameters and a loss function of gpt.ein at the given dims."""
    import torch.nn.functional as F

    gen = torch.Generator(device="cpu").manual_seed(a.seed)
    hd, ff = a.d // a.heads, 4 * a.d

    def normal(shape, std):
        t = torch.empty(shape)
        t.normal_(0.0, std, generator=gen)
        return t

    params = {}

    def param(name, tensor):
        params[name] = torch.nn.Parameter(tensor.to(device))
        return params[name]

    wte = param("wte", normal((a.vocab, a.d), 0.02))
    wpe = param("wpe", normal((a.ctx, a.d), 0.02))
    layers = []
    for i in range(a.layers):
        p = f"layer.{i}."
        layers.append(dict(
            ln1_g=param(p + "ln1_g", torch.ones(a.d)),
            ln1_b=param(p + "ln1_b", torch.zeros(a.d)),
            w_qkv=param(p + "w_qkv", normal((a.d, 3 * a.d), 0.02)),
            w_o=param(p + "w_o", normal((a.d, a.d), 0.02 / math.sqrt(2 * a.layers))),
            ln2_g=param(p + "ln2_g", torch.ones(a.d)),
            ln2_b=param(p + "ln2_b", torch.zeros(a.d)),
            w_fc=param(p + "w_fc", normal((a.d, ff), 0.02)),
            w_pr=param(p + "w_pr", normal((ff, a.d), 0.02 / math.sqrt(2 * a.layers)))))
    lnf_g = param("lnf_g", torch.ones(a.d))
    lnf_b = param("lnf_b", torch.zeros(a.d))
    mask = torch.ones(a.ctx, a.ctx, dtype=torch.bool, device=device).triu(1)  # s > t

    def loss_fn(idx, targets, sdpa=False):
        b = idx.shape[0]
        x = wte[idx] + wpe
        for l in layers:
            h = F.layer_norm(x, (a.d,), l["ln1_g"], l["ln1_b"], 1e-5)
            qkv = (h @ l["w_qkv"]).view(b, a.ctx, 3, a.heads, hd).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
                att = torch.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
                y = att @ v
            y = y.transpose(1, 2).reshape(b, a.ctx, a.d)
            x = x + y @ l["w_o"]
            h = F.layer_norm(x, (a.d,), l["ln2_g"], l["ln2_b"], 1e-5)
            x = x + F.gelu(h @ l["w_fc"], approximate="tanh") @ l["w_pr"]
        logits = F.layer_norm(x, (a.d,), lnf_g, lnf_b, 1e-5) @ wte.t()
        return F.cross_entropy(logits.float().reshape(-1, a.vocab), targets.reshape(-1))

    return params, loss_fn


def gpt_flops_per_token(a):
    """6·N for the matmul parameters plus attention's 12·layers·ctx·d (the
    PaLM/llm.c convention einc's report also states its MFU with)."""
    n = a.layers * 12 * a.d * a.d + a.vocab * a.d  # matmul weights (wte tied: the logits)
    return 6 * n + 12 * a.layers * a.ctx * a.d


def sync(torch, device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def train_mode(torch, a, device, mode):
    params, loss_fn = build_model(torch, a, device)
    all_params = list(params.values())
    decay = [p for p in all_params if p.dim() >= 2]
    no_decay = [p for p in all_params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    kind = "cuda" if device.startswith("cuda") else "cpu"

    def step(idx, targets):
        # bf16-mixed on the GPU; on a CPU (trying the script) fp32.
        with torch.autocast(device_type=kind, dtype=torch.bfloat16, enabled=kind == "cuda"):
            loss = loss_fn(idx, targets, sdpa=(mode == "sdpa"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(all_params, 1.0)
        opt.step()
        return loss

    run = step
    if mode == "compile":
        if not hasattr(torch, "compile"):
            return {"mode": mode, "error": "torch.compile is not in torch " + torch.__version__}
        # The model's forward and backward compiled; the optimizer step too
        # (PyTorch 2.x compiles optimizer.step under torch.compile).
        run = torch.compile(step)
    gen = torch.Generator(device="cpu").manual_seed(a.seed + 1)
    times, losses = [], []
    for i in range(a.warmup + a.steps):
        idx = torch.randint(0, a.vocab, (a.batch, a.ctx), generator=gen).to(device)
        targets = torch.randint(0, a.vocab, (a.batch, a.ctx), generator=gen).to(device)
        sync(torch, device)
        start = time.perf_counter()
        loss = run(idx, targets)
        sync(torch, device)
        times.append(time.perf_counter() - start)
        losses.append(float(loss))
    t = statistics.median(times[a.warmup:])
    tokens = a.batch * a.ctx
    out = {"mode": mode, "step_seconds": t, "tokens_per_second": tokens / t,
           "first_losses": losses[:3], "last_loss": losses[-1],
           "params": sum(p.numel() for p in all_params),
           "flops_per_step": gpt_flops_per_token(a) * tokens}
    if device.startswith("cuda"):
        out["peak_memory_bytes"] = torch.cuda.max_memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    return out


def timed(torch, device, fn, repeats):
    fn()
    sync(torch, device)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync(torch, device)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def ceilings(torch, a, device):
    out = {}
    n = (a.copy_mib << 20) // 4
    x = torch.empty(n, dtype=torch.float32, device=device)
    y = torch.empty_like(x)
    t = timed(torch, device, lambda: y.copy_(x), 10)
    out["copy_bytes"] = 2 * 4 * n
    out["copy_gb_per_s"] = 2 * 4 * n / t / 1e9
    del x, y
    torch.backends.cuda.matmul.allow_tf32 = False
    gemms = []
    for shape in filter(None, a.gemm.split(",")):
        m, nn, k = (int(v) for v in shape.split("x"))
        for dtype in ("bfloat16", "float32"):
            dt = getattr(torch, dtype)
            A = torch.randn(m, k, device=device, dtype=dt)
            B = torch.randn(k, nn, device=device, dtype=dt)
            t = timed(torch, device, lambda: A @ B, 10)
            gemms.append({"m": m, "n": nn, "k": k, "dtype": dtype, "seconds": t,
                          "tflops": 2 * m * nn * k / t / 1e12})
            del A, B
    out["matmul"] = gemms
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--ctx", type=int, default=1024)
    p.add_argument("--d", type=int, default=768)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--vocab", type=int, default=50304)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--modes", default="eager,compile,sdpa")
    p.add_argument("--gemm", default="8192x8192x8192")
    p.add_argument("--copy-mib", type=int, default=1024)
    a = p.parse_args()

    import torch

    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu_peers: no CUDA device visible to PyTorch", file=sys.stderr)
        return 1
    result = {"torch": torch.__version__, "device": a.device,
              "dims": {k: getattr(a, k) for k in ("batch", "ctx", "d", "layers", "heads", "vocab")},
              "steps": a.steps, "warmup": a.warmup, "modes": []}
    if a.device.startswith("cuda"):
        result["device_name"] = torch.cuda.get_device_name()

    def save():  # after each measurement: a caller's timeout keeps what was measured
        with open(a.out + ".tmp", "w") as f:
            json.dump(result, f, indent=1)
        os.replace(a.out + ".tmp", a.out)

    # The ceilings first (seconds), torch.compile's compilation last.
    result["ceilings"] = ceilings(torch, a, a.device)
    save()
    for mode in filter(None, a.modes.split(",")):
        try:
            result["modes"].append(train_mode(torch, a, a.device, mode))
        except Exception as e:  # one failing peer must not lose the others' numbers
            result["modes"].append({"mode": mode, "error": f"{type(e).__name__}: {e}"})
        save()
    for m in result["modes"]:
        if "error" in m:
            print(f"{m['mode']:8s} error: {m['error']}")
        else:
            print(f"{m['mode']:8s} {m['step_seconds'] * 1e3:9.2f} ms/step "
                  f"{m['tokens_per_second']:12.0f} tokens/s  loss {m['last_loss']:.4f}")
    c = result["ceilings"]
    print(f"copy     {c['copy_gb_per_s']:9.1f} GB/s")
    for g in c["matmul"]:
        print(f"matmul   {g['m']}x{g['n']}x{g['k']} {g['dtype']:9s} {g['tflops']:8.2f} TFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
