"""What scripts/gpu-check found: the rows each part reduces its raw output to, the Goals of
issue 13 as pass/fail, and the Markdown of OUTDIR/gpu-check.md. Standard library only."""
import json
import os
import statistics

import common

CLASSES = ("contraction", "reduction", "elementwise", "data")
CORRECTNESS = ("open", "open, synchronised", "memcheck", "racecheck", "check mlp_lm", "check gpt",
               "train mlp_lm", "train gpt", "nccl", "elementwise", "softmax", "gemm")


def gb(bytes_, seconds):
    return bytes_ / seconds / 1e9 if seconds > 0 else None


def summarise_check(data):
    """A `NAME check --json` document as one row."""
    steps = data.get("steps", [])
    out = {
        "distinct_steps": len(steps),
        "kernels": sum(1 for s in steps if not s["what"].startswith("gemm")),
        "gemms": sum(1 for s in steps if s["what"].startswith("gemm")),
        "occurrences": sum(s["occurrences"] for s in steps),
        "same_bits": sum(1 for s in steps if s["compared"] and s["differing"] == 0),
        "within_bound": sum(1 for s in steps if s["passed"]),
        "failed": [f"@{s['function']} step {s['index']} {s['what']}: {s['error'] or s['problem']}"
                   for s in steps if not s["passed"]][:10],
        "worst": None,
        "device": data.get("tested_description"),
    }
    worst = [s for s in steps if s["compared"] and s["error_over_bound"] is not None]
    if worst:
        w = max(worst, key=lambda s: s["error_over_bound"])
        out["worst"] = {"what": w["what"], "bound": w["bound_why"], "max_error": w["max_error"],
                        "error_over_bound": w["error_over_bound"]}
    out["timed_seconds"] = sum(s["seconds"] * s["occurrences"] for s in steps)
    return out


def compare_curves(ref, got, bound):
    rows = []
    worst = 0.0
    for i, r in enumerate(ref):
        g = got[i] if i < len(got) else None
        rel = abs(g - r) / abs(r) if g is not None and r != 0 else (0.0 if g == r else None)
        rows.append({"step": i + 1, "reference": r, "measured": g, "relative": rel})
        worst = max(worst, rel if rel is not None else float("inf"))
    ok = len(got) >= len(ref) and worst <= bound
    note = (f"{len(got)} of {len(ref)} steps logged; " if len(got) < len(ref) else "") + \
        f"worst relative difference {worst:.2e} (bound {bound:g})"
    return {"status": "passed" if ok else "failed", "note": note, "worst_relative": worst,
            "curve": rows}


def forward_steps(data, cls):
    return [s for s in data.get("steps", []) if s["class"] == cls and s["seconds"] > 0]


def speed_row(data, kind):
    """The speed row of a bandwidth or GEMM model from its `check` JSON: the largest step of
    the kind the model is about, its correctness included."""
    r = {"device": data.get("tested_description"), "all_within_bounds": data.get("passed")}
    pick = {"elementwise": "elementwise", "softmax": "reduction", "gemm": "contraction"}[kind]
    # Not the loss's reduction to a scalar: the rows are what the row is about.
    steps = [s for s in forward_steps(data, pick) if not s["result"].endswith("[]")]
    if steps:
        s = max(steps, key=lambda s: (s["flops"], s["bytes"]))
        r.update({"what": s["what"], "launch": s["launch"], "result": s["result"],
                  "bytes": s["bytes"], "flops": s["flops"], "seconds": s["seconds"],
                  "gb_per_s": gb(s["bytes"], s["seconds"]),
                  "tflop_per_s": s["flops"] / s["seconds"] / 1e12 if s["flops"] else None,
                  "bound": s["bound_why"], "error_over_bound": s["error_over_bound"]})
    if kind == "softmax":  # the whole softmax: every kernel of the forward but the loss
        kernels = [s for s in data.get("steps", []) if s["seconds"] > 0 and s["function"] == "forward"]
        exp = [s for s in kernels if s["class"] == "elementwise" and "exp" in s["what"]]
        if exp:
            e = max(exp, key=lambda s: s["bytes"])
            r["fused_exp_gb_per_s"] = gb(e["bytes"], e["seconds"])
    if data.get("copy") and data["copy"]["seconds"] > 0:
        c = data["copy"]
        r["copy_gb_per_s"] = gb(2 * c["bytes"], c["seconds"])
    return r


