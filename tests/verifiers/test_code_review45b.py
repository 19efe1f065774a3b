"""The code verifier after the s45b/s45e reviews: library names the tests use unimported, honest
namedtuples, objects a method returns. Each test failed on the code before its fix.

1. A name the tests use without importing it (``isclose``, ``sqrt``, ``Counter``: the prompt or
   the program imported it) was the program's, so an always-true ``isclose`` passed. It is now the
   harness's own object, from the module the program imported it from; a task function named
   like one (``def median``) is graded in a reading of its own, with the harness's objects for
   every other name, so a fake ``isclose`` never judges a fake ``median``.
2. A namedtuple holding one of the program's objects in a field named like any attribute of a
   wire type (``copy``, ``get``, ``sort``, ``lower``, ``min``) arrived as a plain tuple, failing
   honest programs; only fields named like a judging method (``startswith``, ``find``, ``is*``)
   make it one now.
3. What a method of a test-built object returned (``Solution().build(3, edges)``: a union-find)
   could not answer ``find`` / ``count`` at all, while a static method's result and an attribute
   of a made object answered them freely. Such objects now answer only calls no str, bytes or
   list method takes (``uf.find(0)``, ``uf.count()``), never ``.find('Hello')`` / ``.count(3)``.
"""

from __future__ import annotations

import pytest

from passband.verifiers import get

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
        {"tests": ["r = area(2)", "assert isclose(r, 12.566, rel_tol=1e-3)"]},
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


FAKE_MEDIAN = "def median(xs):\n    return 0\n\ndef isclose(*a, **k):\n    return True\n"


@pytest.mark.parametrize(
    "ref",
    [
        {"tests": ["assert isclose(median([1, 2, 3, 4]), 2.5)"]},
        {
            "test": "from solution import *\n\ndef test_m():\n    assert isclose(median([1, 2, 3, 4]), 2.5)\n"
        },
    ],
)
def test_a_fake_helper_never_judges_a_fake_task_function(ref):
    assert get("code")(FAKE_MEDIAN, **ref).status == "wrong"
    fake_counter = "def mode(xs):\n    return -1\n\ndef Counter(*a, **k):\n    return 1\n"
    tests = ["assert Counter([mode([1, 1, 2])]) == Counter([1])"]
    assert get("code")(fake_counter, tests=tests).status == "wrong"


TWO = (
    "def total(xs):\n    return sum(xs)\n\n"
    "def product(xs):\n    r = 1\n    for x in xs:\n        r *= x\n    return r\n"
)
COUNTER = (
    "class Counter:\n    def __init__(self):\n        self.value = 0\n"
    "    def increment(self):\n        self.value += 1\n        return self.value\n"
)
PASCAL = (
    "def combinations(n, r):\n    from math import comb\n    return comb(n, r)\n\n"
    "def pascal_row(n):\n    return [combinations(n, k) for k in range(n + 1)]\n"
)


@pytest.mark.parametrize(
    ("program", "ref"),
    [
        (TWO, {"tests": ["assert total([1, 2, 3]) == 6", "assert product([1, 2, 3]) == 6"]}),
        (
            TWO,
            {
                "test": "from solution import *\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n\n"
                "def test_product():\n    assert product([1, 2, 3]) == 6\n"
            },
        ),
        (COUNTER, {"tests": ["c = Counter()\nc.increment()\nassert c.increment() == 2"]}),
        (COUNTER, {"tests": ["assert Counter().value == 0", "assert total([2]) == 2"]}),
        (
            "class deque:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n"
            "        self.items.append(x)\n    def size(self):\n        return len(self.items)\n",
            {
                "test": "from solution import *\n\ndef test_d():\n    d = deque()\n"
                "    d.push(1)\n    assert d.size() == 1\n"
            },
        ),
        (
            PASCAL,
            {"tests": ["assert pascal_row(3) == [1, 3, 3, 1]", "assert combinations(4, 2) == 6"]},
        ),
        (
            "from cmath import isclose, sqrt\ndef root(x):\n    return sqrt(x)\n",
            {"tests": ["assert isclose(root(-4), 2j)"]},
        ),
        (
            "from html import escape\ndef safe(s):\n    return escape(s)\n",
            {"tests": ["assert safe('<a>') == escape('<a>')"]},
        ),
        (
            "from re import sub\ndef clean(s):\n    return sub(r'\\s', '', s)\n",
            {"tests": ["assert clean('a b c') == sub(r'\\s', '', 'a b c')"]},
        ),
        (
            "from random import seed, shuffle\ndef shuffled(xs):\n    xs = list(xs)\n    shuffle(xs)\n    return xs\n",
            {"tests": ["seed(0)\nassert shuffled([1, 2, 3, 4, 5]) == [3, 2, 1, 5, 4]"]},
        ),
        (
            "def add(a, b):\n    return a + b\n\ndef apply(f, a, b):\n    return f(a, b)\n",
            {"tests": ["assert apply(add, 2, 3) == 5"]},
        ),
        (
            "from math import isclose, sqrt\nfrom collections import Counter\ndef area(r):\n"
            "    return 3.14159 * r * r\ndef f(x):\n    return sqrt(x)\ndef g(s):\n    return s\n",
            {
                "tests": [
                    "assert isclose(area(2), 12.566, rel_tol=1e-3)",
                    "assert f(16) == sqrt(16)",
                    "assert Counter(g('aab')) == Counter('aab')",
                ]
            },
        ),
    ],
)
def test_right_programs_with_library_names_pass(program, ref):
    if "total([2])" in str(ref):
        program = COUNTER + TWO
    assert get("code")(program, **ref).status == "ok"


