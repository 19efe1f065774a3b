"""What a decoded value may cost or claim in the grading process (``_wire.decode``'s guards).

Standard library only, a worker file beside ``_wire`` (the zygote imports both as top-level
modules). Every bound here answers a value the program wrote itself: it controls its process and
can speak the wire protocol, so whatever ``decode`` accepts is the program's choice.
"""

from __future__ import annotations

import functools

_SEQUENCE_CHECK = 1024  # a list this long is checked for colliding ints (a test's set() of it)
_DISTINCT_PER_HASH = 16  # distinct values one hash may hold in a long sequence
_COLLISION_MIN = 16  # many sets of 1,023 colliding keys each took 13 s: small ones count too


class WireError(Exception):
    """The peer sent something that is not a valid frame or value (or went away)."""


def check_hashes(keys: list) -> None:
    """Set and dict keys whose hashes mostly collide (``k * (2**61 - 1)`` all hash to 0) would
    take quadratic time to insert, in the grading process: refused before that, in every set
    and dict however it was sent (flat containers too)."""
    if len(keys) >= _COLLISION_MIN and len({hash(k) for k in keys}) * 2 < len(keys):
        raise WireError(f"{len(keys)} set or dict keys with colliding hashes")


def check_sequence(items: list) -> None:
    """A long list or tuple of distinct values that mostly share a hash: the test's ``set()`` of
    it would take quadratic time in the grading process (``[k * (2**61 - 1) for k in ...]``, the
    same as 1-tuples, Fractions or Decimals, or with one float among them). Hashable items of any
    type are bucketed by hash; a bucket holding more than ``_DISTINCT_PER_HASH`` distinct values
    is refused (equal values, ``[0] * 5000``, share a hash honestly)."""
    if len(items) < _SEQUENCE_CHECK:
        return
    buckets: dict[int, list] = {}
    for item in items:
        try:
            key = hash(item)
        except TypeError:  # a list inside: the test cannot put it in a set either
            continue
        buckets.setdefault(key, []).append(item)
    if len(buckets) * 2 >= len(items):
        return
    for bucket in buckets.values():
        seen: list = []
        for item in bucket:
            if not any(item == other for other in seen):
                seen.append(item)
                if len(seen) > _DISTINCT_PER_HASH:
                    raise WireError(f"{len(bucket)} values with one hash, not all equal")


def shadows(fields: list, items: list) -> bool:
    """Whether a namedtuple's field holding one of the program's objects (a handle: ``["h", n]``)
    is named like an attribute of a value the wire carries (``startswith``, ``find``,
    ``issubset``, ``is_integer``, ``count``, ``tolist``...). Rebuilt in the harness, the field would
    replace that method on a genuine value, and ``greet('Bob').startswith('Hello')`` would call
    the program's function, which answers True for every test: such a value arrives as a plain
    tuple (its items kept, no field names)."""
    held = [f for f, v in zip(fields, items) if isinstance(v, list) and v[:1] == ["h"]]
    return bool(held) and not _plain_attributes().isdisjoint(held)


@functools.cache
def _plain_attributes() -> frozenset[str]:
    """Names a test may read or call on a plain value: the attributes of every built-in type the
    wire carries and of the library values it rebuilds, and what numpy arrays and datetimes
    answer (a program may return one where a test expects the other)."""
    import collections
    import datetime
    import decimal
    import fractions

    kinds = (str, bytes, bytearray, int, float, complex, bool, list, tuple, dict, set, frozenset)
    kinds += (fractions.Fraction, decimal.Decimal, collections.deque, collections.Counter)
    kinds += (datetime.date, datetime.datetime, datetime.time, datetime.timedelta)
    names = {name for kind in kinds for name in dir(kind)}
    names.update(
        "all any argmax argmin astype copy cumsum dtype flatten item itemsize max mean min "
        "ndim nonzero prod ravel reshape round shape size sort std sum tolist transpose "
        "squeeze T".split()
    )
    return frozenset(names)