def peak_flops(dtype, profile):
    """The profile's matrix peak for dtype, from passes/devices.json (never a literal)."""
    with open(os.path.join(common.ROOT, "passes", "devices.json")) as f:
        profiles = json.load(f)["profiles"]
    for p in profiles:
        if p["name"] == profile:
            return p["matmulFlops"].get(dtype, p["matmulFlops"]["f32"])
    return None


def profile_field(profile, field):
    """A field of a profile in passes/devices.json (None when it has none)."""
    with open(os.path.join(common.ROOT, "passes", "devices.json")) as f:
        profiles = json.load(f)["profiles"]
    return next((p.get(field) for p in profiles if p["name"] == profile), None)


def latency_row(data, profile):
    """Seconds per kernel of a step whose kernels do almost no work: the whole step replayed
    (on cuda, one graph launch) and each step alone, synchronised, over the Kernel and Matmul
    steps; beside the profile's estimate."""
    f = next((f for f in data.get("functions", []) if f["name"] == "train_step"), None)
    if not f or f["run_seconds"] <= 0 or f["steps"] <= 0:
        return {"note": (f or {}).get("error", "no train_step timing")}
    estimate = profile_field(profile, "kernelLatencySeconds")
    per_kernel = f["run_seconds"] / f["steps"]
    return {"kernels": f["steps"], "step_seconds": f["run_seconds"],
            "seconds_per_kernel": per_kernel,
            "synchronised_seconds_per_kernel": f["profiled_seconds"] / f["steps"],
            "profile_seconds_per_kernel": estimate,
            "ratio": estimate / per_kernel if estimate else None}


def step_row(data, profile):
    """GPT-2 small's training step from `gpt2 check --no-compare --functions train_step`, its
    report (and so the MFU's peak) of the card's profile."""
    f = next((f for f in data.get("functions", []) if f["name"] == "train_step"), None)
    pred = data.get("prediction") or {}
    if not f or f["run_seconds"] <= 0:
        return {"note": (f or {}).get("error", "no train_step timing")}
    t = f["run_seconds"]
    tokens = pred.get("tokens_per_step", 0)
    peak = peak_flops("bf16", profile)
    r = {"step_seconds": t, "tokens_per_step": tokens,
         "tokens_per_second": tokens / t if tokens else None,
         "model_flops": pred.get("model_flops"), "peak_flops": peak,
         "mfu": pred.get("model_flops", 0) / (t * peak) if peak else None,
         "predicted_step_seconds": pred.get("step_seconds"),
         "profiled_seconds": f["profiled_seconds"], "classes": []}
    for c in CLASSES:
        measured = f["by_class"][c]["seconds"]
        predicted = pred.get("by_class", {}).get(c)
        r["classes"].append({"class": c, "steps": f["by_class"][c]["steps"], "measured": measured,
                             "predicted": predicted,
                             "ratio": predicted / measured if predicted is not None and measured > 0
                             else None})
    return r


def train_speed(rows):
    """tokens/s of a short `train` run: the median after its first two (warm-up) steps."""
    speeds = [r["tokens_per_second"] for r in rows[2:] if r.get("tokens_per_second")]
    if not speeds:
        return {"status": "error", "note": "no tokens_per_second in the log"}
    return {"status": "measured", "note": "", "steps": len(rows),
            "tokens_per_second": statistics.median(speeds), "last_loss": rows[-1]["loss"]}


def peers_row(peers):
    r = {"torch": peers.get("torch"), "device_name": peers.get("device_name"), "modes": {}}
    for m in peers.get("modes", []):
        r["modes"][m["mode"]] = ({"error": m["error"]} if "error" in m else
                                 {"tokens_per_second": m["tokens_per_second"],
                                  "step_seconds": m["step_seconds"], "last_loss": m["last_loss"]})
    c = peers.get("ceilings", {})
    r["copy_gb_per_s"] = c.get("copy_gb_per_s")
    r["matmul"] = {f"{g['m']}x{g['n']}x{g['k']} {g['dtype']}": g["tflops"] for g in c.get("matmul", [])}
    return r


