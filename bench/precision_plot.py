#!/usr/bin/env python3
"""Training-loss curves of bench/precision.py's runs as one self-contained SVG
per model (no plotting library): the loss by step of every policy on top, and
below it each policy's loss minus fp32's at the same step, averaged over a
window of steps, where curves that coincide on top come apart. Each policy has
its own colour and dash pattern, shown in the legend.

  bench/precision_plot.py RUNS.json --model gpt -o docs/precision-gpt.svg

RUNS.json is what `bench/precision.py --json` writes: {"source": ...,
"rows": [{"model", "policy", "train_loss": [...]}, ...]} (or the rows alone).
"""
import argparse
import json
import math
import sys
from textwrap import wrap
from xml.sax.saxutils import escape

# (colour, stroke-dasharray) per policy, in the order policies first appear;
# fp32, the reference, is solid.
STYLES = [("#1f77b4", None), ("#d62728", "8 4"), ("#2ca02c", "2 3"), ("#9467bd", "10 3 2 3"),
          ("#ff7f0e", "4 2 4 6"), ("#8c564b", "1 5")]
WIDTH, LEFT, RIGHT = 760, 72, 170      # the loss panel spans LEFT .. WIDTH - RIGHT
PANEL_H, DIFF_H, TOP, GAP = 240, 170, 56, 76
DIFF_GAP = 16                          # between the difference panels


