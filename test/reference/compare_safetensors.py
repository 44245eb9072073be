#!/usr/bin/env python3
"""compare_safetensors.py ACTUAL EXPECTED RTOL ATOL: every tensor of EXPECTED
must be in ACTUAL with the same shape and values within |a - e| <= atol +
rtol * |e|. Prints the largest deviation; exits 1 on a mismatch."""
import sys

import safetensors_io


def main():
    actual = safetensors_io.read(sys.argv[1])
    expected = safetensors_io.read(sys.argv[2])
    rtol, atol = float(sys.argv[3]), float(sys.argv[4])
    worst, ok = (0.0, None), True
    for name, (_, shape, values) in expected.items():
        if name not in actual:
            print("missing tensor", name)
            ok = False
            continue
        _, ashape, avalues = actual[name]
        if list(ashape) != list(shape):
            print("shape of", name, ashape, "!=", shape)
            ok = False
            continue
        for i, (a, e) in enumerate(zip(avalues, values)):
            dev = abs(a - e)
            if dev > worst[0]:
                worst = (dev, "%s[%d]: %.9g vs %.9g" % (name, i, a, e))
            if dev > atol + rtol * abs(e):
                ok = False
    print("compared %d tensors; largest deviation %.3g%s" %
          (len(expected), worst[0], " at " + worst[1] if worst[1] else ""))
    print("MATCH" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
