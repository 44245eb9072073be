#!/usr/bin/env python3
"""Checks on `einc report --format json` of an fp8 model (standard library only).

Usage: check_fp8.py MODE REPORT.json M K N
  MODE block | tensor: the contractions of the (M x K) @ (K x N) model under
  `fp8 = MODE` on h100 are priced as fp8: every ein.contract has dtype fp8;
  the forward one reads 1 byte per operand element plus the scales (1 byte
  per block of 32 along K, or 4 bytes per tensor) and writes its bf16
  result, and is compute bound at the datasheet's dense fp8 peak, 1979
  TFLOP/s, twice the bf16 peak (989.5).
  The quantisers write what the contraction reads: an ein.quantize with a
  format reads its bf16 input and writes 1 byte per element plus the scales;
  the identity one before the E5M2 gradient moves nothing.
  MODE a100: the same model on a100, which has no fp8 units: bf16's peak,
  312 TFLOP/s.
Expected values come from the dims and the datasheets, not from a run.
"""
import json
import sys

H100_FP8, H100_BF16, A100_BF16 = 1.979e15, 9.895e14, 3.12e14


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def close(actual, expected, what, rel=1e-9):
    if abs(actual - expected) > rel * abs(expected):
        fail("%s: got %r, expected %r" % (what, actual, expected))
    print("ok %s: %r" % (what, actual))


def main():
    mode, path = sys.argv[1], sys.argv[2]
    m, k, n = (int(a) for a in sys.argv[3:6])
    with open(path) as f:
        r = json.load(f)
    contracts = [o for o in r["ops"] if o["name"] == "ein.contract"]
    if not contracts:
        fail("no ein.contract in the report")
    want = "bf16" if mode == "a100" else "fp8"
    for o in contracts:
        if o["dtype"] != want:
            fail("%s contraction %d has dtype %s, not %s"
                 % (o["phase"], o["index"], o["dtype"], want))
    print("ok %d contractions (forward and backward) priced as %s" % (len(contracts), want))
    fwd = [o for o in contracts if o["phase"] == "forward"]
    if len(fwd) != 1:
        fail("expected one forward contraction, got %d" % len(fwd))
    o = fwd[0]
    flops = 2 * m * k * n
    close(o["flops"], flops, "FLOPs 2mkn")
    if mode in ("block", "a100"):  # the a100 run is fp8=block
        scales = m * (k // 32) + n * (k // 32)  # one E8M0 byte per block of 32 along k
    else:
        scales = 4 + 4  # one f32 per tensor
    close(o["bytes"], m * k + k * n + scales + 2 * m * n,
          "bytes: 1 per operand element + scales + bf16 result")
    peak = A100_BF16 if mode == "a100" else H100_FP8
    if o["units"] != "matrix":
        fail("units %s" % o["units"])
    close(o["roofline_seconds"], flops / peak, "seconds at the %s peak" % want)
    if mode != "a100":
        close(o["roofline_seconds"] * H100_FP8 / H100_BF16, flops / H100_BF16,
              "the same at bf16 takes twice as long")
    def fp8_bytes(rows, cols, axis_len):  # elements + scales along a dim of axis_len
        if mode == "tensor":
            return rows * cols + 4
        return rows * cols + rows * cols // axis_len * (axis_len // 32)
    quantizers = [q for q in r["ops"] if q["name"] == "ein.quantize"]
    expected = sorted([2 * m * k + fp8_bytes(m, k, k),   # a (bf16), blocks along k
                       2 * k * n + fp8_bytes(k, n, k),   # b, blocks along k
                       0,                                # the identity forward of the E5M2 rule
                       2 * m * n + fp8_bytes(m, n, n)])  # the E5M2 gradient, along n
    got = sorted(q["bytes"] for q in quantizers)
    if got != expected:
        fail("quantiser bytes %r, expected %r" % (got, expected))
    print("ok quantiser bytes: fp8 values and scales written, the identity one a view")
    print("PASS fp8 " + mode)


if __name__ == "__main__":
    main()
