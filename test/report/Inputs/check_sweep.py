#!/usr/bin/env python3
"""Checks `einc report --remat-sweep --format json`'s remat.frontier.

Usage: check_sweep.py REPORT.json

Every rung's planned peak is within its budget; as the budget grows the
recompute time never grows and the peak never shrinks; the last rung (the
plain peak) recomputes nothing; the named policies are on the same axes.
"""
import json
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


r = json.load(open(sys.argv[1]))
frontier = r["remat"]["frontier"]
policies = {p["policy"]: p for p in r["remat"]["policies"]}
if len(frontier) < 2:
    fail("a frontier of %d rungs" % len(frontier))
for a, b in zip(frontier, frontier[1:]):
    if not a["budget"] < b["budget"]:
        fail("budgets not increasing: %r" % [p["budget"] for p in frontier])
    if b["recompute_seconds"] > a["recompute_seconds"]:
        fail("more recompute for a larger budget: %r then %r" % (a, b))
    if b["peak"] < a["peak"]:
        fail("a lower peak for a larger budget: %r then %r" % (a, b))
for p in frontier:
    if p["peak"] > p["budget"]:
        fail("peak %d over budget %d" % (p["peak"], p["budget"]))
    if p["step_seconds"] < policies["none"]["step_seconds"]:
        fail("a plan predicted faster than no remat")
last = frontier[-1]
if last["recompute_flops"] != 0 or last["peak"] != policies["none"]["peak"]:
    fail("the last rung is not `none`: %r" % last)
if policies["none"]["peak"] != r["memory"]["peak"]:
    fail("`none` on the frontier is not the report's own peak")
for name in ("full", "sqrt", "selective"):
    if policies[name]["peak"] >= policies["none"]["peak"]:
        fail("%s does not save memory" % name)
print("ok frontier: %d rungs from %d to %d bytes, monotonic, each within its budget; "
      "policies %s" % (len(frontier), frontier[0]["peak"], last["peak"],
                       ", ".join(sorted(policies))))
