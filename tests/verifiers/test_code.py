"""The ``code`` verifier: canonical solutions pass, broken variants fail, exploits fail.

The problems are HumanEval/MBPP-style tasks written for this suite (same format: a prompt with a
signature and docstring, a ``check(candidate)`` test or a list of asserts, an entry point).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time

import pytest

import passband.verifiers.code as code_module
from passband.sandbox import COMPILE_LIMITS
from passband.verifiers import get
from passband.verifiers.code import code_verifier, extract_code, outputs_match

code = get("code")


def assert_host_clean() -> None:
    """Every default-pool worker is alive, has no child left, and no run directory remains."""
    from passband.sandbox import default_pool

    for worker in list(default_pool()._all):
        zpid = worker.proc.pid
        assert worker.alive()
        with open(f"/proc/{zpid}/task/{zpid}/children") as fh:
            assert fh.read().split() == []
        for base in worker.leftovers.get("dirs", ()):
            assert os.listdir(f"/proc/{zpid}/root{base}") == []


def fence(src: str) -> str:
    return f"Here is my solution.\n\n```python\n{src.strip()}\n```\n"


# ---- HumanEval-style problems: (prompt, canonical body, broken body, test, entry_point) -------------
HE = {
    "close": (
        "from typing import List\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
        '    """True if any two numbers are closer to each other than threshold."""\n',
        "    for i, a in enumerate(numbers):\n        for j, b in enumerate(numbers):\n"
        "            if i != j and abs(a - b) < threshold:\n                return True\n    return False\n",
        "    return any(abs(a - b) < threshold for a, b in zip(numbers, numbers[1:]))\n",
        "\n\nMETADATA = {'author': 'suite'}\n\n\ndef check(candidate):\n"
        "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
        "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
        "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True\n"
        "    assert candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == True\n"
        "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == False\n",
        "has_close_elements",
    ),
    "truncate": (
        'def truncate_number(number: float) -> float:\n    """Decimal part of a positive float."""\n',
        "    return number % 1.0\n",
        "    return round(number % 1.0, 1)\n",
        "\n\ndef check(candidate):\n    assert candidate(3.5) == 0.5\n"
        "    assert abs(candidate(1.33) - 0.33) < 1e-6\n    assert abs(candidate(123.456) - 0.456) < 1e-6\n",
        "truncate_number",
    ),
    "below_zero": (
        "from typing import List\n\ndef below_zero(operations: List[int]) -> bool:\n"
        '    """Does the balance, starting at zero, ever fall below zero?"""\n',
        "    balance = 0\n    for op in operations:\n        balance += op\n        if balance < 0:\n"
        "            return True\n    return False\n",
        "    return sum(operations) < 0\n",
        "\n\ndef check(candidate):\n    assert candidate([]) == False\n    assert candidate([1, 2, -3, 1, 2, -3]) == False\n"
        "    assert candidate([1, 2, -4, 5, 6]) == True\n    assert candidate([1, -1, 2, -2, 5, -5, 4, -4]) == False\n"
        "    assert candidate([1, -2, 2, -2, 5, -5, 4, -4]) == True\n",
        "below_zero",
    ),
    "longest": (
        "from typing import List, Optional\n\ndef longest(strings: List[str]) -> Optional[str]:\n"
        '    """The longest string (the first one on ties); None for an empty list."""\n',
        "    if not strings:\n        return None\n    maxlen = max(len(x) for x in strings)\n"
        "    for s in strings:\n        if len(s) == maxlen:\n            return s\n",
        "    return max(strings, key=len) if strings else ''\n",
        "\n\ndef check(candidate):\n    assert candidate([]) == None\n    assert candidate(['x', 'y', 'z']) == 'x'\n"
        "    assert candidate(['x', 'yyy', 'zzzz', 'www', 'kkkk', 'abc']) == 'zzzz'\n",
        "longest",
    ),
    "sum_product": (
        "from typing import List, Tuple\n\ndef sum_product(numbers: List[int]) -> Tuple[int, int]:\n"
        '    """(sum, product) of a list; (0, 1) when empty."""\n',
        "    s, p = 0, 1\n    for n in numbers:\n        s += n\n        p *= n\n    return s, p\n",
        "    s, p = 0, 1\n    for n in numbers:\n        s += n\n        p *= n\n    return [s, p]\n",
        "\n\ndef check(candidate):\n    assert candidate([]) == (0, 1)\n    assert candidate([1, 1, 1]) == (3, 1)\n"
        "    assert candidate([100, 0]) == (100, 0)\n    assert candidate([3, 5, 7]) == (3 + 5 + 7, 3 * 5 * 7)\n",
        "sum_product",
    ),
    "histogram": (
        "def histogram(test: str) -> dict:\n"
        '    """The letters with the highest count in a space-separated string, with that count."""\n',
        "    counts = {}\n    for w in test.split():\n        counts[w] = counts.get(w, 0) + 1\n"
        "    if not counts:\n        return {}\n    top = max(counts.values())\n"
        "    return {k: v for k, v in counts.items() if v == top}\n",
        "    from collections import Counter\n    return dict(Counter(test.split()).most_common(1))\n",
        "\n\ndef check(candidate):\n    assert candidate('a b b a') == {'a': 2, 'b': 2}\n"
        "    assert candidate('a b c a b') == {'a': 2, 'b': 2}\n    assert candidate('b b b b a') == {'b': 4}\n"
        "    assert candidate('') == {}\n    assert candidate('a') == {'a': 1}\n",
        "histogram",
    ),
    "find_zero": (
        "import math\n\ndef poly(xs: list, x: float):\n    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))\n\n"
        'def find_zero(xs: list):\n    """A zero of the polynomial with coefficients xs (even length)."""\n',
        "    begin, end = -1.0, 1.0\n    while poly(xs, begin) * poly(xs, end) > 0:\n        begin *= 2.0\n"
        "        end *= 2.0\n    while end - begin > 1e-10:\n        center = (begin + end) / 2.0\n"
        "        if poly(xs, center) * poly(xs, begin) > 0:\n            begin = center\n        else:\n"
        "            end = center\n    return begin\n",
        "    return 0.0\n",
        "\n\ndef check(candidate):\n    import math\n    import random\n    rng = random.Random(42)\n    import copy\n"
        "    for _ in range(30):\n        ncoeff = 2 * rng.randint(1, 4)\n        coeffs = []\n"
        "        for _ in range(ncoeff):\n            coeff = rng.randint(-10, 10)\n            if coeff == 0:\n"
        "                coeff = 1\n            coeffs.append(coeff)\n        solution = candidate(copy.deepcopy(coeffs))\n"
        "        assert math.fabs(poly(coeffs, solution)) < 1e-4\n",
        "find_zero",
    ),
}


@pytest.mark.parametrize("name", sorted(HE))
def test_humaneval_canonical_passes_and_broken_fails(name):
    prompt, canonical, broken, test, entry = HE[name]
    ok = code(fence(prompt + canonical), test=test, entry_point=entry)
    assert ok.status == "ok" and ok.score == 1.0, ok.detail
    body_only = code(
        canonical, test=test, entry_point=entry, prompt=prompt
    )  # completion continues the prompt
    assert body_only.status == "ok", body_only.detail
    bad = code(fence(prompt + broken), test=test, entry_point=entry)
    assert bad.status == "wrong" and bad.score == 0.0, bad.detail


# ---- MBPP-style problems: (solution, broken, tests, test_imports) ----------------------------------
MBPP = {
    "remove_occ": (
        "def remove_Occ(s, ch):\n    i = s.find(ch)\n    if i >= 0:\n        s = s[:i] + s[i + 1:]\n"
        "    j = s.rfind(ch)\n    if j >= 0:\n        s = s[:j] + s[j + 1:]\n    return s\n",
        "def remove_Occ(s, ch):\n    return s.replace(ch, '', 1)\n",
        [
            'assert remove_Occ("hello","l") == "heo"',
            'assert remove_Occ("abcda","a") == "bcd"',
            'assert remove_Occ("PHP","P") == "H"',
        ],
        None,
    ),
    "similar": (
        "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
        "def similar_elements(a, b):\n    return tuple(set(a) | set(b))\n",
        [
            "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
            "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
        ],
        None,
    ),
    "heap": (
        "import heapq as hq\ndef heap_queue_largest(nums, n):\n    return hq.nlargest(n, nums)\n",
        "def heap_queue_largest(nums, n):\n    return sorted(nums)[:n]\n",
        [
            "assert heap_queue_largest( [25, 35, 22, 85, 14, 65, 75, 22, 58],3)==[85, 75, 65]",
            "assert heap_queue_largest( [25, 35, 22, 85, 14, 65, 75, 22, 58],2)==[85, 75]",
        ],
        None,
    ),
    "pair_chain": (  # the tests build objects of a class the solution defines
        "class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n"
        "def max_chain_length(arr, n):\n    mcl = [1] * n\n    for i in range(1, n):\n        for j in range(0, i):\n"
        "            if arr[i].a > arr[j].b and mcl[i] < mcl[j] + 1:\n                mcl[i] = mcl[j] + 1\n"
        "    return max(mcl)\n",
        "class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n"
        "def max_chain_length(arr, n):\n    return n\n",
        [
            "assert max_chain_length([Pair(5, 24), Pair(15, 25),Pair(27, 40), Pair(50, 60)], 4) == 3",
            "assert max_chain_length([Pair(1, 2), Pair(3, 4),Pair(5, 6), Pair(7, 8)], 4) == 4",
        ],
        None,
    ),
    "area": (
        "import math\ndef circle_area(r):\n    return math.pi * r * r\n",
        "def circle_area(r):\n    return 3.14 * r * r\n",
        [
            "assert math.isclose(circle_area(10), 314.1592653589793, rel_tol=1e-9)",
            "assert math.isclose(circle_area(2.5), 19.634954084936208, rel_tol=1e-9)",
        ],
        ["import math"],
    ),
}


@pytest.mark.parametrize("name", sorted(MBPP))
def test_mbpp_canonical_passes_and_broken_fails(name):
    good, broken, tests, imports = MBPP[name]
    ok = code(fence(good), tests=tests, test_imports=imports)
    assert ok.status == "ok", ok.detail
    bad = code(fence(broken), tests=tests, test_imports=imports)
    assert bad.status == "wrong" and bad.score == 0.0, bad.detail


def test_partial_credit_reports_every_test():
    tests = ["assert f(1) == 1", "assert f(2) == 4", "assert f(3) == 9", "assert f(4) == 16"]
    v = code("def f(x):\n    return x * x if x < 3 else x", tests=tests, partial_credit=True)
    assert v.status == "wrong" and v.score == pytest.approx(0.5)
    assert v.detail.count("PASS") == 2 and v.detail.count("FAIL") == 2
    strict = code("def f(x):\n    return x * x if x < 3 else x", tests=tests)
    assert strict.score == 0.0
    assert code_verifier(partial_credit=True)("def f(x): return x*x", tests=tests).score == 1.0


# ---- io (competitive programming) ----------------------------------------------------------------
IO = [
    {"stdin": "3\n1 2 3\n", "stdout": "6\n"},
    {"stdin": "2\n10 -4\n", "stdout": "6"},
    {"stdin": "1\n7", "stdout": "7  \n\n"},
]


def test_io_program_passes_with_trailing_whitespace_ignored():
    prog = "n = int(input())\nprint(sum(map(int, input().split())))"
    assert code(fence(prog), io=IO).status == "ok"
    assert code(fence(prog.replace("sum", "max")), io=IO).status == "wrong"
    assert code(fence("import sys\nsys.exit(0)"), io=IO).status == "wrong"
    assert code(fence("raise SystemExit(0)\nprint('6')"), io=IO).status == "wrong"


def test_io_float_tolerance():
    cases = [{"stdin": "", "stdout": "0.333333 2\n"}]
    assert code("print(1/3, 2)", io=cases).status == "wrong"
    assert code("print(1/3, 2)", io=cases, float_tol=1e-5).status == "ok"
    assert code("print(0.34, 2)", io=cases, float_tol=1e-5).status == "wrong"
    assert outputs_match("1 2\n", "1 2") and not outputs_match("1 2 3", "1 2", 1e-3)
    assert outputs_match("nan", "nan") and not outputs_match("nan", "1.0", 1.0)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_io_in_c():
    src = '#include <stdio.h>\nint main(){int n,x,s=0;scanf("%d",&n);while(n--){scanf("%d",&x);s+=x;}printf("%d\\n",s);}'
    v = code(f"```c\n{src}\n```", io=IO, language="c", timeout_s=30)
    assert v.status == "ok", v.detail


# ---- statuses --------------------------------------------------------------------------------------
def test_statuses_follow_the_contract():
    assert code("Sorry, I cannot do that.```\n```", tests=["assert f() == 1"]).status == "invalid"
    assert code("", tests=["assert f() == 1"]).status == "invalid"
    # a loop is the completion's fault: graded wrong (a masked timeout would reward looping)
    looped = code("def f():\n    while True: pass", tests=["assert f() == 1"], timeout_s=0.5)
    assert looped.status == "wrong" and looped.score == 0.0 and "ran out of time" in looped.detail
    looped = code("while True: pass", io=[{"stdin": "", "stdout": "1"}], timeout_s=0.5)
    assert looped.status == "wrong" and "ran out of time" in looped.detail
    assert code("def f(): return 1", tests=["assert f( == 1"]).status == "error"  # broken reference
    assert code("def f(): return 1").status == "error"  # no tests at all
    assert code("def f(): return 1", tests=["assert f() == 1"], timeout_s=-1).status == "error"
    assert (
        code("def f(: return 1", tests=["assert f() == 1"]).status == "wrong"
    )  # syntax error is the model's
    assert (
        code("def g(): return 1", tests=["assert f() == 1"]).status == "wrong"
    )  # missing function


def test_extract_code_prefers_the_last_python_block():
    text = "```text\nnot code\n```\n```python\nx = 1\n```\nand\n```py\nx = 2\n```\n```\nx = 3\n```"
    assert extract_code(text).strip() == "x = 2"
    assert extract_code("```\nx = 3\n```").strip() == "x = 3"
    assert extract_code("x = 4") == "x = 4"
    assert extract_code("```python\nx = 5\n") == "x = 5\n"  # truncated generation: open fence
    assert extract_code("```cpp\nint main(){}\n```", "cpp").startswith("int main")


# ---- exploits: each must fail, and the host must be unaffected -------------------------------------
SQUARE_TESTS = ["assert square(2) == 4", "assert square(3) == 9", "assert square(-4) == 16"]
SQUARE_HE = "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(5) == 25\n"


@pytest.mark.parametrize(
    "exploit",
    [
        # an object equal to everything
        "class Any:\n    def __eq__(self, o): return True\n    def __ne__(self, o): return False\n"
        "def square(x): return Any()",
        # an int subclass that lies
        "class L(int):\n    def __eq__(self, o): return True\ndef square(x): return L(0)",
        # a truthy object where a bool is expected
        "class T:\n    def __bool__(self): return True\ndef square(x): return T()",
        # exit with status 0 before the tests
        "import sys\ndef square(x): return x * x\nsys.exit(0)",
        "import os\ndef square(x): return x * x\nos._exit(0)",
        # exit with status 0 during the tests
        "import sys\ndef square(x): sys.exit(0)",
        "import os\ndef square(x): os._exit(0)",
        # patch the assertion machinery and builtins
        "import builtins\nbuiltins.AssertionError = type('E', (BaseException,), {})\n"
        "builtins.abs = lambda x: 0\nbuiltins.bool = lambda x: True\ndef square(x): return 0",
        # print pass markers
        "print('All tests passed'); print('PASSED'); print('OK')\ndef square(x): return 0",
        # walk the stack / the heap looking for the harness and the expected values
        "import sys, gc, inspect\ndef square(x):\n    for f in inspect.stack():\n"
        "        f.frame.f_globals['__passband_check__'] = lambda *a: None\n"
        "    for o in gc.get_objects():\n        if isinstance(o, dict) and 'check' in o: o['check'] = lambda c: None\n"
        "    return 0",
        # define names the tests use
        "def check(candidate): pass\ndef abs(x): return 0\ndef square(x): return 0\n__passband_check__ = None",
        # delete the working directory (and anything else it can)
        "import os, shutil\nshutil.rmtree(os.getcwd(), ignore_errors=True)\ndef square(x): return 0",
    ],
)
@pytest.mark.parametrize("style", ["tests", "test"])
def test_exploits_fail(exploit, style):
    if style == "tests":
        v = code(fence(exploit), tests=SQUARE_TESTS, timeout_s=5)
    else:
        v = code(fence(exploit), test=SQUARE_HE, entry_point="square", timeout_s=5)
    assert v.status == "wrong" and v.score == 0.0, v.detail
    assert_host_clean()
    assert code(fence("def square(x): return x * x"), tests=SQUARE_TESTS).status == "ok"


def test_expected_values_never_enter_the_sandbox():
    token = os.urandom(16).hex()
    thief = (
        "import gc, re\n"
        "def secret():\n"
        "    for o in gc.get_objects():\n"
        "        for s in (o if isinstance(o, (list, tuple, dict, set)) else [o]):\n"
        "            if isinstance(s, str) and re.fullmatch('[0-9a-f]{32}', s): return s\n"
        "    import os\n"
        "    for root, dirs, files in os.walk('/'):\n"
        "        for f in files:\n"
        "            try:\n"
        "                m = re.search('[0-9a-f]{32}', open(os.path.join(root, f)).read(100000))\n"
        "                if m: return m.group(0)\n"
        "            except Exception: pass\n"
        "    return ''\n"
    )
    v = code(fence(thief), tests=[f"assert secret() == {token!r}"], timeout_s=10)
    assert v.status in ("wrong", "timeout") and v.score == 0.0


def test_harness_files_cannot_be_edited_or_deleted():
    harness = os.path.abspath(code_module.__file__)
    before = hashlib.sha256(open(harness, "rb").read()).hexdigest()
    attacker = (
        "import os\n"
        f"for p in [{harness!r}, {os.path.dirname(harness)!r}]:\n"
        "    try: os.remove(p)\n    except OSError: pass\n"
        f"try: open({harness!r}, 'w').write('def code(*a, **k): return 1')\nexcept OSError: pass\n"
        "def square(x): return 0\n"
    )
    assert code(fence(attacker), tests=SQUARE_TESTS).status == "wrong"
    assert hashlib.sha256(open(harness, "rb").read()).hexdigest() == before
    assert_host_clean()


def test_verifier_is_registered_and_picklable():
    import pickle

    v = pickle.loads(pickle.dumps(code_verifier(timeout_s=3)))
    assert v("def f(): return 1", tests=["assert f() == 1"]).passed
    assert "code" in __import__("passband.verifiers", fromlist=["names"]).names()
    with pytest.raises(ValueError, match="memory_mb"):
        code_verifier(memory_mb=1)


def test_generators_and_containers_behave_as_in_python():
    gen = "def evens(n):\n    return (i for i in range(n) if i % 2 == 0)"
    assert code(
        gen, tests=["assert list(evens(5)) == [0, 2, 4]", "assert sorted(evens(3)) == [0, 2]"]
    ).passed
    assert not code(gen, tests=["assert evens(5) == [0, 2, 4]"]).passed  # a generator is not a list
    box = "class V:\n    def __init__(s): s.d = [3, 4]\n    def __len__(s): return 2\n    def __getitem__(s, i): return s.d[i]\n"
    assert code(
        box + "def mk(): return V()", tests=["assert len(mk()) == 2", "assert mk()[1] == 4"]
    ).passed
    assert not code(box + "def mk(): return V()", tests=["assert mk() == [3, 4]"]).passed


def test_mbpp_setup_fields():
    v = code(
        "def f(x): return helper(x) + 1",
        tests=["assert f(1) == 3"],
        test_imports="import math",
        test_setup_code="def helper(x):\n    return 2 * x",
    )
    assert (
        not v.passed
    )  # helper lives in the harness, not in the program: the program's f cannot see it
    v = code(
        "def f(x): return math.floor(x)",
        tests=["assert math.isclose(f(2.5), 2)"],
        test_imports=["import math"],
    )
    assert (
        not v.passed
    )  # the program forgot to import math; the harness's import does not leak into it
    v = code(
        "import math\ndef f(x): return math.floor(x)",
        tests=["assert math.isclose(f(2.5), 2)"],
        test_imports=["import math"],
        test_setup_code="X = 1",
    )
    assert v.passed, v.detail


def test_an_infinite_loop_under_verify_batch_is_wrong_not_a_masked_timeout():
    """With verify_batch's timeout equal to the program's own ``timeout_s`` (both 10 s by
    default), the worker was killed just as the verifier graded the loop, and the item became a
    ``timeout``, which the trainer masks: the loop escaped its reward. The batch now waits out the
    verifier's declared limit, also through a Reward and the trainer's success-rule wrapper."""
    from passband.curriculum._success import with_success_rule
    from passband.verifiers import Reward, verify_batch

    loop = "```python\ndef square(x):\n    while True:\n        pass\n```"
    right = "```python\ndef square(x):\n    return x * x\n```"
    ref = {"tests": ["assert square(2) == 4"], "timeout_s": 1}
    code = get("code")
    for reward in (code, Reward({"code": code}), with_success_rule("code", 0.5)):
        got = verify_batch(reward, [loop, right], [ref, ref], timeout=1, workers=2)
        assert [v.status for v in got] == ["wrong", "ok"], [v.detail for v in got]
        assert "ran out of time" in got[0].detail


_WALRUS_CHECK = (
    "def check(candidate):\n    assert (res := candidate(3)) is not None\n"
    "    assert len(res) == 3\n    assert res[0] == 3\n"
)


@pytest.mark.parametrize(
    "program, reference, expected",
    [
        # a ``:=`` in an assert bound only inside the harness's thunk, so the later ``res`` /
        # ``r`` reached the program's own global of that name
        (
            "def f(x): return 0\nres = [3, 4, 5]",
            {"test": _WALRUS_CHECK, "entry_point": "f"},
            "wrong",
        ),
        ("def f(x): return [x, x + 1, x + 2]", {"test": _WALRUS_CHECK, "entry_point": "f"}, "ok"),
        (
            "def f(x): return 0\nr = [3, 0, 0]",
            {"tests": ["assert (r := f(3)) != 7", "assert r[0] == 3"]},
            "wrong",
        ),
        (
            "def f(x): return [x, x + 1]",
            {"tests": ["assert (r := f(3)) != 7", "assert r[0] == 3"]},
            "ok",
        ),
        # a module alias the tests use without importing it is the harness's numpy, not the
        # program's object named np
        (
            "class N:\n    def allclose(self, *a, **k):\n        return True\n"
            "np = N()\ndef square(x):\n    return 0",
            {"tests": ["assert np.allclose(square(2), 4)"]},
            "wrong",
        ),
        ("def square(x):\n    return x * x", {"tests": ["assert np.allclose(square(2), 4)"]}, "ok"),
    ],
)
def test_names_the_tests_bind_or_import_are_never_the_programs(program, reference, expected):
    verdict = get("code")(program, **reference)
    assert verdict.status == expected, verdict.detail


@pytest.mark.parametrize(
    "completion",
    ["Sure!\n```" + " " * 150_000, "```" + "a" * 100_000, "```" + " \t" * 50_000 + "x"],
)
def test_a_fence_followed_by_a_long_run_is_read_in_linear_time(completion):
    """Stop 35 (a review): the fence's info string backtracked quadratically (6.7 s on 100,000
    spaces, in the grading process), turning an invalid completion into a masked timeout."""
    start = time.perf_counter()
    verdict = get("code")(completion, tests=["assert f(1) == 1"], timeout_s=1)
    assert verdict.status == "invalid" and time.perf_counter() - start < 1.0, verdict


@pytest.mark.parametrize("got", ["3 1000001", "3.000001 999999.5", "3 1_000_000", "3 999999.9"])
def test_float_tol_leaves_an_expected_integer_exact(got):
    """Stop 35 (a review): float_tol let a count be off by one (1000001 for 1000000) and read
    Python's 1_000_000 as a number."""
    assert not outputs_match(got, "3 1000000", float_tol=1e-6)


