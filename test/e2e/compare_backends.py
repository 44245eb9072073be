#!/usr/bin/env python3
"""Compares two `einc run` outputs (CPU backend vs reference backend).

  compare_backends.py grad CPU REF TOL   default mode: the loss, the total
                                         gradient norm and every per-param
                                         norm agree within TOL (relative)
  compare_backends.py steps CPU REF TOL  --step mode: every step's loss and
                                         grad_norm agree within TOL (relative)
  compare_backends.py tensors CPU.safetensors REF.safetensors TOL [NAME...]
                                         every tensor (F32, BF16, F16, F64), or each one
                                         named, agrees within TOL:
                                         max |cpu - ref| / max |ref|
  compare_backends.py identical A.safetensors B.safetensors
                                         the same tensors, bit for bit (the
                                         claims of docs/determinism.md that
                                         hold by construction)
  compare_backends.py losses OUT RTOL V1 V2 ...
                                         OUT's printed losses (`step N  loss
                                         X`) are V1, V2, ... within RTOL
                                         relative plus half a unit of the
                                         last printed digit

Prints the worst relative difference and OK or FAIL.
"""
import array
import json
import re
import struct
import sys


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def grad_values(text):
    values = {"loss": float(re.search(r"^loss (\S+)", text, re.M).group(1)),
              "grad norm": float(re.search(r"^grad norm (\S+)", text, re.M).group(1))}
    for name, norm in re.findall(r"^  (\S+)\s+\[[^\]]*\]\s+(\S+)$", text, re.M):
        values[name] = float(norm)
    return values


def step_values(text):
    values = {}
    for step, loss, norm in re.findall(r"^step (\d+)  loss (\S+)  grad_norm (\S+)", text, re.M):
        values["step %s loss" % step] = float(loss)
        values["step %s grad_norm" % step] = float(norm)
    return values


def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        values = array.array("f")
        if info["dtype"] == "F32":
            values.frombytes(raw)
        elif info["dtype"] == "F64":  # a float64 reference (test/reference/*_golden)
            values = array.array("d")
            values.frombytes(raw)
        elif info["dtype"] == "BF16":  # the high half of an f32, exactly
            halves = array.array("H")
            halves.frombytes(raw)
            values.frombytes(struct.pack("<%dI" % len(halves), *[h << 16 for h in halves]))
        elif info["dtype"] == "F16":
            values.extend(struct.unpack("<%de" % (len(raw) // 2), raw))
        else:
            raise ValueError("tensor %s has dtype %s" % (name, info["dtype"]))
        tensors[name] = values
    return tensors


def compare_tensors(cpu_file, ref_file, tol, names):
    cpu, ref = read_safetensors(cpu_file), read_safetensors(ref_file)
    if not ref or set(cpu) != set(ref) or not set(names) <= set(ref):
        print("the files hold different tensors: FAIL")
        return 1
    worst, worst_name = 0.0, None
    for name in names or ref:
        num = max((abs(a - b) for a, b in zip(cpu[name], ref[name])), default=0.0)
        den = max((abs(b) for b in ref[name]), default=0.0)
        err = num / den if den > 0 else num
        if err >= worst:
            worst, worst_name = err, name
    ok = worst <= tol
    print("%d tensors, worst relative error %.3g (%s) within %g: %s" %
          (len(names or ref), worst, worst_name, tol, "OK" if ok else "FAIL"))
    return 0 if ok else 1


def compare_identical(a_file, b_file):
    a, b = read_safetensors(a_file), read_safetensors(b_file)
    if not b or set(a) != set(b):
        print("the files hold different tensors: FAIL")
        return 1
    for name in sorted(b):
        if a[name].tobytes() != b[name].tobytes():
            diff = next(i for i, (x, y) in enumerate(zip(a[name], b[name]))
                        if struct.pack("<f", x) != struct.pack("<f", y))
            print("%s differs first at [%d]: %r vs %r: FAIL" %
                  (name, diff, a[name][diff], b[name][diff]))
            return 1
    print("%d tensors bit-identical: OK" % len(b))
    return 0


def compare_losses(out_file, rtol, expected):
    printed = re.findall(r"^step (\d+)  loss (\S+)", open(out_file).read(), re.M)
    if len(printed) != len(expected):
        print("%d losses printed, %d expected: FAIL" % (len(printed), len(expected)))
        return 1
    ok = True
    for (step, text), want in zip(printed, expected):
        decimals = len(text.split(".")[1]) if "." in text else 0
        bound = rtol * abs(want) + 0.5 * 10.0 ** -decimals
        if not abs(float(text) - want) <= bound:
            print("step %s: loss %s, expected %r within %.3g: FAIL" % (step, text, want, bound))
            ok = False
    if ok:
        print("%d losses within %g relative (+ print rounding): OK" % (len(expected), rtol))
    return 0 if ok else 1


def main():
    what = sys.argv[1]
    if what == "identical":
        return compare_identical(sys.argv[2], sys.argv[3])
    if what == "losses":
        return compare_losses(sys.argv[2], float(sys.argv[3]), [float(v) for v in sys.argv[4:]])
    cpu_file, ref_file, tol = sys.argv[2], sys.argv[3], float(sys.argv[4])
    if what == "tensors":
        return compare_tensors(cpu_file, ref_file, tol, sys.argv[5:])
    parse = {"grad": grad_values, "steps": step_values}[what]
    cpu = parse(open(cpu_file).read())
    ref = parse(open(ref_file).read())
    if not ref or set(cpu) != set(ref):
        print("the outputs list different values: %s vs %s: FAIL" % (sorted(cpu), sorted(ref)))
        return 1
    worst = max(ref, key=lambda k: rel(cpu[k], ref[k]))
    err = rel(cpu[worst], ref[worst])
    ok = err <= tol
    print("%d values, worst relative difference %.3g (%s: %r vs %r) within %g: %s" %
          (len(ref), err, worst, cpu[worst], ref[worst], tol, "OK" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
