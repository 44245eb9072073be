"""Runs the commands that README.md and docs/*.md show, so a doc example cannot fail.

usage: doc_commands.py SOURCE_ROOT BUILD_DIR WORK_DIR [--list]

Two kinds of examples are checked:

- Transcripts: a fenced block with `$ ` lines. `$ cat F` followed by lines
  writes F; `$ einc ...` runs and what it prints (stdout and stderr) must be
  the lines that follow, exactly.
- Command lines: any other line of a fenced block that starts with `einc`,
  `build/bin/einc` or `./NAME` (an executable an earlier line compiled), its
  `\\` continuations joined. Each runs, in the order of its file, in one work
  folder per file (examples/ linked in), and must exit with status 0. `...`
  stands for the arguments of the previous command of the same kind, as the
  docs use it.

Not run, by rule: synopses (a `[`, `|` or an upper-case placeholder such as
FILE.ein or NAME), and commands for other machines (SKIP below, each with its
reason). MODEL.ein is a placeholder for a model: it runs as
examples/mlp_lm.ein. Every command is listed with what happened to it.
"""
import os
import re
import shlex
import signal
import subprocess
import sys

# Commands that do not run in this test, by a fragment of their text, and why.
SKIP = {
    "--backend cuda": "needs a GPU",
    "--distributed nccl": "needs GPUs",
    "mpirun": "MPI runs are test/distributed's",
    "scripts/gpu-": "for a lent GPU (docs/cuda-backend.md)",
    "scripts/demo": "test/tools/demo.test runs it",
    "scripts/test": "the test command itself",
    "scripts/setup": "installs packages",
}

PLACEHOLDER = re.compile(r"\b(FILE|NAME|CK|DIR|OUT|OUTDIR|TEXT|N|K|S|F|P|B|T|SEEDS|POLICY|MODEL)\b"
                         r"(\.(ein|bin))?")
TIMEOUT = 240
TRAIN_CAP = 60  # seconds of a training run before it is stopped (see run)
SHORT_RUN_STEPS = 100  # a run of at most this many steps is waited for: later commands read its files


def train_cap(words):
    """The cap of a training run: none for a short one (`--steps 50`, whose
    best.safetensors the next command samples from, however loaded the
    machine is), TRAIN_CAP for a run the docs show at full length."""
    if "train" not in words[1:2]:
        return None
    if "--steps" in words[:-1]:
        try:
            if int(words[words.index("--steps") + 1]) <= SHORT_RUN_STEPS:
                return None
        except ValueError:
            pass
    return TRAIN_CAP


def fenced_blocks(path):
    """(first line number, lines) of each fenced block."""
    blocks, inside, lines, start = [], False, [], 0
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.lstrip().startswith("```"):
            if inside:
                blocks.append((start, lines))
                inside, lines = False, []
            else:
                inside, start = True, number + 1
            continue
        if inside:
            lines.append(line)
    return blocks


