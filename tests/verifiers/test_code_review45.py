"""The code verifier after the stop-45 red team (s45b): ways a wrong program was rewarded, each
failing on the code before its fix.

1. A namedtuple whose fields are named like str/set/float methods (``startswith``, ``find``,
   ``issubset``, ``is_integer``) and hold the program's functions was rebuilt in the harness
   with those functions in place of the methods: ``greet('Bob').startswith('Hello')`` passed.
   Such a value now arrives as a plain tuple.
2. A name the tests use without importing it (``isclose``, ``sqrt``, ``Counter``: the prompt or
   the program imported it) was looked up in the program's module, so an always-true ``isclose``
   passed MBPP asserts, HumanEval ``check`` and pytest modules. Standard-library names are now
   the harness's; a task function named like one (``def median``) is still graded on itself.
3. What a method of a test-built object returned (``Solution().greet('Bob')``) could answer
   ``find`` / ``count`` like that object: only classes, their factories and the objects they
   make (and their attributes) may.
4. A reply of 31 million equal ints took 13 s to decode: a wrong answer masked as a timeout.
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


FAKE_HELPERS = """
def isclose(*a, **k):
    return True
def sqrt(x):
    return 0
def Counter(*a, **k):
    return 1
def area(r):
    return -1
def f(x):
    return 0
"""


@pytest.mark.parametrize(
    "ref",
    [
        {"tests": ["assert isclose(area(2), 12.566, rel_tol=1e-3)"]},
        {"tests": ["assert Counter(f('aab')) == Counter('aab')"]},
        {"tests": ["assert f(16) == sqrt(16)"]},
        {"tests": ["assert f(16) == sqrt(16)"], "entry_point": "f"},
        {
            "test": "def check(candidate):\n    assert isclose(candidate(2), 12.566, rel_tol=1e-3)\n",
            "entry_point": "area",
        },
        {
            "test": "from solution import area\n\ndef test_a():\n    assert isclose(area(2), 12.57, rel_tol=1e-3)\n"
        },
        {
            "test": "from solution import *\n\ndef test_c():\n    assert Counter(f('ab')) == Counter('ab')\n"
        },
    ],
)
def test_a_programs_own_library_helpers_never_answer_for_the_tests(ref):
    assert get("code")(FAKE_HELPERS, **ref).status == "wrong"


def test_a_right_program_that_imports_the_helpers_the_tests_use_still_passes():
    program = (
        "from math import isclose, sqrt\nfrom collections import Counter\n"
        "def area(r):\n    return 3.14159 * r * r\ndef f(x):\n    return sqrt(x)\n"
        "def g(s):\n    return s\n"
    )
    tests = [
        "assert isclose(area(2), 12.566, rel_tol=1e-3)",
        "assert f(16) == sqrt(16)",
        "assert Counter(g('aab')) == Counter('aab')",
    ]
    assert get("code")(program, tests=tests).status == "ok"
    assert get("code")("def g(s):\n    return s\n", tests=tests[2:]).status == "ok"


PRODUCT = "def product(xs):\n    r = 1\n    for x in xs:\n        r *= x\n    return r\n"


def test_a_task_function_named_like_a_library_helper_is_graded_on_itself():
    tests = ["assert product([1, 2, 3]) == 6", "assert product([]) == 1"]
    assert get("code")(PRODUCT, tests=tests).status == "ok"  # not itertools.product's answer
    assert get("code")("def product(xs):\n    return 6\n", tests=tests).status == "wrong"
    gcd = ["assert gcd(12, 8) == 4"]
    assert get("code")("def gcd(a, b):\n    return 1\n", tests=gcd).status == "wrong"
    right = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
    assert get("code")(right, tests=gcd).status == "ok"


def test_a_helper_named_task_beside_a_fake_comparison_helper_is_wrong():
    program = PRODUCT + FAKE_HELPERS
    tests = ["assert product([1, 2, 3]) == 6", "assert isclose(area(2), 12.566, rel_tol=1e-3)"]
    assert get("code")(program, tests=tests).status == "wrong"
    assert get("code")(program, tests=tests, partial_credit=True).score == 0.5


def test_a_library_helper_the_program_never_wrote_answers_no_check():
    program = "def second(xs):\n    return sorted(xs)[1]\n"
    tests = ["assert second([3, 1, 2]) == 2", "assert median([3, 1, 2]) == 2"]
    assert get("code")(program, tests=tests).status == "wrong"


def test_a_library_constant_the_tests_use_is_the_harnesss():
    program = "pi = 3\ndef area(r):\n    return 3 * r * r\n"
    assert get("code")(program, tests=["assert area(1) == pi"]).status == "wrong"


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
