"""Conformance kit: ``check_verifier(fn)`` tells a verifier author what the rest of passband assumes.

It checks that the verifier
- returns a ``Verdict``, a bool or a finite number (the score in range) and never raises, on
  hostile strings: empty,
  100,000 characters, lone surrogates, NUL bytes, malformed LaTeX, towers of exponents, deep nesting;
- is deterministic: the same input twice gives the same verdict;
- is picklable, so ``verify_batch`` can run it in worker processes with hard timeouts;
- answers each input within its time bound.

Inputs run in a killable worker, so a verifier that hangs or crashes the interpreter is reported,
not suffered; an unpicklable one runs inline in a thread (a hang is then abandoned, not killed).
"""

from __future__ import annotations

import math
import numbers
import pickle
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from passband.verifiers import _deadline
from passband.verifiers._coerce import as_verdict, plain_value
from passband.verifiers._from_trl import adapted
from passband.verifiers.verdict import Verdict

__all__ = ["ConformanceReport", "HOSTILE_COMPLETIONS", "check_verifier"]

HOSTILE_COMPLETIONS: tuple[str, ...] = (
    "",
    " \n\t ",
    "\x00\x01\x02\x1b[31m",
    "\ud800 lone surrogate \udfff",
    "é" * 10 + "\u202e RTL \u0301\u200b zero-width 🙂" * 20,
    "x" * 100_000,
    "The answer is " + "9" * 5000,
    "\\boxed{" * 2000,
    "}" * 3000 + "{" * 3000,
    "\\boxed{9^{9^{9^{9^{9}}}}}",
    "\\boxed{\\frac{1}{0}}",
    "\\frac{\\sqrt{}}{}{}{\\left( \\right] \\begin{matrix}",
    "$$ \\int_0^\\infty e^{-x^{99999}} dx $$",
    "(" * 5000 + ")" * 5000,
    "[" * 100_000,
    '{"a": ' * 20_000,
    "NaN Infinity -Infinity 1e999999 -0.0",
    "<think>" * 1000 + "</answer>",
    "```json\n{'single': 'quotes',}\n```",
    "```\n" * 500,
    "#### \n#### \n####",
    "Answer: \\boxed{}",
    "((a+)+)+$ " * 50 + "!",
    "\\" * 10_000,
)


@dataclass
class ConformanceReport:
    """What ``check_verifier`` found. ``ok`` is True when ``failures`` is empty."""

    verifier: str
    checks: int = 0
    failures: list[str] = field(default_factory=list)
    slowest_s: float = 0.0
    picklable: bool = True

    @property
    def ok(self) -> bool:
        return not self.failures

    def __str__(self) -> str:
        head = f"check_verifier({self.verifier}): {self.checks} checks, {len(self.failures)} failed"
        head += f", slowest input {self.slowest_s:.2f} s"
        return "\n".join([head] + [f"  - {f}" for f in self.failures])


MAX_SLOW = 3  # inputs past the time bound before the check stops (a hang costs that many)


def check_verifier(
    fn: Callable[..., object],
    reference: Mapping[str, object] | None = None,
    *,
    completions: Iterable[str] = HOSTILE_COMPLETIONS,
    timeout: float = 5.0,
    score_range: tuple[float, float] | None = (0.0, 1.0),
    strict: bool = True,
) -> ConformanceReport:
    """Run the conformance checks on ``fn(completion, **reference)`` (a TRL reward function as
    ``from_trl_reward`` calls it).

    reference: the reference fields to call it with (e.g. ``{"answer": "42"}``).
    timeout: the time bound per input, in seconds.
    score_range: allowed scores (``None`` to skip, e.g. for a shaped ``Reward``).
    strict: raise ``AssertionError`` listing every failure (default), or return the report.
    """
    report = ConformanceReport(verifier=_label(fn))
    declared = getattr(fn, "returns_verdict", False) is True  # the success rule trusts it
    fn = adapted(fn)  # checked as passband calls it
    reference = dict(reference or {})
    runner = _inline_runner
    if _picklable(fn, report):
        runner = _worker_runner
        _deadline.warm_up(1)  # a cold worker's start-up is not the verifier's time
    texts, slow = list(completions), 0
    for k, text in enumerate(texts):
        first, elapsed = runner(fn, text, reference, timeout)
        report.slowest_s = max(report.slowest_s, elapsed)
        report.checks += 1
        slow += first[0] == "slow"
        if slow == MAX_SLOW and k + 1 < len(texts):  # a hang: the rest would only wait as long
            report.failures.append(
                f"input {_show(text)}: {first[1]}; stopped after {MAX_SLOW} inputs ran past "
                f"the {timeout:g} s bound, {len(texts) - k - 1} inputs not checked"
            )
            break
        problem = _problem(first, score_range)
        if problem is None and declared and first[0] == "plain":
            problem = (
                f"returned the plain number {first[1].score!r} but declares returns_verdict = "
                "True, so pass rates would ignore success_threshold; return a Verdict or drop it"
            )
        if problem is None:
            again, _ = runner(fn, text, reference, timeout)
            report.checks += 1
            if not _same(first, again):
                problem = f"not deterministic: {first!r} then {again!r}"
        if problem:
            report.failures.append(f"input {_show(text)}: {problem}")
    if strict and report.failures:
        raise AssertionError(str(report))
    return report


