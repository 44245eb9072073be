#!/usr/bin/env python3
"""Checks memory.timeline of a JSON report: the resident categories plus the
temporaries' categories at step i sum to memory.live_after[i] at every step,
none is negative, the resident ones sum to memory.resident, and the phase
runs cover the steps in order. Prints the categories' largest values.
Usage: check_timeline.py REPORT.json
"""
import json
import sys


def main():
    r = json.load(open(sys.argv[1]))
    m = r["memory"]
    t = m["timeline"]
    live = m["live_after"]
    resident = t["params"] + t["optimizer_state"] + t["inputs"] + t["other_resident"]
    errors = []
    if resident != m["resident"]:
        errors.append("resident categories %d != resident %d" % (resident, m["resident"]))
    temps = ("grads", "saved_activations", "recompute", "temporaries")
    for i, total in enumerate(live):
        s = resident + sum(t[c][i] for c in temps)
        if s != total or any(t[c][i] < 0 for c in temps):
            errors.append("step %d: categories sum to %d, live_after %d" % (i, s, total))
            break
    at = 0
    for run in t["phases"]:
        if run["first"] != at or run["last"] < run["first"]:
            errors.append("phase run %s does not follow step %d" % (run, at - 1))
        at = run["last"] + 1
    if at != len(live):
        errors.append("the phases end at step %d of %d" % (at, len(live)))
    for e in errors:
        print("FAIL: " + e)
    if errors:
        sys.exit(1)
    phases = []
    for run in t["phases"]:
        if run["phase"] not in phases:
            phases.append(run["phase"])
    print("PASS timeline: %d steps; most live: %s; phases %s" % (
        len(live), ", ".join("%s %d" % (c, max(t[c])) for c in temps), " ".join(phases)))


if __name__ == "__main__":
    main()
