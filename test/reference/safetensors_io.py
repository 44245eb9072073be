"""Minimal safetensors reading and writing with the standard library only
(little-endian F32 and I32), for the tests that hold einc against PyTorch."""
import json
import struct

_FORMATS = {"F32": ("f", 4), "I32": ("i", 4), "F64": ("d", 8)}


def write(path, tensors, metadata=None):
    """tensors: list of (name, dtype, shape, flat list of values)."""
    header, blobs, offset = {}, [], 0
    for name, dtype, shape, values in tensors:
        code, size = _FORMATS[dtype]
        blob = struct.pack("<%d%s" % (len(values), code), *values)
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read(path):
    """Returns {name: (dtype, shape, flat list of values)}."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, entry in header.items():
        code, size = _FORMATS[entry["dtype"]]
        begin, end = entry["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        out[name] = (entry["dtype"], entry["shape"],
                     list(struct.unpack("<%d%s" % (len(raw) // size, code), raw)))
    return out