def test_float_tol_still_accepts_close_reals_and_equal_integers():
    assert outputs_match("0.3333333", "0.333333333", float_tol=1e-6)
    assert outputs_match("3.0 1e6", "3 1000000", float_tol=1e-6)  # the same values


def test_a_namedtuple_field_named_count_cannot_carry_a_callable_answer():
    """Stop 35 (a review): fields named count / index replace the tuple's methods on the rebuilt
    value, and a lambda there arrived as a handle the tests called: every assert passed."""
    program = (
        "from collections import namedtuple\nR = namedtuple('R', ['count', 'index'])\n"
        "def occurrences(xs):\n    return R(lambda *a: 2, lambda *a: 1)\n"
    )
    tests = [
        "assert occurrences([1, 1, 2]).count(1) == 2",
        "assert occurrences([5, 7]).index(7) == 1",
    ]
    assert not get("code")(program, tests=tests).passed
    honest = (
        "from collections import namedtuple\nR = namedtuple('R', ['count', 'index'])\n"
        "def occurrences(xs):\n    return R(len(xs), 0)\n"
    )
    assert get("code")(honest, tests=["assert occurrences([1, 1, 2]).count == 3"]).passed


def test_partial_credit_counts_an_assert_in_a_loop_once():
    """Stop 35 (a review): each evaluation of an assert in a loop over the program's output was
    a check, so [0] * 2000 scored 0.9995 against a length-5 test."""
    test = (
        "def check(candidate):\n    out = candidate(5)\n    assert len(out) == 5\n"
        "    for v in out:\n        assert v % 2 == 0\n"
    )
    padded = get("code")(
        "def evens(n): return [0] * 2000", test=test, entry_point="evens", partial_credit=True
    )
    assert padded.status == "wrong" and padded.score == 0.5, padded
    right = get("code")(
        "def evens(n): return [0, 2, 4, 6, 8]", test=test, entry_point="evens", partial_credit=True
    )
    assert right.passed and right.score == 1.0


