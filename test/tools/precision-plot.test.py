"""Draws made-up loss curves with bench/precision_plot.py and prints what a
reader of the SVG finds: axis titles, the legend's entries and dash patterns,
the curves' patterns and colours, the difference panels and the difference
each one draws at its last step (read back from the polyline's pixels).

usage: precision-plot.test.py BENCH_DIR
"""
import math
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, sys.argv[1])
from precision_plot import LEFT, PANEL_H, TOP, loss_curves_svg  # noqa: E402

NS = "{http://www.w3.org/2000/svg}"
base = [4.0 * math.exp(-k / 20) + 2.0 for k in range(60)]
offsets = {"fp32": 0.0, "bf16-mixed": 0.01, "fp16-mixed": 0.0, "bf16": -0.02}
rows = [{"model": "toy", "policy": p, "train_loss": [y + d for y in base]}
        for p, d in offsets.items()]
rows.append({"model": "other", "policy": "fp32", "train_loss": base})
root = ET.fromstring(loss_curves_svg(rows, "toy", "made-up curves"))


def text(e):
    return "".join(e.itertext())


titles = [text(t) for t in root.iter(NS + "text") if "rotate" in t.get("transform", "")]
steps = sorted({text(t) for t in root.iter(NS + "text") if text(t) == "step"})
print("axis titles: " + ", ".join(steps + titles))

legend = []
for g in root.iter(NS + "g"):
    if g.get("class") == "legend":
        line = g.find(NS + "line")
        legend.append((text(g), line.get("stroke"), line.get("stroke-dasharray")))
print("legend: " + ", ".join(f"{name} {dash or 'solid'}" for name, _, dash in legend))

curves = [p for p in root.iter(NS + "polyline")]
loss_curves = curves[:len(legend)]
patterns = {p.get("stroke-dasharray") for p in loss_curves}
colours_match = all(
    (p.get("data-series"), p.get("stroke"), p.get("stroke-dasharray")) == entry
    for p, entry in zip(loss_curves, legend))
print(f"curves: {len(patterns)} distinct dash patterns, colours "
      f"{'match' if colours_match else 'do not match'} the legend")

# A difference panel: its title (coloured as its policy), its zero line, its
# curve; the y axis is shared, its tick labels on the first panel.
panel_titles = [text(t) for t in root.iter(NS + "text") if "\u2212 fp32" in text(t)]
print("difference panels: " + ", ".join(panel_titles))
texts = list(root.iter(NS + "text"))
zero_y = None
ticks = {}
for t in texts:
    if t.get("text-anchor") == "end" and float(t.get("x")) == LEFT - 6:
        ticks.setdefault(float(t.get("y")) - 4, text(t).replace("\u2212", "-"))
diff_ticks = sorted((y, float(v)) for y, v in ticks.items() if y > TOP + PANEL_H)
(ya, va), (yb, vb) = diff_ticks[0], diff_ticks[-1]
for p in curves[len(legend):]:
    last = p.get("points").split()[-1]
    y = float(last.split(",")[1])
    drawn = va + (y - ya) * (vb - va) / (yb - ya)
    d = offsets[p.get("data-series")]
    print(f"{p.get('data-series')} \u2212 fp32 at the last step: {d:+.4f} (drawn {drawn:.4f})")

alone = ET.fromstring(loss_curves_svg(rows, "other"))
n_lines = len(list(alone.iter(NS + "polyline")))
solid = all(p.get("stroke-dasharray") is None for p in alone.iter(NS + "polyline"))
has_diff = any("\u2212 fp32" in text(t) for t in alone.iter(NS + "text"))
print(f"one model only: fp32 {'solid' if solid and n_lines == 1 else 'wrong'}, "
      f"{'a' if has_diff else 'no'} difference panel")
try:
    loss_curves_svg(rows, "llama")
except ValueError as e:
    print(f"unknown model: {e}")
