#!/usr/bin/env python3
"""Writes freeze_golden.safetensors with PyTorch 2: the params of
adamw_init.safetensors (the net of adamw.ein) after 5 steps of
torch.optim.AdamW (param_groups.ein's hyperparameters, one group) with w1
frozen, as `freeze = "w1"` trains it (docs/training.md, "Frozen params"):
w1 has requires_grad False, so it has no gradient, takes no part in the
clipped global norm and is not given to the optimizer.
Not needed to run the tests: its output is committed. Run with the bench's
PyTorch: bench/.venv/bin/python make_freeze_golden.py
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
    w1 = tensor(init["w1"])  # frozen: no grad
    b1, w2 = (tensor(init[n]).requires_grad_() for n in ("b1", "w2"))
    # decay = matrices: the bias b1 is not decayed.
    opt = torch.optim.AdamW([{"params": [w2], "weight_decay": 0.1},
                             {"params": [b1], "weight_decay": 0.0}],
                            lr=0.01, betas=(0.9, 0.999), eps=1e-8)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ w1 + b1) @ w2, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([b1, w2], 1.0)
        opt.step()
        losses.append(loss.item())
    params = {"w1": w1, "b1": b1, "w2": w2}
    safetensors_io.write(
        os.path.join(HERE, "freeze_golden.safetensors"),
        [(n, "F32", p.shape, [float(v) for v in p.detach().reshape(-1).tolist()])
         for n, p in params.items()],
        {"losses": " ".join("%.9g" % l for l in losses), "torch": torch.__version__})
    print("losses", " ".join("%.9g" % l for l in losses))


if __name__ == "__main__":
    main()
