"""What bench/train_step.py reads and prints, apart from running things:
the CPU's name and flags, einc's banner, and the tables. Needs no PyTorch
(test/tools/bench-train-step.test runs it without).
"""

PEER_TITLES = {"eager": "eager", "compile": "torch.compile", "jax": "JAX"}
# The ISA extensions that decide which GEMM kernels a CPU can run.
CPU_FLAGS = ["avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16"]


def cpu_info(cpuinfo_text):
    """(model name, {flag: present}) from /proc/cpuinfo's text."""
    name, flags = "?", set()
    for line in cpuinfo_text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and name == "?":
            name = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    return name, {f: f in flags for f in CPU_FLAGS}


def cpu_line(name, flags):
    return f"CPU: {name}; " + ", ".join(f"{f} {'yes' if has else 'no'}"
                                        for f, has in flags.items())


def banner_parts(line):
    """The '; '-separated parts inside the outer parentheses of einc train's
    first line, `einc train: MODEL  (cpu backend, compiled in X s; ...; f32
    GEMMs: the measured table (15 shapes: 13 onednn; others openblas))`; a
    '; ' inside nested parentheses does not separate."""
    start = line.find("(")
    if start < 0:
        return []
    parts, depth, cur = [], 0, ""
    for ch in line[start + 1:]:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        if ch == ";" and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def gemm_parts(line):
    """The banner's parts that say which GEMM engine and path ran
    ('f32 GEMMs: ...', 'bf16 GEMMs: avx512bf16', 'f16 GEMMs: widened to f32')."""
    return [p for p in banner_parts(line) if "GEMM" in p]


def mib(n):
    return "-" if n is None else f"{n / 2**20:.1f}"


def peer_cell(q, einc_s):
    """'ms (ratio)' of one peer, or 'n/a' (its reason goes under the table)."""
    if q is None or "na" in q:
        return "n/a"
    return f"{q['median_s'] * 1e3:.2f} ({q['median_s'] / einc_s:.2f})"


def step_table(rows, peers):
    """The Markdown table: model | precision | threads | einc ms | a peer per
    column as 'ms (peer / einc)'."""
    head = ["model", "precision", "threads", "einc ms"] + [PEER_TITLES[p] for p in peers]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["model"], r["precision"], str(r["threads"]), f"{r['einc_s'] * 1e3:.2f}"]
        cells += [peer_cell(r["peers"].get(p), r["einc_s"]) for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def detail_table(rows, peers):
    """Predicted step, tokens/s and peak resident MiB of every process."""
    head = ["model", "precision", "threads", "einc tok/s", "pred ms", "einc MiB"] + \
        [PEER_TITLES[p] + " MiB" for p in peers]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        pred = f"{r['predicted_s'] * 1e3:.2f}" if r.get("predicted_s") is not None else "-"
        cells = [r["model"], r["precision"], str(r["threads"]),
                 f"{r['tokens_per_step'] / r['einc_s']:.0f}", pred, f"{r['einc_peak_mib']:.0f}"]
        cells += [f"{r['peers'][p]['peak_mib']:.0f}" if "median_s" in r["peers"].get(p, {})
                  else "n/a" for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def saved_table(saved):
    """Activations saved for backward, einc's report beside PyTorch eager's
    hooks: saved = {(model, precision): {"einc": {...}, "eager": {...}}},
    each {"activations": bytes, "param_copies": bytes} or None."""
    lines = ["| model | precision | einc MiB | eager MiB | einc / eager | einc param copies | "
             "eager param copies |", "|---|---|---|---|---|---|---|"]
    for (model, precision), s in saved.items():
        e, t = s.get("einc") or {}, s.get("eager") or {}
        ratio = (f"{e['activations'] / t['activations']:.2f}"
                 if e.get("activations") is not None and t.get("activations") else "-")
        lines.append(f"| {model} | {precision} | {mib(e.get('activations'))} | "
                     f"{mib(t.get('activations'))} | {ratio} | {mib(e.get('param_copies'))} | "
                     f"{mib(t.get('param_copies'))} |")
    return lines


def na_notes(rows, peers):
    """One line per peer and precision that could not run, with the reason."""
    notes = {}
    for r in rows:
        for p in peers:
            q = r["peers"].get(p)
            if q and "na" in q:
                notes.setdefault((PEER_TITLES[p], r["precision"]), q["na"])
    return [f"n/a: {p} at {prec}: {why}" for (p, prec), why in notes.items()]
