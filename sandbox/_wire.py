"""Framing and a strict value codec for the pipes between harness, workers and candidates.

Standard library only (the zygote imports it as a top-level module). The codec is the reason a
candidate cannot fool a comparison: only plain data crosses the pipe (int, float, complex, str,
bytes, bool, None and lists, tuples, dicts, sets, frozensets of those), so the harness compares
genuine built-in objects with its own ``==``. An object of any other class never leaves the
candidate's process; the harness receives an opaque handle that equals nothing but itself.
"""

from __future__ import annotations

import functools
import json
import socket
import struct
import sys
import threading

if __package__:  # the harness: passband.sandbox._wire
    from . import _wire_checks as checks
else:  # the worker: a top-level module beside it
    import _wire_checks as checks

WireError = checks.WireError
MAX_MESSAGE = 64 << 20  # a frame larger than this is a protocol error, not an allocation
MAX_RAW = 1 << 30  # a run's output: at most ``Limits.max_output_bytes`` per stream
# ``[[]] * 21_000_000`` fits in 64 MB and parsed to 1.5 GB of lists (a million pairs: 3 million)
MAX_CONTAINERS = 4_000_000
MAX_DEPTH = 100
_HDR = struct.Struct("!I")


class Unencodable(Exception):
    """A value outside the plain-data set; the caller decides (handle it, or fail the test)."""


def frame(obj: object) -> bytes:
    """``obj`` as one length-prefixed frame, as ``send`` writes it."""
    data = json.dumps(obj, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE:
        raise WireError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE}")
    return _HDR.pack(len(data)) + data


def send(sock: socket.socket, obj: object, fds: list[int] = ()) -> None:
    data = frame(obj)
    if fds:
        sent = socket.send_fds(sock, [data], list(fds))
        data = data[sent:]
    if data:
        sock.sendall(data)


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
    body = _recv_exact(sock, size)
    if body.count(b"[") > MAX_CONTAINERS:  # each one a Python list before decode can refuse it
        raise WireError(f"frame holds more than {MAX_CONTAINERS} JSON arrays")
    try:
        return json.loads(body), fds
    except (ValueError, RecursionError) as exc:
        raise WireError(f"malformed frame: {exc}") from None


def recv_bytes(sock: socket.socket, n: int) -> bytes:
    """Exactly ``n`` raw bytes (a run's output after its header); WireError on EOF."""
    if not isinstance(n, int) or not 0 <= n <= MAX_RAW:
        raise WireError(f"a raw block of {n!r} bytes")
    return _recv_exact(sock, n)


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
        return ["i", n] if abs(n) < 1 << 53 else ["I", format(n, "x")]  # hex: no 4300-digit limit
    if isinstance(value, float):
        return ["f", float.__repr__(float(value))]
    if isinstance(value, complex):
        return ["c", [float.__repr__(value.real), float.__repr__(value.imag)]]
    if isinstance(value, str):
        return ["s", str.__str__(value)]
    if isinstance(value, (bytes, bytearray)):
        return ["y", bytes(value).hex()]
    nested = (depth + 1,)
    if t is slice:  # result[:3] on a returned object: the test's slice goes in as a slice
        return ["sl", [encode(v, handle, *nested) for v in (value.start, value.stop, value.step)]]
    library = _library_value(value, t)
    if library is not None:
        tag, parts = library
        return [tag, [encode(v, handle, *nested) for v in parts]]
    if isinstance(value, tuple) and hasattr(t, "_fields"):  # a namedtuple keeps its field names
        fields = [f for f in getattr(t, "_fields", ()) if type(f) is str]
        if len(fields) == tuple.__len__(value):
            return [
                "N",
                [
                    str(t.__name__),
                    fields,
                    [encode(v, handle, *nested) for v in tuple.__iter__(value)],
                ],
            ]
    for tag, base in _CONTAINERS:
        if isinstance(value, base):  # iterate with the built-in's own __iter__, not an override
            items = list(base.__iter__(value))
            flat = _flat(items)
            if flat is not None:
                return ["V", [tag, *flat]]
            return [tag, [encode(v, handle, *nested) for v in items]]
    if isinstance(value, dict):
        return [
            "d",
            [
                [encode(k, handle, *nested), encode(v, handle, *nested)]
                for k, v in dict.items(value)
            ],
        ]
    if handle is not None:
        return ["h", handle(value)]
    raise Unencodable(f"values of type {t.__name__} cannot cross the sandbox boundary")


