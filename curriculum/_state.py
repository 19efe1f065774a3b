"""Compact, JSON-safe encoding of the curriculum's per-prompt arrays for ``state_dict()``.

Each array becomes ``{"dtype", "shape", "zlib_b64"}``: the raw little-endian bytes, compressed and
base64-encoded. A million prompts cost a few MB instead of tens of MB of JSON lists, and the state
still goes through ``json.dumps`` (the trainer's checkpoint is JSON) bit for bit.
"""

from __future__ import annotations

import base64
import zlib

import numpy as np


def encode(array) -> dict:
    a = np.ascontiguousarray(np.asarray(array))
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return {
        "dtype": a.dtype.str,
        "shape": list(a.shape),
        "zlib_b64": base64.b64encode(zlib.compress(a.tobytes(), 6)).decode("ascii"),
    }


def decode(blob) -> np.ndarray:
    if not isinstance(blob, dict) or "zlib_b64" not in blob:
        raise ValueError(f"curriculum state: expected an encoded array, got {type(blob).__name__}")
    raw = zlib.decompress(base64.b64decode(blob["zlib_b64"]))
    return np.frombuffer(raw, dtype=np.dtype(blob["dtype"])).reshape(blob["shape"]).copy()


def encode_ids(ids: list):
    """``{"range": n}`` for ``0..n-1`` (the trainer's ids), else the plain list."""
    n = len(ids)
    if n and ids[0] == 0 and ids[-1] == n - 1 and ids == list(range(n)):
        return {"range": n}
    return list(ids)


def decode_ids(value) -> list:
    if isinstance(value, dict):
        return list(range(int(value["range"])))
    return list(value)
