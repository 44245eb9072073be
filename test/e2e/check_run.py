#!/usr/bin/env python3
"""Checks facts about `einc run` output read from stdin:

  check_run.py init-loss VOCAB     the loss is within 10% of ln(VOCAB)
  check_run.py halves              the last step's loss is below half the first's
"""
import math
import re
import sys


def main():
    text = sys.stdin.read()
    what = sys.argv[1]
    if what == "init-loss":
        loss = float(re.search(r"^loss (\S+)", text, re.M).group(1))
        target = math.log(float(sys.argv[2]))
        ok = abs(loss - target) <= 0.1 * target
        print("loss %.4f vs ln %s = %.4f: %s" % (loss, sys.argv[2], target, "OK" if ok else "FAIL"))
        return 0 if ok else 1
    if what == "halves":
        losses = [float(v) for v in re.findall(r"^step \d+  loss (\S+)", text, re.M)]
        ok = len(losses) >= 2 and losses[-1] < 0.5 * losses[0]
        print("loss %.4f -> %.4f over %d steps: %s" %
              (losses[0], losses[-1], len(losses), "OK" if ok else "FAIL"))
        return 0 if ok else 1
    print("unknown check", what)
    return 2


if __name__ == "__main__":
    sys.exit(main())