_SAFE_INT = 1 << 53


def _flat(items: list):
    """(scalar tag, raw JSON items) for a non-empty container of one exact scalar type, else None.

    Lists of a million ints are common test inputs; tagging each element costs seconds."""
    kinds = set(map(type, items))
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind is int:
        return ("i", items) if -_SAFE_INT < min(items) and max(items) < _SAFE_INT else None
    if kind is str or kind is bool:
        return ("s" if kind is str else "b"), items
    if kind is float:
        return "f", list(map(float.__repr__, items))
    return None


def _unflat(arg: object) -> object:
    container, scalar, items = arg
    kinds = set(map(type, items))
    expected = {"i": int, "s": str, "b": bool, "f": str}[scalar]
    if not kinds <= {expected}:
        raise WireError(f"malformed flat container of {scalar!r}")
    if scalar == "f":
        items = list(map(float, items))
    if container in ("S", "F"):
        checks.check_hashes(items)
    elif scalar == "f":  # distinct ints below 2**53, strs and bools never share a hash
        checks.check_sequence(items)
    return {"l": list, "t": tuple, "S": set, "F": frozenset}[container](items)


def _library_value(value: object, t: type):
    """Standard-library and numpy values that honest programs return: (tag, plain parts) or None.

    Looked up in ``sys.modules`` so nothing is imported here: a program that never imported
    ``fractions`` cannot hold a Fraction. The parts are plain data; the receiver rebuilds a genuine
    object from them, so a subclass that lies about itself gains nothing.
    """
    modules = sys.modules
    if t.__module__ == "numpy" and getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        item = value.item()  # numpy scalar -> the Python int/float/bool/complex/str it holds
        if type(item) in (int, float, bool, complex, str, bytes):
            return "u", [item]
        return None
    fractions, decimal = modules.get("fractions"), modules.get("decimal")
    if fractions is not None and isinstance(value, fractions.Fraction):
        return "q", [
            int(fractions.Fraction.numerator.fget(value)),
            int(fractions.Fraction.denominator.fget(value)),
        ]
    if decimal is not None and isinstance(value, decimal.Decimal):
        return "D", [decimal.Decimal.__str__(value)]
    collections = modules.get("collections")
    if collections is not None and isinstance(value, collections.deque):
        return "Q", list(collections.deque.__iter__(value))
    return None


@functools.lru_cache(maxsize=64)
def _namedtuple(typename: str, fields: tuple):
    import collections

    return collections.namedtuple(typename, fields)


def _rebuild(tag: str, parts: list) -> object:
    if tag == "u" and len(parts) == 1:
        return parts[0]
    if tag == "q" and len(parts) == 2 and all(type(p) is int for p in parts):
        import fractions

        bits = max(abs(p).bit_length() for p in parts)  # Fraction's gcd is quadratic: a
        if bits > _FRACTION_BITS:  # forged one took 49 s here, 1,200 just under the bound 12 s
            raise WireError("fraction too large")  # (the item outran its deadline: masked)
        _work.fractions = getattr(_work, "fractions", 0) + bits * bits
        if _work.fractions > _FRACTION_WORK:
            raise WireError("fractions too large together")
        return fractions.Fraction(*parts)
    if tag == "D" and len(parts) == 1 and type(parts[0]) is str:
        import decimal

        value = decimal.Decimal(parts[0])
        if value.is_finite() and (
            abs(value.adjusted()) > _DECIMAL_DIGITS
            or len(value.as_tuple().digits) > _DECIMAL_DIGITS
        ):
            raise WireError("decimal too large")  # the grader's round() or int() of it stalls
        return value
    if tag == "Q":
        import collections

        return collections.deque(parts)
    raise WireError(f"malformed {tag!r} value")


_FRACTION_BITS = 100_000  # a numerator or denominator of about 30,000 digits
_FRACTION_WORK = 200 * _FRACTION_BITS**2  # a session's, in bits^2: ~1.3 s of gcds (grace: 5 s)
_work = threading.local()  # the gcd work decoded so far in this thread's session


def reset_budget() -> None:
    """A new program's replies start with the whole fraction budget (``Session.start``)."""
    _work.fractions = 0


