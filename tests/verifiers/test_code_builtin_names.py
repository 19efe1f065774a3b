"""A task function named like a builtin, with no ``entry_point``: the tests run with the builtin
and with the program's function, and a check passes only if it passes both ways
(``_code_calls``). Before, the builtin alone answered: every ``def max`` passed, wrong ones too."""

from __future__ import annotations

import pytest

from passband.verifiers import get

CODE = get("code")
MAX_TESTS = ["assert max([1, 5, 3]) == 5", "assert max([7]) == 7", "assert max([-2, -9]) == -2"]
RIGHT_MAX = (
    "def max(xs):\n    best = xs[0]\n    for x in xs:\n        best = x if x > best else best\n"
    "    return best\n"
)


def _run(program: str, **ref):
    return CODE(f"```python\n{program}```", **ref)


@pytest.mark.parametrize(
    "wrong",
    [
        "def max(xs):\n    return -1\n",
        "def max(xs):\n    return xs[-1]\n",  # right on one case in three
        "def max(xs):\n    raise ValueError('no')\n",
        "max = lambda xs: 0\n",
        "class max:\n    def __init__(self, xs):\n        pass\n",
    ],
)
def test_a_wrong_function_named_like_a_builtin_fails_in_mbpp_asserts(wrong):
    verdict = _run(wrong, tests=MAX_TESTS)
    assert verdict.status == "wrong", verdict.detail
    assert "with the program's max" in verdict.detail


def test_a_right_function_named_like_a_builtin_passes():
    assert _run(RIGHT_MAX, tests=MAX_TESTS).status == "ok"
    assert _run(RIGHT_MAX, tests=MAX_TESTS, entry_point="max").status == "ok"


def test_partial_credit_counts_a_check_only_when_both_readings_pass():
    half = "def max(xs):\n    return xs[-1]\n"  # right on [7] only
    verdict = _run(half, tests=MAX_TESTS, partial_credit=True)
    assert verdict.status == "wrong" and verdict.score == pytest.approx(1 / 3), verdict.detail


def test_under_import_star_too():
    suite = (
        "from solution import *\n\n"
        "def test_max():\n    assert max([1, 5, 3]) == 5\n    assert max([-2, -9]) == -2\n"
    )
    assert _run("def max(xs):\n    return -1\n", test=suite).status == "wrong"
    assert _run(RIGHT_MAX, test=suite).status == "ok"


@pytest.mark.parametrize(
    "lie",
    ["def len(x):\n    return 1\n", "def sorted(x):\n    return [1, 2, 3]\n"],
)
def test_a_lying_builtin_still_cannot_pass_a_wrong_answer(lie):
    """The builtin's reading still decides a wrong answer (and as ``wrong``, not a masked
    ``error``)."""
    tests = [
        "assert len(dedup([1, 1, 2])) == 2 and sorted(dedup([3, 1, 3])) == [1, 3]",
        "assert sorted(dedup([2, 1, 3])) == [1, 2, 3]",
    ]
    wrong = lie + "\ndef dedup(xs):\n    return xs\n"
    assert _run(wrong, tests=tests).status == "wrong"
    right = "def dedup(xs):\n    return list(set(xs))\n"
    assert _run(right, tests=tests).status == "ok"


def test_other_arguments_than_the_builtin_need_entry_point():
    """The documented cost: the builtin's reading raises ``TypeError``, so a right answer is
    ``wrong`` without ``entry_point`` (a false negative, never a false positive)."""
    right = "def sum(a, b, c):\n    return a + b + c\n"
    tests = ["assert sum(1, 2, 3) == 6"]
    assert _run(right, tests=tests).status == "wrong"
    assert _run(right, tests=tests, entry_point="sum").status == "ok"
    assert _run("def sum(a, b, c):\n    return 0\n", tests=tests, entry_point="sum").status == (
        "wrong"
    )


