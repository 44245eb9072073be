#!/usr/bin/env python3
"""Writes param_groups_golden.safetensors with PyTorch 2: the params of
adamw_init.safetensors (the net of adamw.ein) after 5 steps of
torch.optim.AdamW with three param groups, as einc builds them from
param_groups.ein's settings (docs/training.md, "Param groups"):

  w1   no_decay = "w1"              weight_decay 0,   lr 0.01
  w2   lr_scale = "w2:0.5, b*:2"    weight_decay 0.1, lr 0.005
  b1   (a bias: decay = matrices)   weight_decay 0,   lr 0.02

with clip_grad_norm_ to 1.0 over all three, as einc clips the global norm.
Not needed to run the tests: its output is committed. Run with the bench's
PyTorch: bench/.venv/bin/python make_param_groups_golden.py
"""
import os

import torch

import safetensors_io

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 5


def tensor(entry):
    dtype, shape, values = entry
    t = torch.tensor(values, dtype=torch.float32 if dtype == "F32" else torch.int64)
    return t.reshape(shape)


def main():
    init = safetensors_io.read(os.path.join(HERE, "adamw_init.safetensors"))
    x, y = tensor(init["x"]), tensor(init["y"])
    params = {n: tensor(init[n]).requires_grad_() for n in ("w1", "b1", "w2")}
    w1, b1, w2 = params["w1"], params["b1"], params["w2"]
    opt = torch.optim.AdamW([{"params": [w1], "weight_decay": 0.0, "lr": 0.01},
                             {"params": [w2], "weight_decay": 0.1, "lr": 0.01 * 0.5},
                             {"params": [b1], "weight_decay": 0.0, "lr": 0.01 * 2}],
                            betas=(0.9, 0.999), eps=1e-8)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ w1 + b1) @ w2, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([w1, b1, w2], 1.0)
        opt.step()
        losses.append(loss.item())
    safetensors_io.write(
        os.path.join(HERE, "param_groups_golden.safetensors"),
        [(n, "F32", p.shape, [float(v) for v in p.detach().reshape(-1).tolist()])
         for n, p in params.items()],
        {"losses": " ".join("%.9g" % l for l in losses), "torch": torch.__version__})
    print("losses", " ".join("%.9g" % l for l in losses))


if __name__ == "__main__":
    main()
