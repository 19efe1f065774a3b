"""Test modules as datasets ship them, run against the sandboxed program (``_code_suite.py``):
pytest functions that import the program (KodCode's ``from solution import f``), parametrized
tests, pytest ``Test*`` classes and ``unittest.TestCase`` classes ending in ``unittest.main()``.
Each is graded through the real ``code`` verifier and its sandbox."""

from __future__ import annotations

import pytest

from passband.verifiers import get

CODE = get("code")
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"

UNITTEST = """\
import unittest
{imports}
class TestAdd(unittest.TestCase):
    def setUp(self):
        self.base = 1

    def test_small(self):
        self.assertEqual(add(self.base, 2), 3)

    def test_zero(self):
        self.assertEqual(add(2, 2), 4)
{main}"""

SUITES = {
    "unittest, main guard": UNITTEST.format(
        imports="", main="\nif __name__ == '__main__':\n    unittest.main()\n"
    ),
    "unittest, bare main": UNITTEST.format(imports="", main="\nunittest.main()\n"),
    "unittest, from solution": UNITTEST.format(imports="from solution import add", main=""),
    "pytest, from solution": "from solution import add\n\n"
    "def test_add():\n    assert add(1, 2) == 3\n    assert add(-1, 1) == 0\n",
    "pytest, import solution": "import solution\n\n"
    "def test_add():\n    assert solution.add(1, 2) == 3\n",
    "pytest, alias": "from solution import add as plus\n\ndef test_add():\n    assert plus(2, 3) == 5\n",
    "pytest, parametrize": "import pytest\nfrom solution import add\n\n"
    "@pytest.mark.parametrize('a, b, total', [(1, 2, 3), (0, 0, 0), (2, 5, 7)])\n"
    "def test_add(a, b, total):\n    assert add(a, b) == total\n",
    "pytest, class": "from solution import add\n\nclass TestAdd:\n"
    "    def setup_method(self, method):\n        self.base = 1\n\n"
    "    def test_one(self):\n        assert add(self.base, 2) == 3\n",
}


@pytest.mark.parametrize("name", sorted(SUITES))
@pytest.mark.parametrize("field", ["test", "tests"])
def test_a_test_module_grades_the_right_program_ok_and_the_wrong_one_wrong(name, field):
    suite = SUITES[name]
    ref = {"test": suite} if field == "test" else {"tests": [suite]}
    right = CODE(f"```python\n{RIGHT}```", **ref)
    wrong = CODE(f"```python\n{WRONG}```", **ref)
    assert right.status == "ok" and right.passed, (name, right.detail)
    assert wrong.status == "wrong" and not wrong.passed, (name, wrong.detail)


def test_every_parametrize_case_runs():
    """Only the third case tells ``a * b`` from ``a + b``: it must run."""
    suite = SUITES["pytest, parametrize"].replace("(2, 5, 7)", "(2, 2, 4)")
    close = "def add(a, b):\n    return a * b if a == b == 2 else a + b + (a == b == 0)\n"
    verdict = CODE(f"```python\n{close}```", test=suite)
    assert verdict.status == "wrong", verdict.detail
    assert CODE(f"```python\n{RIGHT}```", test=suite).status == "ok"


def test_a_case_the_dataset_marks_skip_is_left_out():
    suite = (
        "import pytest\nfrom solution import add\n\n"
        "@pytest.mark.parametrize('a, b, total', [(1, 2, 3), "
        "pytest.param(1, 1, 3, marks=pytest.mark.skip)])\n"
        "def test_add(a, b, total):\n    assert add(a, b) == total\n"
    )
    assert CODE(f"```python\n{RIGHT}```", test=suite).status == "ok"


def test_a_unittest_class_with_one_wrong_method_fails_and_partial_credit_counts_methods():
    suite = UNITTEST.format(imports="", main="").replace("4)", "5)")
    verdict = CODE(f"```python\n{RIGHT}```", test=suite, partial_credit=True)
    assert verdict.status == "wrong" and verdict.score == pytest.approx(0.5), verdict.detail


