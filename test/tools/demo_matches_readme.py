"""Holds scripts/demo's output against the README's sample output.

usage: demo_matches_readme.py README.md DEMO_LOG

- The demo ended well: a `val loss ... bits per byte` line, a sample after the
  sample header, the report's header.
- The README's block of the report of examples/gpt.ein is, line for line,
  what the demo printed under its `== einc report examples/gpt.ein` header
  (the same command, so the same text: numbers included).
- Every line of the README's training block (not `...`, not the sampled text)
  matches a line the demo printed, its numbers left free: the banner, the
  progress line and the closing lines keep their words and layout.
"""
import re
import sys


def blocks(readme):
    """The fenced blocks of README.md with the paragraph before each."""
    out, inside, lines, paragraph, ended = [], False, [], [], True
    for line in readme.splitlines():
        if line.startswith("```"):
            if inside:
                out.append((" ".join(paragraph), lines))
                inside, lines = False, []
            else:
                inside = True
            continue
        if inside:
            lines.append(line)
        elif line.strip():
            if ended:  # the first line of a new paragraph
                paragraph, ended = [], False
            paragraph.append(line.strip())
        else:
            ended = True
    return out


def block_after(readme, words):
    for before, lines in blocks(readme):
        if words in before:
            return lines
    sys.exit(f"README.md: no block after a line with '{words}'")


def numbers_free(line):
    # A duration such as "1m19s" or "7s" is free as a whole.
    line = re.sub(r"\b([0-9]+h)?([0-9]+m)?[0-9]+s\b", "DURATION", line.rstrip())
    pattern = re.escape(line)
    pattern = re.sub(r"(\\-)?[0-9][0-9,]*(\\\.[0-9]+)?(e(\\[-+])?[0-9]+)?[kMG]?", r"[-0-9.,e+kMG]+",
                     pattern)
    # The step count and the thread count follow the machine: "1 thread" or "2 threads".
    pattern = pattern.replace("threads", "threads?").replace("DURATION", r"[0-9hms]+")
    # A step measured faster than a calibration run on a busier machine
    # said is above the profile's peak (the progress line says so).
    pattern = pattern.replace(r"%\ \(predicted",
                              r"%(\ \(above\ the\ profile's\ peak:\ rerun\ einc\ calibrate\))?\ \(predicted")
    return re.compile("^" + pattern + "$")


def main():
    readme = open(sys.argv[1], encoding="utf-8").read()
    log = open(sys.argv[2], encoding="utf-8", errors="replace").read().splitlines()
    failures = []

    if not any(re.match(r"^val loss [0-9.]+ nats/token = [0-9.]+ bits per byte$", l) for l in log):
        failures.append("the demo printed no 'val loss ... bits per byte' line")
    try:
        at = next(i for i, l in enumerate(log) if l.startswith("== einc sample"))
        if not log[at + 1].startswith("And God said"):
            failures.append("no sample after the sample header")
    except (StopIteration, IndexError):
        failures.append("the demo printed no sample")

    # The report block, exactly.
    report = block_after(readme, "The report of `examples/gpt.ein`")
    try:
        at = next(i for i, l in enumerate(log) if l.startswith("== einc report examples/gpt.ein"))
    except StopIteration:
        failures.append("the demo printed no report of examples/gpt.ein")
    else:
        printed = log[at + 1:at + 1 + len(report)]
        for i, want in enumerate(report):
            got = printed[i] if i < len(printed) else "(nothing)"
            if got.rstrip() != want.rstrip():
                failures.append(f"report line {i + 1}: README.md says\n    {want}\n  the demo printed\n    {got}")
                break

    # The training block, numbers free.
    training = block_after(readme, "On this machine (2 cores")
    sample_at = next((i for i, l in enumerate(training) if l.startswith("== einc sample")), len(training))
    for want in training[:sample_at + 1]:
        if not want.strip() or want.strip() == "...":
            continue
        if not any(numbers_free(want).match(l.rstrip()) for l in log):
            failures.append(f"README.md's training block shows a line the demo never printed:\n    {want}")

    if failures:
        print("scripts/demo and README.md disagree:\n" + "\n".join(failures))
        print("\nthe demo's output:\n" + "\n".join(log))
        sys.exit(1)
    print("scripts/demo: ok, and as README.md shows it")


main()
