"""Penalties that shape a reward: length, overlong, repetition, hedging across several answers.

Each public factory returns a small picklable callable with a readable repr and a ``name`` (its
component name in a ``Reward``). Calling one with ``(completion, verdict, num_tokens=None)``
returns a ``PenaltyOutcome``: an additive ``value`` (0 when it does not fire) and a ``detail`` that
names the unit it counted. Lengths are tokens when a tokenizer is given or the trainer passes the
exact count as the reserved reference key ``num_tokens``, characters otherwise. Repetition counts
tokens with a tokenizer, words otherwise.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

from passband.errors import UnknownNameError, did_you_mean
from passband.verifiers._repetition import plain_words, repeated_share, split_runs, worst_window
from passband.verifiers._text import visible
from passband.verifiers.verdict import Verdict

__all__ = [
    "PenaltyOutcome",
    "answer_hedging",
    "length_cap",
    "length_normalized",
    "ngram_repetition",
    "overlong",
    "repeated_paragraphs",
    "get_penalty",
    "penalty_names",
    "register_penalty",
]


@dataclass(frozen=True)
class PenaltyOutcome:
    """value: added to the total (<= 0 for a penalty); zero_total: a hard cap fired."""

    value: float
    detail: str = ""
    zero_total: bool = False


# ----------------------------------------------------------------------------- the registry
# Penalty *factories* by name, so a config file can say ``[reward.penalties.overlong]``.
_PENALTIES: dict[str, Callable[..., object]] = {}


def register_penalty(name: str, *, replace: bool = False) -> Callable[[Callable], Callable]:
    """Decorator on a factory ``(**options) -> penalty``; a duplicate name raises unless ``replace``."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"penalty name must be a non-empty string, got {name!r}")

    def decorator(factory: Callable) -> Callable:
        if name in _PENALTIES and not replace and _PENALTIES[name] is not factory:
            raise ValueError(
                f"a penalty named {name!r} is already registered; pick another name "
                "or pass replace=True"
            )
        _PENALTIES[name] = factory
        return factory

    return decorator


def get_penalty(name: str) -> Callable[..., object]:
    """The factory registered as ``name``; an unknown name raises and lists the known ones."""
    try:
        return _PENALTIES[name]
    except KeyError:
        known = penalty_names()
        raise UnknownNameError(
            f"unknown penalty {name!r} (known: {', '.join(known)}).{did_you_mean(name, known)}"
        ) from None


def penalty_names() -> list[str]:
    """Registered penalty names, built-ins first, in registration order."""
    return list(_PENALTIES)


@register_penalty("overlong")
def overlong(max_length: int, cache: int, *, weight: float = 1.0, tokenizer=None):
    """DAPO's soft overlong penalty: 0 up to ``max_length - cache``, then linear down to ``-weight``
    at ``max_length``, and ``-weight`` beyond it."""
    _positive_int("max_length", max_length)
    _positive_int("cache", cache)
    if cache > max_length:
        raise ValueError(f"cache must be <= max_length ({max_length}), got {cache}")
    _non_negative("weight", weight)
    return _Overlong(max_length, cache, weight, tokenizer)


@register_penalty("length_cap")
def length_cap(max_length: int, *, tokenizer=None):
    """Hard cap: a completion longer than ``max_length`` gets no reward: its total becomes at
    most 0 (a total already below 0 stays, so going past the cap is never a gain)."""
    _positive_int("max_length", max_length)
    return _LengthCap(max_length, tokenizer)


@register_penalty("length_normalized")
def length_normalized(target: int, *, weight: float = 0.5, tokenizer=None):
    """For correct answers only: 0 up to ``target`` length, then linearly down to ``-weight`` at
    twice the target. Wrong answers get 0, so brevity is never rewarded on its own. ``weight`` is
    at most 1, the correctness term's default reward, so a long right answer never scores below a
    wrong one (at 1.5 a right answer of twice the target scored -0.5 against a wrong one's 0).
    That holds where wrong answers score 0: ``Reward`` refuses it beside a primary that gives
    them partial credit (``code_verifier(partial_credit=True)``); a dataset's per-row
    ``partial_credit`` field, or a plain-number reward whose wrong answers score above 0, breaks
    it the same way and cannot be seen when the ``Reward`` is built. Which answers count as correct follows the
    success rule (``success_threshold`` for plain numbers), so in training that setting moves it."""
    _positive_int("target", target)
    _non_negative("weight", weight)
    if weight > 1:
        raise ValueError(
            f"weight must be at most 1 (the reward of a right answer), got {weight!r}: a larger "
            "one scores a long right answer below a wrong one"
        )
    return _LengthNormalized(target, weight, tokenizer)