def test_a_name_the_program_does_not_define_fails_the_program():
    suite = "from solution import sub\n\ndef test_sub():\n    assert sub(3, 2) == 1\n"
    verdict = CODE(f"```python\n{RIGHT}```", test=suite)
    assert verdict.status == "wrong" and "sub" in verdict.detail


def test_a_module_the_harness_lacks_is_the_references_fault_never_the_programs():
    """``numpyy`` is not installed: the import must not read the program's names (its own
    ``allclose`` that always agrees), and the verdict is an error, not a pass or a fail."""
    suite = (
        "import numpyy as np\nfrom solution import add\n\n"
        "def test_a():\n    assert np.allclose(add(1, 2), 3)\n"
    )
    forged = "def add(a, b):\n    return 0\n\ndef allclose(*a, **k):\n    return True\n"
    verdict = CODE(f"```python\n{forged}```", test=suite)
    assert verdict.status == "error" and "numpyy" in verdict.detail, verdict.detail


def test_a_test_that_skips_itself_is_no_pass():
    suite = (
        "import unittest\nfrom solution import add\n\nclass T(unittest.TestCase):\n"
        "    def test_a(self):\n        self.skipTest('needs a GPU')\n"
    )
    verdict = CODE(f"```python\n{RIGHT}```", test=suite)
    assert verdict.status == "error" and not verdict.passed, verdict.detail


def test_a_skipped_class_is_not_run_and_the_others_are():
    suite = (
        "import unittest\nfrom solution import add\n\n@unittest.skip('later')\n"
        "class Old(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(add(1, 1), 5)\n"
        "\nclass New(unittest.TestCase):\n    def test_b(self):\n        self.assertEqual(add(2, 2), 4)\n"
    )
    verdict = CODE(f"```python\n{RIGHT}```", test=suite)
    assert verdict.status == "ok" and "1/1" in verdict.detail, verdict.detail


def test_only_fixture_tests_check_nothing():
    suite = "from solution import add\n\ndef test_a(tmp_path):\n    assert add(1, 2) == 3\n"
    verdict = CODE(f"```python\n{RIGHT}```", test=suite)
    assert verdict.status == "error" and not verdict.passed, verdict.detail


# stop 39's review: wrong programs the first version graded ok, and runners it ran
ADD_FIRST_ONLY = "def add(a, b):\n    return 3 if (a, b) == (1, 2) else 0\n"
BASIC = "import pytest\nfrom solution import add\n\ndef test_basic():\n    assert add(1, 2) == 3\n"


@pytest.mark.parametrize(
    "extra",
    [
        # a parametrize table given by keyword
        "@pytest.mark.parametrize('a, b, total', argvalues=[(2, 2, 4), (5, 5, 10)])\n"
        "def test_many(a, b, total):\n    assert add(a, b) == total\n",
        "@pytest.mark.parametrize(argnames='a, b, total', argvalues=[(2, 2, 4)])\n"
        "def test_many(a, b, total):\n    assert add(a, b) == total\n",
        # a case whose skipif does not hold runs
        "import sys\n@pytest.mark.parametrize('a, b, total', [pytest.param(2, 2, 4, "
        "marks=pytest.mark.skipif(sys.version_info < (3, 0), reason='old'))])\n"
        "def test_many(a, b, total):\n    assert add(a, b) == total\n",
        # a table held in a numpy array
        "import numpy as np\n@pytest.mark.parametrize('a, b, total', np.array([[2, 2, 4]]))\n"
        "def test_many(a, b, total):\n    assert add(int(a), int(b)) == int(total)\n",
        # a nested pytest class
        "class TestOuter:\n    class TestInner:\n        def test_x(self):\n"
        "            assert add(2, 2) == 4\n",
        # runTest alone
        "import unittest\nclass B(unittest.TestCase):\n    def runTest(self):\n"
        "        self.assertEqual(add(2, 2), 4)\n",
    ],
)
def test_every_test_of_a_module_runs(extra):
    verdict = CODE(f"```python\n{ADD_FIRST_ONLY}```", test=BASIC + extra)
    assert verdict.status == "wrong", verdict.detail
    assert CODE(f"```python\n{RIGHT}```", test=BASIC + extra).status == "ok"