def test_colliding_set_keys_in_a_flat_container_are_refused_quickly():
    """Stop 35 (a review): the flat-container path skipped the collision guard; a set of 60,000
    keys hashing alike took 34 s to rebuild in the grading process."""
    program = (
        "import sys\n_w = sys.modules['_wire']\n_orig = _w.encode\n"
        "def _enc(value, handle=None, depth=0):\n    if value == 'BOMB':\n"
        "        return ['V', ['S', 'i', [k * ((1 << 61) - 1) for k in range(1, 60000)]]]\n"
        "    return _orig(value, handle, depth)\n_w.encode = _enc\n"
        "def square(x):\n    return 'BOMB'\n"
    )
    start = time.perf_counter()
    verdict = get("code")(program, tests=["assert square(2) == 4"], timeout_s=3)
    assert verdict.status == "wrong" and time.perf_counter() - start < 3.0, verdict


_WORDS_CHECK = (
    "def check(candidate):\n    assert True, 'This prints if this assert fails 1'\n"
    "    assert candidate('Hi, my name is John') == ['Hi', 'my', 'name', 'is', 'John']\n"
    "    assert candidate('One, two') == ['One', 'two']\n    assert candidate('') == []\n"
    "    assert True, 'x'\n    assert candidate('a b') == ['a', 'b']\n"
)


