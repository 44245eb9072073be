#!/usr/bin/env python3
"""Writes optimizer_<name>_golden.safetensors for adamw, adam, sgd and
adagrad with PyTorch 2: the params of adamw_init.safetensors (the net of
adamw.ein and optimizers.ein) after 3 steps of torch.optim.<Optimizer>
built with torch's defaults for every hyper-parameter, lr included, as
einc's optimizers take them when the model sets none (docs/training.md).
What einc adds around the optimizer is mirrored: clip_grad_norm_ to 1.0
(einc's `clip` default) and weight decay on the matrices only (`decay =
matrices`: the bias b1 in a group of weight_decay 0, which only AdamW's
default 0.01 makes matter).

Not needed to run the tests: its outputs are committed. Run with PyTorch 2
from PyPI, e.g. python3 -m venv /tmp/tv && /tmp/tv/bin/pip install torch &&
/tmp/tv/bin/python make_optimizer_goldens.py
"""
import os

import torch

import safetensors_io

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 3
OPTIMIZERS = {
    "adamw": torch.optim.AdamW,
    "adam": torch.optim.Adam,
    "sgd": torch.optim.SGD,
    "adagrad": torch.optim.Adagrad,
}


def tensor(entry):
    dtype, shape, values = entry
    t = torch.tensor(values, dtype=torch.float32 if dtype == "F32" else torch.int64)
    return t.reshape(shape)


def golden(name, make):
    init = safetensors_io.read(os.path.join(HERE, "adamw_init.safetensors"))
    x, y = tensor(init["x"]), tensor(init["y"])
    params = {n: tensor(init[n]).requires_grad_() for n in ("w1", "b1", "w2")}
    w1, b1, w2 = params["w1"], params["b1"], params["w2"]
    # Every hyper-parameter at torch's default; the bias never decays.
    opt = make([{"params": [w1, w2]}, {"params": [b1], "weight_decay": 0.0}])
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ w1 + b1) @ w2, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([w1, b1, w2], 1.0)
        opt.step()
        losses.append(loss.item())
    defaults = {k: v for k, v in opt.defaults.items()
                if k in ("lr", "betas", "eps", "weight_decay", "momentum", "dampening",
                         "nesterov", "lr_decay", "initial_accumulator_value")}
    safetensors_io.write(
        os.path.join(HERE, "optimizer_%s_golden.safetensors" % name),
        [(n, "F32", p.shape, [float(v) for v in p.detach().reshape(-1).tolist()])
         for n, p in params.items()],
        {"losses": " ".join("%.9g" % l for l in losses),
         "defaults": repr(defaults), "torch": torch.__version__})
    print(name, "losses", " ".join("%.9g" % l for l in losses), defaults)


def main():
    for name, make in OPTIMIZERS.items():
        golden(name, make)


if __name__ == "__main__":
    main()