def nice_ticks(lo, hi, count=5):
    """Round numbers (1, 2 or 5 times a power of ten apart) covering lo..hi."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks = []
    t = first
    while t < hi + step * 0.999:
        ticks.append(round(t, 10))
        t += step
    return ticks, step


def tick_label(v, step):
    digits = max(0, -int(math.floor(math.log10(step))))
    s = f"{v:.{digits}f}"
    return "0" if float(s) == 0 else s.replace("-", "\u2212")


def running_mean(xs, window):
    out, total = [], 0.0
    for i, x in enumerate(xs):
        total += x
        if i >= window:
            total -= xs[i - window]
        out.append(total / min(i + 1, window))
    return out


def y_range(values, zero_line):
    lo, hi = min(values), max(values)
    if zero_line:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    pad = (hi - lo) * 0.04 or 0.01
    return nice_ticks(lo - pad, hi + pad, 5)


def panel(out, box, series, n, title, ylabel, yticks, zero_line=False, title_colour="#000",
          tick_labels=True):
    """Axes, grid, ticks, axis titles and one polyline per (label, style, ys)
    in box = (x0, y0, x1, y1), the y axis at yticks = (ticks, step)."""
    x0, y0, x1, y1 = box
    yticks, ystep = yticks
    lo, hi = yticks[0], yticks[-1]
    sx = lambda k: x0 + (x1 - x0) * k / max(1, n - 1)
    sy = lambda y: y1 - (y1 - y0) * (y - lo) / (hi - lo)
    out.append(f'<text x="{x0}" y="{y0 - 10}" font-weight="bold" fill="{title_colour}">'
               f'{escape(title)}</text>')
    for t in yticks:
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" '
                   f'stroke="#e5e5e5"/>')
        if tick_labels:
            out.append(f'<text x="{x0 - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">'
                       f'{tick_label(t, ystep)}</text>')
    xticks, _ = nice_ticks(1, n, 5 if x1 - x0 > 300 else 3)
    for t in xticks:
        if 1 <= t <= n:
            out.append(f'<line x1="{sx(t - 1):.1f}" x2="{sx(t - 1):.1f}" y1="{y1}" '
                       f'y2="{y1 + 4}" stroke="#666"/>')
            out.append(f'<text x="{sx(t - 1):.1f}" y="{y1 + 16}" text-anchor="middle">'
                       f'{int(t)}</text>')
    if zero_line:
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{sy(0):.1f}" y2="{sy(0):.1f}" '
                   f'stroke="#1f77b4" stroke-width="1.5"/>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" '
               f'stroke="#666"/>')
    out.append(f'<text x="{(x0 + x1) / 2}" y="{y1 + 32}" text-anchor="middle">step</text>')
    if ylabel:
        cy, cx = (y0 + y1) / 2, x0 - 54
        out.append(f'<text x="{cx}" y="{cy}" text-anchor="middle" '
                   f'transform="rotate(-90 {cx} {cy})">{escape(ylabel)}</text>')
    for label, (colour, dash), values in series:
        pts = " ".join(f"{sx(k):.1f},{sy(y):.1f}" for k, y in enumerate(values))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline data-series="{escape(label)}" fill="none" stroke="{colour}" '
                   f'stroke-width="1.5"{dash_attr} points="{pts}"/>')


def legend(out, top, entries):
    x = WIDTH - RIGHT + 16
    out.append(f'<text x="{x}" y="{top + 4}" font-weight="bold">policy</text>')
    for i, (label, (colour, dash)) in enumerate(entries):
        y = top + 24 + 20 * i
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<g class="legend"><line x1="{x}" x2="{x + 40}" y1="{y - 4}" y2="{y - 4}" '
                   f'stroke="{colour}" stroke-width="2"{dash_attr}/>'
                   f'<text x="{x + 48}" y="{y}">{escape(label)}</text></g>')


def loss_curves_svg(rows, model, source=""):
    """The SVG for `model`'s rows: the loss panel and the difference-from-
    fp32 panel (when there is an fp32 row and another)."""
    mine = [r for r in rows if r["model"] == model and r.get("train_loss")]
    if not mine:
        raise ValueError(f"no training-loss curve of '{model}' in the runs")
    styles = {}
    for r in mine:
        styles.setdefault(r["policy"], STYLES[len(styles) % len(STYLES)])
    n = max(len(r["train_loss"]) for r in mine)
    base = next((r for r in mine if r["policy"] == "fp32"), None)
    others = [r for r in mine if r is not base]
    with_diff = base is not None and others
    source_lines = wrap(source, 120) if source else []
    height = TOP + PANEL_H + 48 + (GAP + DIFF_H + 48 if with_diff else 0) + \
        14 * len(source_lines)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, sans-serif" '
           'font-size="12">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15" '
           f'font-weight="bold">{escape(model)}: training loss under each precision policy'
           '</text>']
    losses = [(r["policy"], styles[r["policy"]], r["train_loss"]) for r in mine]
    panel(out, (LEFT, TOP, WIDTH - RIGHT, TOP + PANEL_H), losses, n, "Training loss by step",
          "training loss (nats/byte)", y_range([y for *_, v in losses for y in v], False))
    legend(out, TOP, list(styles.items()))
    if with_diff:
        # One small panel per narrow policy on a shared y axis: curves that
        # coincide on top (and each other here) stay apart.
        window = max(1, n // 20)
        diffs = []
        for r in others:
            m = min(len(r["train_loss"]), len(base["train_loss"]))
            d = [r["train_loss"][k] - base["train_loss"][k] for k in range(m)]
            diffs.append((r["policy"], styles[r["policy"]], running_mean(d, window)))
        ticks = y_range([y for *_, v in diffs for y in v], True)
        top = TOP + PANEL_H + 48 + GAP
        out.append(f'<text x="{LEFT}" y="{top - 34}" font-weight="bold">Loss minus fp32\u2019s '
                   f'at the same step, mean of the last {window} steps (fp32 = the solid line '
                   'at 0)</text>')
        each = (WIDTH - 20 - LEFT - DIFF_GAP * (len(diffs) - 1)) / len(diffs)
        for i, (label, style, values) in enumerate(diffs):
            x0 = LEFT + i * (each + DIFF_GAP)
            panel(out, (x0, top, x0 + each, top + DIFF_H), [(label, style, values)], n,
                  f"{label} \u2212 fp32", "difference (nats/byte)" if i == 0 else "", ticks,
                  zero_line=True, title_colour=style[0], tick_labels=i == 0)
    for i, line in enumerate(source_lines):
        out.append(f'<text x="{LEFT}" y="{height - 6 - 14 * (len(source_lines) - 1 - i)}" '
                   f'font-size="10" fill="#666">{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def load_runs(path):
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, list):
        return data, ""
    return data["rows"], data.get("source", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", help="the JSON bench/precision.py --json wrote")
    ap.add_argument("--model", required=True, help="the model's stem, e.g. gpt")
    ap.add_argument("-o", "--output", required=True, help="FILE.svg")
    args = ap.parse_args()
    rows, source = load_runs(args.runs)
    try:
        svg = loss_curves_svg(rows, args.model, source)
    except ValueError as e:
        sys.exit(f"precision_plot.py: {e}")
    with open(args.output, "w") as f:
        f.write(svg)


if __name__ == "__main__":
    main()
