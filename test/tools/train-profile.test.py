"""Checks the {"profile": ...} line `einc train --profile --log` appends:
every step has its measured time, and its prediction is the roofline of
the made-up profile (0.1 TFLOP/s, 10 GB/s) on its bytes and FLOPs."""
import json
import sys

lines = [json.loads(l) for l in open(sys.argv[1])]
profile = [l["profile"] for l in lines if "profile" in l]
assert len(profile) == 1 and lines[-1] is not None and "profile" in lines[-1], "one profile line, last"
f = profile[0][0]
for s in f["steps"]:
    assert s["measured_ms"] >= 0, s
    want = max(s["bytes"] / 1e10, s["flops"] / 1e11) * 1e3
    assert abs(s["predicted_ms"] - want) <= 1e-9 * max(1, want), (s, want)
    assert s["bound"] == ("compute" if s["flops"] / 1e11 > s["bytes"] / 1e10 else "memory"), s
assert any(s["flops"] > 0 for s in f["steps"]), "some matmul"
print("profile of %s: %d steps over %d runs; every step's prediction is its roofline"
      % (f["function"], len(f["steps"]), f["runs"]))