@pytest.mark.parametrize(
    "program, score",
    [
        ("def words_string(s): raise SystemExit", 0.0),  # scored 1/2 when exiting ended the count
        ("def words_string(s): return None", 0.0),  # "assert True" lines no longer count as passes
        (
            "import os\ndef words_string(s):\n    if s == 'Hi, my name is John':\n"
            "        return ['Hi', 'my', 'name', 'is', 'John']\n    os._exit(0)",
            0.25,
        ),
    ],
)
def test_partial_credit_is_not_raised_by_ending_the_program(program, score):
    """Stop 35 (a second review): SystemExit escaped the per-assert count and ended the unit as one
    failed check, so exiting early scored 0.5 where an honest wrong answer scored 0.29."""
    verdict = get("code")(
        program, test=_WORDS_CHECK, entry_point="words_string", partial_credit=True
    )
    assert verdict.status == "wrong" and verdict.score == score, verdict


def test_a_returned_object_cannot_answer_a_str_predicate_for_a_test():
    program = (
        "class S:\n    def startswith(self, p): return True\n"
        "    def endswith(self, p): return True\ndef greet(n): return S()\n"
    )
    tests = ["assert greet('Bob').startswith('Hello')", "assert greet('Bob').endswith('Bob!')"]
    assert not get("code")(program, tests=tests).passed
    honest = "def greet(n): return 'Hello ' + n + '!'\n"
    assert get("code")(honest, tests=tests).passed


