#!/usr/bin/env python3
"""Each row of `einc report --remat-sweep` is the report of its plan.

Usage: check_sweep_is_report.py EINC MODEL [ARGS...]

Runs `EINC report MODEL ARGS --remat-sweep --format json`, then for every
named policy P of its rows `EINC report MODEL ARGS --remat P --format json`,
and for the ladder's first, middle and last rung `--remat budget:B`: the
row's peak must be that report's memory.peak and its step_seconds that
report's predicted.step_seconds, exactly (issue 30: one number per plan).
"""
import json
import subprocess
import sys


def report(args):
    out = subprocess.run(args + ["--format", "json"], check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


einc, model, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
base = [einc, "report", model] + extra
sweep = report(base + ["--remat-sweep"])["remat"]
rows = [(p["policy"], p) for p in sweep["policies"]]
rungs = sweep["frontier"]
for p in (rungs[0], rungs[len(rungs) // 2], rungs[-1]):
    rows.append(("budget:%d" % p["budget"], p))
failed = False
for setting, row in rows:
    r = report(base + ["--remat", setting])
    peak, step = r["memory"]["peak"], r["predicted"]["step_seconds"]
    if row["peak"] != peak or row["step_seconds"] != step:
        print("FAIL %s: the sweep's row has peak %d, step %r; --remat %s reports peak %d, step %r"
              % (setting, row["peak"], row["step_seconds"], setting, peak, step))
        failed = True
if failed:
    sys.exit(1)
print("ok: %d rows are their plans' reports (%s)"
      % (len(rows), ", ".join(s if not s.startswith("budget:") else "a rung" for s, _ in rows)))
