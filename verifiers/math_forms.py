"""Exact values of the answer shapes that need no sympy, for ``math_equiv.fast_equal``.

``exact_value(text)`` reads a normalised answer as a tagged tuple, or None when it is anything
else (then math-verify decides). Every reader accepts only a narrow, unambiguous shape: a wrong
``None`` costs a few milliseconds of sympy, a wrong value costs a wrong reward.

Shapes: plain numbers with optional percent and unit words (``$1,000``, ``12.00``, ``25%``,
``18 dollars``), fractions (``\\frac{3}{4}``, ``3/4``), surds (``2\\sqrt{2}``, ``\\frac{\\sqrt{3}}{2}``),
complex numbers ``a + bi``, choices ``(C)``, words ``\\text{Devon}``, matrices, sets, bare lists,
tuples and intervals of numbers.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["exact_value", "values_equal"]

_NUM_RE = re.compile(
    r"(?P<sign>[-+]?)\s*(?P<int>\d{1,3}(?:,\d{3})+|\d+)?(?P<dec>\.\d+)?\s*(?P<pct>%)?"
    r"\s*(?P<unit>[A-Za-z][A-Za-z .'\-/]*?(?:\^\{?\d\}?|[²³])?)?\s*"
)
_LATEX_FRAC_RE = re.compile(r"(?P<sign>[-+]?)\s*\\frac\s*(?:\{\s*(-?\d+)\s*\}|(\d))\s*(?:\{\s*(\d+)\s*\}|(\d))")
_SLASH_FRAC_RE = re.compile(r"(?P<sign>[-+]?)\s*(\d+)\s*/\s*(\d+)")
_RAD = r"\\sqrt\s*(?:\{\s*(?P<rad>\d+)\s*\}|(?P<rad1>\d))"
_SURD_RES = (
    re.compile(rf"(?P<sign>[-+]?)\s*(?P<coef>\d+)?\s*(?:\\cdot|\*)?\s*{_RAD}"),
    re.compile(rf"(?P<sign>[-+]?)\s*\\frac\s*\{{\s*(?P<coef>\d+)?\s*{_RAD}\s*\}}\s*\{{\s*(?P<den>\d+)\s*\}}"),
    re.compile(rf"(?P<sign>[-+]?)\s*\\frac\s*\{{\s*(?P<coef>\d+)\s*\}}\s*\{{\s*(?P<den>\d+)\s*\}}\s*{_RAD}"),
)
_REAL = r"\d+(?:\.\d+)?"
_COMPLEX_RE = re.compile(rf"(?P<re>[-+]?{_REAL})\s*(?P<sign>[-+])\s*(?P<im>{_REAL})?\s*(?:\\cdot)?\s*i")
_IMAG_RE = re.compile(rf"(?P<sign>[-+]?)\s*(?P<im>{_REAL})?\s*(?:\\cdot)?\s*i")
_CHOICE_RE = re.compile(r"\(?([A-E])\)?")
_WORDS_RE = re.compile(r"[A-Za-z]{3,}(?: [A-Za-z]{3,})*")
_MATRIX_RE = re.compile(r"\\begin\{([pbB]?matrix)\}(.*)\\end\{\1\}", re.DOTALL)
# Words that are mathematics, not units or names: "2 pi" is not 2, "\text{sin}" is not a word.
_MATH_WORDS = {"pi", "sqrt", "e", "i", "inf", "infty", "ln", "log", "sin", "cos", "tan", "exp",
               "mod", "choose", "cdot", "times", "div", "frac", "and", "or", "to", "plus", "minus"}
_INFINITIES = {"\\infty": float("inf"), "+\\infty": float("inf"), "-\\infty": float("-inf"), "∞": float("inf"),
               "-∞": float("-inf"), "inf": float("inf"), "-inf": float("-inf")}
_MAX_DIGITS = 400
_MAX_RADICAND = 10**8


def exact_value(text: str) -> tuple | None:
    """``(kind, ...)`` for a shape in this module's list, else None."""
    for reader in (_number, _surd, _complex, _choice, _words, _matrix, _collection):
        value = reader(text)
        if value is not None:
            return value
    return None


def values_equal(gold: tuple, pred: tuple) -> bool | None:
    """Exact comparison of two ``exact_value`` results; None when the kinds differ."""
    if gold[0] != pred[0]:
        return None  # e.g. a surd vs a decimal: math-verify's rounding rules decide
    if gold[0] == "num":
        return _numbers_equal(gold, pred)
    return gold == pred


