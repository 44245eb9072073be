#!/usr/bin/env python3
"""Writes ce_options_init.safetensors (params emb, w and one batch: idx,
targets with -100 padding, labels without) and, with PyTorch 2 in float64,
the loss and gradients of test/e2e/Inputs/ce-options.ein
(ce_options_golden.safetensors: ignore_index=-100, label_smoothing=0.1) and
of ce-smoothing.ein (ce_smoothing_golden.safetensors: label_smoothing=0.25),
as torch.nn.functional.cross_entropy computes them; it prints the batch's
accuracy, argmax over the classes = label (cross-entropy-options.test).
Not needed to run the tests: its output is committed. Run with the bench's
PyTorch: bench/.venv/bin/python make_ce_options_golden.py
"""
import os

import torch
import torch.nn.functional as F

import safetensors_io

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, CTX, VOCAB, D = 2, 5, 7, 4


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def ints(t):
    return [int(v) for v in t.reshape(-1).tolist()]


def golden(path, emb, w, idx, targets, **options):
    e = emb.double().clone().requires_grad_()
    m = w.double().clone().requires_grad_()
    logits = e[idx.long()] @ m
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1).long(), **options)
    loss.backward()
    safetensors_io.write(path, [("loss", "F64", [], [loss.item()]),
                                ("emb", "F64", e.shape, flat(e.grad)),
                                ("w", "F64", m.shape, flat(m.grad))],
                         {"options": repr(options), "torch": torch.__version__})
    print("%s: loss %.12g" % (os.path.basename(path), loss.item()))


def main():
    gen = torch.Generator().manual_seed(0)
    emb = torch.randn(VOCAB, D, generator=gen)
    w = torch.randn(D, VOCAB, generator=gen)
    idx = torch.randint(0, VOCAB, (BATCH, CTX), generator=gen, dtype=torch.int32)
    labels = torch.randint(0, VOCAB, (BATCH, CTX), generator=gen, dtype=torch.int32)
    targets = labels.clone()
    targets[0, 3:] = -100  # padding at the end of the first row
    targets[1, 0] = -100
    safetensors_io.write(os.path.join(HERE, "ce_options_init.safetensors"),
                         [("idx", "I32", idx.shape, ints(idx)),
                          ("targets", "I32", targets.shape, ints(targets)),
                          ("labels", "I32", labels.shape, ints(labels)),
                          ("emb", "F32", emb.shape, flat(emb)),
                          ("w", "F32", w.shape, flat(w))])
    golden(os.path.join(HERE, "ce_options_golden.safetensors"), emb, w, idx, targets,
           ignore_index=-100, label_smoothing=0.1)
    golden(os.path.join(HERE, "ce_smoothing_golden.safetensors"), emb, w, idx, labels,
           label_smoothing=0.25)
    logits = emb.double()[idx.long()] @ w.double()
    print("accuracy(logits, labels) %.12g" % (logits.argmax(-1) == labels).double().mean().item())


if __name__ == "__main__":
    main()