@pytest.mark.parametrize(
    "extra",
    [
        "def test_input(monkeypatch):\n    add(1, 1)\n    assert add(1, 1) == 2\n",
        "@pytest.fixture\ndef cases():\n    return [(2, 2, 4)]\n\n"
        "def test_cases(cases):\n    assert all(add(a, b) == t for a, b, t in cases)\n",
        "async def test_later():\n    assert add(2, 2) == 4\n",
    ],
)
def test_a_test_the_harness_cannot_run_is_no_pass(extra):
    verdict = CODE(f"```python\n{ADD_FIRST_ONLY}```", test=BASIC + extra)
    assert verdict.status != "ok" and not verdict.passed, verdict.detail
    assert "cannot run" in verdict.detail


def test_under_a_star_import_a_builtins_name_is_the_builtin_and_comparisons_are_kept():
    suite = (
        "from solution import *\n\ndef test_pow():\n    assert pow(2, 10) == 1024\n\n"
        "def test_area():\n    assert isclose(area(1), 3.14159, rel_tol=1e-4)\n"
    )
    hostile = (
        "from math import isclose as _i\n\ndef pow(x, n):\n    return 0\n\n"
        "def isclose(*a, **k):\n    return True\n\ndef area(r):\n    return 0\n"
    )
    honest = "from math import isclose\n\ndef pow(x, n):\n    return x ** n\n\n"
    honest += "def area(r):\n    return 3.14159 * r * r\n"
    assert CODE(f"```python\n{hostile}```", test=suite).status != "ok"
    # the tests' pow is the builtin, whatever the program binds to the name (an error here let
    # any wrong program escape its zero by writing one: stop 40)
    assert CODE(f"```python\n{honest}```", test=suite).passed
    named = suite.replace("from solution import *", "from solution import pow, area, isclose")
    assert CODE(f"```python\n{honest}```", test=named.replace(", isclose", "")).status == "ok"


def test_a_star_import_never_runs_the_programs_hooks_or_tests_as_checks():
    """``from solution import *`` once bound the program's ``setup_module`` / ``setUpModule``,
    which the harness ran as the module's hooks: two passing checks for a wrong program (partial
    credit 0 -> 0.5). A ``test*`` name the tests call is still the program's."""
    suite = (
        "from solution import *\n\ndef test_one():\n    assert add(1, 2) == 3\n\n"
        "def test_two():\n    assert add(5, 7) == 12\n"
    )
    hooks = "def setup_module(m=None):\n    pass\n\ndef setUpModule(m=None):\n    pass\n\n"
    hooks += "def test_mine():\n    pass\n\n"
    for add, score in (("return 0", 0.0), ("return 3", 0.5)):
        program = f"{hooks}def add(a, b):\n    {add}\n"
        verdict = CODE(f"```python\n{program}```", test=suite, partial_credit=True)
        assert verdict.score == score and not verdict.passed, verdict.detail
        assert "setup" not in verdict.detail.lower() and "test_mine" not in verdict.detail
    called = "from solution import *\n\ndef test_dup():\n    assert test_duplicate([1, 1])\n"
    program = "def test_duplicate(xs):\n    return len(set(xs)) < len(xs)\n"
    assert CODE(f"```python\n{program}```", test=called).passed
    wrong = program.replace("<", ">")
    assert CODE(f"```python\n{wrong}```", test=called).status == "wrong"