def _picklable(fn, report: ConformanceReport) -> bool:
    report.checks += 1
    try:
        pickle.loads(pickle.dumps(fn))
    except Exception as exc:
        report.picklable = False
        report.failures.append(
            f"not picklable ({type(exc).__name__}: {exc}); verify_batch cannot give it hard timeouts. "
            "Use a top-level function, or a factory returning an instance of a top-level class"
        )
        return False
    return True


def _probe(fn, text: str, reference: dict):
    """Runs in the worker: the verdict, or what went wrong instead of one."""
    try:
        out = plain_value(fn(text, **reference))  # a NumPy / torch number is a number
    except BaseException as exc:  # noqa: BLE001 - reporting it is the point
        return ("raised", f"{type(exc).__name__}: {str(exc)[:200]}")
    if isinstance(out, Verdict):
        return ("verdict", out)
    if isinstance(out, bool) or (isinstance(out, numbers.Real) and math.isfinite(out)):
        return ("plain", as_verdict(out))  # a plain reward: the trainer takes it as this Verdict
    if isinstance(out, numbers.Real):
        return ("raised", f"returned the non-finite number {out}")
    return ("type", type(out).__name__)


def _worker_runner(fn, text, reference, timeout):
    start = time.monotonic()
    try:
        result = _deadline.call_with_deadline(_probe, fn, text, reference, timeout=timeout)
    except _deadline.DeadlineExceeded:
        result = ("slow", f"no answer within {timeout:g} s (worker killed)")
    except _deadline.WorkerCrashed as exc:
        result = ("crashed", str(exc))
    except _deadline.NotPortable as exc:
        result = ("raised", f"cannot run in a worker: {exc}")
    return result, time.monotonic() - start


def _inline_runner(fn, text, reference, timeout):
    box: list = []
    thread = threading.Thread(target=lambda: box.append(_probe(fn, text, reference)), daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(timeout)
    elapsed = time.monotonic() - start
    return (box[0] if box else ("slow", f"no answer within {timeout:g} s (still running)")), elapsed


def _problem(result, score_range) -> str | None:
    kind, value = result
    if kind == "raised":
        return value if value.startswith(("returned", "cannot run")) else f"raised {value}"
    if kind == "type":
        return f"returned {value}, not a Verdict, a bool or a finite number"
    if kind in ("slow", "crashed"):
        return value  # else a verdict, or a plain number as one
    if not math.isfinite(value.score):
        return f"score {value.score} is not finite"
    if score_range and not score_range[0] <= value.score <= score_range[1]:
        return f"score {value.score} outside [{score_range[0]}, {score_range[1]}]"
    return None


def _same(a, b) -> bool:
    return (
        a[0] == b[0] and (a[1].score, a[1].status) == (b[1].score, b[1].status)
        if a[0] in ("verdict", "plain")
        else a == b
    )


def _show(text: str) -> str:
    shown = repr(text[:40]) + (f"... ({len(text)} chars)" if len(text) > 40 else "")
    return shown


def _label(fn) -> str:
    return getattr(fn, "__name__", None) or repr(fn)