_NAMEDTUPLE_FIELDS = 64  # more: a plain tuple (building a class of 100,000 fields took 0.8 s)
MORE = checks.MORE
RESULT_DEPTH = MAX_DEPTH // 2  # a program's result: the tests may nest it again and send it back
_INT_BITS = 1 << 22  # an int of about 1.3 million digits: squaring one of 2**26 bits took 42 s
_DECIMAL_DIGITS = 30_000  # digits or exponent of a Decimal (int() of Decimal('1e2000000'): 78 s)


_NEW_NAMEDTUPLES = 16  # namedtuple classes one process builds per second, at most


def _namedtuple_budget() -> bool:
    """Whether this second's budget of new namedtuple classes is spent (a class costs ~1 ms and
    up; a frame of thousands with new names kept the grader busy for tens of seconds)."""
    import time

    info = _namedtuple.cache_info()
    now = int(time.monotonic())
    if _BUDGET[0] != now:
        _BUDGET[:] = [now, info.misses]
    return info.misses - _BUDGET[1] >= _NEW_NAMEDTUPLES


_BUDGET = [0, 0]  # [second, cache misses at its start]


def _decode_namedtuple(arg: list, resolve, depth: int, limit: int) -> tuple:
    typename, fields, items = arg
    if type(typename) is not str or not all(type(f) is str for f in fields):
        raise WireError("malformed namedtuple")
    if len(fields) != len(items):  # namedtuple(*items) would refuse it too
        raise WireError("malformed namedtuple")
    values = [decode(v, resolve, depth, limit) for v in items]
    if (
        len(fields) > _NAMEDTUPLE_FIELDS
        or len(typename) > 100
        or (resolve is not None and checks.shadows(fields, items))  # see there
        or _namedtuple_budget()
    ):
        return tuple(values)  # values kept, no class
    return _namedtuple(typename, tuple(fields))(*values)


def decode(
    tagged: object, resolve=None, depth: int = 0, limit: int = MAX_DEPTH + 1, budget_s=None
) -> object:
    """Tagged JSON -> genuine built-in objects; ``resolve(int)`` maps handles (else WireError).
    ``limit``: the deepest nesting accepted (a program's results take ``RESULT_DEPTH``);
    ``budget_s``: the seconds the whole value may take (a program's results), or ``MORE``: what
    is left of the last one's (the same reply's changed arguments)."""
    if depth > limit:
        raise WireError("value nested too deeply")
    checks.start(budget_s) if depth == 0 else checks.spent()  # each item checks the clock
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
        if tag == "I" and type(arg) is str:
            if len(arg) * 4 > _INT_BITS:  # hex digits: the test's arithmetic on it would stall
                raise WireError("int too large")
            return int(arg, 16)
        if tag == "f":
            return float(arg)
        if tag == "c":
            return complex(float(arg[0]), float(arg[1]))
        if tag == "s" and type(arg) is str:
            return arg
        if tag == "y":
            return bytes.fromhex(arg)
        if tag == "V":
            return _unflat(arg)
        if tag in ("l", "t", "S", "F"):
            items = [decode(v, resolve, d, limit) for v in arg]
            if tag in ("S", "F"):
                checks.check_hashes(items)
            else:
                checks.check_sequence(items)
            return {"l": list, "t": tuple, "S": set, "F": frozenset}[tag](items)
        if tag == "d":
            pairs = [(decode(k, resolve, d, limit), decode(v, resolve, d, limit)) for k, v in arg]
            checks.check_hashes([k for k, _ in pairs])
            return dict(pairs)
        if tag in ("u", "q", "D", "Q"):
            return _rebuild(tag, [decode(v, resolve, d, limit) for v in arg])
        if tag == "N":
            return _decode_namedtuple(arg, resolve, d, limit)
        if tag == "sl" and len(arg) == 3:
            return slice(*(decode(v, resolve, d, limit) for v in arg))
        if tag == "h" and resolve is not None and type(arg) is int:
            return resolve(arg)
    except WireError:
        raise
    except (TypeError, ValueError, LookupError, AttributeError, ArithmeticError) as exc:
        raise WireError(f"malformed value: {exc}") from None
    raise WireError(f"malformed value with tag {str(tagged)[:40]!r}")