def test_with_entry_point_a_helper_named_like_a_builtin_is_not_read_as_the_tests():
    """With ``entry_point`` the tests' ``max`` is the builtin: a program's own helper of that name
    (buggy outside its use) changes nothing."""
    program = (
        "def max(a, b):\n    return a if a > b else b\n\n"
        "def largest(xs):\n    best = xs[0]\n    for x in xs:\n        best = max(best, x)\n"
        "    return best\n"
    )
    tests = ["assert largest([1, 4, 2]) == max([1, 4, 2])"]
    assert _run(program, tests=tests, entry_point="largest").status == "ok"


@pytest.mark.parametrize(
    "ref",
    [
        {"tests": MAX_TESTS},
        {
            "test": "def check(candidate):\n    assert candidate([1, 5]) == 5\n",
            "entry_point": "max",
        },
    ],
)
@pytest.mark.parametrize("empty", ["pass\n", "def maximum(xs):\n    return xs[0]\n"])
def test_tests_the_builtins_answer_alone_pass_no_program(ref, empty):
    """An empty program passed a ``max`` task: the builtin answered every assert. A verdict is
    ``ok`` only if the tests asked the program something."""
    verdict = _run(empty, **ref)
    assert verdict.status == "wrong" and "never reached the program" in verdict.detail


def test_tests_that_never_reach_any_program_are_the_references_fault():
    verdict = _run("def f(x):\n    return x\n", tests=["assert 1 + 1 == 2"])
    assert verdict.status == "error" and "never reach the program" in verdict.detail


@pytest.mark.parametrize(
    "alias",
    ["max = my_max\n", "max = my_max  # the task's name\n", "max = lambda xs: my_max(xs)\n"],
)
def test_a_function_bound_to_a_builtins_name_is_read_both_ways(alias):
    right = "def my_max(xs):\n    return sorted(xs)[-1]\n\n" + alias
    wrong = "def my_max(xs):\n    return xs[-1]\n\n" + alias
    assert _run(right, tests=MAX_TESTS).status == "ok"
    assert _run(wrong, tests=MAX_TESTS).status == "wrong"


@pytest.mark.parametrize(
    "hidden",
    [
        "max = (lambda xs: -1)\n",
        "def \\\n  max(xs):\n    return -1\n",
        "(max := lambda xs: -1)\n",
        "for max in [lambda xs: -1]:\n    pass\n",
        "",  # no max at all: the builtin answered its asserts
    ],
)
def test_a_max_the_program_binds_any_way_or_not_at_all_is_no_pass(hidden):
    """The second reading follows whatever the program's module binds, not a pattern in its text,
    and an MBPP assert that calls the builtin on literals alone fails even when another test
    reached the program (the second review of the forty-first stop: each of these was ``ok``)."""
    second = "def second_max(xs):\n    return sorted(xs)[-2]\n"
    tests = MAX_TESTS[:1] + ["assert second_max([1, 5, 3]) == 3"]
    verdict = _run(second + hidden, tests=tests)
    assert verdict.status == "wrong", verdict.detail
    suite = (
        "from solution import *\n\ndef test_max():\n    assert max([1, 5, 3]) == 5\n\n"
        "def test_second():\n    assert second_max([1, 5, 3]) == 3\n"
    )
    # a test module with no ``max`` written: pytest passes it too, and so does the harness (the
    # documented limit: a test function is not read for builtins it calls on literals)
    assert _run(second + hidden, test=suite).status == ("wrong" if hidden else "ok")
    assert _run(second + RIGHT_MAX, tests=tests).status == "ok"
    assert _run(second + RIGHT_MAX, test=suite).status == "ok"


def test_no_partial_credit_for_asserts_the_builtins_answered():
    """An empty program scored k / (k + 1) on a ``max`` task with partial credit."""
    for empty in ("pass\n", "max = (lambda xs: -1)\n"):
        verdict = _run(empty, tests=MAX_TESTS, partial_credit=True)
        assert verdict.status == "wrong" and verdict.score == 0.0, verdict.detail


