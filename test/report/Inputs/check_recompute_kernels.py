#!/usr/bin/env python3
"""The solver's recompute time is the lowered step's recompute kernels'.

Usage: check_recompute_kernels.py TOLERANCE REPORT.json...

Each report is of a step with a remat policy: its remat.recompute_seconds
(what ein-remat predicted for the plan, what `budget:` minimises) must be
within TOLERANCE (a fraction) of the time its kernel table gives the
kernels of the recompute phase (issue 30: clones priced as the kernels they
run as, not each reading and writing memory on its own).
"""
import json
import sys

tolerance = float(sys.argv[1])
for path in sys.argv[2:]:
    r = json.load(open(path))
    kernels = [k for k in r["kernels"]["list"] if k["phase"] == "recompute"]
    lowered = sum(k["seconds"] for k in kernels)
    model = r["remat"]["recompute_seconds"]
    if lowered == 0 and model == 0:
        print("ok %s: nothing recomputed" % r["remat"]["policy"])
        continue
    if lowered <= 0 or abs(model - lowered) > tolerance * lowered:
        print("FAIL %s: the solver prices its recompute at %.1f us, its %d kernels take %.1f us"
              % (r["remat"]["policy"], model * 1e6, len(kernels), lowered * 1e6))
        sys.exit(1)
    print("ok %s: recompute %.0f%% of its kernels' time" % (r["remat"]["policy"],
                                                           100 * model / lowered))
