"""Which str, list, set and float methods an object that stays in the sandbox may answer.

A test asserts what such a method says about a plain value (``greet('Bob').startswith('Hello')``,
``.find('Hello') == 0``, ``.count(3) == 1``): an object of the program's own class answering
them would pass for every test. The predicates are never answered; the searches and counts are
answered by an object a class the test names made (``UnionFind(5).find``), and by any other only
when called in a way no str, bytes or list method can be (``uf.find(0)``, ``uf.count()``: a
union-find ``Solution().build(...)`` returned), so never for the value a test expects.
"""

from __future__ import annotations

__all__ = ["BUILTIN_PREDICATES", "BUILTIN_QUERIES", "query", "refused"]

# methods of str, bytes, set and float whose answer a test asserts: a returned object of the
# program's own class must not answer them for the value the test expects
BUILTIN_PREDICATES = frozenset(
    "startswith endswith isdigit isalpha isalnum isupper islower isspace istitle isnumeric "
    "isdecimal isidentifier isprintable isascii issubset issuperset isdisjoint is_integer".split()
)
# searches and counts of str and list: a method answering 0 or 1 on an object a function returned
# would pass "greet('Bob').find('Hello') == 0" for every test. Answered freely only by an object a
# class the test names in CapWords made (``UnionFind(5).find``), decided in the harness, never by
# what the program says; by any other (what a function, a method or a static method returned, an
# attribute of an object) only through ``query``. A plain data field of that name is read as data.
BUILTIN_QUERIES = frozenset("find rfind index rindex count".split())

_TEXT = (str, bytes, bytearray)


def refused(attr: str) -> AttributeError:
    return AttributeError(
        f"{attr!r} of an object that stays in the sandbox: a str, set or float method "
        "is answered only for a plain value"
    )


def query(attr: str, method):
    """``method`` (a find/index/count of a returned object) that answers only calls no str,
    bytes or list method takes: ``find``/``rfind``/``rindex`` of something else than text,
    ``count``/``index`` of no argument or more than three."""

    def call(*args, **kwargs):
        if attr in ("index", "count") and 1 <= len(args) <= 3 and not kwargs:
            raise refused(attr)
        if attr in ("find", "rfind", "rindex") and args and isinstance(args[0], _TEXT):
            raise refused(attr)
        return method(*args, **kwargs)

    return call
