#!/usr/bin/env python3
"""Writes the golden files of examples/llama.ein with PyTorch, in float64:

  llama_init.safetensors    params and one batch (idx, targets), drawn here
  llama_golden.safetensors  the loss and the gradient of every param

The model is written here independently of einc, the usual way (torch.cat
rotate-half RoPE, repeat_interleave for the grouped k and v heads, SwiGLU,
RMSNorm), at the dims of SIZE below (test/e2e/llama-vs-torch.test runs
einc at the same --set). The params are drawn with larger spreads than
llama.ein's initialisers, and the gains away from 1, so that attention is
far from uniform and every term of every gradient matters. Not needed to
run the tests: its outputs are committed. Run with any PyTorch:
  python make_llama_golden.py
"""
import math
import os

import torch

import safetensors_io

HERE = os.path.dirname(os.path.abspath(__file__))
# The --set of llama-vs-torch.test; ff = 21 d / 8 and the rest as llama.ein derives them.
SIZE = {"batch": 2, "ctx": 8, "d": 16, "heads": 4, "kv_heads": 2, "layers": 2, "vocab": 32}


def rmsnorm(x, g):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * g


def rope(x):
    """x: [..., ctx, hd]; pair (i, i + half) turned by position * 10000^(-i / half)."""
    ctx, hd = x.shape[-2], x.shape[-1]
    half = hd // 2
    freq = 10000.0 ** (-torch.arange(half, dtype=x.dtype) / half)
    angle = torch.outer(torch.arange(ctx, dtype=x.dtype), freq)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * angle.cos() - x2 * angle.sin(), x2 * angle.cos() + x1 * angle.sin()], -1)


def loss_of(p, idx, targets, s):
    B, T, D, H, KV = s["batch"], s["ctx"], s["d"], s["heads"], s["kv_heads"]
    hd = D // H
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)
    x = p["wte"][idx]
    for l in range(s["layers"]):
        w = lambda n: p["layer.%d.%s" % (l, n)]
        h = rmsnorm(x, w("attn_g"))
        q = (h @ w("w_q")).view(B, T, H, hd).transpose(1, 2)
        k = (h @ w("w_k")).view(B, T, KV, hd).transpose(1, 2)
        v = (h @ w("w_v")).view(B, T, KV, hd).transpose(1, 2)
        q, k = rope(q), rope(k)
        k = k.repeat_interleave(H // KV, dim=1)  # query head i reads kv head i // (H / KV)
        v = v.repeat_interleave(H // KV, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, D)
        x = x + y @ w("w_o")
        h = rmsnorm(x, w("mlp_g"))
        x = x + (torch.nn.functional.silu(h @ w("w_gate")) * (h @ w("w_up"))) @ w("w_down")
    logits = rmsnorm(x, p["norm_g"]) @ p["w_head"]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, s["vocab"]), targets.reshape(-1).long())


def draw_params(s, gen):
    D, V, H, KV, F = s["d"], s["vocab"], s["heads"], s["kv_heads"], 21 * s["d"] // 8
    hd = D // H

    def normal(*shape, std):
        return torch.randn(*shape, generator=gen, dtype=torch.float64) * std

    def gain():
        return 1 + normal(D, std=0.2)

    p = {"wte": normal(V, D, std=1.0)}
    for l in range(s["layers"]):
        for name, t in [("attn_g", gain()), ("w_q", normal(D, H * hd, std=0.5)),
                        ("w_k", normal(D, KV * hd, std=0.5)), ("w_v", normal(D, KV * hd, std=0.5)),
                        ("w_o", normal(H * hd, D, std=0.2)), ("mlp_g", gain()),
                        ("w_gate", normal(D, F, std=0.5)), ("w_up", normal(D, F, std=0.5)),
                        ("w_down", normal(F, D, std=0.2))]:
            p["layer.%d.%s" % (l, name)] = t
    p["norm_g"] = gain()
    p["w_head"] = normal(D, V, std=0.5)
    # einc reads float32: the reference starts from exactly the values einc loads.
    return {n: t.float().double().requires_grad_() for n, t in p.items()}


def main():
    s = SIZE
    gen = torch.Generator().manual_seed(0)
    p = draw_params(s, gen)
    idx = torch.randint(0, s["vocab"], (s["batch"], s["ctx"]), generator=gen, dtype=torch.int32)
    targets = torch.randint(0, s["vocab"], (s["batch"], s["ctx"]), generator=gen, dtype=torch.int32)

    def flat(t):
        return [float(v) for v in t.detach().reshape(-1).tolist()]

    safetensors_io.write(os.path.join(HERE, "llama_init.safetensors"),
                         [("idx", "I32", idx.shape, [int(v) for v in idx.reshape(-1).tolist()]),
                          ("targets", "I32", targets.shape, [int(v) for v in targets.reshape(-1).tolist()])] +
                         [(n, "F32", t.shape, flat(t)) for n, t in p.items()])
    loss = loss_of(p, idx, targets, s)
    loss.backward()
    safetensors_io.write(os.path.join(HERE, "llama_golden.safetensors"),
                         [("loss", "F64", [], [loss.item()])] +
                         [(n, "F64", t.shape, flat(t.grad)) for n, t in p.items()],
                         {"size": " ".join("%s=%d" % kv for kv in s.items()), "torch": torch.__version__})
    print("loss %.12g" % loss.item())


if __name__ == "__main__":
    main()
