"""Regressions from the fortieth stop's reward-hacking review of the ``code`` verifier: names a
test uses without defining them must not let a wrong program pass."""

from __future__ import annotations

import pytest

from passband.verifiers import get

CODE = get("code")


def _run(program: str, **ref):
    return CODE(f"```python\n{program}```", **ref)


MAX_TESTS = ["assert max([1, 5, 3]) == 5", "assert max([7]) == 7"]


def test_in_mbpp_asserts_a_called_builtin_is_always_the_builtin():
    """Without ``entry_point`` a builtin the asserts call is the builtin, whatever the program
    binds to that name: no program can answer for ``len`` or ``set`` in the tests, and binding
    one (``set = set``, ``def set``) turns no wrong answer into a masked ``error``. A task whose
    function is named like a builtin (``max``) is read both ways (``_code_calls``): every answer
    passed on the builtin's reading, a wrong one included (the forty-first stop's fix)."""
    right = (
        "def max(xs):\n    best = xs[0]\n    for x in xs:\n        best = x if x > best else best"
    )
    right += "\n    return best\n"
    assert _run("def max(xs):\n    return -1\n", tests=MAX_TESTS).status == "wrong"
    assert _run(right, tests=MAX_TESTS).passed
    assert _run(right, tests=MAX_TESTS, entry_point="max").passed
    wrong = "def max(xs):\n    return -1\n"
    assert _run(wrong, tests=MAX_TESTS, entry_point="max").status == "wrong"
    add = "def add(a, b):\n    return 0\n"
    for hack in (
        "set = set\n",
        "def set(x):\n    return {1}\n",
        "class set(frozenset):\n    pass\n",
    ):
        verdict = _run(add + hack, tests=["assert set([add(1, 2)]) == {3}"])
        assert verdict.status == "wrong", (hack, verdict.detail)


@pytest.mark.parametrize(
    "alias, module",
    [("nx", "networkx"), ("sns", "seaborn"), ("tf", "tensorflow"), ("jnp", "jax.numpy")],
)
def test_a_module_alias_the_tests_leave_unimported_is_never_the_programs(alias, module):
    """The prompt imported ``networkx as nx``; the program's own ``nx`` whose every check is True
    must not decide the test (it passed)."""
    hostile = (
        f"class _Fake:\n    def __getattr__(self, name):\n        return lambda *a, **k: True\n\n"
        f"{alias} = _Fake()\n\ndef build(n):\n    return None\n"
    )
    test = f"def check(candidate):\n    assert {alias}.is_connected(candidate(4))\n"
    verdict = _run(hostile, test=test, entry_point="build")
    assert not verdict.passed and verdict.status in ("wrong", "error"), (module, verdict.detail)


def test_sp_unimported_is_scipy_or_sympy_so_no_verdict():
    test = "def check(candidate):\n    assert sp.simplify(candidate(2)) == 4\n"
    hostile = (
        "class _SP:\n    def simplify(self, x):\n        return 4\n\nsp = _SP()\n\n"
        "def square(x):\n    return 0\n"
    )
    verdict = _run(hostile, test=test, entry_point="square")
    assert verdict.status == "error" and "'sp'" in verdict.detail, verdict.detail
    imported = "import sympy as sp\n" + test
    assert _run("def square(x):\n    return x * x\n", test=imported, entry_point="square").passed
    assert _run(hostile, test=imported, entry_point="square").status == "wrong"


SET_TESTS = [
    "assert set(common([1, 2], [2, 3])) == set([2])",
    "assert list(common([1], [1])) == [1]",
]


@pytest.mark.parametrize(
    "extra",
    [
        "set = set\nlist = list\n",  # re-bound builtins
        "from math import *\nfrom itertools import *\n",
    ],
)
def test_builtins_a_program_binds_without_defining_them_are_the_builtins(extra):
    """Only a function or class the program writes under a builtin's name is ambiguous: a value
    or an import is not, and ``set = set`` must not turn a wrong answer into ``error``."""
    right = "def common(a, b):\n    return [x for x in a if x in b]\n"
    assert _run(right + extra, tests=SET_TESTS).passed
    wrong = "def common(a, b):\n    return [0]\n"
    assert _run(wrong + extra, tests=SET_TESTS).status == "wrong"


