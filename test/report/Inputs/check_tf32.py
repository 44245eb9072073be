#!/usr/bin/env python3
"""Checks the `tf32` setting's pricing: f32 contractions at the FP32 peak by
default (what cuBLASLt's CUBLAS_COMPUTE_32F runs at), at the TF32 tensor-core
peak under tf32=on. The peaks are NVIDIA's datasheet numbers for the H100
SXM5 (FP32 66.9 TFLOP/s, dense TF32 494.7 TFLOP/s), not the report's.

Usage: check_tf32.py OFF.json ON.json NO-TF32-ON.json
"""
import json
import sys

FP32, TF32 = 66.9e12, 494.7e12


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def ok(cond, what):
    if not cond:
        fail(what)
    print("ok " + what)


def contraction(r):
    ops = [o for o in r["ops"] if o["phase"] == "forward" and o["kind"] == "contraction"]
    ok(len(ops) == 1, "one forward contraction")
    return ops[0]


def close(a, b):
    return abs(a - b) <= 1e-9 * abs(b)


off, on, cpu = (json.load(open(p)) for p in sys.argv[1:4])
a, b = contraction(off), contraction(on)
ok(a["dtype"] == "f32" and b["dtype"] == "tf32", "dtype f32 off, tf32 on")
ok(a["bound"] == "compute" and b["bound"] == "compute", "compute-bound both ways")
ok(close(a["roofline_seconds"], a["flops"] / FP32), "off: %.1f us = FLOPs / FP32 66.9 TFLOP/s" % (a["roofline_seconds"] * 1e6))
ok(close(b["roofline_seconds"], b["flops"] / TF32), "on: %.1f us = FLOPs / TF32 494.7 TFLOP/s" % (b["roofline_seconds"] * 1e6))
ok(off["device"]["compute_dtype"] == "f32" and close(off["device"]["matrix_flops_per_second"], FP32),
   "off: MFU against the FP32 peak")
ok(on["device"]["compute_dtype"] == "tf32" and close(on["device"]["matrix_flops_per_second"], TF32),
   "on: MFU against the TF32 peak")
rows = {d["dtype"] for d in on["roofline"]["by_dtype"]}
ok("tf32" in rows, "on: a tf32 row in the roofline by dtype")
c = contraction(cpu)
ok(c["dtype"] == "f32" and close(c["roofline_seconds"], c["flops"] / 1e12),
   "a device without a tf32 entry (no TF32 units): at its f32 rate under tf32=on")
print("PASS tf32")
