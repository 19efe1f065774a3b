"""The code verifier after the s45b/s45e reviews: honest namedtuples, objects a method returns.
Each test failed on the code before its fix.

1. A namedtuple holding one of the program's objects in a field named like any attribute of a
   wire type (``copy``, ``get``, ``sort``, ``lower``, ``min``) arrived as a plain tuple, failing
   honest programs; only fields named like a judging method (``startswith``, ``find``, ``is*``)
   make it one now.
2. What a method of a test-built object returned (``Solution().build(3, edges)``: a union-find)
   could not answer ``find`` / ``count`` at all, while a static method's result and an attribute
   of a made object answered them freely. Such objects now answer only calls no str, bytes or
   list method takes (``uf.find(0)``, ``uf.count()``), never ``.find('Hello')`` / ``.count(3)``.
"""

from __future__ import annotations

import pytest

from passband.verifiers import get

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
