"""Exact values of the answer shapes that need no sympy, for ``math_equiv.fast_equal``.

``exact_value(text)`` reads a normalised answer as a tagged tuple, or None when it is anything
else (then math-verify decides). Every reader accepts only a narrow, unambiguous shape: a wrong
``None`` costs a few milliseconds of sympy, a wrong value costs a wrong reward.

Shapes: plain numbers with optional percent and unit words (``$1,000``, ``12.00``, ``25%``,
``18 dollars``), fractions (``\\frac{3}{4}``, ``3/4``), mixed numbers (``1 1/2``, ``2\\frac{1}{4}``),
repeating decimals (``0.\\overline{3}``), number words (``three bolts``), small exact powers
(``7 \\times 10^4``, ``2^{10}``, ``5!``, ``\\binom{10}{3}``), surds (``2\\sqrt{2}``,
``\\frac{\\sqrt{3}}{2}``), complex numbers ``a + bi`` (these single numbers are read in
``_math_numbers``), choices ``(C)`` / ``(B) 12``, words ``\\text{Devon}``, matrices, sets, bare
lists (``3 and 5``, ``\\pm 2``), tuples, intervals of numbers and the one-variable inequalities
that describe them (``x \\le 2``, ``-1 < x \\le 3``).
"""

from __future__ import annotations

import re
from fractions import Fraction

from passband.verifiers._math_numbers import (
    MATH_WORDS,
    NUM_RE,
    complex_number,
    number,
    numbers_equal,
    pi_multiple,
    plain_number,
    surd,
)

__all__ = ["exact_value", "values_equal"]

_AND_RE = re.compile(r"\s+(?:and|or)\s+")
_PM_RE = re.compile(r"\\pm\s*(.+)")
_INEQ = r"(<|>|\\le|\\leq|\\ge|\\geq|\\lt|\\gt|≤|≥|<=|>=)"
_INEQ_RE = re.compile(rf"[a-z]\s*{_INEQ}\s*(?P<b>[-+]?\d+(?:\.\d+)?)")
_RANGE_RE = re.compile(
    rf"(?P<a>[-+]?\d+(?:\.\d+)?)\s*{_INEQ}\s*[a-z]\s*{_INEQ}\s*(?P<b>[-+]?\d+(?:\.\d+)?)"
)
_CHOICE_RE = re.compile(
    r"\(?([A-E])\)?|\(([A-E])\)\s+[^()\s].{0,40}"
)  # "(B) 12": AMC's letter and value
OTHER_CHOICE_RE = re.compile(r"\(\s*[A-E]\s*\)|\b(?:or|and)\s+[A-E]\b|/")
_WORDS_RE = re.compile(r"[A-Za-z]{3,}(?: [A-Za-z]{2,})*|[A-Za-z]{2,}(?: [A-Za-z]{2,})+")
_MATRIX_RE = re.compile(r"\\begin\{([pbB]?matrix)\}(.*)\\end\{\1\}", re.DOTALL)
_INFINITIES = {
    "\\infty": float("inf"),
    "+\\infty": float("inf"),
    "-\\infty": float("-inf"),
    "∞": float("inf"),
    "-∞": float("-inf"),
    "inf": float("inf"),
    "-inf": float("-inf"),
}


def exact_value(text: str) -> tuple | None:
    """``(kind, ...)`` for a shape in this module's list, else None."""
    for reader in (
        number,
        surd,
        pi_multiple,
        complex_number,
        _choice,
        _words,
        _matrix,
        _inequality,
        _collection,
    ):
        value = reader(text)
        if value is not None:
            return value
    return None


def values_equal(gold: tuple, pred: tuple) -> bool | None:
    """Exact comparison of two ``exact_value`` results; None when the kinds differ."""
    if gold[0] != pred[0]:
        if {gold[0], pred[0]} <= {"num", "set", "seq", "matrix"}:
            return False  # one number is never a list, a tuple or a matrix ("8,5" is not 8.5)
        return None  # e.g. a surd vs a decimal: math-verify's rounding rules decide
    if gold[0] == "num":
        return numbers_equal(gold, pred)
    return gold == pred


def _choice(text: str) -> tuple | None:
    match = _CHOICE_RE.fullmatch(text)
    if not match or (match.group(2) and OTHER_CHOICE_RE.search(text, match.end(2) + 1)):
        return None  # "(A) or (C)", "(B) 12 or (C) 15": two letters are a hedge, not a choice
    return "choice", match.group(1) or match.group(2)


def _words(text: str) -> tuple | None:
    """``("words", lowercased)`` for names and phrases like ``Devon`` or ``no solution``."""
    if not _WORDS_RE.fullmatch(text) or set(text.lower().split()) & MATH_WORDS:
        return None
    return "words", text.lower()


def _matrix(text: str) -> tuple | None:
    match = _MATRIX_RE.fullmatch(text)
    if not match:
        return None
    rows = []
    for row in match.group(2).strip().split("\\\\"):
        if not row.strip():
            continue
        cells = [plain_number(cell.strip()) for cell in row.split("&")]
        if any(cell is None for cell in cells):
            return None
        rows.append(tuple(cells))
    return ("matrix", tuple(rows)) if rows else None


def _inequality(text: str) -> tuple | None:
    """``x \\le 2`` / ``-1 < x \\le 3`` as the interval it describes (one variable, numeric bounds)."""
    match = _RANGE_RE.fullmatch(text)
    if match and match.group(2)[0] in "<\\≤" and match.group(3)[0] in "<\\≤":
        ops = (match.group(2), match.group(3))
        if any(op.startswith(("\\g", ">", "≥")) for op in ops):
            return None
        low, high = Fraction(match.group("a")), Fraction(match.group("b"))
        return (
            "seq",
            ("(" if _strict(ops[0]) else "[") + (")" if _strict(ops[1]) else "]"),
            (low, high),
        )
    match = _INEQ_RE.fullmatch(text)
    if not match:
        return None
    op, bound = match.group(1), Fraction(match.group("b"))
    if op.startswith(("<", "\\l", "≤")):
        return "seq", "(" + (")" if _strict(op) else "]"), (float("-inf"), bound)
    return "seq", ("(" if _strict(op) else "[") + ")", (bound, float("inf"))


def _strict(op: str) -> bool:
    return op in ("<", ">", "\\lt", "\\gt")


def _collection(text: str) -> tuple | None:
    """Sets ``\\{1, 2\\}`` and bare lists ``1, 2`` (unordered); tuples and intervals (ordered)."""
    if text.startswith("\\{") and text.endswith("\\}"):
        items = _items(text[2:-2])
        return None if items is None else ("set", frozenset(items))
    if text[:1] in "([" and text[-1:] in ")]":
        items = _items(text[1:-1])
        return (
            None if items is None or len(items) < 2 else ("seq", text[0] + text[-1], tuple(items))
        )
    pm = _PM_RE.fullmatch(text)  # "\\pm 2": both signs
    if pm and plain_number(pm.group(1)) is not None:
        value = plain_number(pm.group(1))
        return "set", frozenset({value, -value})
    text = _AND_RE.sub(",", text)  # "3 and 5"
    if "," in text and not NUM_RE.fullmatch(text):
        items = _items(text)
        return None if items is None or len(items) < 2 else ("set", frozenset(items))
    return None


def _items(body: str) -> list | None:
    items = []
    for part in body.split(","):
        part = part.strip()
        value = _INFINITIES.get(part)
        if value is None:
            value = plain_number(part) if part else None
        if value is None:
            return None
        items.append(value)
    return items
