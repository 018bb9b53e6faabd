"""Writes a small safetensors file for the compiler's tests (stdlib only).

    make_safetensors.py OUT NAME:DTYPE:SHAPE:VALUES ...
    make_safetensors.py OUT w:F32:2x3:1,2,3,4,5,6 b:F16:3:0.5,1,2

SHAPE is AxB (or "scalar"); VALUES are comma-separated. DTYPE is F32, F64,
F16, I32, I64, I16 or I8. --truncate=N keeps only the first N bytes.
"""
import json
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "F16": "e", "I32": "i", "I64": "q",
           "I16": "h", "I8": "b"}

out = sys.argv[1]
truncate = None
header, data = {}, b""
for spec in sys.argv[2:]:
    if spec.startswith("--truncate="):
        truncate = int(spec.split("=")[1])
        continue
    name, dtype, shape, values = spec.split(":")
    dims = [] if shape == "scalar" else [int(d) for d in shape.split("x")]
    parse = float if dtype.startswith("F") else int
    items = [parse(v) for v in values.split(",")]
    blob = struct.pack("<" + FORMATS[dtype] * len(items), *items)
    header[name] = {"dtype": dtype, "shape": dims,
                    "data_offsets": [len(data), len(data) + len(blob)]}
    data += blob
text = json.dumps(header).encode()
content = struct.pack("<Q", len(text)) + text + data
with open(out, "wb") as f:
    f.write(content if truncate is None else content[:truncate])
