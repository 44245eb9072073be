#!/usr/bin/env python3
"""The lecture's checkpointing numbers (CS336 lecture 2, section 7.4) from
`einc report --format json` of a model under remat policies (standard library
only).

Usage: check_remat.py CHECK NONE.json POLICY.json

one-more-forward: an L-layer chain of linear layers whose backward reads each
    matmul's output (a GELU after it), `x` a param: the recompute's
    contractions are exactly the forward's, so the contraction FLOPs go from
    6ND to 8ND, N = L d^2 weights, D = batch rows per step.
sqrt-memory: the lecture's L-layer linear+ReLU net (each layer saves one
    B x d value) under sqrt: ceil(sqrt(L)) spacing, the inputs of every k-th
    layer kept, and the planned arena near L/k + k activations instead of L.

Expected values are the lecture's or computed here from the dims; one line per
check, exit status 1 on the first failure.
"""
import json
import math
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def equal(actual, expected, what):
    if actual != expected:
        fail("%s: got %r, expected %r" % (what, actual, expected))
    print("ok %s: %r" % (what, actual))


def within(actual, low, high, what):
    if not (low <= actual <= high):
        fail("%s: got %r, expected in [%r, %r]" % (what, actual, low, high))
    print("ok %s: %.3f in [%g, %g]" % (what, actual, low, high))


def contraction_flops(report, phase):
    return sum(o["flops"] for o in report["ops"]
               if o["phase"] == phase and o["kind"] == "contraction")


def one_more_forward(none, full):
    dims = full["dims"]
    n = dims["layers"] * dims["d"] ** 2
    tokens = dims["batch"]
    equal(none["flops"]["recompute"], 0, "no recompute without remat")
    forward = contraction_flops(full, "forward")
    equal(forward, 2 * n * tokens, "forward contractions = 2ND")
    equal(contraction_flops(full, "recompute"), forward,
          "full recomputes exactly one forward's contractions")
    equal(full["model_flops"]["total"], none["model_flops"]["total"],
          "model FLOPs (MFU's numerator) unchanged")
    equal(none["model_flops"]["total"] / (n * tokens), 6.0, "without remat: 6ND")
    hardware = full["model_flops"]["total"] + contraction_flops(full, "recompute")
    equal(hardware / (n * tokens), 8.0, "with full: 8ND")
    equal(full["predicted"]["mfu"] < none["predicted"]["mfu"], True,
          "MFU drops: the same work over a longer step")
    equal(full["predicted"]["hfu"] > full["predicted"]["mfu"], True, "HFU counts the recompute")


def sqrt_memory(none, sqrt):
    dims = sqrt["dims"]
    layers = dims["layers"]
    act = dims["batch"] * dims["d"] * 4
    k = math.isqrt(layers - 1) + 1 if layers > 1 else 1  # ceil(sqrt(L))
    equal(sqrt["remat"]["policy"], "sqrt", "policy")
    equal(none["memory"]["activations"], layers * act, "without remat: L activations saved")
    # The inputs of layers 0, k, 2k, ...: x (an input, ledgered apart) and
    # L/k - 1 activations; and the last layer's output, which the loss reads.
    equal(sqrt["memory"]["saved_inputs"], act, "x kept (the input of layer 0)")
    equal(sqrt["remat"]["kept"], layers // k, "kept: L/k - 1 boundaries + the last output")
    equal(sqrt["memory"]["activations"], (layers // k) * act, "their bytes")
    # The arena in activations: L/k kept + k recomputed within the segment
    # whose backward runs + the gradient flowing back (one more).
    ratio_none = none["memory"]["arena"] / act
    ratio_sqrt = sqrt["memory"]["arena"] / act
    within(ratio_none, layers, layers + 2, "arena without remat, in activations (L + the gradient)")
    within(ratio_sqrt, layers // k + k, layers // k + k + 2,
           "arena with sqrt, in activations (L/k + k + the gradient)")
    recompute = contraction_flops(sqrt, "recompute")
    forward = contraction_flops(sqrt, "forward")
    equal(recompute * k, forward * (k - 1),
          "recompute: k - 1 of every k layers' matmuls (the kept inputs need none)")


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    check, a, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
    {"one-more-forward": one_more_forward, "sqrt-memory": sqrt_memory}[check](a, b)


if __name__ == "__main__":
    main()
