"""``io`` rows of the ``code`` verifier: run the program on each stdin, compare its stdout.

Only the program's stdout comes back from the sandbox; the expected output and the comparison stay
here. Outputs match when equal after dropping trailing whitespace on every line and trailing blank
lines, or, with ``float_tol``, token by token with numbers within that absolute/relative tolerance.
"""

from __future__ import annotations

import dataclasses
import math
import re
from decimal import Decimal

from passband.sandbox import SandboxError, default_pool
from passband.sandbox.build import COMPILE_LIMITS, compile_once
from passband.sandbox.languages import get_language
from passband.verifiers._code_harness import Check, HarnessFault

__all__ = ["grade_io", "outputs_match", "tail"]


def grade_io(program, cases, limits, language, tol, partial) -> tuple[list[Check], bool]:
    if not isinstance(cases, (list, tuple)) or not cases:
        raise HarnessFault(
            "reference field 'io' must be a non-empty list of {'stdin', 'stdout'} objects"
        )
    pool, checks, timed_out = default_pool(), [], False
    build = _built(program, language, pool)
    if build is not None and not build.ok:
        return [_unbuilt(build.result, i) for i in range(len(cases) if partial else 1)], False
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(
            case.get("stdout", case.get("output")), str
        ):
            raise HarnessFault(f"io case {i} must be an object with string 'stdin' and 'stdout'")
        want = case.get("stdout", case.get("output"))
        # the output cap must never fail a right answer: allow twice the expected output, at least
        cap = max(limits.max_output_bytes, 2 * len(want.encode("utf-8", "replace")) + (64 << 10))
        case_limits = dataclasses.replace(limits, max_output_bytes=min(cap, 1 << 30))
        stdin = str(case.get("stdin") or "")
        if build is not None:
            result = build.run(stdin=stdin, limits=case_limits, pool=pool)
        else:
            result = pool.run(program, stdin=stdin, limits=case_limits, language=language)
        if result.setup_error:
            raise SandboxError(result.setup_error)
        label = f"io case {i}"
        if result.timed_out:
            timed_out = True
            checks.append(Check(label, False, "gone", "timed out"))
        elif result.stdout_truncated:
            checks.append(
                Check(label, False, "wrong", "output exceeded the cap (twice the expected size)")
            )
        elif result.exit_code != 0:
            kind = (
                "memory limit exceeded"
                if result.memory_exceeded
                else f"exit code {result.exit_code}"
            )
            checks.append(Check(label, False, "wrong", f"{kind}: {tail(result.stderr)}"))
        elif not outputs_match(result.stdout, want, tol):
            checks.append(
                Check(label, False, "wrong", f"output differs: got {tail(result.stdout, 80)!r}")
            )
        else:
            checks.append(Check(label, True))
        if not partial and not checks[-1].passed:
            break
    return checks, timed_out


def _built(program, language, pool):
    """The program compiled once (a language with an artifact: C, C++), else None: it runs as
    it is (Python) or compiles inside each run (a language without an artifact)."""
    lang = get_language(language)
    if not lang.artifact:
        return None
    build = compile_once(program, lang, pool=pool)
    if build.result.setup_error:
        raise SandboxError(build.result.setup_error)
    return build


def _unbuilt(result, i: int) -> Check:
    """Case ``i``'s failed check when the program did not compile: a wrong answer, with why."""
    why = (
        f"timed out after {COMPILE_LIMITS.timeout_s:g} s"
        if result.timed_out
        else "ran out of memory"
        if result.memory_exceeded
        else f"exit code {result.exit_code}"
    )
    return Check(f"io case {i}", False, "wrong", f"compile failed ({why}): {tail(result.stderr)}")


def outputs_match(got: str, want: str, float_tol: float | None = None) -> bool:
    """Equal up to trailing whitespace per line and trailing blank lines; numbers within float_tol."""
    g, w = _lines(got), _lines(want)
    if g == w:
        return True
    if float_tol is None or len(g) != len(w):
        return False
    for gl, wl in zip(g, w):
        gt, wt = gl.split(), wl.split()
        if len(gt) != len(wt) or not all(a == b or _close(a, b, float_tol) for a, b in zip(gt, wt)):
            return False
    return True


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").rstrip().split("\n")]


_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _close(a: str, b: str, tol: float) -> bool:
    """Within ``tol`` when both tokens are plain numbers and the expected one, ``b``, is written as
    a real number (a point or an exponent); an expected integer (a count) must be equal exactly
    (``3.0`` is 3, ``1000001`` is not 1000000); Python's extra spellings (``1_000``, ``inf``) are
    not numbers here."""
    if not (_NUMBER.fullmatch(a) and _NUMBER.fullmatch(b)):
        return False
    if not re.search(r"[.eE]", b):
        return Decimal(a) == Decimal(b)
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return False
    return abs(x - y) <= tol * max(1.0, abs(y))


def tail(text: str, n: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]
