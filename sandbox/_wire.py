"""Framing and a strict value codec for the pipes between harness, workers and candidates.

Standard library only (the zygote imports it as a top-level module). The codec is the reason a
candidate cannot fool a comparison: only plain data crosses the pipe (int, float, complex, str,
bytes, bool, None and lists, tuples, dicts, sets, frozensets of those), so the harness compares
genuine built-in objects with its own ``==``. An object of any other class never leaves the
candidate's process; the harness receives an opaque handle that equals nothing but itself.
"""

from __future__ import annotations

import json
import socket
import struct

MAX_MESSAGE = 64 << 20  # a frame larger than this is a protocol error, not an allocation
MAX_DEPTH = 100
_HDR = struct.Struct("!I")


class WireError(Exception):
    """The peer sent something that is not a valid frame or value (or went away)."""


class Unencodable(Exception):
    """A value outside the plain-data set; the caller decides (handle it, or fail the test)."""


def send(sock: socket.socket, obj: object, fds: list[int] = ()) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE:
        raise WireError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE}")
    frame = _HDR.pack(len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [frame], list(fds))
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


def recv(sock: socket.socket, *, want_fds: int = 0) -> tuple[object, list[int]]:
    """One frame; raises WireError on EOF or a malformed frame."""
    fds: list[int] = []
    if want_fds:
        head, fds, _, _ = socket.recv_fds(sock, _HDR.size, want_fds)
    else:
        head = sock.recv(_HDR.size)
    if not head:
        raise WireError("peer closed the channel")
    head += _recv_exact(sock, _HDR.size - len(head))
    (size,) = _HDR.unpack(head)
    if size > MAX_MESSAGE:
        raise WireError(f"frame of {size} bytes exceeds {MAX_MESSAGE}")
    try:
        return json.loads(_recv_exact(sock, size)), fds
    except (ValueError, RecursionError) as exc:
        raise WireError(f"malformed frame: {exc}") from None


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise WireError("peer closed the channel mid-frame")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


# ---- value codec ---------------------------------------------------------------------------------
# Tagged JSON: ["i", 3], ["f", "0.1"], ["s", "x"], ["l", [...]], ["d", [[k, v], ...]], ["h", 7] ...
# Floats travel as repr strings so nan/inf and -0.0 survive exactly.


_CONTAINERS = (("l", list), ("t", tuple), ("S", set), ("F", frozenset))


def encode(value: object, handle=None, depth: int = 0) -> list:
    """Plain data -> tagged JSON. Subclasses of built-ins are reduced to the built-in value (so an
    ``int`` subclass with a lying ``__eq__`` arrives as a real int). Anything else goes to
    ``handle(value) -> int`` when given, else raises Unencodable."""
    if depth > MAX_DEPTH:
        raise Unencodable("value nested too deeply")
    t = type(value)
    if value is None:
        return ["n"]
    if t is bool:
        return ["b", value]
    if isinstance(value, bool):
        return ["b", bool.__bool__(value)]
    if isinstance(value, int):
        n = int.__index__(value)
        return ["i", n] if abs(n) < 1 << 53 else ["I", str(n)]
    if isinstance(value, float):
        return ["f", float.__repr__(float(value))]
    if isinstance(value, complex):
        return ["c", [float.__repr__(value.real), float.__repr__(value.imag)]]
    if isinstance(value, str):
        return ["s", str.__str__(value)]
    if isinstance(value, (bytes, bytearray)):
        return ["y", bytes(value).hex()]
    nested = (depth + 1,)
    for tag, base in _CONTAINERS:
        if isinstance(value, base):  # iterate with the built-in's own __iter__, not an override
            return [tag, [encode(v, handle, *nested) for v in base.__iter__(value)]]
    if isinstance(value, dict):
        return ["d", [[encode(k, handle, *nested), encode(v, handle, *nested)] for k, v in dict.items(value)]]
    if handle is not None:
        return ["h", handle(value)]
    raise Unencodable(f"values of type {t.__name__} cannot cross the sandbox boundary")


def decode(tagged: object, resolve=None, depth: int = 0) -> object:
    """Tagged JSON -> genuine built-in objects; ``resolve(int)`` maps handles (else WireError)."""
    if depth > MAX_DEPTH + 1:
        raise WireError("value nested too deeply")
    try:
        tag, *rest = tagged
        arg = rest[0] if rest else None
        d = depth + 1
        if tag == "n":
            return None
        if tag == "b" and type(arg) is bool:
            return arg
        if tag == "i" and type(arg) is int:
            return arg
        if tag == "I":
            return int(arg)
        if tag == "f":
            return float(arg)
        if tag == "c":
            return complex(float(arg[0]), float(arg[1]))
        if tag == "s" and type(arg) is str:
            return arg
        if tag == "y":
            return bytes.fromhex(arg)
        if tag in ("l", "t", "S", "F"):
            items = [decode(v, resolve, d) for v in arg]
            return {"l": list, "t": tuple, "S": set, "F": frozenset}[tag](items)
        if tag == "d":
            return {decode(k, resolve, d): decode(v, resolve, d) for k, v in arg}
        if tag == "h" and resolve is not None and type(arg) is int:
            return resolve(arg)
    except WireError:
        raise
    except (TypeError, ValueError, IndexError, AttributeError) as exc:
        raise WireError(f"malformed value: {exc}") from None
    raise WireError(f"malformed value with tag {str(tagged)[:40]!r}")
