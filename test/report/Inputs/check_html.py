#!/usr/bin/env python3
"""Checks an `einc report --format html` page: well-formed (every non-void
tag closed, in order), self-contained (no http:// or https:// reference, no
external src/href, no <script>, no <link>), and its sections:

  step time      <figure id="step-time">: the stacked bars
  memory         <figure id="memory">: stacked areas (<polygon
                 data-category>), phase bands (<rect class="phase">), the
                 device's memory as a dashed line or a note that it is off
                 the scale, the peak marked
  roofline       <figure id="roofline">: one dot per kernel with FLOPs
                 (--json REPORT.json: as many as the report's kernels with
                 FLOPs, bytes and time)
  kernels        <div id="top-kernels">: the 20 longest kernels open, every
                 kernel in a collapsed <details id="all-kernels">; a row per
                 kernel or kernel repeated in identical layers (<tr
                 data-kernels=N>): --json REPORT.json: they add up to the
                 report's kernels
  text report    the <pre> at the end, without the text kernel table

Standard library only. Usage:
  check_html.py PAGE.html [--json REPORT.json] [--max-bytes N]
"""
import argparse
import json
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.tags = {}
        self.figures = []
        self.categories = []
        self.phases = []
        self.capacity = False
        self.peak = False
        self.dots = 0
        self.top_rows = 0
        self.all_rows = 0
        self.top_kernels = 0
        self.all_kernels = 0
        self.details_open = False
        self.pre = []
        self.texts = []

    def inside(self, tag, key, value):
        return any(t == tag and a.get(key) == value for t, a, _ in self.stack)

    def start(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name in ("src", "href", "xlink:href") and value and not value.startswith("#"):
                self.errors.append("external reference %s=%r" % (name, value))
        if tag in ("script", "link", "iframe", "img", "object"):
            self.errors.append("<%s> in a self-contained report" % tag)
        if tag == "figure" and "id" in a:
            self.figures.append(a["id"])
        in_memory = self.inside("figure", "id", "memory")
        if tag == "polygon" and in_memory and "data-category" in a:
            self.categories.append(a["data-category"])
        if tag == "rect" and in_memory and a.get("class") == "phase":
            if a["data-phase"] not in self.phases:
                self.phases.append(a["data-phase"])
        if tag == "line" and in_memory and a.get("class") == "capacity":
            self.capacity = True
        if tag == "circle" and in_memory and a.get("class") == "peak":
            self.peak = True
        if tag == "circle" and self.inside("g", "class", "dots"):
            self.dots += 1
        if tag == "tr" and self.inside("div", "id", "top-kernels") and "data-kernels" in a:
            self.top_rows += 1
            self.top_kernels += int(a["data-kernels"])
        if tag == "tr" and self.inside("details", "id", "all-kernels") and "data-kernels" in a:
            self.all_rows += 1
            self.all_kernels += int(a["data-kernels"])
        if tag == "details" and a.get("id") == "all-kernels" and "open" in a:
            self.details_open = True
        return a

    def handle_starttag(self, tag, attrs):
        a = self.start(tag, attrs)
        if tag not in VOID:
            self.stack.append((tag, a, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self.start(tag, attrs)

    def handle_data(self, data):
        if any(t == "pre" for t, _, _ in self.stack):
            self.pre.append(data)
        if any(t == "text" for t, _, _ in self.stack) and self.inside("figure", "id", "memory"):
            self.texts.append(data)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack:
            self.errors.append("</%s> at %s closes nothing" % (tag, self.getpos()))
            return
        open_tag, _, pos = self.stack.pop()
        if open_tag != tag:
            self.errors.append("</%s> at %s closes <%s> from %s" % (tag, self.getpos(), open_tag, pos))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--json")
    ap.add_argument("--max-bytes", type=int)
    args = ap.parse_args()
    raw = open(args.page, "rb").read()
    text = raw.decode("utf-8")
    c = Checker()
    c.feed(text)
    c.close()
    if c.stack:
        c.errors.append("unclosed: " + ", ".join("<%s> at %s" % (t, p) for t, _, p in c.stack[:5]))
    for bad in ("http://", "https://", "url(", "@import"):
        if bad in text:
            c.errors.append("contains %r" % bad)
    if not text.startswith("<!DOCTYPE html>"):
        c.errors.append("no doctype")
    for fig in ("step-time", "memory", "roofline"):
        if fig not in c.figures:
            c.errors.append("no <figure id=%r>" % fig)
    for cat in ("params (in + updated)", "saved activations"):
        if cat not in c.categories:
            c.errors.append("the memory chart has no %r area (has %s)" % (cat, c.categories))
    for phase in ("forward", "backward", "optimizer"):
        if phase not in c.phases:
            c.errors.append("the memory chart shades no %s phase" % phase)
    off_scale = any("off the scale" in t for t in c.texts)
    if not c.capacity and not off_scale:
        c.errors.append("the memory chart shows no device memory")
    if not c.peak:
        c.errors.append("the memory chart marks no peak")
    if c.dots < 1:
        c.errors.append("the roofline has no dots")
    if c.details_open:
        c.errors.append("every kernel's table is open")
    pre = "".join(c.pre)
    if "Kernels (fusion =" in pre:
        c.errors.append("the text report at the end lists the kernels again")
    kernels_note = ""
    if args.json:
        report = json.load(open(args.json))
        kernels = report["kernels"]["list"]
        drawn = sum(1 for k in kernels if k["flops"] > 0 and k["bytes_read"] + k["bytes_written"] > 0 and k["seconds"] > 0)
        if c.dots != drawn:
            c.errors.append("%d roofline dots for %d kernels with FLOPs" % (c.dots, drawn))
        # A row per kernel, or per kernel repeated in identical layers
        # (data-kernels: how many): 20 open, every kernel under <details>.
        listed = c.all_kernels if c.all_rows else c.top_kernels
        if listed != len(kernels):
            c.errors.append("the table lists %d kernels of %d" % (listed, len(kernels)))
        if c.all_rows and c.top_rows != 20:
            c.errors.append("%d rows open, expected 20" % c.top_rows)
        kernels_note = ", one dot per kernel with FLOPs (%d of %d)" % (drawn, len(kernels))
    if args.max_bytes is not None and len(raw) > args.max_bytes:
        c.errors.append("%d bytes, over %d" % (len(raw), args.max_bytes))
    for e in c.errors:
        print("FAIL: " + e)
    if c.errors:
        sys.exit(1)
    print("PASS html: %d bytes, %d svg, memory %s; phases %s; device memory %s; %d roofline dots%s; %d rows open, %d collapsed"
          % (len(raw), c.tags["svg"], ", ".join(c.categories), ", ".join(c.phases),
             "line" if c.capacity else "off the scale", c.dots, kernels_note, c.top_rows, c.all_rows))
    if args.max_bytes is not None:
        print("within %d bytes" % args.max_bytes)


if __name__ == "__main__":
    main()
