"""The code verifier after the stop-45 red team (s45b): ways a wrong program was rewarded, each
failing on the code before its fix.

1. A namedtuple whose fields are named like str/set/float methods (``startswith``, ``find``,
   ``issubset``, ``is_integer``) and hold the program's functions was rebuilt in the harness
   with those functions in place of the methods: ``greet('Bob').startswith('Hello')`` passed.
   Such a value now arrives as a plain tuple.
2. What a method of a test-built object returned (``Solution().greet('Bob')``) could answer
   ``find`` / ``count`` like that object: only classes, their factories and the objects they
   make (and their attributes) may.
3. A reply of 31 million equal ints took 13 s to decode: a wrong answer masked as a timeout.
   The sequence checks run at C speed and a reply's decode has a deadline (the program's).
"""

from __future__ import annotations

import pytest

from passband.verifiers import get

SHADOWING = """
from collections import namedtuple
def _yes(*a, **k):
    return True
def _zero(*a, **k):
    return 0
R = namedtuple("R", "startswith endswith isdigit find rfind issubset is_integer tolist")
def greet(name):
    return R(_yes, _yes, _yes, _zero, _zero, _yes, _yes, _yes)
"""


@pytest.mark.parametrize(
    "test",
    [
        "assert greet('Bob').startswith('Hello')",
        "assert greet('Bob').find('Hello') == 0",
        "assert greet('12').isdigit()",
        "assert greet([1, 2]).issubset({1, 2, 3})",
        "assert greet(4.0).is_integer()",
        "assert greet(4).tolist() == [1, 2]",
    ],
)
def test_namedtuple_fields_named_like_methods_cannot_answer_for_the_program(test):
    assert get("code")(SHADOWING, tests=[test]).status == "wrong"


def test_namedtuple_fields_named_like_methods_in_a_pytest_module_are_wrong():
    module = "from solution import greet\n\ndef test_g():\n    assert greet('Bob').endswith('b')\n"
    assert get("code")(SHADOWING, test=module).status == "wrong"


def test_honest_namedtuples_keep_their_fields():
    program = """
from collections import namedtuple
Point = namedtuple("Point", "x y")
Found = namedtuple("Found", "node depth count")
class Node:
    def __init__(self, val):
        self.val = val
def mid(a, b):
    return Point((a.x + b.x) / 2, (a.y + b.y) / 2)
def deepest(v):
    return Found(Node(v), 3, 2)
"""
    tests = [
        "assert mid(Point(0, 0), Point(2, 4)) == (1, 2)",
        "assert mid(Point(0, 0), Point(2, 4)).y == 2",
        "assert deepest(7).node.val == 7 and deepest(7).depth == 3",
        "assert deepest(7).count == 2",
    ]
    assert get("code")(program, tests=tests).status == "ok"


LYING_ANSWER = """
class R:
    def find(self, *a):
        return 0
    def count(self, *a):
        return 1
class Solution:
    def greet(self, name):
        return R()
"""


def test_what_a_method_of_the_tests_object_returns_cannot_answer_find_or_count():
    """3. A value a method of ``Solution()`` returned was "made" like the object the test built,
    so its own ``find`` and ``count`` answered for a str the test expected."""
    tests = [
        "assert Solution().greet('Bob').find('Hello') == 0",
        "assert Solution().greet('Bob').count('!') == 1",
    ]
    code = get("code")
    assert code(LYING_ANSWER, tests=tests, entry_point="Solution().greet").status == "wrong"
    check = "def check(candidate):\n    assert candidate('Bob').find('Hello, ') == 0\n"
    assert code(LYING_ANSWER, test=check, entry_point="Solution().greet").status == "wrong"


def test_objects_the_tests_build_still_answer_find_and_count():
    program = """
class UnionFind:
    def __init__(self, n):
        self.parent = list(range(n))
        self.tally = Tally()
    @classmethod
    def of(cls, n):
        return cls(n)
    def find(self, x):
        while self.parent[x] != x:
            x = self.parent[x]
        return x
    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)
        self.tally.n += 1
class Tally:
    def __init__(self):
        self.n = 0
    def count(self):
        return self.n
"""
    tests = [
        "uf = UnionFind(4)\nuf.union(0, 1)\nassert uf.find(0) == uf.find(1)",
        "uf = UnionFind.of(3)\nuf.union(1, 2)\nassert uf.find(1) == 2 and uf.tally.count() == 1",
    ]
    assert get("code")(program, tests=tests).status == "ok"


def test_a_reply_that_takes_too_long_to_decode_is_refused_not_a_stall():
    """4. A hand-made reply of 31 million equal ints took the grader 13 s to decode (a
    Python-level comparison per item), past the item's deadline: a masked ``timeout``. The
    comparisons now run at C speed, and a reply's decode has a deadline."""
    from passband.sandbox import _wire as wire

    value = ["l", [["n"]] * 200_000]
    assert len(wire.decode(value, budget_s=None)) == 200_000
    with pytest.raises(wire.WireError, match="too long to decode"):
        wire.decode(value, budget_s=0.0)


def test_distinct_values_sharing_a_hash_are_refused_beside_as_many_unique_ones():
    """Half the items unique, half distinct ints of one hash: the bucket count let it through,
    and the test's ``set()`` of it would have taken quadratic time."""
    from passband.sandbox import _wire as wire

    colliding = [k * ((1 << 61) - 1) for k in range(1, 3001)]
    with pytest.raises(wire.WireError, match="share one hash"):
        wire.decode(wire.encode(colliding + list(range(3000))))
    honest = [0.0] * 5000 + [float("nan")] * 3 + [-1, -2] * 600 + [(1, 2)] * 2000
    assert len(wire.decode(wire.encode(honest))) == len(honest)