@pytest.mark.parametrize(
    "program, tests",
    [
        (  # a list of ints that all hash alike, which the test turns into a set
            "def common(a, b):\n    M = 2**61 - 1\n    return [k * M for k in range(1, 100001)]\n",
            ["assert set(common([1, 2, 3], [2, 3, 4])) == {2, 3}"],
        ),
        (  # a Fraction forged without reducing it: the grader's gcd took 49 s
            "from fractions import Fraction\ndef square(x):\n    f = object.__new__(Fraction)\n"
            "    f._numerator = 3**400000 + 1\n    f._denominator = 5**260000 + 2\n    return f\n",
            ["assert square(3) == 9"],
        ),
    ],
)
def test_results_that_would_stall_the_grader_are_wrong_quickly(program, tests):
    start = time.perf_counter()
    verdict = get("code")(program, tests=tests, timeout_s=5)
    assert verdict.status == "wrong" and time.perf_counter() - start < 5.0, verdict


def test_an_argument_changed_to_deep_nesting_is_wrong_not_an_error():
    """Stop 35: the write-back took 101 levels, the next call could not send it back in, and the
    verdict became a masked error."""
    program = (
        "def total(a):\n    x = []\n    for _ in range(100):\n        x = [x]\n"
        "    a[:] = [x]\n    return -1\n"
    )
    test = (
        "def check(candidate):\n    a = [3, 1, 2]\n    assert candidate(a) == 6\n"
        "    assert candidate(a) == 6\n"
    )
    assert get("code")(program, test=test, entry_point="total").status == "wrong"


