"""Checks for the fp8 training test (standard library only).

  fp8_check.py falls LOG [N]
      the training log LOG (JSONL, one object per step with "loss"): the
      mean loss of the last N steps (default 20) is below the mean of the
      first N by at least 10%; prints "loss falls: FIRST -> LAST"
  fp8_check.py within LOG_A LOG_B FRACTION [N]
      the mean loss of the last N steps of A is within FRACTION (relative)
      of B's; prints "within FRACTION: A_LAST vs B_LAST"
"""
import json
import sys


def losses(path):
    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def mean(xs):
    return sum(xs) / len(xs)


def main():
    cmd = sys.argv[1]
    if cmd == "falls":
        n = int(sys.argv[3]) if len(sys.argv) > 3 else 20
        ls = losses(sys.argv[2])
        first, last = mean(ls[:n]), mean(ls[-n:])
        if not last < 0.9 * first:
            print("loss does NOT fall: %.4f -> %.4f" % (first, last))
            return 1
        print("loss falls: %.4f -> %.4f" % (first, last))
        return 0
    if cmd == "within":
        fraction = float(sys.argv[4])
        n = int(sys.argv[5]) if len(sys.argv) > 5 else 20
        a, b = mean(losses(sys.argv[2])[-n:]), mean(losses(sys.argv[3])[-n:])
        if abs(a - b) > fraction * abs(b):
            print("NOT within %g: %.4f vs %.4f" % (fraction, a, b))
            return 1
        print("within %g: %.4f vs %.4f" % (fraction, a, b))
        return 0
    print("unknown command " + cmd)
    return 2


if __name__ == "__main__":
    sys.exit(main())