def goals(results, manifest, profile):
    """Issue 13's Goals, each {goal, measured, against, ratio, pass, note}; pass is None where
    a side is missing."""
    parts = results["parts"]
    peers = parts.get("peers", {})
    modes = peers.get("modes", {}) if peers.get("status") in ("measured", "timeout") else {}
    out = []

    def goal(name, measured, against, want, note):
        ratio = measured / against if measured and against else None
        out.append({"goal": name, "measured": measured, "against": against, "ratio": ratio,
                    "pass": None if ratio is None else ratio >= want, "note": note})

    cpu = results["mode"] == "cpu"
    ew = parts.get("elementwise", {})
    copy = peers.get("copy_gb_per_s") if modes else None
    copy_from = "torch copy_" if copy else "einc Device::copy"
    goal("fused elementwise >= 80% of copy bandwidth", ew.get("gb_per_s"),
         copy or ew.get("copy_gb_per_s"), 0.8, f"GB/s; copy measured by {copy_from}")
    gemm = parts.get("gemm", {})
    dims = manifest["models"].get("matmul", {}).get("dims") or {"m": 8192, "n": 8192, "k": 8192}
    key = f"{dims.get('m', 8192)}x{dims.get('n', 8192)}x{dims.get('k', 8192)} bfloat16"
    goal("cuBLASLt GEMM >= 90% of torch.matmul (same shape, bf16)", gemm.get("tflop_per_s"),
         peers.get("matmul", {}).get(key) if modes else None, 0.9, f"TFLOP/s, {key}")
    step = parts.get("gpt2 step", {})
    tps = step.get("tokens_per_second")
    eager = modes.get("eager", {}).get("tokens_per_second")
    compiled = modes.get("compile", {}).get("tokens_per_second")
    goal("GPT-2 small step >= PyTorch eager", tps, eager, 1.0, "tokens/s")
    goal("GPT-2 small step >= 0.9x torch.compile", tps, compiled, 0.9, "tokens/s")
    mfu = step.get("mfu")
    out.append({"goal": "MFU >= 40%", "measured": mfu, "against": 0.4,
                "ratio": mfu / 0.4 if mfu else None, "pass": None if mfu is None else mfu >= 0.4,
                "note": f"model FLOPs / (step time x the {step.get('profile') or profile} "
                        "profile's bf16 peak)"})
    classes = step.get("classes", [])
    if classes:
        bad = [c["class"] for c in classes if c["measured"] > 0 and c["predicted"] is not None
               and abs(c["predicted"] - c["measured"]) > 0.25 * c["measured"]]
        known = [c for c in classes if c["measured"] > 0 and c["predicted"] is not None]
        out.append({"goal": "report's per-kernel-class predictions within 25% of measured",
                    "measured": None, "against": None, "ratio": None,
                    "pass": None if not known else not bad,
                    "note": ("off: " + ", ".join(bad)) if bad else "every class within 25%"})
    else:
        out.append({"goal": "report's per-kernel-class predictions within 25% of measured",
                    "measured": None, "against": None, "ratio": None, "pass": None,
                    "note": "no GPT-2 step timing"})
    if cpu:  # the figures are the CPU's: the flow is exercised, the goals are a GPU's
        for g in out:
            g["pass"] = None
            g["note"] = "cpu mode: " + g["note"]
    return out


def correct(results):
    for name in CORRECTNESS:
        if results["parts"].get(name, {}).get("status") in ("failed", "error", "timeout"):
            return False
    return True


def fmt(v, digits=1, scale=1.0):
    if v is None:
        return "—"
    return f"{v * scale:,.{digits}f}"


