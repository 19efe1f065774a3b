r"""The ``math`` verifier: extract the final answer, compare it with the gold answer.

``get("math")(completion, answer=gold)`` works for GSM8K (``answer`` is the full solution ending in
``#### 42``), MATH (a LaTeX answer or a solution with ``\boxed{}``) and plain numbers.

Statuses: ``ok``/``wrong`` once an answer was found and compared; ``invalid`` when the completion
has no answer, or one too long or too malformed to parse; ``error`` when the gold answer is missing
or unparsable (the detail names the field); ``timeout`` when sympy ran past ``timeout`` seconds.

Exactness policy (a false positive trains the policy to be wrong; a false negative wastes a sample):

- Two exact inputs (integers, fractions, powers, factorials, binomials, radicals, pi, e) are
  compared exactly: Python fractions on the fast path; on the sympy path math-verify's verdict
  stands only if ``math_exact.contradicts`` cannot show the values differ, with sympy's exact
  rational arithmetic, 60-digit evaluation, or random rational points for unknowns. There is no
  tolerance between exact values: ``\frac{1}{5^{60}}`` is not ``\frac{1}{5^{61}}``.
- A tolerance applies only when an input is itself a decimal, which approximates: it must agree
  to one part in 10^5 and to half its own last written place (``0.333333`` is 1/3; ``0.0000014``
  is not ``0.000001``). Percent answers keep math-verify's rule (``25\%`` may be 25 or 0.25).
- A parse that stops midway (math-verify reads ``2 + \frac{1}{\mathrm{e}}`` as 2) is no parse;
  ``7\sqrt(3)`` is a root, never 7.
- Sequences with an ellipsis are compared term by term, ellipsis at the same places; never
  accepted on the ellipsis alone.

Multi-part answers, one rule (``math_rules``): several boxes side by side, labelled parts and "or"
lists are split into parts. Parts all labelled with one unknown (``x = -4 or x = 1``) form a *set*
(order free); distinct labels (``m = 3, n = 8``; ``PQ = 6, RS = 2``) form a *tuple*, matched label
by label when the gold has labels too, else in the order written (single letters alphabetically:
``y = 1, x = 2`` is the point ``(2, 1)``). Unlabelled parts follow the gold:
a bracketed gold ``(1, 2)`` is an ordered tuple, a bare list ``1, 2`` a set. Other forms: a
one-variable relation equals the interval it describes (``x \neq 2`` is ``(-\infty, 2) \cup (2,
\infty)``); equations are equal when math-verify finds the same solution set or a constant
multiple; ``i`` is the imaginary unit when the plain comparison fails (``\sqrt{-1}``, ``i^2``).

Speed: plain numbers and identical strings are decided in-process without sympy
(``math_equiv.fast_equal``). Everything else goes to math-verify in a killable worker through
``call_with_deadline`` - or inline when already inside a worker (``verify_batch``), whose own
deadline covers it. So a direct call from any thread returns within ``timeout`` (plus the IPC),
whatever the model wrote: waiting for a free worker counts against the same timeout (the very
first call of a process also starts the worker server, seconds that are not counted).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from passband.verifiers._deadline import (
    DeadlineExceeded,
    WorkerCrashed,
    call_with_deadline,
    in_worker,
)
from passband.verifiers._math_equiv import fast_equal, slow_compare
from passband.verifiers._math_extract import STRATEGIES, extract_gold, locate_answer
from passband.verifiers._math_guard import qualifier
from passband.verifiers._math_rules import align, open_chain
from passband.verifiers._math_shape import not_a_value
from passband.verifiers.registry import register
from passband.verifiers.verdict import Verdict

__all__ = ["MathConfig", "math_verifier"]

_FIELD = "answer"
_SELECTIONS = ("latest", "first")


@dataclass(frozen=True)
class MathConfig:
    """How the ``math`` verifier finds and compares answers."""

    strategies: tuple[str, ...] = STRATEGIES
    """Answer extractors to use, in priority order. Any of ``STRATEGIES``: the markers boxed,
    gsm8k (``#### 42``), answer_is, answer_line, then the fallbacks last_math, last_number."""
    selection: str = "latest"
    """``"latest"``: of the markers found, the one latest in the completion wins (the order breaks
    ties), and the fallbacks are tried in order only when no marker is found; ``"first"``: the
    first strategy in the order that finds something wins."""
    timeout: float = 3.0
    """Seconds the sympy / math-verify comparison may take (0 < timeout <= 600)."""
    max_completion_chars: int = 20_000
    """Only the last this many characters are searched (>= 100)."""
    max_answer_chars: int = 1_000
    """Longer extracted answers are ``invalid`` without parsing (>= 10)."""

    def __post_init__(self) -> None:
        strategies = (
            (self.strategies,) if isinstance(self.strategies, str) else tuple(self.strategies)
        )
        unknown = [s for s in strategies if s not in STRATEGIES]
        if not strategies or unknown:
            raise ValueError(
                f"strategies must be a non-empty subset of {STRATEGIES}, got {self.strategies!r}"
            )
        if len(set(strategies)) != len(strategies):
            raise ValueError(f"strategies must not repeat a name, got {strategies!r}")
        object.__setattr__(self, "strategies", strategies)
        if self.selection not in _SELECTIONS:
            raise ValueError(f"selection must be one of {_SELECTIONS}, got {self.selection!r}")
        if not isinstance(self.timeout, (int, float)) or not 0 < self.timeout <= 600:
            raise ValueError(f"timeout must be in (0, 600] seconds, got {self.timeout!r}")
        _check_int("max_completion_chars", self.max_completion_chars, 100)
        _check_int("max_answer_chars", self.max_answer_chars, 10)


def _check_int(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def math_verifier(
    strategies=STRATEGIES,
    *,
    selection: str = "latest",
    timeout: float = 3.0,
    max_completion_chars: int = 20_000,
    max_answer_chars: int = 1_000,
) -> _MathVerifier:
    """A picklable ``math`` verifier with its own extraction order and time limit.

    >>> strict = math_verifier(strategies=("boxed",), timeout=5.0)
    >>> strict("so the total is \\\\boxed{18}", answer="#### 18").status
    'ok'
    """
    strategies = strategies if isinstance(strategies, str) else tuple(strategies)
    return _MathVerifier(
        MathConfig(strategies, selection, timeout, max_completion_chars, max_answer_chars)
    )


class _MathVerifier:
    """``(completion, *, answer, **ignored) -> Verdict``; holds only its frozen config."""

    returns_verdict = True  # a Verdict for every answer: success_threshold decides nothing
    reference_fields = ("answer",)  # the trainer checks every row has it before training

    def __init__(self, config: MathConfig) -> None:
        self.config = config

    def __repr__(self) -> str:
        c = self.config
        return f"math_verifier(strategies={c.strategies!r}, selection={c.selection!r}, timeout={c.timeout:g})"

    def __eq__(self, other) -> bool:
        return isinstance(other, _MathVerifier) and other.config == self.config

    def __hash__(self) -> int:
        return hash(self.config)

    def __call__(self, completion, **reference) -> Verdict:
        try:
            return self._check(completion, reference)
        except Exception as exc:  # noqa: BLE001 - a verifier never raises on model output
            return Verdict.error(f"math verifier failed: {type(exc).__name__}: {exc}")

    def _check(self, completion, reference: dict) -> Verdict:
        cfg = self.config
        if _FIELD not in reference:
            return Verdict.error(
                f"reference field {_FIELD!r} is missing; pass the gold answer as {_FIELD}=..."
            )
        try:
            gold = extract_gold(reference[_FIELD], max_chars=cfg.max_completion_chars)
        except ValueError as exc:
            return Verdict.error(f"reference field {_FIELD!r} {exc}")
        if _unbalanced(gold):
            return Verdict.error(f"reference field {_FIELD!r} has unbalanced braces: {gold[:80]!r}")
        if not isinstance(completion, str):
            return Verdict.invalid(f"completion must be a string, got {type(completion).__name__}")
        found = locate_answer(
            completion,
            cfg.strategies,
            selection=cfg.selection,
            max_chars=cfg.max_completion_chars,
            max_answer_chars=cfg.max_answer_chars,
        )
        if found is None:
            return Verdict.invalid(f"no answer found (tried {', '.join(cfg.strategies)})")
        how, pred, where, searched = found
        if len(pred) > cfg.max_answer_chars:
            return Verdict.invalid(
                f"{how} answer is {len(pred)} characters; the limit is {cfg.max_answer_chars}"
            )
        shape = not_a_value(pred, gold)
        if shape is not None:  # "\geq 18", "3 +", "22_3": no value to compare, whatever the parse
            return Verdict.invalid(f"{how} answer {_short(pred)} {shape}")
        word = qualifier(searched, where, how, pred, gold)
        if word is not None:  # "not 42", "5 squared", "42 or 43", "42. Wait, ...": not 42
            return Verdict.wrong(
                f"{how}: {_short(pred)} is qualified by {word!r} in the completion"
            )
        gold, pred, same = align(gold, pred)
        if same is None and not open_chain(pred):  # "\\sqrt{4} = 3": sympy checks the link
            same = fast_equal(gold, pred)
        if same is not None:
            detail = f"{how}: {_short(pred)} {'=' if same else '!='} {_short(gold)}"
            return Verdict.ok(detail) if same else Verdict.wrong(detail)
        return self._slow(gold, pred, how)

    def _slow(self, gold: str, pred: str, how: str) -> Verdict:
        problem = _hopeless(pred)
        if problem:
            return Verdict.invalid(f"{how} answer {_short(pred)} {problem}")
        timeout = self.config.timeout
        try:
            if in_worker():  # the enclosing worker's deadline already bounds us
                status, detail = slow_compare(gold, pred)
            else:
                status, detail = call_with_deadline(
                    slow_compare, gold, pred, timeout=timeout, queue_counts=True
                )
        except DeadlineExceeded:
            return Verdict.timeout(
                f"comparing {_short(pred)} with the gold took over {timeout:g} s"
            )
        except WorkerCrashed as exc:  # e.g. sympy exhausting memory on a tower of powers
            return Verdict.invalid(f"the answer {_short(pred)} crashed the checker: {exc}")
        except RecursionError:
            return Verdict.invalid(f"the answer {_short(pred)} is nested too deeply to parse")
        if status == "error":  # the gold is at fault, not the completion
            return Verdict.error(detail)
        return Verdict(1.0 if status == "ok" else 0.0, status, f"{how}: {detail}")


# a^{b^c} with numbers: sympy evaluates it exactly, and 9^{9^{9}} already has 10^8 digits.
_MAX_FRACTIONS = 10  # a continued fraction 16 deep took sympy past 3 s
_TOO_BIG = [
    (re.compile(r"\^\s*\{?\s*\(?\s*-?\d{7,}"), "has an exponent too large to evaluate"),
    (  # a polynomial in two or more variables to the 20th power or more: its expansion runs on
        re.compile(
            r"\([^()]*(?<![\\A-Za-z])[a-z](?![A-Za-z])[^()]*(?<![\\A-Za-z])[a-z](?![A-Za-z])"
            r"[^()]*\)\s*\^\s*\{?\s*(?:[2-9]\d|\d{3,})"
        ),
        "raises an expression to a power too high to expand",
    ),
    (re.compile(r"\^\s*\{[^{}]*\^\s*\{[^{}]*\^"), "is a power tower too large to evaluate"),
    (re.compile(r"\^\s*\{?\s*\(?\s*\d{3,}\s*\)?\s*\^"), "is a power tower too large to evaluate"),
    (
        re.compile(r"\d{5,}\s*!|!\s*!\s*!|\([^()]*(?:\^|\d{5,})[^()]*\)\s*!"),
        "is a factorial too large to evaluate",
    ),
    (
        re.compile(r"\\(?:binom|dbinom|tbinom|Gamma|choose)\W{0,6}(?:[^{}()]*\^|\d{6,})"),
        "has a binomial or gamma too large to evaluate",
    ),
]
_TOWER_RE = re.compile(r"\d\s*\^\s*\{?\s*\(?\s*(\d+)\s*\)?\s*\^\s*\{?\s*\(?\s*(\d+)\s*(\)?\s*\^)?")
_MAX_DEPTH = 50


def _hopeless(pred: str) -> str | None:
    """Why sympy should not even try: broken braces, absurd nesting, a numeric power tower."""
    if _unbalanced(pred):
        return "has unbalanced braces"
    depth = deepest = 0
    for ch in pred:
        if ch in "{([":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "})]":
            depth -= 1
    if deepest > _MAX_DEPTH:
        return f"is nested {deepest} levels deep (limit {_MAX_DEPTH})"
    for tower in _TOWER_RE.finditer(pred):
        base, exp, higher = int(tower.group(1)[:6]), int(tower.group(2)[:6]), tower.group(3)
        if higher or exp * math.log10(max(base, 2)) > 5:  # inner power above 10^5
            return "is a power tower too large to evaluate"
    for pattern, why in _TOO_BIG:  # sympy would run past any time limit, and a masked timeout
        if pattern.search(pred):  # is no grade: the answer is not its plain value, so invalid
            return why
    if pred.count("\\frac") > _MAX_FRACTIONS:
        return f"has more than {_MAX_FRACTIONS} fractions"
    return None


def _unbalanced(text: str) -> bool:
    """Unbalanced ``{}`` (ignoring ``\\{``/``\\}``): no LaTeX parser makes sense of it."""
    depth = 0
    for ch in text.replace("\\{", "").replace("\\}", ""):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return True
    return depth != 0


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


register("math")(math_verifier())
