"""Checks for the training tests (standard library only).

  train_check.py same A.safetensors B.safetensors [TENSOR...]
      every tensor of A is in B with the same dtype, shape and bytes (bit for
      bit), and B has no other tensors; prints "identical: N tensors". With
      TENSOR names, those alone are compared.
  train_check.py differ A.safetensors B.safetensors
      some tensor differs; prints "differ"
  train_check.py close A.safetensors B.safetensors TOL
      every tensor of A is in B and agrees within TOL, relative to the
      largest magnitude of that tensor; prints "close: N tensors"
  train_check.py below LABEL BOUND   (reads stdin)
      the number before LABEL on a line of stdin is below BOUND; prints
      "LABEL X < BOUND: OK"
  train_check.py repeat N BYTE OUT
      writes OUT: BYTE (a number 0..255, as uint16 LE tokens) N times
  train_check.py flip FILE.safetensors TENSOR N
      inverts N bytes in the middle of TENSOR's data in place (damage that
      leaves the file well-formed); prints "flipped N bytes of TENSOR"
  train_check.py unchecked IN.safetensors FORMAT OUT.safetensors
      OUT: IN without its checksums (`crc32c.*` metadata), its `einc`
      metadata set to FORMAT (an older einc's checkpoint)
"""
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_io  # noqa: E402  (names, shapes, values)


def raw_tensors(path):
    """{name: (dtype, shape, bytes)}: the raw little-endian data, bit for bit."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        out[name] = (entry["dtype"], entry["shape"], data[8 + n + begin:8 + n + end])
    return out


def same(a, b, names=None):
    ta, tb = raw_tensors(a), raw_tensors(b)
    if names:
        ta = {n: ta[n] for n in names if n in ta}
        tb = {n: tb[n] for n in names if n in tb}
    # Also readable by the reference reader (F32 checkpoints).
    assert names or set(safetensors_io.read(a)) == set(ta)
    if set(ta) != set(tb):
        return "different names: %s" % sorted(set(ta) ^ set(tb))
    for name in sorted(ta):
        if ta[name] != tb[name]:
            return "tensor %s differs" % name
    return None


def main():
    cmd = sys.argv[1]
    if cmd == "same":
        names = sys.argv[4:]
        problem = same(sys.argv[2], sys.argv[3], names)
        if problem:
            print("NOT identical: " + problem)
            return 1
        print("identical: %d tensors" % (len(names) or len(raw_tensors(sys.argv[2]))))
        return 0
    if cmd == "differ":
        if same(sys.argv[2], sys.argv[3]) is None:
            print("identical (expected a difference)")
            return 1
        print("differ")
        return 0
    if cmd == "close":
        a, b = safetensors_io.read(sys.argv[2]), safetensors_io.read(sys.argv[3])
        tol = float(sys.argv[4])
        if set(a) != set(b):
            print("different names: %s" % sorted(set(a) ^ set(b)))
            return 1
        for name in sorted(a):
            va, vb = a[name][2], b[name][2]
            scale = max(max(abs(x) for x in va), 1e-30)
            worst = max(abs(x - y) for x, y in zip(va, vb)) / scale
            if not worst <= tol:
                print("tensor %s differs by %.3g (relative to its largest entry)" % (name, worst))
                return 1
        print("close: %d tensors" % len(a))
        return 0
    if cmd == "below":
        label, bound = sys.argv[2], float(sys.argv[3])
        text = sys.stdin.read()
        found = re.findall(r"([0-9.]+(?:e[-+]?\d+)?) " + re.escape(label), text)
        if not found:
            print("no '%s' in the output:\n%s" % (label, text))
            return 1
        value = float(found[-1])
        ok = value < bound
        print("%s %.4f %s %g: %s" % (label, value, "<" if ok else ">=", bound,
                                      "OK" if ok else "FAIL"))
        return 0 if ok else 1
    if cmd == "repeat":
        n, byte, out = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        with open(out, "wb") as f:
            f.write(struct.pack("<H", byte) * n)
        return 0
    if cmd == "flip":
        path, name, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
        with open(path, "rb") as f:
            data = bytearray(f.read())
        (n,) = struct.unpack("<Q", data[:8])
        begin, end = json.loads(data[8:8 + n])[name]["data_offsets"]
        assert end - begin >= count, "tensor %s has %d bytes" % (name, end - begin)
        start = 8 + n + begin + (end - begin - count) // 2
        for i in range(start, start + count):
            data[i] ^= 0xFF
        with open(path, "wb") as f:
            f.write(data)
        print("flipped %d bytes of %s" % (count, name))
        return 0
    if cmd == "unchecked":
        with open(sys.argv[2], "rb") as f:
            data = f.read()
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + n])
        meta = header["__metadata__"]
        for key in [k for k in meta if k.startswith("crc32c.")]:
            del meta[key]
        meta["einc"] = sys.argv[3]
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        with open(sys.argv[4], "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + data[8 + n:])
        return 0
    print("unknown command " + cmd)
    return 2


if __name__ == "__main__":
    sys.exit(main())