@pytest.mark.parametrize(
    "runner",
    [
        "import unittest as ut\nut.main()\n",
        "from unittest import main\nmain()\n",
        "import sys, unittest\nsys.exit(unittest.main())\n",
        "import pytest as pt\nraise SystemExit(pt.main(['-q']))\n",
    ],
)
def test_test_runners_do_nothing_in_the_harness(runner, monkeypatch):
    """``unittest.main`` would parse the trainer's own command line (``--lr``: exit 2) and
    ``pytest.main`` would collect files from the working directory."""
    monkeypatch.setattr("sys.argv", ["train.py", "--lr", "1e-5"])
    suite = SUITES["unittest, from solution"] + "\n" + runner
    verdict = CODE(f"```python\n{RIGHT}```", test=suite)
    assert verdict.status == "ok", verdict.detail


def test_a_timeout_a_test_catches_is_no_pass():
    suite = (
        "from solution import parse\n\ndef test_good():\n    assert parse('12') == 12\n\n"
        "def test_bad():\n    try:\n        parse('x')\n    except:\n        pass\n"
    )
    hangs = "def parse(s):\n    while not s.isdigit():\n        pass\n    return int(s)\n"
    verdict = CODE(f"```python\n{hangs}```", test=suite, timeout_s=1.0)
    assert verdict.status == "wrong" and not verdict.passed, verdict.detail


@pytest.mark.parametrize(
    "suite",
    [
        # setup_class / setUpModule / setup_module run before the tests
        "from solution import add\n\nclass TestAdd:\n    @classmethod\n    def setup_class(cls):\n"
        "        cls.x = 1\n\n    def test_a(self):\n        assert add(self.x, 1) == 2\n",
        "import unittest\nfrom solution import add\n\ndef setUpModule():\n    global BASE\n"
        "    BASE = 1\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(add(BASE, 1), 2)\n",
        # a class-level parametrize
        "import pytest\nfrom solution import add\n\n@pytest.mark.parametrize('a, b, e', [(1, 2, 3)])\n"
        "class TestAdd:\n    def test_a(self, a, b, e):\n        assert add(a, b) == e\n",
        # the program imported inside the test function, or relatively
        "def test_a():\n    from solution import add\n    assert add(1, 1) == 2\n",
        "from .solution import add\n\ndef test_a():\n    assert add(1, 2) == 3\n",
        # a helper named check, and a skipped stale test
        "from solution import add\n\ndef check(a, b, e):\n    assert add(a, b) == e\n\n"
        "def test_a():\n    check(1, 2, 3)\n",
        "import pytest\nfrom solution import add\n\ndef test_a():\n    assert add(1, 2) == 3\n\n"
        "@pytest.mark.skip(reason='spec changed')\ndef test_old():\n    assert add(1, 1) == 3\n",
    ],
)
def test_right_programs_pass_the_ways_pytest_and_unittest_set_tests_up(suite):
    assert CODE(f"```python\n{RIGHT}```", test=suite).status == "ok"
    assert CODE(f"```python\n{WRONG}```", test=suite).status == "wrong"


def test_the_tested_function_is_found_before_a_trailing_usage_example():
    completion = f"```python\n{RIGHT}```\nExample usage:\n```python\nprint(add(1, 2))  # 3\n```\n"
    suite = "from solution import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    assert CODE(completion, test=suite).status == "ok"


def test_a_star_imported_function_named_like_a_module_is_the_programs():
    suite = "from solution import *\n\ndef test_b():\n    assert bisect([1, 2, 3], 2) == 2\n"
    right = "def bisect(a, x):\n    import bisect as b\n    return b.bisect(a, x)\n"
    assert CODE(f"```python\n{right}```", test=suite).status == "ok"
    assert CODE("```python\ndef bisect(a, x):\n    return 0\n```", test=suite).status == "wrong"