@register_penalty("ngram_repetition")
def ngram_repetition(
    n: int = 4,
    *,
    threshold: float = 0.2,
    weight: float = 1.0,
    tokenizer=None,
    window: int | None = None,
):
    """Penalise the share of repeated n-grams above ``threshold``: ``-weight`` when every n-gram
    repeats, linear in between.

    The share is of n-grams that already appeared earlier in the completion. Words are compared
    lower-cased and without the punctuation around them, so "The cat sat." repeats "the cat sat!"
    (with a ``tokenizer``, those words are what is encoded). ``window=None``
    measures it over the whole completion, so a loop at the end of a long answer is diluted by
    the text before it: 600 varied words then a 10-word sentence 20 times over read as 25%
    repeated. ``window=W`` takes the worst run of ``W`` consecutive n-grams instead (the same
    completion: 100% at ``window=100``), so where the loop sits and how long its period is do
    not matter; a completion shorter than the window is measured whole."""
    _positive_int("n", n)
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold must be in [0, 1), got {threshold!r}")
    _non_negative("weight", weight)
    if window is not None:
        _positive_int("window", window)
    return _NgramRepetition(n, threshold, weight, tokenizer, window)


@register_penalty("repeated_paragraphs")
def repeated_paragraphs(*, min_chars: int = 20, weight: float = 1.0):
    """Penalise paragraphs (blank-line separated, at least ``min_chars`` long) that repeat an
    earlier one (up to whitespace, case and the punctuation around words):
    ``-weight * repeated / paragraphs``."""
    _positive_int("min_chars", min_chars)
    _non_negative("weight", weight)
    return _RepeatedParagraphs(min_chars, weight)


@register_penalty("answer_hedging")
def answer_hedging(max_distinct: int = 1, *, weight: float = 1.0, zero_total: bool = False):
    """Penalise completions stating more than ``max_distinct`` different final answers
    (``\\boxed{}``, "the answer is", ``Answer:`` lines, ``#### x``): ``-weight``, or no reward at all
    with ``zero_total=True`` (the total becomes at most 0)."""
    _positive_int("max_distinct", max_distinct)
    _non_negative("weight", weight)
    return _AnswerHedging(max_distinct, weight, zero_total)


# ----------------------------------------------------------------------------- the callables


class _Penalty:
    name = "penalty"
    tokenizer = None

    def _length(self, completion: str, num_tokens: int | None) -> tuple[int, str]:
        count = _count(num_tokens)  # numpy integers and 3000.0 count too
        if count is not None:
            return count, "tokens"
        if self.tokenizer is not None:
            return len(_encode(self.tokenizer, completion)), "tokens"
        return len(completion), "chars"

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k != "tokenizer")
        tok = ", tokenizer=..." if self.tokenizer is not None else ""
        return f"{self.name}({fields}{tok})"


class _LengthNormalized(_Penalty):
    name = "length_normalized"

    def __init__(self, target, weight, tokenizer):
        self.target, self.weight, self.tokenizer = target, weight, tokenizer

    def __call__(
        self, completion: str, verdict: Verdict, num_tokens: int | None = None
    ) -> PenaltyOutcome:
        length, unit = self._length(completion, num_tokens)
        if not verdict.passed:
            return PenaltyOutcome(0.0, f"not applied: answer not correct ({length} {unit})")
        excess = min(1.0, max(0.0, (length - self.target) / self.target))
        return PenaltyOutcome(-self.weight * excess, f"{length} {unit} vs target {self.target}")


class _Overlong(_Penalty):
    name = "overlong"

    def __init__(self, max_length, cache, weight, tokenizer):
        self.max_length, self.cache, self.weight, self.tokenizer = (
            max_length,
            cache,
            weight,
            tokenizer,
        )

    def __call__(
        self, completion: str, verdict: Verdict, num_tokens: int | None = None
    ) -> PenaltyOutcome:
        length, unit = self._length(completion, num_tokens)
        soft = self.max_length - self.cache
        if length <= soft:
            return PenaltyOutcome(0.0, f"{length} {unit} <= {soft}")
        share = min(1.0, (length - soft) / self.cache)
        return PenaltyOutcome(
            -self.weight * share, f"{length} {unit} > soft limit {soft} (max {self.max_length})"
        )