def markdown(results):
    p = results["parts"]
    env = results["environment"]
    m = results["manifest"]
    lines = [f"# gpu-check ({results['mode']} mode, backend {results['backend']})", ""]
    for missing in results["missing"]:
        lines += [f"**{blocker(missing['library'])}**: `{missing['line']}`", ""]
    san = results.get("sanitizer") or {}
    lines += [f"GPU: {env.get('gpu') or 'none'}; profile {results.get('profile') or 'unknown'}; "
              f"torch: {env.get('torch') or 'none'}; {env.get('cpus')} CPUs; executables of "
              f"{m['einc']} ({m['git']}, {m['created']}, target {m['target']}); "
              f"compute-sanitizer: {san.get('path') or 'none'} ({san.get('why', '')}); "
              f"{results['seconds']:.0f} s in all.", ""]
    for n in results["notes"]:
        lines.append(f"- note: {n}")
    lines += [""] if results["notes"] else []
    lines += ["| part | status | result | s | budget s |", "|---|---|---|---:|---:|"]
    for name, r in p.items():
        lines.append(f"| {name} | {r['status']} | {summary(name, r)} | {r.get('seconds', '')} | "
                     f"{results['budgets'].get(name, '')} |")

    lines += ["", "## Correctness", "",
              "| model | distinct steps | kernels | GEMMs | same bits | within bound | worst error/bound |",
              "|---|---:|---:|---:|---:|---:|---|"]
    for name in ("check mlp_lm", "check gpt"):
        r = p.get(name, {})
        if "distinct_steps" in r:
            w = r["worst"] if r["worst"] and r["worst"]["error_over_bound"] else None
            lines.append(f"| {name[6:]} | {r['distinct_steps']} | {r['kernels']} | {r['gemms']} | "
                         f"{r['same_bits']} | {r['within_bound']} | "
                         + (f"{w['error_over_bound']:.2g} ({w['what']}: {w['bound']})" if w else "—")
                         + " |")
            for f in r["failed"]:
                lines.append(f"|  | **{f}** | | | | | |")
    for name in ("train mlp_lm", "train gpt"):
        r = p.get(name, {})
        if "curve" in r:
            lines += ["", f"{name}: {r['note']}", "", "| step | reference (cpu) | measured | relative |",
                      "|---:|---:|---:|---:|"]
            for row in r["curve"]:
                rel = "—" if row["relative"] is None else f"{row['relative']:.1e}"
                lines.append(f"| {row['step']} | {row['reference']:.6f} | "
                             f"{fmt(row['measured'], 6)} | {rel} |")

    lines += ["", "## Speed", "", "| row | kernel | measured | unit |", "|---|---|---:|---|"]
    ew, sm, gm = p.get("elementwise", {}), p.get("softmax", {}), p.get("gemm", {})
    peers = p.get("peers", {})
    lines.append(f"| copy bandwidth (einc Device::copy) | | {fmt(ew.get('copy_gb_per_s'))} | GB/s |")
    lines.append(f"| copy bandwidth (torch) | | {fmt(peers.get('copy_gb_per_s'))} | GB/s |")
    lines.append(f"| fused elementwise | {ew.get('what', '')} {ew.get('result', '')} | "
                 f"{fmt(ew.get('gb_per_s'))} | GB/s |")
    lines.append(f"| softmax row kernel | {sm.get('what', '')} ({sm.get('launch', '')}) "
                 f"{sm.get('result', '')} | {fmt(sm.get('gb_per_s'))} | GB/s |")
    lines.append(f"| softmax fused exp | | {fmt(sm.get('fused_exp_gb_per_s'))} | GB/s |")
    lines.append(f"| cuBLASLt GEMM | {gm.get('what', '')} | {fmt(gm.get('tflop_per_s'))} | TFLOP/s |")
    for k, v in peers.get("matmul", {}).items():
        lines.append(f"| torch.matmul {k} | | {fmt(v)} | TFLOP/s |")
    lat = p.get("launch latency", {})
    lines.append(f"| kernel latency, step replayed ({lat.get('kernels', '—')} kernels of a tiny gpt) | | "
                 f"{fmt(lat.get('seconds_per_kernel'), 2, 1e6)} | µs/kernel |")
    lines.append(f"| kernel latency, each kernel synchronised | | "
                 f"{fmt(lat.get('synchronised_seconds_per_kernel'), 2, 1e6)} | µs/kernel |")
    lines.append(f"| kernel latency, the profile's estimate ({lat.get('profile', '')}) | | "
                 f"{fmt(lat.get('profile_seconds_per_kernel'), 2, 1e6)} | µs/kernel |")
    st = p.get("gpt2 step", {})
    tr = p.get("gpt2 train", {})
    lines.append(f"| GPT-2 small step (check: graph replay) | | {fmt(st.get('tokens_per_second'), 0)} | tokens/s |")
    lines.append(f"| GPT-2 small train (trainer, batches uploaded) | | "
                 f"{fmt(tr.get('tokens_per_second'), 0)} | tokens/s |")
    lines.append(f"| GPT-2 small MFU | | {fmt(st.get('mfu'), 1, 100)} | % |")
    for mode, v in peers.get("modes", {}).items():
        lines.append(f"| PyTorch {mode} | | "
                     + (f"{fmt(v.get('tokens_per_second'), 0)} | tokens/s |" if "error" not in v
                        else f"error: {v['error'][:80]} | |"))
    if st.get("classes"):
        lines += ["", f"GPT-2 small @train_step per kernel class (profiled: each step synchronised; "
                      f"{fmt(st.get('profiled_seconds'), 2, 1e3)} ms one by one, "
                      f"{fmt(st.get('step_seconds'), 2, 1e3)} ms replayed):", "",
                  "| class | steps | measured ms | predicted ms | predicted / measured |",
                  "|---|---:|---:|---:|---:|"]
        for c in st["classes"]:
            lines.append(f"| {c['class']} | {c['steps']} | {fmt(c['measured'], 3, 1e3)} | "
                         f"{fmt(c['predicted'], 3, 1e3)} | {fmt(c['ratio'], 2)} |")
        lines.append(f"| whole step | | {fmt(st.get('step_seconds'), 3, 1e3)} | "
                     f"{fmt(st.get('predicted_step_seconds'), 3, 1e3)} | "
                     f"{fmt((st.get('predicted_step_seconds') or 0) / st['step_seconds'] if st.get('step_seconds') else None, 2)} |")

    lines += ["", "## Goals (issue 13)", "", "| goal | measured | against | ratio | pass | note |",
              "|---|---:|---:|---:|---|---|"]
    for g in results["goals"]:
        verdict = "—" if g["pass"] is None else ("**pass**" if g["pass"] else "**FAIL**")
        lines.append(f"| {g['goal']} | {fmt(g['measured'], 3)} | {fmt(g['against'], 3)} | "
                     f"{fmt(g['ratio'], 2)} | {verdict} | {g['note']} |")
    lines.append("")
    return "\n".join(lines)


