"""Checks pages scripts/screenshots wrote: each NAME has its HTML and a PNG
1400 px wide and as tall as a report page (at least 1000 px) whose pixels
are not all one colour, and index.txt gives their sizes.

usage: screenshots.test.py OUT NAME...
"""
import os
import struct
import sys
import zlib

out, names = sys.argv[1], sys.argv[2:]
index = {}
for line in open(os.path.join(out, "index.txt")):
    if not line.startswith("#"):
        fields = line.rstrip("\n").split("\t")
        index[fields[0]] = fields[1:]


def png_pixels(path):
    """Width, height and the distinct raw scanline bytes (filter byte cut)
    of a non-interlaced PNG: enough to tell a blank picture."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, width, height, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            bpp = {2: 3, 6: 4, 0: 1, 4: 2}[colour] * depth // 8
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp + 1
    # Filter type 0 or a constant row after filtering is a plain colour
    # run; any row with more than two distinct bytes has content.
    busy = sum(len(set(raw[r * stride + 1:(r + 1) * stride])) > 2 for r in range(height))
    return width, height, busy


for name in names:
    html = os.path.join(out, name + ".html")
    png = os.path.join(out, name + ".png")
    problems = []
    if name not in index:
        problems.append("not in index.txt")
    elif index[name][0].startswith("FAILED"):
        problems.append(index[name][0])
    if not os.path.exists(html) or not os.path.exists(png):
        print(f"{name}: missing html or png; {problems}")
        continue
    size = os.path.getsize(html)
    width, height, busy = png_pixels(png)
    if index.get(name, [""])[:2] != [f"{size} B html", f"{width}x{height} px"]:
        problems.append(f"index says {index.get(name)}")
    if width != 1400 or height < 1000:
        problems.append("not a page's size")
    if busy < height // 10:
        problems.append(f"only {busy} of {height} rows have content")
    print(f"{name}: html {size} B, png {width} x {height} px: {'; '.join(problems) or 'ok'}")
