#!/usr/bin/env python3
"""close_losses.py A B RTOL: the `step N  loss X` lines of two `einc run
--step` outputs (say a precision policy's against fp32's) are as many and
agree within RTOL relative, step by step. Prints the worst and OK or FAIL."""
import re
import sys


def losses(path):
    with open(path) as f:
        return [float(m.group(1)) for m in re.finditer(r"^step \d+\s+loss (\S+)", f.read(), re.M)]


a, b, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
if not a or len(a) != len(b):
    print("FAIL: %d and %d losses" % (len(a), len(b)))
    sys.exit(1)
worst, at = max((abs(x - y) / abs(y), i + 1) for i, (x, y) in enumerate(zip(a, b)))
ok = worst <= tol
print("%d losses, worst relative difference %.3g (step %d) within %g: %s"
      % (len(a), worst, at, tol, "OK" if ok else "FAIL"))
sys.exit(0 if ok else 1)