def blocker(what):
    return "no GPU" if what == "GPU" else f"library missing: {what}"


def console(results):
    """The short table gpu-check prints last (the device tool returns the output's tail)."""
    lines = [blocker(m["library"]) + f" ({m['line']})" for m in results["missing"]]
    for name, r in results["parts"].items():
        lines.append(f"  {name:20s} {r['status']:9s} {str(r.get('seconds', '')):>6s} "
                     f"{summary(name, r)[:110]}")
    return "\n".join(lines)


def summary(name, r):
    if r["status"] == "skipped":
        return r.get("note", "")
    if name in ("open", "open, synchronised") and r.get("device"):
        return f"{r['device']}; {r.get('note', '')}"
    if "distinct_steps" in r:
        return (f"{r['within_bound']}/{r['distinct_steps']} distinct steps within their bounds "
                f"({r['same_bits']} same bits)" + (f"; {r['note']}" if r.get("note") else ""))
    if "worst_relative" in r:
        return r["note"]
    if name == "launch latency" and r.get("seconds_per_kernel"):
        est = r.get("profile_seconds_per_kernel")
        return (f"{r['seconds_per_kernel'] * 1e6:.2f} µs per kernel over {r['kernels']} kernels "
                f"replayed ({r['synchronised_seconds_per_kernel'] * 1e6:.2f} µs synchronised); "
                f"the {r['profile']} profile estimates " + (f"{est * 1e6:.2f} µs" if est else "none"))
    if name == "gpt2 step" and r.get("tokens_per_second"):
        return f"{r['tokens_per_second']:,.0f} tokens/s, MFU {fmt(r.get('mfu'), 1, 100)}%"
    if r.get("tflop_per_s") is not None:
        return f"{r['tflop_per_s']:,.1f} TFLOP/s ({r.get('what', '')})" + (f"; {r['note']}" if r.get("note") else "")
    if r.get("gb_per_s") is not None:
        return f"{r['gb_per_s']:,.1f} GB/s ({r.get('what', '')})" + (f"; {r['note']}" if r.get("note") else "")
    if r.get("tflop_per_s") is not None:
        return f"{r['tflop_per_s']:,.1f} TFLOP/s" + (f"; {r['note']}" if r.get("note") else "")
    if r.get("tokens_per_second"):
        return f"{r['tokens_per_second']:,.0f} tokens/s"
    return (r.get("note") or "")[:200]