def strip_comment(line):
    """The command without its trailing `# ...` comment (outside quotes)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def is_command(line, executables):
    words = line.split()
    if not words:
        return False
    first = words[0]
    if len(words) > 1 and words[1].endswith(":"):  # output shown beside: "einc train: MODEL"
        return False
    return (first in ("einc", "build/bin/einc", "mpirun") or first.startswith("scripts/") or
            (first.startswith("./") and first[2:] in executables))


def commands_of(lines, executables):
    """Joined command lines (line offset, text) of a block without transcripts."""
    out, i = [], 0
    while i < len(lines):
        text = strip_comment(lines[i])
        at = i
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1].rstrip() + " " + strip_comment(lines[i]).strip()
        i += 1
        if is_command(text, executables):
            out.append((at, text))
            words = shlex.split(text)
            if words[1:2] == ["compile"] and "-o" in words:
                executables.add(os.path.basename(words[words.index("-o") + 1]))
    return out


def is_synopsis(text):
    body = re.sub(r"\| (build/bin/)?ein-opt", "", text.replace("MODEL.ein", "examples/mlp_lm.ein"))
    if "[" in body or "|" in body:
        return True
    return any(PLACEHOLDER.fullmatch(w) or PLACEHOLDER.fullmatch(w.split("=")[-1])
               for w in shlex.split(body)[1:])


def expand_ellipsis(words, history):
    """`einc train examples/mlp_lm.ein ... --steps 6000 --resume`: the arguments
    of the previous `einc train examples/mlp_lm.ein`, those given again replaced."""
    at = words.index("...")
    head, given = words[:at], words[at + 1:]
    previous = next((h for h in reversed(history) if h[:len(head)] == head), None)
    if previous is None:
        return None
    given_flags = {w for w in given if w.startswith("-")}
    kept, rest = [], previous[len(head):]
    i = 0
    while i < len(rest):
        w = rest[i]
        takes_value = w.startswith("-") and i + 1 < len(rest) and not rest[i + 1].startswith("-")
        if w in given_flags and w != "--set":
            i += 2 if takes_value else 1
            continue
        if w == "--set" and takes_value and any(
                g.split("=")[0] == rest[i + 1].split("=")[0] for g in given if "=" in g):
            i += 2
            continue
        kept.append(w)
        i += 1
    return head + kept + given


def run(words, work, env, cap=None):
    """(exit status, output). With `cap` (training runs the docs show at full
    length): after `cap` seconds the run is interrupted as a user would stop it
    (SIGINT: it saves at the next step and exits); one that trained a step
    without an error by then counts as running ("stopped")."""
    p = subprocess.Popen(words, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = p.communicate(timeout=cap or TIMEOUT)
        return p.returncode, out.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        if cap is None:
            p.kill()
            out, _ = p.communicate()
            return "timeout", out.decode("utf-8", "replace")
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    text = out.decode("utf-8", "replace")
    trained = re.search(r"^step [0-9]+", text, re.M) and "error" not in text
    return ("stopped" if trained else "timeout"), text


def main():
    source, build, work_root = sys.argv[1:4]
    listing = "--list" in sys.argv[4:]
    einc = os.path.join(build, "bin", "einc")
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "bin") + os.pathsep + env.get("PATH", "")
    env.setdefault("EINC_NUM_THREADS", "2")
    docs = ["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(source, "docs")) if f.endswith(".md"))
    failures, ran, skipped = [], 0, 0
    shared_data = os.path.join(work_root, "data")
    status, output = run([einc, "data", os.path.join(source, "examples", "data", "kjv.txt"), "--out",
                          os.path.join(shared_data, "kjv")], work_root, env)
    if status != 0:
        sys.exit("einc data failed:\n" + output)
    for doc in docs:
        path = os.path.join(source, doc)
        work = os.path.join(work_root, doc.replace("/", "_"))
        os.makedirs(work, exist_ok=True)
        # Each doc's folder: the examples, and the bundled corpus as byte
        # tokens in data/kjv (the docs' `einc data` writes it there too).
        for name, target in (("examples", os.path.join(source, "examples")),
                             ("data", shared_data)):
            link = os.path.join(work, name)
            if not os.path.exists(link):
                os.symlink(target, link)
        executables, history = set(), []
        for start, lines in fenced_blocks(path):
            where = lambda offset: f"{doc}:{start + offset}"
            if any(l.startswith("$ ") for l in lines):
                failures += transcript(lines, work, env, einc, where)
                ran += sum(1 for l in lines if l.startswith("$ einc"))
                continue
            for offset, text in commands_of(lines, executables):
                reason = next((why for k, why in SKIP.items() if k in text), None)
                if reason:
                    skipped += 1
                    if listing:
                        print(f"skipped   {where(offset)}: {text} ({reason})")
                    continue
                if is_synopsis(text):
                    skipped += 1
                    if listing:
                        print(f"synopsis  {where(offset)}: {text}")
                    continue
                words = shlex.split(text.replace("MODEL.ein", "examples/mlp_lm.ein"))
                if words[0] in ("einc", "build/bin/einc"):
                    words[0] = einc
                if "..." in words:
                    expanded = expand_ellipsis(words, history)
                    if expanded is None:
                        failures.append(f"{where(offset)}: `...` with no earlier command to stand for: {text}")
                        continue
                    words = expanded
                history.append(words)
                if "|" in words:  # `einc emit ... | ein-opt ...`: a pipeline
                    words = [os.path.join(build, "bin", "ein-opt") if w in ("ein-opt", "build/bin/ein-opt")
                             else w for w in words]
                    status, output = run(["bash", "-o", "pipefail", "-c",
                                          " ".join(shlex.quote(w) if w != "|" else "|" for w in words)],
                                         work, env)
                else:
                    status, output = run(words, work, env, train_cap(words))
                ran += 1
                if listing:
                    print(f"ran       {where(offset)}: {text} -> {status}")
                if status not in (0, "stopped"):
                    tail = "\n".join("    " + l for l in output.splitlines()[-6:])
                    failures.append(f"{where(offset)}: `{text}` exited with {status}:\n{tail}")
    print(f"doc commands: {ran} run, {skipped} not run (synopses; see SKIP), {len(failures)} failed")
    if failures:
        print("\n".join(failures))
        sys.exit(1)


def transcript(lines, work, env, einc, where):
    """`$ cat F` writes F; `$ einc ...` must print the lines after it."""
    failures, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            i += 1
            continue
        words = shlex.split(line[2:])
        j = i + 1
        while j < len(lines) and not lines[j].startswith("$ "):
            j += 1
        body = lines[i + 1:j]
        if words[0] == "cat" and len(words) == 2:
            with open(os.path.join(work, words[1]), "w", encoding="utf-8") as f:
                f.write("\n".join(body) + "\n")
        elif words[0] == "einc":
            status, output = run([einc] + words[1:], work, env)
            got = output.rstrip("\n").splitlines()
            if got != body:
                diff = next((k for k in range(max(len(got), len(body)))
                             if k >= len(got) or k >= len(body) or got[k] != body[k]), 0)
                failures.append(
                    f"{where(i)}: `{line[2:]}` printed something else than the doc shows "
                    f"(first difference at output line {diff + 1}):\n"
                    f"  the doc:\n" + "\n".join("    " + l for l in body) +
                    "\n  einc:\n" + "\n".join("    " + l for l in got))
        else:
            failures.append(f"{where(i)}: a transcript command this test cannot run: {line}")
        i = j
    return failures


main()