def test_honest_sets_fractions_and_namedtuples_still_pass():
    assert get("code")(
        "def f():\n    return [0] * 5000 + list(range(3000))\n",
        tests=["assert len(set(f())) == 3000"],
    ).passed
    assert get("code")(
        "from fractions import Fraction\ndef half(x):\n    return Fraction(x, 2)\n",
        tests=["assert half(3) == Fraction(3, 2)"],
        test_imports=["from fractions import Fraction"],
    ).passed


@pytest.mark.parametrize(
    "test",
    [
        "assert sort_list(lst) == sorted(lst)",
        "assert sort_list(lst) == list(reversed(sorted(lst, reverse=True)))",
        "assert len(sort_list(lst)) == len(lst) and sort_list(lst) == sorted(lst)",
        # a pure method on a name or a literal (stop 37): the expected value is computed first
        "assert sort_list(lst) == sorted(list(dict.fromkeys(lst)))",
        "assert ' '.join(map(str, sort_list(lst))) == ' '.join(map(str, sorted(lst)))",
        "assert sort_list(lst) == sorted(lst.copy())",
    ],
)
def test_emptying_an_argument_does_not_make_the_expected_value_agree(test):
    """Stop 36 (a review's left item): Python evaluates ``candidate(lst)`` first, so a program that
    cleared ``lst`` and returned [] was compared with ``sorted([])`` and passed."""
    tests = ["lst = [3, 1, 2]", test]
    hack = "def sort_list(a):\n    a.clear()\n    return []\n"
    assert not get("code")(hack, tests=tests).passed
    honest_in_place = "def sort_list(a):\n    a.sort()\n    return a\n"
    assert get("code")(honest_in_place, tests=tests).passed
    honest = "def sort_list(a):\n    return sorted(a)\n"
    assert get("code")(honest, tests=tests).passed


