"""Checks `einc run --step --save-params` of Inputs/precision/update.ein:

  lecture_precision.py update FILE POLICY

fp32 and bf16-mixed: every w is f32(1 - 1e-4) (the f32 master keeps the
update); bf16: every w is a bf16 neighbour of 1 - 1e-4 (1.0 or 0.99609375:
bf16 storage cannot hold 0.9999, round to nearest would give 1.0) and their
mean is within four standard deviations of 0.9999 (stochastic rounding keeps
the update on average). Prints "OK: ..." or "FAIL: ...".
"""
import math
import struct
import sys

from compare_backends import read_safetensors


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def main():
    _, what, path, policy = sys.argv
    assert what == "update"
    w = read_safetensors(path)["w"]
    n = len(w)
    target = 1 - 1e-4
    if policy in ("fp32", "bf16-mixed"):
        bad = [v for v in w if v != f32(f32(1.0) - f32(1e-4))]
        if bad:
            print(f"FAIL: {len(bad)} of {n} values are not f32(1 - 1e-4), e.g. {bad[0]!r}")
            return 1
        print(f"OK: {policy}: all {n} values are {w[0]!r}")
        return 0
    lo, hi = 0.99609375, 1.0
    others = [v for v in w if v not in (lo, hi)]
    if others:
        print(f"FAIL: {len(others)} values are not bf16 neighbours of 0.9999, e.g. {others[0]!r}")
        return 1
    p = (hi - target) / (hi - lo)  # the probability of rounding down
    mean = sum(w) / n
    sigma = (hi - lo) * math.sqrt(p * (1 - p) / n)
    if abs(mean - target) > 4 * sigma:
        print(f"FAIL: mean {mean!r} is {abs(mean - target) / sigma:.1f} sigma from {target}")
        return 1
    down = sum(1 for v in w if v == lo)
    print(f"OK: bf16: {down} of {n} rounded down, mean within 4 sigma of 0.9999")
    return 0


if __name__ == "__main__":
    sys.exit(main())
