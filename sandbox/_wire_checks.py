"""What a decoded value may cost or claim in the grading process (``_wire.decode``'s guards).

Standard library only, a worker file beside ``_wire`` (the zygote imports both as top-level
modules). Every bound here answers a value the program wrote itself: it controls its process and
can speak the wire protocol, so whatever ``decode`` accepts is the program's choice.
"""

from __future__ import annotations

import functools
import operator
import threading
import time
from itertools import compress
from operator import is_not

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
    same as 1-tuples, Fractions or Decimals, or with one float among them). A hash holding more
    than ``_DISTINCT_PER_HASH`` distinct values is refused (equal values, ``[0] * 5000``, share a
    hash honestly). At C speed: each round drops the items equal to (or the very object of) the
    one value kept per hash, so a hash of at most 16 distinct values is gone after 16 rounds (a
    Python-level comparison per item took 11 s for 31 million equal ints: a masked timeout)."""
    if len(items) < _SEQUENCE_CHECK:
        return
    try:
        hashes = list(map(hash, items))
    except TypeError:  # a list inside: the test cannot put it in a set either
        items = [x for x in items if _hashable(x)]
        hashes = list(map(hash, items))
    if len(set(hashes)) == len(hashes):
        return
    for _ in range(_DISTINCT_PER_HASH):
        spent()
        kept = list(map(dict(zip(hashes, items)).__getitem__, hashes))  # one value per hash
        spent()
        other = list(map(operator.and_, map(operator.ne, items, kept), map(is_not, items, kept)))
        spent()
        items, hashes = list(compress(items, other)), list(compress(hashes, other))
        if not items:
            return
    raise WireError(f"more than {_DISTINCT_PER_HASH} distinct values share one hash")


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


_clock = threading.local()  # the decode deadline of this thread's reply


MORE = "more"  # ``start``: go on with the deadline already set


def start(budget_s) -> None:
    """A reply's decode begins (``budget_s=None``: no deadline, the worker's arguments)."""
    if budget_s != MORE:
        _clock.deadline = None if budget_s is None else time.monotonic() + budget_s


def spent() -> None:
    """WireError once the reply has taken its budget: the program's answer, graded as wrong,
    not a grader that outlives its item's deadline (a masked timeout)."""
    deadline = getattr(_clock, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise WireError("the value took too long to decode")


def shadows(fields: list, items: list) -> bool:
    """Whether a namedtuple's field holding one of the program's objects (a handle: ``["h", n]``)
    is named like a method a test calls to judge a value the wire carries (``startswith``,
    ``find``, ``issubset``, ``is_integer``, ``count``, ``tolist``...). Rebuilt in the harness, the
    field would replace that method on a genuine value, and ``greet('Bob').startswith('Hello')``
    would call the program's function, which answers True for every test: such a value arrives
    as a plain tuple (its items kept, no field names). A field named like any other attribute
    (``copy``, ``get``, ``sort``, ``lower``, ``min``) keeps its class: what it answers must equal
    the expected value itself, as the program's own value would."""
    held = [f for f, v in zip(fields, items) if isinstance(v, list) and v[:1] == ["h"]]
    return bool(held) and not _judging().isdisjoint(held)


@functools.cache
def _judging() -> frozenset[str]:
    """Methods a test may call on a plain value to judge it, whose answer (True, 0, 1) says
    nothing of the value: the predicates (``is*``) of every built-in type the wire carries and of
    the library values it rebuilds, their searches and counts, and numpy's ``all``/``any``/``tolist``
    (a program may return an array where a test expects a list)."""
    import collections
    import datetime
    import decimal
    import fractions

    kinds = (str, bytes, bytearray, int, float, complex, bool, list, tuple, dict, set, frozenset)
    kinds += (fractions.Fraction, decimal.Decimal, collections.deque, collections.Counter)
    kinds += (datetime.date, datetime.datetime, datetime.time, datetime.timedelta)
    names = {name for kind in kinds for name in dir(kind) if name.startswith("is")}
    names.update("startswith endswith find rfind index rindex count all any tolist".split())
    return frozenset(names)