def test_a_row_that_may_take_two_readings_declares_twice_the_time():
    """``verify_batch`` kills an item past its verifier's ``time_limit``: with one reading's
    limit a slow program that binds a builtin's name was killed in the second reading and its
    wrong answer masked as ``timeout``."""
    assert CODE.time_limit({"tests": MAX_TESTS, "timeout_s": 3}) == 6
    assert CODE.time_limit({"tests": MAX_TESTS, "timeout_s": 3, "entry_point": "max"}) == 3
    assert CODE.time_limit({"test": "from solution import *\n", "timeout_s": 3}) == 6


def test_a_second_reading_the_harness_cannot_finish_still_shows_a_wrong_answer():
    """``key=len`` cannot cross into the sandbox, so the second reading cannot run that assert;
    it runs the others, and a wrong ``max`` is ``wrong`` there, not a masked ``error``."""
    tests = ["assert max(['a', 'bbb', 'cc'], key=len) == 'bbb'", "assert max([1, 5, 3]) == 5"]
    verdict = _run("def max(xs, key=None):\n    return xs[0]\n", tests=tests)
    assert verdict.status == "wrong", verdict.detail


def test_builtins_over_data_the_program_returned_are_no_unanswered_test():
    """``len(res)`` on what the setup code got from the program, or a test module's stored
    result, is a test of the program (the regression review: these became ``wrong``)."""
    program = "def evens(n):\n    return [x for x in range(n) if x % 2 == 0]\n"
    verdict = _run(
        program,
        tests=["assert len(res) == 3", "assert evens(1) == [0]"],
        test_setup_code="res = evens(6)",
    )
    assert verdict.status == "ok", verdict.detail
    suite = (
        "import unittest\nfrom solution import evens\n\nclass T(unittest.TestCase):\n"
        "    @classmethod\n    def setUpClass(cls):\n        cls.res = evens(6)\n\n"
        "    def test_len(self):\n        assert len(self.res) == 3\n"
    )
    assert _run(program, test=suite).status == "ok"
    assert _run("def evens(n):\n    return [0]\n", test=suite).status == "wrong"


@pytest.mark.parametrize("usage", ["list = [1, 2, 3, 4]\n", "sum = 0\n"])
def test_a_module_that_imports_names_sees_the_builtins_as_pytest_does(usage):
    """``from solution import f`` leaves ``list`` the builtin for the test, as in pytest: a usage
    example's ``list = [...]`` fails nothing there (it did, in the second reading)."""
    suite = (
        "from solution import odd\n\ndef test_odd():\n"
        "    assert list(odd([1, 2, 3])) == [1, 3] and sum(odd([1, 2, 3])) == 4\n"
    )
    right = "def odd(xs):\n    return [x for x in xs if x % 2]\n" + usage
    assert _run(right, test=suite).status == "ok"


def test_partial_credit_when_the_readings_run_different_checks():
    """A ``pytest.raises`` test made the two readings' checks differ, and the builtin's passes
    were kept: a ``max`` that always returns -1 scored as much as a right one."""
    suite = (
        "import pytest\nfrom solution import *\n\ndef test_empty():\n"
        "    with pytest.raises(ValueError):\n        max([])\n\n"
        "def test_a():\n    assert max([1, 5, 3]) == 5\n\ndef test_b():\n    assert max([7]) == 7\n"
    )
    wrong = _run("def max(xs):\n    return -1\n", test=suite, partial_credit=True)
    right = _run(
        RIGHT_MAX.replace(
            "    best = xs[0]", "    if not xs:\n        raise ValueError\n    best = xs[0]"
        ),
        test=suite,
        partial_credit=True,
    )
    assert wrong.score < right.score and wrong.score == 0.0, (wrong.detail, right.detail)
