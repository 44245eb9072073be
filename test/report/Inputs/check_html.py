#!/usr/bin/env python3
"""Checks that an `einc report --format html` page is well-formed (every
non-void tag closed, in order) and self-contained (no http:// or https://
reference, no external src/href, no <script>, no <link>), and has its charts.
Standard library only. Usage: check_html.py PAGE.html
"""
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# SVG elements the page writes self-closed (<line/>): parsed as start+end.


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.tags = {}
        self.titles = 0

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name in ("src", "href", "xlink:href") and value and not value.startswith("#"):
                self.errors.append("external reference %s=%r" % (name, value))
        if tag in ("script", "link", "iframe", "img", "object"):
            self.errors.append("<%s> in a self-contained report" % tag)
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name in ("src", "href", "xlink:href") and value and not value.startswith("#"):
                self.errors.append("external reference %s=%r" % (name, value))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack:
            self.errors.append("</%s> at %s closes nothing" % (tag, self.getpos()))
            return
        open_tag, pos = self.stack.pop()
        if open_tag != tag:
            self.errors.append("</%s> at %s closes <%s> from %s" % (tag, self.getpos(), open_tag, pos))


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    c = Checker()
    c.feed(text)
    c.close()
    if c.stack:
        c.errors.append("unclosed: " + ", ".join("<%s> at %s" % t for t in c.stack[:5]))
    for bad in ("http://", "https://", "url(", "@import"):
        if bad in text:
            c.errors.append("contains %r" % bad)
    if not text.startswith("<!DOCTYPE html>"):
        c.errors.append("no doctype")
    if c.tags.get("svg", 0) < 4:
        c.errors.append("expected 4 charts (roofline, memory, FLOPs and bytes per layer), got %d <svg>" % c.tags.get("svg", 0))
    if c.tags.get("circle", 0) < 10:
        c.errors.append("the roofline has %d dots" % c.tags.get("circle", 0))
    for e in c.errors:
        print("FAIL: " + e)
    if c.errors:
        sys.exit(1)
    print("PASS html: %d bytes, %d svg, %d circles, %d polylines" % (len(text), c.tags["svg"], c.tags["circle"], c.tags.get("polyline", 0)))


if __name__ == "__main__":
    main()
