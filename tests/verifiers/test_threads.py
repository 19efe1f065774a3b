"""Built-in verifiers called directly from many threads, as a reward function inside another
trainer is: correct answers stay correct, hostile ones are cut off, and no call hangs.

Each test would fail on the bug it names: a deadline that started before a sandbox worker was free
graded queued correct programs "wrong" ("the program stopped answering"), and a caller waiting for
an idle worker while another caller's worker was killed waited forever.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from passband.verifiers import get
from passband.verifiers._deadline import warm_up

THREADS = 16
_ADD = "```python\ndef add(a, b):\n    return a + b\n```"
_LOOP = "```python\ndef add(a, b):\n    while True:\n        pass\n```"
_TESTS = {"tests": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]}


def _all(calls, threads: int = THREADS, limit_s: float = 120.0) -> list:
    """Run ``calls`` (functions of no argument) from ``threads`` threads; a call that never
    returns fails the test after ``limit_s`` instead of hanging it."""
    pool = ThreadPoolExecutor(threads)
    try:
        futures = [pool.submit(call) for call in calls]
        return [f.result(timeout=limit_s) for f in futures]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _timed(fn, *args, **kwargs):
    start = time.monotonic()
    verdict = fn(*args, **kwargs)
    return verdict, time.monotonic() - start


def test_correct_programs_from_16_threads_are_all_ok():
    code = get("code")
    results = _all([lambda: _timed(code, _ADD, **_TESTS, timeout_s=2)] * 40)
    statuses = [v.status for v, _ in results]
    assert statuses == ["ok"] * 40, [v.detail for v, _ in results if v.status != "ok"][:3]


def test_infinite_loops_from_16_threads_all_run_out_of_time_and_none_hangs():
    """More loops than the pool has workers times the grace: late callers queue for longer than
    ``timeout_s`` + grace, which must not count against their program, correct or not."""
    code = get("code")
    jobs = [_LOOP, _ADD] * 12
    results = _all([lambda job=job: _timed(code, job, **_TESTS, timeout_s=1) for job in jobs])
    loops, good = results[0::2], results[1::2]
    assert [v.status for v, _ in loops] == ["wrong"] * 12, [v.detail for v, _ in loops]
    assert all("ran out of time" in v.detail for v, _ in loops)  # graded, not masked
    assert [v.status for v, _ in good] == ["ok"] * 12, [v.detail for v, _ in good]


def test_math_from_16_threads_each_call_within_its_limit():
    """Fails without the warmed forkserver (sympy's first simplify in each fresh worker took a
    second of the first call's deadline) and without the queue counted against the timeout."""
    math = get("math")
    warm_up(1)  # the one-time start of the worker server is not what this measures
    # symbolic answers go to the sympy workers; the last one is hostile (a huge exact power)
    cases = [
        (r"\boxed{\frac{\sqrt{2}}{2}}", r"\frac{1}{\sqrt{2}}"),
        (r"\boxed{x^2 + 2x + 1}", r"(x+1)^2"),
        (r"\boxed{2^{2^{2^{2^{2}}}} - 1}", "7"),
    ] * 16
    results = _all([lambda c=c: _timed(math, c[0], answer=c[1]) for c in cases])
    slowest = max(seconds for _, seconds in results)
    assert slowest < 3.0 + 1.5, slowest  # the default 3 s limit plus a small margin
    for (verdict, _), (completion, _) in zip(results, cases):
        expected = (
            ("ok",)
            if "sqrt" in completion or "x^2" in completion
            else ("wrong", "invalid", "timeout")
        )
        assert verdict.status in expected, (completion, verdict)  # easy answers do not time out


@pytest.mark.parametrize("threads", [1, THREADS])
def test_json_schema_redos_pattern_answered_within_its_limit(threads):
    verifier = get("json_schema")
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    completion = '{"s": "' + "a" * 40 + '!"}'
    results = _all([lambda: _timed(verifier, completion, schema=schema)] * threads, threads)
    for verdict, seconds in results:
        # no match after the pattern's own budget; a thread that waited out the queue: timeout
        assert verdict.status == ("wrong" if threads == 1 else verdict.status), verdict
        assert verdict.status in ("wrong", "timeout") and verdict.score == 0.0, verdict
        assert seconds < 5.0 + 1.5, seconds
