"""The code verifier after the stop-44 red team: two ways a wrong program escaped its zero
through a status training masks, each failing on the code before the fix.

1. Filling the run's files (tmpfs, charged to the memory cgroup its worker shares) and then its
   memory left a 128 MB row's worker no room once the program was killed: the worker was lost,
   an ``error``. The files now get at most half of ``memory_mb``.
2. A value of many fractions just under the size bound took the grader 12 s to rebuild (a gcd
   each), past the item's deadline: a ``timeout``. One value's fractions together are now bounded.
"""

from __future__ import annotations

import time

import pytest

from passband.verifiers import get

FILL_THEN_GROW = """
try:
    for i in range(256):
        with open('big%d' % (i // 32), 'ab') as f:
            f.write(b'x' * (1 << 20))
except OSError:
    pass
blocks = []
while True:
    blocks.append(bytearray(8 << 20))
"""


@pytest.mark.parametrize("memory_mb", [32, 128, 192])
def test_a_program_that_fills_its_files_then_its_memory_is_wrong_not_an_error(memory_mb):
    program = f"```python\n{FILL_THEN_GROW}\ndef add(a, b):\n    return a - b\n```"
    code = get("code")
    assert code(program, tests=["assert add(1, 2) == 3"], memory_mb=memory_mb).status == "wrong"
    io = [{"stdin": "1 2\n", "stdout": "3\n"}]
    assert code(program, io=io, memory_mb=memory_mb).status == "wrong"


def test_a_right_program_still_passes_at_a_small_memory_limit():
    program = "```python\ndef add(a, b):\n    return a + b\n```"
    assert get("code")(program, tests=["assert add(1, 2) == 3"], memory_mb=32).status == "ok"


def test_a_value_of_many_huge_fractions_is_the_programs_failure_not_a_stall():
    program = """```python
from fractions import Fraction
BIG = Fraction((1 << 99_000) + 1, (1 << 98_999) + 3)
def add(a, b):
    return [BIG] * 400
```"""
    start = time.perf_counter()
    verdict = get("code")(program, tests=["assert add(1, 2) == 3"], entry_point="add")
    assert verdict.status == "wrong" and "too large" in verdict.detail
    assert time.perf_counter() - start < 8.0


def test_a_few_fractions_are_still_returned_and_compared():
    program = """```python
from fractions import Fraction
def half(n):
    return [Fraction(k, 2) for k in range(n)]
```"""
    tests = ["from fractions import Fraction", "assert half(3) == [0, Fraction(1, 2), 1]"]
    assert get("code")(program, tests=tests).status == "ok"


def test_huge_fractions_spread_over_many_calls_are_bounded_together():
    """A regression review: bounded per reply, the budget could be spent again at every call."""
    program = """```python
from fractions import Fraction
BIG = Fraction((1 << 99_000) + 1, (1 << 98_999) + 3)
def add(a, b):
    return [BIG] * 60
```"""
    tests = ["assert [add(k, 1) for k in range(8)] == [k + 1 for k in range(8)]"]
    start = time.perf_counter()
    verdict = get("code")(program, tests=tests, entry_point="add")
    assert verdict.status == "wrong" and "too large together" in verdict.detail
    assert time.perf_counter() - start < 8.0


def test_many_exact_fractions_a_real_program_returns_still_pass():
    program = """```python
from fractions import Fraction
def convergents(n):
    out, p, q = [], 1, 1
    for _ in range(n):
        out.append(Fraction(p, q))
        p, q = p + 2 * q, p + q
    return out
```"""
    tests = ["from fractions import Fraction", "assert convergents(7000)[3] == Fraction(17, 12)"]
    assert get("code")(program, tests=tests).status == "ok"