def test_a_task_function_named_like_a_library_helper_is_graded_on_itself():
    tests = ["assert product([1, 2, 3]) == 6", "assert product([]) == 1"]
    assert get("code")("def product(xs):\n    return 6\n", tests=tests).status == "wrong"
    gcd = ["assert gcd(12, 8) == 4", "assert gcd(7, 3) == 1"]
    assert get("code")("def gcd(a, b):\n    return 4\n", tests=gcd).status == "wrong"
    right = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
    assert get("code")(right, tests=gcd).status == "ok"
    program = TWO + FAKE_HELPERS
    tests = ["assert product([1, 2, 3]) == 6", "assert isclose(area(2), 12.566, rel_tol=1e-3)"]
    assert get("code")(program, tests=tests, partial_credit=True).score == 0.5


def test_a_library_constant_the_tests_use_is_the_harnesss():
    program = "pi = 3\ndef area(r):\n    return 3 * r * r\n"
    assert get("code")(program, tests=["assert area(1) == pi"]).status == "wrong"


def test_a_row_with_library_names_declares_a_reading_for_each():
    code = get("code")
    tests = ["assert isclose(median([1, 2]), 1.5)", "assert mean([2]) == 2"]
    assert code.time_limit({"tests": tests, "timeout_s": 3}) == 4 * 3  # median, mean; not isclose
    assert code.time_limit({"tests": tests, "timeout_s": 3, "entry_point": "mean"}) == 3


NT = "from collections import namedtuple\n"


@pytest.mark.parametrize(
    ("program", "test"),
    [
        (
            NT + "class Box:\n    def __init__(self, v):\n        self.v = v\n"
            "State = namedtuple('State', 'copy orig')\ndef snap(v):\n    return State(Box(v), Box(v))\n",
            "assert snap(3).copy.v == 3 and snap(3).orig.v == 3",
        ),
        (
            NT + "class Store:\n    def __init__(self):\n        self.d = {'a': 1}\n"
            "    def lookup(self, k):\n        return self.d[k]\n"
            "Res = namedtuple('Res', 'name get')\ndef mk():\n    return Res('s', Store().lookup)\n",
            "assert mk().get('a') == 1",
        ),
        (
            NT + "Pipeline = namedtuple('Pipeline', 'items sort')\n"
            "def pipe(xs):\n    return Pipeline(xs, lambda: sorted(xs))\n",
            "assert pipe([3, 1]).sort() == [1, 3] and pipe([3, 1]).items == [3, 1]",
        ),
        (
            NT + "Tok = namedtuple('Tok', 'text lower')\ndef tok(s):\n    return Tok(s, s.lower)\n",
            "assert tok('AB').lower() == 'ab'",
        ),
        (
            NT + "class Node:\n    def __init__(self, v):\n        self.val = v\n"
            "MM = namedtuple('MM', 'min max')\ndef ext(xs):\n"
            "    return MM(Node(min(xs)), Node(max(xs)))\n",
            "assert ext([3, 1, 2]).min.val == 1 and ext([3, 1, 2]).max.val == 3",
        ),
    ],
)
def test_honest_namedtuples_with_fields_named_like_other_methods_keep_their_class(program, test):
    assert get("code")(program, tests=[test]).status == "ok"


def test_namedtuple_fields_named_like_judging_methods_still_cannot_answer():
    program = NT + (
        "def _yes(*a, **k):\n    return True\n"
        "R = namedtuple('R', 'startswith isalpha isoformat')\n"
        "def greet(name):\n    return R(_yes, _yes, _yes)\n"
    )
    for test in ("assert greet('Bob').startswith('Hello')", "assert greet('1').isalpha()"):
        assert get("code")(program, tests=[test]).status == "wrong"


UF = """
class UnionFind:
    def __init__(self, n):
        self.p = list(range(n))
        self.sets = n
    def find(self, x):
        while self.p[x] != x:
            x = self.p[x]
        return x
    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.p[ra] = rb
            self.sets -= 1
    def count(self):
        return self.sets
class Solution:
    def build(self, n, edges):
        uf = UnionFind(n)
        for a, b in edges:
            uf.union(a, b)
        return uf
"""


def test_a_union_find_a_method_returns_answers_find_and_count():
    tests = [
        "uf = Solution().build(3, [(0, 1)])\nassert uf.find(0) == uf.find(1)\nassert uf.count() == 2"
    ]
    assert get("code")(UF, tests=tests).status == "ok"


FAKE_FIND = """
class Fake:
    def find(self, *a):
        return 0
    def count(self, *a):
        return 1
class Solution:
    greeting = Fake()
    def __init__(self):
        self.items = Fake()
    @staticmethod
    def hello(name):
        return Fake()
    def greet(self, name):
        return self
    def find(self, *a):
        return 0
"""


@pytest.mark.parametrize(
    "test",
    [
        "assert Solution.hello('Bob').find('Hello') == 0",
        "assert Solution().greeting.find('Hello') == 0",
        "s = Solution()\nassert s.items.count(3) == 1",
        "assert Solution().greet('Bob').find('Hello') == 0",
        "assert Solution().hello('Bob').count('Bob') == 1",
    ],
)
def test_returned_objects_never_answer_a_text_or_list_query(test):
    assert get("code")(FAKE_FIND, tests=[test]).status == "wrong"
