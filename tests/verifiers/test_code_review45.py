"""The code verifier after the stop-45 red team (s45b): ways a wrong program was rewarded, each
failing on the code before its fix.

1. A namedtuple whose fields are named like str/set/float methods (``startswith``, ``find``,
   ``issubset``, ``is_integer``) and hold the program's functions was rebuilt in the harness
   with those functions in place of the methods: ``greet('Bob').startswith('Hello')`` passed.
   Such a value now arrives as a plain tuple.
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
