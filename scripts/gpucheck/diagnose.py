"""Reading the raw output of gpu-check's parts: a CUDA library the runtime could not open, no
GPU, and compute-sanitizer's verdict. Standard library only.

    python3 scripts/gpucheck/diagnose.py FILE...   (- for stdin)

prints what it finds in each file: `library missing: X`, `no GPU: ...`, `sanitizer: ...`.
"""
import re
import sys

# The runtime's one line for a library it cannot open, `einc: cuBLASLt not found (...)` (any
# tool's prefix: an executable prints its own name), and the older wordings of the same.
NOT_FOUND = re.compile(r"\b(CUDA driver|cuBLASLt|NVRTC|NCCL) not found\b")
OLDER = [
    (re.compile(r"\bno CUDA driver \("), "CUDA driver"),
    (re.compile(r"\bno cuBLASLt \("), "cuBLASLt"),
    (re.compile(r"\bNVRTC is not available \("), "NVRTC"),
    (re.compile(r"\bneeds NCCL's libnccl\.so"), "NCCL"),
]
# A driver that opened but sees no GPU (or cannot start one).
NO_DEVICE = re.compile(r"\bno CUDA device\b[^\n]*")


def missing_library(text):
    """(library, the line saying so) for the first library the output says is missing, or
    None."""
    hits = []
    m = NOT_FOUND.search(text)
    if m:
        hits.append((m.start(), m.group(1)))
    for pattern, name in OLDER:
        m = pattern.search(text)
        if m:
            hits.append((m.start(), name))
    if not hits:
        return None
    at, name = min(hits)
    return name, line_at(text, at)


def no_device(text):
    """The line saying that the driver sees no GPU, or None."""
    m = NO_DEVICE.search(text)
    return line_at(text, m.start()) if m else None


def line_at(text, at):
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start:end if end >= 0 else len(text)].strip()[:300]


SUMMARY = re.compile(r"=+ ERROR SUMMARY: (\d+) errors?")
RACE_SUMMARY = re.compile(r"=+ RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, "
                          r"(\d+) warnings?\)")
TOOL_ERROR = re.compile(r"^=+ Error: (.*)$", re.M)
REPORT = re.compile(r"^=+ ((?:Invalid|Race|Error|Warning|Program hit|Uninitialized|Barrier|"
                    r"Malloc|Cuda|Leaked)[^\n]*)$", re.M)


def sanitizer_verdict(text, code):
    """compute-sanitizer's verdict on one run: {status, errors, note}. passed: its summary
    says no errors (racecheck: no hazards) and the program exited 0; failed: it found some
    (the first named); error: it printed no summary (the tool could not run the program:
    its own error line), or the program failed without a finding."""
    race = RACE_SUMMARY.search(text)
    plain = SUMMARY.search(text)
    if race:
        hazards, errors, warnings = (int(g) for g in race.groups())
        count, what = errors + warnings, f"{errors} race errors, {warnings} warnings"
    elif plain:
        count = int(plain.group(1))
        what = f"{count} errors"
    else:
        tool = TOOL_ERROR.search(text)
        return {"status": "error", "errors": None,
                "note": "no sanitizer summary: " + (tool.group(1).strip() if tool else
                                                     last_line(text))}
    if count:
        first = REPORT.search(text)
        return {"status": "failed", "errors": count,
                "note": what + (f"; first: {first.group(1).strip()[:200]}" if first else "")}
    if code != 0:
        return {"status": "error", "errors": 0,
                "note": f"no findings, but the program exited {code}: {last_line(text)}"}
    return {"status": "passed", "errors": 0, "note": what}


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else "no output"


def main(paths):
    for path in paths:
        text = sys.stdin.read() if path == "-" else open(path, errors="replace").read()
        found = missing_library(text)
        if found:
            print(f"{path}: library missing: {found[0]} ({found[1]})")
        device = no_device(text)
        if device:
            print(f"{path}: no GPU: {device}")
        if "COMPUTE-SANITIZER" in text:
            v = sanitizer_verdict(text, 0)
            print(f"{path}: sanitizer: {v['status']}: {v['note']}")
        if not found and not device and "COMPUTE-SANITIZER" not in text:
            print(f"{path}: nothing recognised")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["-"]))