class _LengthCap(_Penalty):
    name = "length_cap"

    def __init__(self, max_length, tokenizer):
        self.max_length, self.tokenizer = max_length, tokenizer

    def __call__(
        self, completion: str, verdict: Verdict, num_tokens: int | None = None
    ) -> PenaltyOutcome:
        length, unit = self._length(completion, num_tokens)
        if length > self.max_length:
            return PenaltyOutcome(
                0.0, f"{length} {unit} > cap {self.max_length}: no reward (total at most 0)", True
            )
        return PenaltyOutcome(0.0, f"{length} {unit} <= cap {self.max_length}")


class _NgramRepetition(_Penalty):
    name = "ngram_repetition"

    def __init__(self, n, threshold, weight, tokenizer, window=None):
        self.n, self.threshold, self.weight, self.tokenizer = n, threshold, weight, tokenizer
        self.window = window

    def __call__(
        self, completion: str, verdict: Verdict, num_tokens: int | None = None
    ) -> PenaltyOutcome:
        # zero-width marks between words, case and the punctuation around a word must not
        # make a repeat look new ("The cat sat." / "the cat sat!")
        words = plain_words(visible(completion))
        if self.tokenizer is not None:
            units, unit = _encode(self.tokenizer, " ".join(words)), "tokens"
        else:
            units, unit = split_runs(words), "words"
        grams = [tuple(units[i : i + self.n]) for i in range(len(units) - self.n + 1)]
        if not grams:
            return PenaltyOutcome(0.0, f"fewer than {self.n} {unit}")
        if self.window is None or len(grams) <= self.window:
            repeated, where = 1.0 - len(set(grams)) / len(grams), ""
        else:
            repeated, start = worst_window(grams, self.window)
            where = f" in the worst {self.window} (from {unit[:-1]} {start})"
        share = max(0.0, (repeated - self.threshold) / (1.0 - self.threshold))
        return PenaltyOutcome(
            -self.weight * share, f"{repeated:.0%} of {self.n}-grams of {unit} repeated{where}"
        )


class _RepeatedParagraphs(_Penalty):
    name = "repeated_paragraphs"

    def __init__(self, min_chars, weight):
        self.min_chars, self.weight = min_chars, weight

    def __call__(
        self, completion: str, verdict: Verdict, num_tokens: int | None = None
    ) -> PenaltyOutcome:
        text = visible(completion).replace("\r\n", "\n").replace("\r", "\n")  # CRLF too
        # a line of spaces (no-break ones included) or of zero-width marks separates paragraphs,
        # and marks that draw nothing do not make a repeat look new (``repeated_share``)
        repeated, units, unit = repeated_share(text, self.min_chars)
        if not units:
            return PenaltyOutcome(0.0, "no paragraphs")
        detail = f"{repeated} of {units} {unit} repeat an earlier one"
        return PenaltyOutcome(-self.weight * repeated / units, detail)


class _AnswerHedging(_Penalty):
    name = "answer_hedging"

    def __init__(self, max_distinct, weight, zero_total):
        self.max_distinct, self.weight, self.zero_total = max_distinct, weight, zero_total

    def __call__(
        self, completion: str, verdict: Verdict, num_tokens: int | None = None
    ) -> PenaltyOutcome:
        from passband.verifiers._math_statements import candidate_answers, distinct_answers

        found = candidate_answers(completion)
        distinct = distinct_answers(found, most=self.max_distinct)
        over = "at least " if len(distinct) > self.max_distinct else ""
        detail = f"{over}{len(distinct)} distinct answers in {len(found)} statements"
        if len(distinct) <= self.max_distinct:
            return PenaltyOutcome(0.0, detail)
        shown = ", ".join(repr(a[:30]) for a in distinct[:5])
        return PenaltyOutcome(
            -self.weight, f"{detail} (> {self.max_distinct}): {shown}", self.zero_total
        )


def _encode(tokenizer, text: str) -> list:
    try:
        return list(tokenizer.encode(text, add_special_tokens=False))
    except TypeError:  # a tokenizer without that keyword
        return list(tokenizer.encode(text))


def _count(value) -> int | None:
    """``value`` as a token count: a whole number >= 0 of any numeric type, else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    if not math.isfinite(value) or value < 0 or value != int(value):
        return None
    return int(value)


def _positive_int(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _non_negative(name: str, value) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < math.inf:
        raise ValueError(f"{name} must be a number >= 0 and finite, got {value!r}")
