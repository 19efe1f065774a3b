"""Realistic benchmark-style problems through the ``code`` verifier (data: ``data/code_problems.py``).

Every canonical solution must pass its own tests; every broken variant must fail with the status
the contract gives it. For HumanEval-style rows the body-only completion (continuing the prompt,
as base models write it) must pass too.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from passband.verifiers import get

code = get("code")
PROBLEMS = runpy.run_path(str(Path(__file__).parent / "data" / "code_problems.py"))["PROBLEMS"]
BY_NAME = {p["name"]: p for p in PROBLEMS}


def _reference(problem: dict) -> dict:
    ref = dict(problem["ref"])
    if problem["name"] == "io_large_input":  # expected output computed here, by a plain reference
        nums = list(map(int, ref["io"][0]["stdin"].split()[1:]))
        best, cur = -(10**18), 0
        for x in nums:
            cur = max(x, cur + x)
            best = max(best, cur)
        ref["io"] = [{"stdin": ref["io"][0]["stdin"], "stdout": f"{best}\n"}]
    return ref


def test_the_suite_covers_every_format():
    kinds = [p["kind"] for p in PROBLEMS]
    assert len(PROBLEMS) >= 40 and {"he", "mbpp", "io", "lcb"} <= set(kinds)
    assert sum(len(p["bad"]) for p in PROBLEMS) >= len(PROBLEMS)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_canonical_passes_and_broken_variants_fail(name):
    problem = BY_NAME[name]
    ref = _reference(problem)
    verdict = code(problem["good"], **ref, timeout_s=ref.get("timeout_s", 8))
    assert verdict.status == "ok" and verdict.score == 1.0, verdict.detail
    if "body" in problem:  # a base model continues the prompt
        body = code(problem["body"], **ref, timeout_s=8)
        assert body.status == "ok", body.detail
    for completion, status in problem["bad"]:
        bad = code(completion, **ref, timeout_s=2 if "while True" in completion else 8)
        assert (bad.status, bad.score) == (status, 0.0), (
            f"{completion}\n-> {bad.status}: {bad.detail}"
        )


# ---- how honest programs write things: each must pass ---------------------------------------------
SQRT_TEST = "def check(candidate):\n    assert abs(candidate(2.0) - 1.4142135623730951) < 1e-6\n    assert abs(candidate(9.0) - 3.0) < 1e-6\n"
NODE = (
    "class Node:\n    def __init__(self, data):\n        self.data = data\n        self.left = None\n        self.right = None\n"
    "def max_height(node):\n    if node is None:\n        return 0\n    return 1 + max(max_height(node.left), max_height(node.right))\n"
)
NODE_SETUP = (
    "root = Node(1) \nroot.left = Node(2) \nroot.right = Node(3) \nroot.left.left = Node(4) \n"
    "root1 = Node(1);  \nroot1.right = Node(3);  \nroot1.right.right = Node(6);  \nroot1.right.right.right= Node(7)"
)
HONEST = {
    "debug prints past the output cap": (
        "def f(x):\n    for i in range(30000):\n        print('debug', i, 'x' * 60)\n    return x",
        {"tests": ["assert f(1) == 1"]},
    ),
    "numpy scalars": (
        "import numpy as np\ndef f(x):\n    return np.int64(x) * 2\ndef g(x):\n    return np.bool_(x > 1)",
        {"tests": ["assert f(2) == 4", "assert g(3) == True", "assert g(0) == False"]},
    ),
    "next() on a returned generator": (
        "def g():\n    yield 1\n    yield 2",
        {
            "tests": [
                "it = g()\nassert next(it) == 1\nassert next(it) == 2\n"
                "try:\n    next(it)\nexcept StopIteration:\n    pass\nelse:\n    assert False"
            ]
        },
    ),
    "str() and attributes of an object": (
        "class P:\n    def __init__(s, x):\n        s.x = x\n    def __str__(s):\n"
        "        return f'P({s.x})'\ndef mk(x):\n    return P(x)",
        {
            "tests": [
                "assert str(mk(3)) == 'P(3)'",
                "assert mk(4).x == 4",
                "assert f'{mk(5)}' == 'P(5)'",
            ]
        },
    ),
    "Fraction, Decimal, deque, namedtuple": (
        "from fractions import Fraction\nfrom decimal import Decimal\nfrom collections import deque, namedtuple\n"
        "Pt = namedtuple('Pt', 'x y')\ndef fr(n): return Fraction(1, n)\ndef de(n): return Decimal(n) / 4\n"
        "def dq(n): return deque(range(n))\ndef pt(): return Pt(1, 2)",
        {
            "tests": [
                "assert fr(3) == Fraction(1, 3)",
                "assert de(1) == Decimal('0.25')",
                "assert dq(3) == deque([0, 1, 2])",
                "assert dq(2) != [0, 1]",
                "assert pt() == (1, 2) and pt().y == 2",
            ],
            "test_imports": [
                "from fractions import Fraction",
                "from decimal import Decimal",
                "from collections import deque",
            ],
        },
    ),
    "MBPP tree built by test_setup_code": (
        NODE,
        {
            "tests": ["assert (max_height(root)) == 3", "assert (max_height(root1)) == 4"],
            "test_setup_code": NODE_SETUP,
        },
    ),
    "integers beyond 4300 digits": (
        "import math\ndef f(n):\n    return math.factorial(n)",
        {
            "tests": [
                "import math\nassert f(2500) == math.factorial(2500)",
                "assert f(3000) % 7 == 0",
            ]
        },
    ),
    "function named like a builtin": (
        "def sum(xs):\n    return 42",
        {"test": "def check(candidate):\n    assert candidate([1]) == 42\n", "entry_point": "sum"},
    ),
    "usage example after the solution": (
        "Solution:\n```python\ndef add3(a, b, c):\n    return a + b + c\n```\nUsage:\n"
        "```python\nprint(add3(1, 2, 3))\n```\n",
        {"tests": ["assert add3(1, 2, 3) == 6"]},
    ),
    "fenced function relying on the prompt's imports and helper": (
        "```python\ndef g(xs: List[int]) -> int:\n    return helper(sum(xs))\n```",
        {
            "prompt": "from typing import List\n\n\ndef helper(x):\n    return 2 * x\n\n\ndef g(xs: List[int]) -> int:\n    '''2 * sum'''\n",
            "test": "def check(candidate):\n    assert candidate([1, 2]) == 6\n",
            "entry_point": "g",
        },
    ),
    "recursion 5000 deep with a raised limit": (
        "import sys\nsys.setrecursionlimit(20000)\ndef d(n):\n    return 0 if n == 0 else 1 + d(n - 1)",
        {"tests": ["assert d(5000) == 5000"]},
    ),
    "in-place changes to list, dict and set arguments": (
        "def f(a, d, s=None):\n    a.sort()\n    d['x'] = 1\n    s.add(5)",
        {
            "test": "def check(candidate):\n    a, d, s = [3, 1, 2], {}, set()\n    assert candidate(a, d, s=s) is None\n"
            "    assert a == [1, 2, 3] and d == {'x': 1} and s == {5}\n",
            "entry_point": "f",
        },
    ),
    "a million-element list in and out": (
        "def rev(xs):\n    return xs[::-1]",
        {
            "test": "def check(candidate):\n    xs = list(range(10**6))\n    assert candidate(xs) == xs[::-1]\n"
            "    grid = [[float(i * j) for j in range(300)] for i in range(300)]\n    assert candidate(grid) == grid[::-1]\n",
            "entry_point": "rev",
        },
    ),
    "many scalar arguments, and keyword arguments changed in place": (
        "def f(a, b, c, d, e):\n    return a + b + c + d + e\ndef g(x, *, into):\n    into['k'] = x\n    return x",
        {
            "tests": [
                "assert f(1, 2, 3, 4, 5) == 15",
                "assert f('a', 'b', 'c', 'd', 'e') == 'abcde'",
                "m = {}\nassert g(7, into=m) == 7 and m == {'k': 7}",
            ]
        },
    ),
    "prompt asking for two functions, tests calling both": (
        "def helper(x):\n    return 2 * x\n\ndef main(x):\n    return helper(x) + 1",
        {
            "prompt": 'def helper(x):\n    """double x"""\n\n\ndef main(x):\n    """helper(x) + 1"""\n',
            "test": "def check(candidate):\n    assert helper(2) == 4\n    assert candidate(2) == 5\n",
            "entry_point": "main",
        },
    ),
    "function returning a function": (
        "def adder(a):\n    return lambda b: a + b",
        {"tests": ["assert adder(2)(3) == 5"]},
    ),
    "stdin program using exit() and quit()": (
        "n = int(input())\nprint(n * 2)\nexit()",
        {"io": [{"stdin": "21\n", "stdout": "42\n"}]},
    ),
    "stdin program with 3 MB of output": (
        "n = int(input())\nprint('\\n'.join(str(10**9 + i) for i in range(n)))",
        {"io": [{"stdin": "300000\n", "stdout": "\n".join(str(10**9 + i) for i in range(300000))}]},
    ),
}


@pytest.mark.parametrize("label", sorted(HONEST))
def test_honest_programs_pass(label):
    completion, ref = HONEST[label]
    verdict = code(completion, **ref, timeout_s=8)
    assert verdict.status == "ok", verdict.detail


# ---- hostile programs that target the proxies: each must fail ------------------------------------
HOSTILE = {
    "object with lying arithmetic for abs(x - y) < eps": (
        "class Z:\n    def __sub__(s, o): return Z()\n    def __rsub__(s, o): return Z()\n    def __abs__(s): return 0.0\n"
        "    def __float__(s): return 0.0\n    def __lt__(s, o): return True\n    def __len__(s): return 0\n"
        "    def __hash__(s): return 0\n    def __eq__(s, o): return True\n    def __bool__(s): return True\ndef root(x): return Z()",
        {"test": SQRT_TEST, "entry_point": "root"},
    ),
    "float subclass with lying operators": (
        "class F(float):\n    def __sub__(s, o): return 0.0\n    def __rsub__(s, o): return 0.0\n    def __abs__(s): return 0.0\n"
        "    def __lt__(s, o): return True\ndef root(x): return F(0.0)",
        {"test": SQRT_TEST, "entry_point": "root"},
    ),
    "nan where a float is expected": (
        "def root(x): return float('nan')",
        {"test": SQRT_TEST, "entry_point": "root"},
    ),
    "list subclass with lying eq, iter and len": (
        "class L(list):\n    def __eq__(s, o): return True\n    def __iter__(s): return iter([1, 2, 3])\n    def __len__(s): return 3\n"
        "def f(): return L()",
        {"tests": ["assert f() == [1, 2, 3]"]},
    ),
    "dict subclass with lying items": (
        "class D(dict):\n    def items(s): return [('a', 1)]\n    def __eq__(s, o): return True\n"
        "def f(): return D()",
        {"tests": ["assert f() == {'a': 1}"]},
    ),
    "exception class with lying eq": (
        "class E(ValueError):\n    def __eq__(s, o): return True\ndef f(): raise E('x')",
        {"tests": ["assert f() == 1"]},
    ),
    "StopIteration ending the test's all(map(...))": (
        "def f(x): raise StopIteration",
        {"tests": ["assert all(map(lambda x: f(x) == x * 2, [1, 2, 3]))"]},
    ),
    "SystemExit swallowed by the test's except Exception": (
        "def f(x): raise SystemExit(0)",
        {"test": "def check(candidate):\n    assert candidate(2) == 4\n", "entry_point": "f"},
    ),
    "fake math module for math.isclose": (
        "class M:\n    def isclose(self, *a, **k): return True\nmath = M()\ndef f(x): return 0",
        {"tests": ["assert math.isclose(f(1), 3.5)"]},
    ),
    "fake random module for the test's inputs": (
        "class R:\n    def randint(self, a, b): return 0\n    def Random(self, s): return self\nrandom = R()\ndef f(x): return 0",
        {
            "test": "def check(candidate):\n    rng = random.Random(1)\n    for _ in range(5):\n        x = rng.randint(1, 9)\n"
            "        assert candidate(x) == x * x\n",
            "entry_point": "f",
        },
    ),
    "redefined prompt helper (poly returns 0)": (
        "def find_zero(xs):\n    return 0.0\n\ndef poly(xs, x):\n    return 0.0",
        {
            "prompt": "import math\n\n\ndef poly(xs: list, x: float):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\n"
            "def find_zero(xs: list):\n    '''a zero of poly'''\n",
            "test": "def check(candidate):\n    for xs in ([1, 2], [-6, 11, -6, 1], [3, 1]):\n"
            "        assert abs(poly(xs, candidate(list(xs)))) < 1e-4\n",
            "entry_point": "find_zero",
        },
    ),
    "reversing the input the test expects unchanged": (
        "def f(a):\n    a.reverse()\n    return a",
        {
            "test": "def check(candidate):\n    a = [1, 2, 3]\n    assert candidate(a) == [3, 2, 1]\n    assert a == [1, 2, 3]\n",
            "entry_point": "f",
        },
    ),
    "reading /proc to find the harness": (
        "import os\ndef f():\n    out = []\n    for p in ['/proc/self/cmdline', f'/proc/{os.getppid()}/environ', '/proc/1/cmdline']:\n"
        "        try:\n            out.append(open(p).read())\n        except Exception as e:\n            out.append(type(e).__name__)\n"
        "    return out",
        {"tests": ["assert f() == ['x', 'y', 'z']"]},
    ),
    "PASS markers on stderr": (
        "import sys\nprint('PASSED', file=sys.stderr)\ndef f():\n    print('ok', file=sys.stderr)\n    return 0",
        {"tests": ["assert f() == 1"]},
    ),
    "forged protocol frames": (
        "import socket, json, struct\ns = socket.socket(fileno=3)\ndef f(x): return 0\ndef send(o):\n"
        "    d = json.dumps(o).encode(); s.sendall(struct.pack('!I', len(d)) + d)\n"
        "send({'ready': True, 'status': 0, 'names': ['f']})\nfor _ in range(10): send({'value': ['b', True]})\n"
        "import os; os._exit(0)",
        {"tests": ["assert f(1) == 1", "assert f(2) == 4"]},
    ),
    "object whose __index__ and __int__ give the answer": (
        "class I:\n    def __index__(s): return 9\n    def __int__(s): return 9\n"
        "def f(x): return I()",
        {"tests": ["assert f(3) == 9"]},
    ),
    "value nested beyond the codec's depth": (
        "def f():\n    x = []\n    for _ in range(100000):\n        x = [x]\n    return x",
        {"tests": ["assert f() == 1"]},
    ),
    "huge output instead of the answer": (
        "print('7\\n' * 10**7)",
        {"io": [{"stdin": "", "stdout": "7\n"}]},
    ),
    "answer then a non-zero exit": (
        "import sys\nprint(7)\nsys.exit(3)",
        {"io": [{"stdin": "", "stdout": "7\n"}]},
    ),
}


@pytest.mark.parametrize("label", sorted(HOSTILE))
def test_hostile_programs_fail(label):
    completion, ref = HOSTILE[label]
    verdict = code(completion, **ref, timeout_s=5)
    assert verdict.status == "wrong" and verdict.score == 0.0, verdict.detail
    _assert_host_clean()


def _assert_host_clean() -> None:
    """Every default-pool worker is alive and has no child left behind."""
    from passband.sandbox import default_pool

    for worker in list(default_pool()._all):
        assert worker.alive()
        with open(f"/proc/{worker.proc.pid}/task/{worker.proc.pid}/children") as fh:
            assert fh.read().split() == []


def test_whitespace_heavy_completions_do_not_stall_the_harness():
    # Regexes over the completion run in the harness: a quadratic one (``^\s*`` across blank lines)
    # took 25 s on 20k newlines. Each of these must be graded promptly.
    import time

    prompt = 'def f(x):\n    """doc"""\n'
    test = "def check(candidate):\n    assert candidate(1) == 2\n"
    for text in (
        "\n" * 100000,
        "  \t\n" * 30000 + "def f(",
        "\t \n\n" * 30000 + "from __future__ x",
    ):
        start = time.monotonic()
        verdict = code(text, prompt=prompt, test=test, entry_point="f", timeout_s=5)
        assert verdict.status in ("wrong", "invalid") and time.monotonic() - start < 5, (
            verdict.detail
        )


def test_test_code_that_runs_its_own_check_at_import():
    # MultiPL-E / HumanEval-X style: the test module ends by calling the check itself.
    test = (
        "def check(candidate):\n    assert candidate([1, 2])[0] == 2\n    assert candidate([5]) == [10]\n\n"
        "def test_check():\n    check(dbl)\n\ntest_check()\n"
    )
    assert (
        code("def dbl(xs): return [2 * x for x in xs]", test=test, entry_point="dbl").status == "ok"
    )
    assert (
        code("def dbl(xs): return [2 * x for x in xs[1:]]", test=test, entry_point="dbl").status
        == "wrong"
    )
    unguarded = "def check(candidate):\n    pass\n\nfirst = dbl([1])[0]\nassert first == 2\n"
    assert (
        code("def dbl(xs): return None", test=unguarded, entry_point="dbl").status == "wrong"
    )  # not "error"
    broken_reference = "import no_such_module_here\ndef check(candidate):\n    pass\n"
    assert (
        code("def dbl(xs): return xs", test=broken_reference, entry_point="dbl").status == "error"
    )


def test_a_chat_format_prompt_column_is_ignored_not_an_error():
    # TRL passes dataset columns as keyword arguments; ``prompt`` may be a list of chat messages.
    chat = [{"role": "user", "content": "Write f."}]
    assert code(
        "def f(x): return x",
        test="def check(c):\n    assert c(1) == 1\n",
        entry_point="f",
        prompt=chat,
    ).passed
    assert code("def f(x): return x", tests=["assert f(1) == 1"], prompt=chat).passed
    assert code("def f(x): return 2", tests=["assert f(1) == 1"], prompt=chat).status == "wrong"
