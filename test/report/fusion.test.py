# Compares two JSON reports of one model: fusion on and off (fusion.test).
import json
import sys

on, off = (json.load(open(p)) for p in sys.argv[1:3])
f = on["fusion"]
print("on: enabled %s, %d fused kernels, %d ops, %d broadcasts in place, %d row kernels"
      % (f["enabled"], f["fused_kernels"], f["fused_ops"], f["folded_broadcasts"],
         f["row_kernels"]))
print("off: enabled %s" % off["fusion"]["enabled"])
same = (on["flops"] == off["flops"] and on["model_flops"] == off["model_flops"]
        and on["params"] == off["params"])
print("same FLOPs, model FLOPs and params: %s" % same)
op_bytes = lambda r: sum(op["bytes"] for op in r["ops"])
print("bytes on = sum of op bytes: %s" % (f["bytes"] == op_bytes(on)))
print("bytes on < bytes unfused: %s" % (f["bytes"] < f["bytes_unfused"]))
print("bytes unfused = off's op bytes: %s" % (f["bytes_unfused"] == op_bytes(off)))
print("predicted step on < off: %s"
      % (on["predicted"]["step_seconds"] < off["predicted"]["step_seconds"]))
# The memory ledger: values the fused kernels keep in registers and
# broadcasts read in place take no memory.
print("peak on < off: %s" % (on["memory"]["peak"] < off["memory"]["peak"]))
print("activations on < off: %s" % (on["memory"]["activations"] < off["memory"]["activations"]))
print("params, grads, optimizer the same: %s"
      % all(on["memory"][k] == off["memory"][k] for k in ("params", "grads", "optimizer")))
