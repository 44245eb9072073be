"""Checks on the executables of `einc compile` (test/compile).

  exe_check.py metrics A.jsonl B.jsonl   the same metrics log line for line
                                         (every field but tokens_per_second)
  exe_check.py startup EXE N BOUND_MS    median wall time of `EXE info` over N
                                         runs, below BOUND_MS
  exe_check.py corrupt EXE OUT OFFSET    a copy of EXE with one byte of its
                                         embedded program file (section
                                         .einc_program) at OFFSET flipped
  exe_check.py section EXE               the offset and size of .einc_program
  exe_check.py cuda-images FILE          what each CUDA image of a program file
                                         is: a cubin (an ELF file) or PTX
"""
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import time


def metrics(a, b):
    la = [json.loads(l) for l in open(a)]
    lb = [json.loads(l) for l in open(b)]
    if len(la) != len(lb):
        return "%d lines against %d" % (len(la), len(lb))
    for i, (x, y) in enumerate(zip(la, lb)):
        x.pop("tokens_per_second", None)
        y.pop("tokens_per_second", None)
        if x != y:
            return "line %d differs: %s against %s" % (i + 1, x, y)
    return None


def section(path, wanted=b".einc_program"):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("%s is not a 64-bit ELF file" % path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, offset, size
    _, stroff, _ = header(shstrndx)
    for i in range(shnum):
        name, offset, size = header(i)
        end = data.index(b"\0", stroff + name)
        if data[stroff + name:end] == wanted:
            return offset, size
    sys.exit("%s has no section %s" % (path, wanted.decode()))


def cuda_images(path):
    """The program file's layout (docs/program-file.md), read independently
    of einc: the images of its `cuda` kernel section, one line each (the
    section is a blob of its own: its JSON header's length, the header, its
    data)."""
    data = open(path, "rb").read()
    if data[:8] != b"EINCPROG":
        sys.exit("%s is not a program file" % path)
    writer, = struct.unpack_from("<I", data, 12)
    at = (16 + writer + 7) // 8 * 8
    header_bytes, data_bytes = struct.unpack_from("<QQ", data, at)
    header = json.loads(data[at + 16:at + 16 + header_bytes])
    sections = data[at + 16 + header_bytes:at + 16 + header_bytes + data_bytes]
    ref = header.get("kernel_sections", {}).get("cuda")
    if ref is None:
        return
    blob = sections[ref["offset"]:ref["offset"] + ref["size"]]
    cuda_bytes, = struct.unpack_from("<Q", blob, 0)
    cuda = json.loads(blob[8:8 + cuda_bytes])
    cuda_data = blob[8 + cuda_bytes:]
    for image in cuda.get("images", []):
        ref = image["bytes"]
        body = cuda_data[ref["offset"]:ref["offset"] + ref["size"]]
        if body[:4] == b"\x7fELF":
            kind = "cubin (ELF)"
        else:
            target = next((l for l in body.decode().splitlines() if l.startswith(".target")), "?")
            kind = "PTX (%s)" % target.strip()
        print("%s: %s" % (image["arch"], kind))


def main():
    cmd = sys.argv[1]
    if cmd == "cuda-images":
        cuda_images(sys.argv[2])
    elif cmd == "metrics":
        problem = metrics(sys.argv[2], sys.argv[3])
        if problem:
            sys.exit("metrics differ: " + problem)
        print("same metrics: %d lines" % len(open(sys.argv[2]).readlines()))
    elif cmd == "startup":
        exe, n, bound = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
        times = []
        for _ in range(n):
            start = time.perf_counter()
            subprocess.run([exe, "info"], check=True, stdout=subprocess.DEVNULL)
            times.append(1000 * (time.perf_counter() - start))
        median = statistics.median(times)
        print("startup: median %.1f ms over %d runs of info" % (median, n))
        if median >= bound:
            sys.exit("startup: %.1f ms, not below %g ms" % (median, bound))
    elif cmd == "corrupt":
        exe, out, at = sys.argv[2], sys.argv[3], int(sys.argv[4])
        offset, size = section(exe)
        shutil.copyfile(exe, out)
        os.chmod(out, 0o755)
        with open(out, "r+b") as f:
            f.seek(offset + at)
            byte = f.read(1)
            f.seek(offset + at)
            f.write(bytes([byte[0] ^ 0x20]))
        print("flipped byte %d of %d" % (at, size))
    elif cmd == "section":
        offset, size = section(sys.argv[2])
        data = open(sys.argv[2], "rb").read()[offset:offset + 8]
        print("section .einc_program: %d bytes, starting %s" % (size, data.decode("ascii", "replace")))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
