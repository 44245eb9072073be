#!/usr/bin/env python3
"""Writes the AdamW golden files with PyTorch (Debian's python3-torch):

  adamw_init.safetensors    params and one batch (x, y), drawn here
  adamw_golden.safetensors  params after 5 steps of torch.optim.AdamW with
                            torch.nn.utils.clip_grad_norm_, weight decay on
                            the matrices (w1, w2) and not on the bias (b1)

The net and the hyper-parameters are those of adamw.ein. Not needed to run
the tests: its outputs are committed. Run: /usr/bin/python3 make_adamw_golden.py
"""
import os

import torch

import safetensors_io

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 5


def main():
    torch.manual_seed(0)
    batch, d, h, k = 8, 6, 10, 5
    x = torch.randn(batch, d)
    y = torch.randint(0, k, (batch,), dtype=torch.int32)
    w1 = (torch.randn(d, h) * 0.5).requires_grad_()
    b1 = (torch.randn(h) * 0.5).requires_grad_()
    w2 = (torch.randn(h, k) * 0.5).requires_grad_()
    params = {"w1": w1, "b1": b1, "w2": w2}

    def flat(t):
        return [float(v) for v in t.detach().reshape(-1).tolist()]

    safetensors_io.write(os.path.join(HERE, "adamw_init.safetensors"),
                         [("x", "F32", x.shape, flat(x)),
                          ("y", "I32", y.shape, [int(v) for v in y.tolist()])] +
                         [(n, "F32", p.shape, flat(p)) for n, p in params.items()])

    opt = torch.optim.AdamW([{"params": [w1, w2], "weight_decay": 0.1},
                             {"params": [b1], "weight_decay": 0.0}],
                            lr=0.01, betas=(0.9, 0.999), eps=1e-8)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        logits = torch.relu(x @ w1 + b1) @ w2
        loss = torch.nn.functional.cross_entropy(logits, y.long())
        loss.backward()
        torch.nn.utils.clip_grad_norm_([w1, b1, w2], 1.0)
        opt.step()
        losses.append(loss.item())
    safetensors_io.write(os.path.join(HERE, "adamw_golden.safetensors"),
                         [(n, "F32", p.shape, flat(p)) for n, p in params.items()],
                         {"losses": " ".join("%.9g" % l for l in losses),
                          "torch": torch.__version__})
    print("losses", losses)


if __name__ == "__main__":
    main()
