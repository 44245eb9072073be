# Checks gpt's index arrays in JSON reports under fusion all, on and off
# (iota-in-kernels.test).
import json
import sys

reports = {name: json.load(open(p)) for name, p in zip(("all", "on", "off"), sys.argv[1:4])}
d = reports["all"]["dims"]
B, T, H, V, L = d["batch"], d["ctx"], d["heads"], d["vocab"], d["layers"]
mask_elements = B * H * T * T  # each causal iota: [batch, heads, t, s] i32
ce_elements = B * T * V  # cross-entropy's class index: [batch, ctx, vocab] i32
expected = sorted([mask_elements * 4] * (2 * L) + [ce_elements * 4])


def iota_ops(r):
    return [op for op in r["ops"] if op["name"] == "ein.iota"]


for name in ("all", "on"):
    r = reports[name]
    kernels = r["kernels"]["list"]
    print("%s: no iota kernel: %s" % (name, all("ein.iota" not in k["ops"] for k in kernels)))
    iotas = iota_ops(r)
    print("%s: %d iotas (2 per layer and cross-entropy's), each 0 bytes: %s"
          % (name, len(iotas), len(iotas) == 2 * L + 1 and all(op["bytes"] == 0 for op in iotas)))

r = reports["all"]
kernels = r["kernels"]["list"]
# The causal mask is computed in the epilogue of the scores GEMM (scale,
# compare, select): the kernel reads q and k and the scalars 1/sqrt(hd) and
# -inf; no index arrays.
hd = d["hd"]
causal = [k for k in kernels if k["kind"] == "matmul+epilogue" and k["phase"] == "forward"
          and k["ops"][1:] == ["ein.div", "ein.cmp", "ein.select"]]
reads_qk = sum(k["bytes_read"] == 2 * B * H * T * hd * 4 + 2 * 4 for k in causal)
print("all: the causal kernels read q, k and two scalars only: %d of %d" % (reads_qk, L))
ce = [k for k in kernels if k["kind"] == "rows" and "ein.cmp" in k["ops"] and k["phase"] == "forward"]
print("all: the cross-entropy rows kernel reads logits, targets and a scalar only: %s"
      % (len(ce) == 1 and ce[0]["bytes_read"] == ce_elements * 4 + B * T * 4 + 4))
print("all: bytes = sum of op bytes: %s"
      % (r["fusion"]["bytes"] == sum(op["bytes"] for op in r["ops"])))

off = reports["off"]
off_iotas = sorted(op["bytes"] for op in iota_ops(off))
off_kernels = [k for k in off["kernels"]["list"] if k["ops"] == ["ein.iota"]]
print("off: %d iota kernels, each writing its elements x 4 bytes: %s"
      % (len(off_kernels), off_iotas == expected and len(off_kernels) == 2 * L + 1))
# What the fused ledger no longer charges the iotas themselves.
diff = sum(op["bytes"] for op in iota_ops(off)) - sum(op["bytes"] for op in iota_ops(r))
print("off - all, iota ops' bytes: the iotas' elements x 4 over the step: %s"
      % (diff == (2 * L * mask_elements + ce_elements) * 4))