def test_a_value_under_a_called_builtins_name_fails_as_in_python():
    """A usage example's ``list = [3, 1, 2]`` makes the tests' ``list(...)`` fail when plain
    Python runs them; the second reading (``_code_calls``) grades it so: ``wrong``, with the
    reason, never a pass on the builtin nor a masked ``error``."""
    extra = "list = [3, 1, 2]\nprint(common(list, [1]))\n"
    for body in ("[0]", "[x for x in a if x in b]"):  # the right one last
        verdict = _run(f"def common(a, b):\n    return {body}\n" + extra, tests=SET_TESTS)
        assert verdict.status == "wrong", verdict.detail
    assert "with the program's list" in verdict.detail


def test_under_import_star_a_builtins_name_is_always_the_builtin():
    """``len = len`` or a ``def len`` beside a wrong ``add`` turned ``wrong`` into ``error``
    (masked in training) under ``from solution import *``."""
    suite = "from solution import *\n\ndef test_add():\n    assert len([add(1, 2)]) == 1 and add(1, 2) == 3\n"
    assert _run("len = len\n\ndef add(a, b):\n    return 0\n", test=suite).status == "wrong"
    assert _run("len = len\n\ndef add(a, b):\n    return a + b\n", test=suite).passed
    # a function the program writes under the builtin's name changes nothing either: it turned
    # a wrong answer into a masked error (the second regression review), dead code included
    for written in ("def len(x):\n    return 1\n", "len = len\nif False:\n    def len(x): pass\n"):
        assert _run(written + "\ndef add(a, b):\n    return 0\n", test=suite).status == "wrong"


@pytest.mark.parametrize(
    "test, program",
    [
        (  # ``sp`` unimported: no verdict, even when the test catches what that raised
            "import pytest\n\ndef check(candidate):\n    with pytest.raises(Exception):\n"
            "        candidate(sp.Integer(1), 0)\n    assert candidate(4, 2) == 2\n",
            "def safe_div(a, b):\n    return a // b if b else 0\n",
        ),
        (  # the same, ended with sys.exit(0): the refusal still counts
            "import pytest, sys\n\ndef check(candidate):\n    with pytest.raises(Exception):\n"
            "        candidate(sp.Integer(1), 0)\n    sys.exit(0)\n",
            "def safe_div(a, b):\n    return 0\n",
        ),
    ],
)
def test_a_refusal_the_test_code_catches_is_still_no_pass(test, program):
    """``pytest.raises(Exception)`` caught the harness's own refusal, so the check that should
    have failed was never made and a wrong program scored ok."""
    verdict = _run(program, test=test, entry_point="safe_div")
    assert not verdict.passed and verdict.status == "error", verdict.detail
    assert "caught it" in verdict.detail


def test_a_setup_module_made_with_partial_still_runs():
    suite = (
        "import functools\nfrom solution import add\nSEEN = []\n\n"
        "def _setup(value, module=None):\n    SEEN.append(value)\n\n"
        "setup_module = functools.partial(_setup, 3)\n\n"
        "def test_add():\n    assert add(SEEN[0], 1) == 4\n"
    )
    assert _run("def add(a, b):\n    return a + b\n", test=suite).passed
    assert _run("def add(a, b):\n    return 0\n", test=suite).status == "wrong"


def test_a_refusal_caught_in_the_reference_setup_is_no_pass():
    setup = "try:\n    X = sp.Integer(2)\nexcept Exception:\n    X = 2\n"
    verdict = _run(
        "def double(x):\n    return 0\n",
        tests=["assert double(1) == 2"],
        test_setup_code=setup,
    )
    assert verdict.status == "error" and not verdict.passed, verdict.detail
