"""A regression review of stop 36's `code` changes (the expected-first order, the find/index/count
refusal, pytest-style units): each wrong program must fail and each honest one must pass."""

import pytest

from passband.verifiers import get

CODE = get("code")
_GREET = [
    "assert greet('Bob').find('Hello') == 0",
    "assert greet('Ann').count('Ann') == 1",
    "assert greet('Ann').index('A') == 6",
]

WRONG = [
    (  # the entry point written as a class: "made" came from the program's own isinstance
        "class greet:\n    def __init__(self, name):\n        pass\n"
        "    def find(self, s):\n        return 0\n    def count(self, s):\n        return 1\n"
        "    def index(self, s):\n        return 6\n",
        dict(tests=_GREET),
    ),
    (  # patching the sandbox's reply to say "made"
        "import sys\nclass _Any:\n    def find(self, s):\n        return 0\n"
        "    def count(self, s):\n        return 1\n    def index(self, s):\n        return 6\n"
        "def greet(name):\n    return _Any()\n_ch = sys.modules.get('_child')\n"
        "if _ch is not None:\n    _orig = _ch._answer\n    def _answer(*a, **k):\n"
        "        r = _orig(*a, **k)\n        r['made'] = True\n        return r\n"
        "    _ch._answer = _answer\n",
        dict(tests=_GREET),
    ),
]

RIGHT = [
    ("def greet(name):\n    return 'Hello ' + name\n", dict(tests=_GREET)),
    (  # the program's state read after the call, as Python reads it
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append(x)\n        return len(self.items)\n"
        "    def __len__(self):\n        return len(self.items)\n",
        dict(tests=["s = Stack()\nassert s.push(1) == len(s)\nassert s.push(2) == len(s)"]),
    ),
    (
        "def sort_in_place(lst):\n    lst.sort()\n    return lst\n",
        dict(tests=["x = [3, 1, 2]\nassert sort_in_place(x) == x\nassert x == [1, 2, 3]"]),
    ),
    (
        "class StringOps:\n    @staticmethod\n    def count(s, c):\n        return s.count(c)\n",
        dict(tests=["assert StringOps.count('banana', 'a') == 3"]),
    ),
    (  # a data field named count on an object a function returned
        "class Counter:\n    def __init__(self):\n        self.count = 0\n"
        "    def inc(self):\n        self.count += 1\ndef make_counter():\n    return Counter()\n",
        dict(tests=["c = make_counter()\nc.inc()\nc.inc()\nassert c.count == 2"]),
    ),
    (
        "class UF:\n    def __init__(self, n):\n        self.p = list(range(n))\n"
        "    @classmethod\n    def of_size(cls, n):\n        return cls(n)\n"
        "    def find(self, x):\n        while self.p[x] != x:\n            x = self.p[x]\n"
        "        return x\n    def union(self, a, b):\n        self.p[self.find(a)] = self.find(b)\n",
        dict(tests=["uf = UF.of_size(4)\nuf.union(0, 1)\nassert uf.find(0) == uf.find(1)"]),
    ),
    (  # a test function the unit calls itself runs once
        "_n = 0\ndef next_id():\n    global _n\n    _n += 1\n    return _n\n",
        dict(
            tests=[
                "def test_ids():\n    assert next_id() == 1\n    assert next_id() == 2\n\ntest_ids()"
            ]
        ),
    ),
]


@pytest.mark.parametrize("program, reference", WRONG)
def test_wrong_programs_fail(program, reference):
    verdict = CODE(program, **reference)
    assert not verdict.passed, verdict


@pytest.mark.parametrize("program, reference", RIGHT)
def test_honest_programs_pass(program, reference):
    verdict = CODE(program, **reference)
    assert verdict.passed, verdict


def test_each_pytest_function_is_its_own_unit():
    program = "def f(x):\n    if x < 0:\n        raise ValueError('neg')\n    return x * 2\n"
    tests = [
        "def test_pos():\n    assert f(2) == 4\n\ndef test_neg():\n    r = f(-1)\n"
        "    assert r == -2\n\ndef test_zero():\n    assert f(0) == 0"
    ]
    verdict = CODE(program, tests=tests, partial_credit=True)
    assert verdict.status == "wrong" and abs(verdict.score - 2 / 3) < 1e-9, verdict