@pytest.mark.parametrize(
    "test",
    [
        "assert math.isclose(total(lst), sum(lst))",
        "assert abs(total(lst) - sum(lst)) < 1e-9",
        "assert total(lst) == sum(lst) != -1",
        "assert (total(lst), 1) == (sum(lst), 1)",
        "def same(got, want):\n    assert got == want\nsame(total(lst), sum(lst))",
        "def check(f):\n    xs = [3, 1, 2]\n    assert math.isclose(f(xs), sum(xs), rel_tol=1e-9)\n"
        "check(total)",
    ],
)
def test_emptying_an_argument_fails_in_every_place_an_expected_value_stands(test):
    """Stop 38 (left by stop 37): the expected value was computed first only on the right of a
    single comparison, so a program that emptied its argument and returned 0 still passed a
    chained comparison, ``math.isclose``, a subtraction and the test's own helper."""
    tests = ["import math", "lst = [3, 1, 2]", test]
    assert not get("code")("def total(a):\n    a.clear()\n    return 0\n", tests=tests).passed
    assert get("code")("def total(a):\n    return sum(a)\n", tests=tests).passed
    popping = "def total(a):\n    s = 0\n    while a:\n        s += a.pop()\n    return s\n"
    assert get("code")(popping, tests=tests).passed  # consumes its input, answers right


_ACCOUNT_TESTS = ["acc = Account()", "assert acc.deposit(50) == acc.balance"]
_ACCOUNT = (
    "class Account:\n    def __init__(self):\n        self.balance = 0\n"
    "    def deposit(self, x):\n        old = self.balance\n        self.balance += x\n"
    "        return {ret}\n"
)


def test_an_expected_value_that_reads_the_programs_state_keeps_pythons_order():
    """A review of 1b1eb44: ``acc.balance`` read before the call passed a deposit that returned
    the old balance and failed the right one."""
    assert get("code")(_ACCOUNT.format(ret="self.balance"), tests=_ACCOUNT_TESTS).passed
    assert not get("code")(_ACCOUNT.format(ret="old"), tests=_ACCOUNT_TESTS).passed


def test_an_expected_dict_view_is_the_dicts_state_before_the_call():
    """A review (stop 37): ``d.keys()`` computed first was still a live view of ``d``, so a
    program that emptied ``d`` and returned an empty set matched it."""
    tests = ["d = {'a': 1, 'b': 2}", "assert f(d) == d.keys()"]
    assert not get("code")("def f(d):\n    d.clear()\n    return set()\n", tests=tests).passed
    assert get("code")("def f(d):\n    return set(d)\n", tests=tests).passed


def test_a_pure_method_of_a_program_object_still_reads_its_state_after_the_call():
    """``acc.get()`` after ``acc.deposit(50)``: the name holds a program object, so Python's order
    stands even though ``get`` is a method that changes nothing."""
    program = _ACCOUNT + "    def get(self):\n        return self.balance\n"
    tests = ["acc = Account()", "assert acc.deposit(50) == acc.get()"]
    assert get("code")(program.format(ret="self.balance"), tests=tests).passed
    assert not get("code")(program.format(ret="old"), tests=tests).passed


def test_the_expected_value_is_a_copy_and_a_walrus_still_binds_first():
    tests = ["a = [1, 2, 3]", "assert pick(a) in a"]
    assert not get("code")("def pick(a):\n    a.append(999)\n    return 999\n", tests=tests).passed
    assert get("code")("def pick(a):\n    return a[0]\n", tests=tests).passed
    walrus = ["assert (res := f([3, 1, 2])) == sorted(res)"]
    assert get("code")("def f(x):\n    return sorted(x)\n", tests=walrus).passed


_LOOP_TEST = (
    "def assertion(out, exp, atol):\n    assert out == exp\n"
    "def check(candidate):\n"
    "    for inp, exp in [((1,), 1), ((2,), 4), ((3,), 9), ((4,), 16)]:\n"
    "        assertion(candidate(*inp), exp, 0)\n"
)
_MID_TEST = (
    "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(2) == 4\n"
    "    r = candidate(3)\n    assert r == 9\n    assert candidate(4) == 16\n"
)


@pytest.mark.parametrize("test", [_LOOP_TEST, _MID_TEST])
def test_raising_outside_an_assert_earns_no_more_partial_credit_than_a_wrong_answer(test):
    """A review (stop 36): the unit's exception was one failed check and the asserts it cut off
    were never counted, so raising after the first case scored 0.5 against an honest 0.0-0.4."""
    raising = "def sq(x):\n    if x < 3:\n        return x * x\n    raise NotImplementedError\n"
    wrong = "def sq(x):\n    return x * x if x < 3 else 0\n"
    score = {
        name: get("code")(prog, test=test, entry_point="sq", partial_credit=True).score
        for name, prog in (("raising", raising), ("wrong", wrong))
    }
    assert score["raising"] == 0.0 and score["raising"] <= score["wrong"], score
    right = get("code")("def sq(x):\n    return x * x\n", test=test, entry_point="sq")
    assert right.passed


def test_pytest_style_tests_run_and_tests_that_check_nothing_are_an_error():
    """A review (stop 36): ``def test_one(): assert ...`` was defined, never called, and every
    program passed; a HumanEval test without ``check`` ran the program's own ``check``."""
    tests = ["def test_one():\n    assert f(1) == 2\n", "def test_two():\n    assert f(5) == 6\n"]
    assert get("code")("def f(x):\n    return x + 1\n", tests=tests).passed
    assert not get("code")("def f(x):\n    return 2\n", tests=tests).passed
    nothing = get("code")("def f(x):\n    return 2\n", tests=["x = 1"])
    assert nothing.status == "error", nothing
    hacked = "def f(x):\n    return 0\ndef check(c):\n    return True\n"
    verdict = get("code")(
        hacked, test="def verify(candidate):\n    assert candidate(1) == 2\n", entry_point="f"
    )
    assert verdict.status == "error" and "check" in verdict.detail, verdict


_LIAR = (
    "class S:\n    def find(self, sub, *a):\n        return 0\n"
    "    def index(self, sub, *a):\n        return 0\n"
    "    def count(self, sub, *a):\n        return 1\n"
    "    def lower(self):\n        return self\n"
    "def greet(name):\n    return S()\n"
)