def test_a_star_import_never_hands_the_test_the_programs_numpy():
    """The test relies on the program's ``import numpy as np``; the program's own ``np`` that
    always agrees must not decide the comparison."""
    suite = "from solution import *\n\ndef test_a():\n    assert np.allclose(area(1), 3.14159)\n"
    hostile = (
        "class _NP:\n    def allclose(self, *a, **k):\n        return True\n\nnp = _NP()\n\n"
        "def area(r):\n    return 0\n"
    )
    honest = "import numpy as np\n\ndef area(r):\n    return 3.14159 * r * r\n"
    assert CODE(f"```python\n{hostile}```", test=suite).status == "wrong"
    assert CODE(f"```python\n{honest}```", test=suite).status == "ok"


# the second review: wrong programs graded ok (or error, which the trainer masks)
ZERO = "def add(a, b):\n    return 0\n"


def test_tests_a_main_block_calls_run():
    suite = (
        "from solution import add\n\ndef test_a():\n    assert add(1, 2) == 3\n\n"
        "def run_tests():\n    test_a()\n\nif __name__ == '__main__':\n    run_tests()\n"
    )
    assert CODE(f"```python\n{ZERO}```", test=suite).status == "wrong"
    assert CODE(f"```python\n{RIGHT}```", test=suite).status == "ok"


@pytest.mark.parametrize(
    "program",
    [
        "def sorted(x, **k):\n    return 0\n\ndef add(a, b):\n    return 0\n",
        "def abs(x):\n    return 0\n\ndef add(a, b):\n    return 0\n",
    ],
)
def test_a_star_import_never_lets_the_program_replace_what_the_test_compares_with(program):
    suite = (
        "import pytest\nfrom collections import Counter\nfrom solution import *\n\n"
        "def test_a():\n    assert add(1, 2) == abs(sorted([3])[0])\n"
        "    assert pytest.approx(3) == add(1, 2)\n    assert Counter([add(1, 2)]) == Counter([3])\n"
    )
    verdict = CODE(f"```python\n{program}```", test=suite)
    assert verdict.status != "ok" and not verdict.passed, verdict.detail
    assert CODE(f"```python\n{RIGHT}```", test=suite).status == "ok"


def test_a_program_that_exits_inside_a_bare_except_is_no_pass():
    suite = (
        "from solution import add\n\ndef test_a():\n    assert add(1, 2) == 3\n\n"
        "def test_b():\n    try:\n        add(-1, -1)\n    except:\n        pass\n"
    )
    exits = "import os\n\ndef add(a, b):\n    if a < 0:\n        os._exit(0)\n    return a + b\n"
    assert CODE(f"```python\n{exits}```", test=suite).status == "wrong"


@pytest.mark.parametrize(
    "mark, status",
    [
        ("@pytest.mark.xfail(False, reason='x')\n", "wrong"),
        ("@pytest.mark.skipif('sys.platform == \"win32\"')\n", "error"),
    ],
)
def test_a_mark_whose_condition_does_not_hold_leaves_the_test_in(mark, status):
    suite = BASIC + f"\n{mark}def test_more():\n    assert add(2, 2) == 4\n"
    assert CODE(f"```python\n{ADD_FIRST_ONLY}```", test=suite).status == status


def test_a_solution_file_on_the_harness_path_is_never_the_program(tmp_path, monkeypatch):
    (tmp_path / "solution.py").write_text("def add(a, b):\n    return a + b\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = "from solution import add\n\ndef test_a():\n    assert add(1, 2) == 3\n"
    assert CODE(f"```python\n{ZERO}```", test=suite).status == "wrong"


def test_a_table_built_from_a_program_that_left_is_a_verdict_not_a_crash():
    suite = (
        "import pytest\nfrom solution import add, stop\n\n"
        "def test_first():\n    stop()\n\n"
        "@pytest.mark.parametrize('a', (add(i, 0) for i in range(2)))\n"
        "def test_b(a):\n    assert a >= 0\n"
    )
    program = "import os\n\ndef add(a, b):\n    return a + b\n\ndef stop():\n    os._exit(0)\n"
    verdict = CODE(f"```python\n{program}```", test=suite)
    assert verdict.status in ("wrong", "error") and not verdict.passed, verdict.detail
