"""Checks of dropout masks for test/e2e/dropout.test (standard library only).

The model there trains w (ones) with SGD at lr 1 on sum(dropout(w, p)): one
step subtracts the gradient keep / (1 - p), so a saved w shows the mask of
each step (the gradient is the same whatever w is).

  dropout_check.py kept A.safetensors P
      the step's mask from w (kept where w != 1): prints the kept fraction,
      its distance to 1 - P in standard deviations of a fair draw
      (sqrt(P (1 - P) / n)), and "within 5 sd" or "beyond 5 sd"; also
      whether every value is 1 or 1 - 1/(1 - P) in f32 ("values exact")
  dropout_check.py agree A.safetensors B.safetensors P
      the masks of two one-step runs: the fraction of elements on which they
      agree, against P^2 + (1 - P)^2 for independent masks: "independent"
      within 5 sd, "equal" when all agree, else "dependent"
  dropout_check.py step2 A1.safetensors A2.safetensors P
      the second step's mask (w1 - w2 != 0) against the first's (w1 != 1),
      as `agree`
"""
import math
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_io  # noqa: E402


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def weights(path):
    return safetensors_io.read(path)["w"][2]


def agreement(a, b, p):
    same = sum(1 for x, y in zip(a, b) if x == y) / len(a)
    q = p * p + (1 - p) * (1 - p)
    sd = math.sqrt(q * (1 - q) / len(a))
    if same == 1:
        verdict = "equal"
    elif abs(same - q) <= 5 * sd:
        verdict = "independent"
    else:
        verdict = "dependent"
    print("agree %.4f (independent masks: %.4f) %s" % (same, q, verdict))


def main(argv):
    command, p = argv[1], float(argv[-1])
    if command == "kept":
        w = weights(argv[2])
        mask = [x != 1 for x in w]
        kept = sum(mask) / len(w)
        sd = math.sqrt(p * (1 - p) / len(w))
        z = (kept - (1 - p)) / sd
        print("kept %.5f of %d (1 - p = %.5f, %+.2f sd) %s" %
              (kept, len(w), 1 - p, z, "within 5 sd" if abs(z) <= 5 else "beyond 5 sd"))
        dropped_value = f32(1 - f32(1 / (1 - p)))
        exact = all(x == 1 or x == dropped_value for x in w)
        print("values exact" if exact else "values inexact")
    elif command == "agree":
        a = [x != 1 for x in weights(argv[2])]
        b = [x != 1 for x in weights(argv[3])]
        agreement(a, b, p)
    elif command == "step2":
        w1, w2 = weights(argv[2]), weights(argv[3])
        agreement([x != 1 for x in w1], [x != y for x, y in zip(w1, w2)], p)
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main(sys.argv)