@pytest.mark.parametrize(
    "tests",
    [
        ["assert greet('Bob').find('Hello') == 0"],
        ["assert greet('Bob').index('Hello, Bob') == 0"],
        ["assert greet('Bob').lower().find('hello') == 0"],
        ["r = greet('x')\nassert all(r.count(c) == 1 for c in 'abc')"],
    ],
)
def test_a_returned_object_cannot_answer_searches_and_counts(tests):
    """A review (stop 36): find/index/count of the program's own class answered 0 or 1 for any
    string a test asked about; an object the test builds itself (a union-find) still answers."""
    assert not get("code")(_LIAR, tests=tests).passed
    honest = "def greet(n):\n    return 'Hello, ' + n\n"
    assert get("code")(honest, tests=["assert greet('Bob').find('Hello') == 0"]).passed
    union_find = (
        "class UnionFind:\n    def __init__(self, n):\n        self.p = list(range(n))\n"
        "    def find(self, x):\n        while self.p[x] != x:\n            x = self.p[x]\n"
        "        return x\n    def union(self, a, b):\n        self.p[self.find(a)] = self.find(b)\n"
    )
    uf_tests = ["uf = UnionFind(5)\nuf.union(0, 1)\nassert uf.find(0) == uf.find(1)"]
    assert get("code")(union_find, tests=uf_tests).passed


_COLLIDE = "(2**61 - 1)"


@pytest.mark.parametrize(
    "program",
    [
        f"def unique_ids(n):\n    return [k * {_COLLIDE} for k in range(1, 60001)] + [0.5]\n",
        f"def unique_ids(n):\n    return [(k * {_COLLIDE},) for k in range(1, 60001)]\n",
        "from fractions import Fraction\ndef unique_ids(n):\n"
        f"    return [Fraction(k * {_COLLIDE}) for k in range(1, 20001)]\n",
    ],
)
def test_results_built_to_stall_the_grader_are_wrong_not_a_masked_timeout(program):
    """A review (stop 36): colliding hashes in mixed lists, tuples and Fractions, and a huge
    Decimal, stalled the test's set() or round() in the grader until the deadline masked it."""
    tests = ["r = unique_ids(5)\nassert len(set(r)) == len(r) == 5"]
    start = time.perf_counter()
    verdict = get("code")(program, tests=tests, timeout_s=5)
    assert verdict.status == "wrong" and time.perf_counter() - start < 5.0, verdict


def test_a_huge_decimal_is_wrong_not_a_masked_timeout():
    program = "from decimal import Decimal\ndef area(r):\n    return Decimal('1e400000000')\n"
    start = time.perf_counter()
    verdict = get("code")(program, tests=["assert round(area(2)) == 12"], timeout_s=5)
    assert verdict.status == "wrong" and time.perf_counter() - start < 5.0, verdict


def test_a_sliced_generator_is_wrong_and_a_failed_check_outweighs_a_harness_one():
    gen = "def first(n):\n    return (p for p in [2, 4, 6, 8, 10])\n"
    assert get("code")(gen, tests=["assert first(5)[:3] == [2, 3, 5]"]).status == "wrong"
    indexable = (
        "class R:\n    def __init__(self):\n        self.v = [1, 2, 3]\n"
        "    def __getitem__(self, k):\n        return self.v[k]\ndef first(n):\n    return R()\n"
    )
    assert get("code")(indexable, tests=["assert first(1)[:2] == [1, 2]"]).passed
    mixed = ["assert first(5) == [2, 3, 5, 7, 11]", "assert first(lambda: 0) == [1]"]
    wrong = get("code")("def first(n):\n    return [1]\n", tests=mixed, partial_credit=True)
    assert wrong.status == "wrong", wrong


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
def test_io_in_cpp_compiles_once_under_the_compilers_own_limits(monkeypatch):
    """Each case compiled the program again, inside the program's limits: at memory_mb = 128 g++
    ran out of memory on <bits/stdc++.h> and a right program failed every case."""
    from passband.verifiers import _code_io

    builds = []
    real = _code_io.compile_once
    monkeypatch.setattr(_code_io, "compile_once", lambda *a, **k: builds.append(1) or real(*a, **k))
    src = "#include <bits/stdc++.h>\nusing namespace std;\nint main(){long a,b;cin>>a>>b;cout<<a+b<<endl;}"
    cases = [{"stdin": f"{i} {i + 1}\n", "stdout": f"{2 * i + 1}\n"} for i in range(4)]
    v = code(f"```cpp\n{src}\n```", io=cases, language="cpp", memory_mb=128, timeout_s=5)
    assert (v.status, v.score, len(builds)) == ("ok", 1.0, 1), v.detail
    wrong = code(f"```cpp\n{src.replace('a+b', 'a*b')}\n```", io=cases, language="cpp")
    assert wrong.status == "wrong"
    broken = code(
        "```cpp\nint main(){ return x; }\n```", io=cases, language="cpp", partial_credit=True
    )
    assert broken.status == "wrong" and broken.detail.startswith("0/4 checks passed")
    assert "compile failed (exit code 1)" in broken.detail


def test_time_limit_counts_the_compile_for_languages_that_build_once():
    c = code_verifier(timeout_s=2)
    io = [{"stdin": "", "stdout": "1"}] * 3
    assert c.time_limit({"io": io}) == 6
    assert c.time_limit({"io": io, "language": "cpp"}) == 6 + COMPILE_LIMITS.timeout_s
    assert c.time_limit({"io": io, "language": "cobol"}) == 6
