"""Reader of supergcn's binary dataset format (.sgb, "SGCNBIN" version 1),
as graph/binfmt.go writes it, into numpy arrays (memory-mapped, no copy).

Layout (little-endian): magic "SGCNBIN\\0", version u32, header size u32,
flags u64 (1 weights, 2 labels, 4 features, 8 sparse features), nodes, nnz, featdim, classes,
train, valid, test, name length (8 × i64), sections u32 (9), reserved u32,
then 9 entries (id u32, crc32c u32, offset u64, length u64) and the header
CRC. Sections: ptr (i64, nodes+1), idx (i32, nnz), val (f32, nnz or empty),
x (f32, nodes·featdim), labels (i32), train, valid, test (i32), name.
With flag 8 the x section holds the features as CSR rows: nnz (i64), ptr (i64,
nodes+1), idx (i32, nnz), padding to 8 bytes, val (f32, nnz); load returns them
as x_sparse = (ptr, idx, val) and x None.
Row v of the CSR lists the in-neighbours u of v (edge u→v).
Checksums are not verified here (supergcn verifies them when it loads).
"""
import struct

import numpy as np

MAGIC = b"SGCNBIN\x00"
SECTIONS = ["ptr", "idx", "val", "x", "labels", "train", "valid", "test", "name"]
DTYPES = {"ptr": "<i8", "idx": "<i4", "val": "<f4", "x": "<f4", "labels": "<i4",
          "train": "<i4", "valid": "<i4", "test": "<i4", "name": "u1"}


def load(path):
    """Returns a dict: nodes, nnz, featdim, classes, name and the sections
    as numpy arrays (x reshaped nodes×featdim; val, labels None when absent)."""
    with open(path, "rb") as f:
        head = f.read(96 + 24 * 9 + 4)
    if head[:8] != MAGIC:
        raise SystemExit(f"{path}: not a supergcn binary dataset (bad magic)")
    version, hsize = struct.unpack_from("<II", head, 8)
    if version != 1 or hsize != len(head):
        raise SystemExit(f"{path}: unsupported format version {version} (header {hsize} bytes)")
    flags, = struct.unpack_from("<Q", head, 16)
    nodes, nnz, featdim, classes, ntr, nva, nte, namelen = struct.unpack_from("<8q", head, 24)
    nsec, = struct.unpack_from("<I", head, 88)
    if nsec != 9:
        raise SystemExit(f"{path}: {nsec} sections, want 9")
    mm = np.memmap(path, dtype="u1", mode="r")
    out = {"nodes": nodes, "nnz": nnz, "featdim": featdim, "classes": classes}
    for i, name in enumerate(SECTIONS):
        sid, _crc, off, length = struct.unpack_from("<IIQQ", head, 96 + 24 * i)
        if sid != i + 1 or off + length > len(mm):
            raise SystemExit(f"{path}: section {name}: bad table entry")
        out[name] = mm[off:off + length].view(DTYPES[name]) if length else None
    out["name"] = bytes(out["name"]).decode() if out["name"] is not None else ""
    out["x_sparse"] = None
    if out["x"] is not None and flags & 8:
        sec = out["x"].view("u1")
        nnz = int(sec[:8].view("<i8")[0])
        ptr_end = 8 + 8 * (nodes + 1)
        val_off = ptr_end + (4 * nnz + 7) // 8 * 8
        out["x_sparse"] = (sec[8:ptr_end].view("<i8"), sec[ptr_end:ptr_end + 4 * nnz].view("<i4"),
                           sec[val_off:val_off + 4 * nnz].view("<f4"))
        out["x"] = None
    elif out["x"] is not None:
        out["x"] = out["x"].reshape(nodes, featdim)
    for s in ("train", "valid", "test"):
        if out[s] is None:
            out[s] = np.zeros(0, dtype="<i4")
    return out