def _number(text: str) -> tuple | None:
    """``("num", value, is_percent, is_decimal)`` for a plain number with optional unit words."""
    for regex in (_LATEX_FRAC_RE, _SLASH_FRAC_RE):
        match = regex.fullmatch(text)
        if match:
            num, den = [int(x) for x in match.groups()[1:] if x is not None]
            if den == 0:
                return None
            value = Fraction(num, den)
            return "num", (-value if match.group("sign") == "-" else value), False, False
    match = _NUM_RE.fullmatch(text)
    if not match or not (match.group("int") or match.group("dec")):
        return None
    unit = (match.group("unit") or "").strip()
    if unit and (len(unit.split()[0]) < 2 or set(re.split(r"[\s.\-/^{}\d]+", unit.lower())) & _MATH_WORDS):
        return None
    digits = (match.group("int") or "0").replace(",", "") + (match.group("dec") or "")
    if len(digits) > _MAX_DIGITS:
        return None
    value = Fraction(digits)
    return "num", (-value if match.group("sign") == "-" else value), bool(match.group("pct")), bool(match.group("dec"))


def _numbers_equal(gold: tuple, pred: tuple) -> bool:
    """Exact equality; a percent on one side only may mean either ``25`` or ``0.25``."""
    (_, g, g_pct, g_dec), (_, p, p_pct, p_dec) = gold, pred
    if g_pct == p_pct:
        same = g == p
    else:
        pct_value, other = (g, p) if g_pct else (p, g)
        same = other == pct_value or other == pct_value / 100
    if not same and g_dec != p_dec and (_repeats(g) or _repeats(p)):
        # No decimal equals 1/3, but math-verify rounds to 6 places and accepts 0.333333;
        # whether a rounded decimal counts is its call, so the fast path stays out of it.
        return None
    return same


def _repeats(value: Fraction) -> bool:
    den = value.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    return den != 1


def _plain_number(text: str) -> Fraction | None:
    """A number with no percent and no units (an element of a tuple, matrix or complex number)."""
    if re.search(r"[A-Za-z%]", text.replace("\\frac", "")):
        return None
    value = _number(text)
    return None if value is None else value[1]


def _surd(text: str) -> tuple | None:
    """``("surd", coefficient, squarefree radicand)``: ``\\sqrt{8}`` and ``2\\sqrt{2}`` agree."""
    match = next((m for m in (r.fullmatch(text) for r in _SURD_RES) if m), None)
    if not match:
        return None
    parts = match.groupdict()
    radicand = int(parts["rad"] or parts["rad1"])
    den = int(parts.get("den") or 1)
    if radicand > _MAX_RADICAND or den == 0:
        return None
    square, free = _split_square(radicand)
    coef = Fraction(int(parts["coef"] or 1) * square, den)
    if free == 1:  # a perfect square is a rational: leave it to math-verify rather than guess
        return None
    return "surd", (-coef if parts["sign"] == "-" else coef), free


def _split_square(n: int) -> tuple[int, int]:
    """``n = k**2 * m`` with ``m`` squarefree: returns ``(k, m)``."""
    k, m, f = 1, n, 2
    while f * f <= m:
        while m % (f * f) == 0:
            m //= f * f
            k *= f
        f += 1
    return k, m


def _complex(text: str) -> tuple | None:
    """``("complex", re, im)`` for ``a + bi``, ``a - i``, ``bi``, ``-i``."""
    match = _COMPLEX_RE.fullmatch(text)
    real = Fraction(match.group("re")) if match else Fraction(0)
    match = match or _IMAG_RE.fullmatch(text)
    if not match:
        return None
    imag = Fraction(match.group("im") or 1)
    return "complex", real, (-imag if match.group("sign") == "-" else imag)


def _choice(text: str) -> tuple | None:
    match = _CHOICE_RE.fullmatch(text)
    return ("choice", match.group(1)) if match else None


def _words(text: str) -> tuple | None:
    """``("words", lowercased)`` for names and phrases like ``Devon`` or ``no solution``."""
    if not _WORDS_RE.fullmatch(text) or set(text.lower().split()) & _MATH_WORDS:
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
        cells = [_plain_number(cell.strip()) for cell in row.split("&")]
        if any(cell is None for cell in cells):
            return None
        rows.append(tuple(cells))
    return ("matrix", tuple(rows)) if rows else None


def _collection(text: str) -> tuple | None:
    """Sets ``\\{1, 2\\}`` and bare lists ``1, 2`` (unordered); tuples and intervals (ordered)."""
    if text.startswith("\\{") and text.endswith("\\}"):
        items = _items(text[2:-2])
        return None if items is None else ("set", frozenset(items))
    if text[:1] in "([" and text[-1:] in ")]":
        items = _items(text[1:-1])
        return None if items is None or len(items) < 2 else ("seq", text[0] + text[-1], tuple(items))
    if "," in text and not _NUM_RE.fullmatch(text):
        items = _items(text)
        return None if items is None or len(items) < 2 else ("set", frozenset(items))
    return None


def _items(body: str) -> list | None:
    items = []
    for part in body.split(","):
        part = part.strip()
        value = _INFINITIES.get(part)
        if value is None:
            value = _plain_number(part) if part else None
        if value is None:
            return None
        items.append(value)
    return items
