"""Writes .npz parameter archives for the compiler's tests with numpy's own
np.savez / np.savez_compressed, and damaged ones.

    make_npz.py OUT [--compressed] [--zip64] [--corrupt | --truncate=N] NAME:DTYPE:SHAPE:VALUES ...
    make_npz.py OUT w:<f4:2x3:1,2,3,4,5,6 b:<f2:3:0.5,1,2

DTYPE is a numpy type string ('<f4', '>f4', '<u1', '<c8', ...); SHAPE is
AxB (or "scalar"); VALUES are comma-separated. A DTYPE ending in ",F" is
written in Fortran order. --zip64 rewrites the central directory in the
zip64 form that archives over 4 GiB have (sizes and offsets in zip64 extra
fields, a zip64 end record and locator). --corrupt flips a byte of the
first member's data (its CRC no longer matches); --truncate=N keeps the
first N bytes.
"""
import io
import struct
import sys

import numpy as np

out = sys.argv[1]
compressed = corrupt = zip64 = False
truncate = None
arrays = {}
for spec in sys.argv[2:]:
    if spec == "--compressed":
        compressed = True
        continue
    if spec == "--zip64":
        zip64 = True
        continue
    if spec == "--corrupt":
        corrupt = True
        continue
    if spec.startswith("--truncate="):
        truncate = int(spec.split("=")[1])
        continue
    name, dtype, shape, values = spec.split(":")
    order = "C"
    if dtype.endswith(",F"):
        dtype, order = dtype[:-2], "F"
    dims = () if shape == "scalar" else tuple(int(d) for d in shape.split("x"))
    items = [complex(v) if "c" in dtype else float(v) for v in values.split(",")]
    arrays[name] = np.asarray(np.array(items, dtype=dtype).reshape(dims), order=order)



def to_zip64(data):
    """The same archive with every central directory entry's sizes and
    local header offset moved into a zip64 extra field, and zip64 end
    records."""
    end = data.rfind(b"PK\x05\x06")
    count, size, offset = struct.unpack_from("<HII", data, end + 10)
    entries, at = [], offset
    for _ in range(count):
        fixed = bytearray(data[at:at + 46])
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", fixed, 28)
        crc, packed, unpacked = struct.unpack_from("<III", fixed, 16)
        local = struct.unpack_from("<I", fixed, 42)[0]
        name = data[at + 46:at + 46 + name_len]
        struct.pack_into("<II", fixed, 20, 0xFFFFFFFF, 0xFFFFFFFF)
        struct.pack_into("<I", fixed, 42, 0xFFFFFFFF)
        extra = struct.pack("<HHQQQ", 1, 24, unpacked, packed, local)
        struct.pack_into("<H", fixed, 30, len(extra))
        struct.pack_into("<H", fixed, 32, 0)
        entries.append(bytes(fixed) + name + extra)
        at += 46 + name_len + extra_len + comment_len
    directory = b"".join(entries)
    body = data[:offset]
    record_at = len(body) + len(directory)
    record = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count,
                         len(directory), len(body))
    locator = struct.pack("<IIQI", 0x07064B50, 0, record_at, 1)
    end_record = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF,
                             0xFFFFFFFF, 0xFFFFFFFF, 0)
    return bytearray(body + directory + record + locator + end_record)


buffer = io.BytesIO()
(np.savez_compressed if compressed else np.savez)(buffer, **arrays)
data = bytearray(buffer.getvalue())
if zip64:
    data = to_zip64(data)
if corrupt:
    # The first member's data end just before the second local header, or
    # the central directory: flip the byte before it.
    end = data.find(b"PK\x03\x04", 4)
    if end < 0:
        end = data.find(b"PK\x01\x02")
    data[end - 1] ^= 0xFF
if truncate is not None:
    data = data[:truncate]
with open(out, "wb") as f:
    f.write(bytes(data))
