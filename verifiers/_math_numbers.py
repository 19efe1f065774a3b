"""Exact values of single numbers, for ``_math_forms``: no sympy, fractions only.

``number`` reads plain numbers with optional percent and unit words (``$1,000``, ``12.00``,
``25%``, ``18 dollars``, ``$4 million``), fractions (``\\frac{3}{4}``, ``3/4``), mixed numbers
(``1 1/2``), repeating decimals (``0.\\overline{3}``), number words (``three bolts``) and small
exact powers (``7 \\times 10^4``, ``2^{10}``, ``5!``, ``\\binom{10}{3}``); ``surd``,
``pi_multiple`` and ``complex_number`` read ``2\\sqrt{2}``, ``\\frac{3\\pi}{4}`` and ``a + bi``.
Each returns a tagged tuple, or None for anything outside its narrow shape (then math-verify
decides): a wrong ``None`` costs a few milliseconds of sympy, a wrong value a wrong reward.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = [
    "MATH_WORDS",
    "NUM_RE",
    "complex_number",
    "number",
    "numbers_equal",
    "pi_multiple",
    "plain_number",
    "surd",
]

NUM_RE = re.compile(
    r"(?P<sign>[-+]?)\s*(?P<int>\d{1,3}(?:,\d{3})+|\d+)?(?P<dec>\.\d+)?\s*(?P<pct>%)?"
    r"\s*(?P<unit>[A-Za-z][A-Za-z .'\-/]*?(?:\^\{?\d\}?|[²³])?)?\s*"
)
_LATEX_FRAC_RE = re.compile(
    r"(?P<sign>[-+]?)\s*\\frac\s*(?:\{\s*(-?\d+)\s*\}|(\d))\s*(?:\{\s*(\d+)\s*\}|(\d))"
)
_SLASH_FRAC_RE = re.compile(r"(?P<sign>[-+]?)\s*(\d+)\s*/\s*(\d+)")
# 1 1/2 and 2\frac{1}{4} (the proper fraction is what makes it a mixed number); units may follow
_MIXED_RE = re.compile(
    r"(?P<sign>[-+]?)\s*(?P<whole>\d+)\s*(?:\s(?P<n1>\d+)\s*/\s*(?P<d1>\d+)|\\frac\s*\{(?P<n2>\d+)\}\s*\{(?P<d2>\d+)\})"
    r"(?:\s+[A-Za-z][A-Za-z ]*)?"
)
_REPEATING_RE = re.compile(
    r"(?P<sign>-?)(?P<int>\d*)\.(?P<fixed>\d*)\\overline\s*\{(?P<rep>\d{1,50})\}"
)
_WORD_VALUES = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
}
_WORD_VALUES.update(
    {w: 10 * n for n, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), 3)}
)
_WORD_NUM_RE = re.compile(r"(?P<word>[A-Za-z]+)(?:-(?P<unit>[A-Za-z]+))?(?:\s+[A-Za-z][A-Za-z ]*)?")
_SCI_RE = re.compile(
    r"(?P<sign>[-+]?)\s*(?:(?P<mant>\d+(?:\.\d+)?)\s*(?:\\times|\\cdot|\*)\s*)?10\s*\^\s*\{?\s*(?P<exp>[-+]?\d{1,3})\s*\}?"
)
_POWER_RE = re.compile(r"(?P<sign>[-+]?)\s*(?P<base>\d{1,6})\s*\^\s*\{?\s*(?P<exp>\d{1,3})\s*\}?")
_FACTORIAL_RE = re.compile(r"(\d{1,2})\s*!")
_BINOM_RE = re.compile(r"\\binom\s*\{\s*(\d{1,3})\s*\}\s*\{\s*(\d{1,3})\s*\}")
_RAD = r"\\sqrt\s*(?:\{\s*(?P<rad>\d+)\s*\}|(?P<rad1>\d))"
_SURD_RES = (
    re.compile(rf"(?P<sign>[-+]?)\s*(?P<coef>\d+)?\s*(?:\\cdot|\*)?\s*{_RAD}"),
    re.compile(
        rf"(?P<sign>[-+]?)\s*\\frac\s*\{{\s*(?P<coef>\d+)?\s*{_RAD}\s*\}}\s*\{{\s*(?P<den>\d+)\s*\}}"
    ),
    re.compile(
        rf"(?P<sign>[-+]?)\s*\\frac\s*\{{\s*(?P<coef>\d+)\s*\}}\s*\{{\s*(?P<den>\d+)\s*\}}\s*{_RAD}"
    ),
)
_PI = r"\\pi(?![A-Za-z])"
_PI_RES = (
    re.compile(
        rf"(?P<sign>[-+]?)\s*(?P<coef>\d+)?\s*(?:\\cdot|\*)?\s*{_PI}(?:\s*/\s*(?P<den>\d+))?"
    ),
    re.compile(rf"(?P<sign>[-+]?)\s*{_PI}\s*(?:\\cdot|\*)?\s*(?P<coef>\d+)"),
    re.compile(
        rf"(?P<sign>[-+]?)\s*\\frac\s*\{{\s*(?P<coef>\d+)?\s*{_PI}\s*\}}\s*\{{\s*(?P<den>\d+)\s*\}}"
    ),
    re.compile(
        rf"(?P<sign>[-+]?)\s*\\frac\s*\{{\s*(?P<coef>\d+)\s*\}}\s*\{{\s*(?P<den>\d+)\s*\}}\s*{_PI}"
    ),
)
_REAL = r"\d+(?:\.\d+)?"
_COMPLEX_RE = re.compile(
    rf"(?P<re>[-+]?{_REAL})\s*(?P<sign>[-+])\s*(?P<im>{_REAL})?\s*(?:\\cdot)?\s*i"
)
_IMAG_RE = re.compile(rf"(?P<sign>[-+]?)\s*(?P<im>{_REAL})?\s*(?:\\cdot)?\s*i")
# Words that are mathematics, not units or names: "2 pi" is not 2, "\text{sin}" is not a word.
MATH_WORDS = {
    "pi",
    "sqrt",
    "e",
    "i",
    "inf",
    "infty",
    "ln",
    "log",
    "sin",
    "cos",
    "tan",
    "exp",
    "mod",
    "choose",
    "cdot",
    "times",
    "div",
    "frac",
    "and",
    "or",
    "to",
    "plus",
    "minus",
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_HUNDRED = 100
_MAX_DIGITS = 400
_MAX_RADICAND = 10**8


def number(text: str) -> tuple | None:
    """``("num", value, is_percent, is_decimal)`` for a plain number with optional unit words."""
    for regex in (_LATEX_FRAC_RE, _SLASH_FRAC_RE):
        match = regex.fullmatch(text)
        if match:
            num, den = [int(x) for x in match.groups()[1:] if x is not None]
            if den == 0:
                return None
            value = Fraction(num, den)
            return "num", (-value if match.group("sign") == "-" else value), False, False
    if text[:1] == "(" and text[-1:] == ")" and "," not in text and text.count("(") == 1:
        text = text[1:-1].strip()  # "(6)"
    special = _special_number(text)
    if special is not None:
        return "num", special, False, False
    match = NUM_RE.fullmatch(text)
    if not match or not (match.group("int") or match.group("dec")):
        return None
    unit = (match.group("unit") or "").strip()
    if unit and (
        len(unit.split()[0]) < 2 or set(re.split(r"[\s.\-/^{}\d]+", unit.lower())) & MATH_WORDS
    ):
        return None
    digits = (match.group("int") or "0").replace(",", "") + (match.group("dec") or "")
    if len(digits) > _MAX_DIGITS:
        return None
    value = -Fraction(digits) if match.group("sign") == "-" else Fraction(digits)
    scales = _scale_words(unit)
    if len(scales) == 1 and scales[0] in _SCALES:
        # "$4 million": 4 when the question counts in millions, else 4000000
        return "num", value, bool(match.group("pct")), bool(match.group("dec")), _SCALES[scales[0]]
    for word in scales:  # "22 hundred", "12 hundred thousand": that value only
        value *= _SCALES.get(word, _HUNDRED)
    return "num", value, bool(match.group("pct")), bool(match.group("dec"))


def _scale_words(unit: str) -> list[str]:
    """The scale words that open ``unit``: ``["hundred", "thousand"]`` for "hundred thousand
    dollars". One of thousand / million / billion alone may be read either way (the question may
    count in millions); "hundred" and chains of them are only their product."""
    words = []
    for word in unit.lower().split():
        word = word[:-1] if word in ("hundreds", "thousands", "millions", "billions") else word
        if word not in _SCALES and word != "hundred":
            break
        words.append(word)
    return words


def _special_number(text: str) -> Fraction | None:
    """Exact values of mixed numbers, repeating decimals ``0.\\overline{3}`` and number words."""
    value = _power(text)
    if value is not None:
        return value
    if (
        set(re.findall(r"[a-z]+", text.replace("\\frac", "").lower())) & MATH_WORDS
    ):  # "two pi", "1 1/2 e"
        return None
    match = _MIXED_RE.fullmatch(text)
    if match:
        num, den = (
            int(match.group("n1") or match.group("n2")),
            int(match.group("d1") or match.group("d2")),
        )
        if not 0 < num < den:  # "2 3/2" is no mixed number: leave it alone
            return None
        value = int(match.group("whole")) + Fraction(num, den)
        return -value if match.group("sign") == "-" else value
    match = _REPEATING_RE.fullmatch(text)
    if match:
        fixed, rep = match.group("fixed"), match.group("rep")
        value = int(match.group("int") or 0) + Fraction(int(fixed or 0), 10 ** len(fixed))
        value += Fraction(int(rep), (10 ** len(rep) - 1) * 10 ** len(fixed))
        return -value if match.group("sign") == "-" else value
    match = _WORD_NUM_RE.fullmatch(text)
    if match and match.group("word").lower() in _WORD_VALUES:
        value = _WORD_VALUES[match.group("word").lower()]
        unit = (match.group("unit") or "").lower()
        if unit and not (value >= 20 and 0 < _WORD_VALUES.get(unit, 10) < 10):
            return None  # "twenty-five" only
        return Fraction(value + (_WORD_VALUES[unit] if unit else 0))
    return None


def _power(text: str) -> Fraction | None:
    """``7 \\times 10^4``, ``10^{-3}``, ``2^{10}``, ``5!``, ``\\binom{10}{3}``: small, exact integers."""
    match = _SCI_RE.fullmatch(text)
    if match:
        value = Fraction(match.group("mant") or 1) * Fraction(10) ** int(match.group("exp"))
        return -value if match.group("sign") == "-" else value
    match = _POWER_RE.fullmatch(text)
    if match and int(match.group("exp")) * len(match.group("base")) <= _MAX_DIGITS:
        value = Fraction(int(match.group("base")) ** int(match.group("exp")))
        return -value if match.group("sign") == "-" else value
    match = _FACTORIAL_RE.fullmatch(text)
    if match:
        return Fraction(math.factorial(int(match.group(1))))
    match = _BINOM_RE.fullmatch(text)
    return Fraction(math.comb(int(match.group(1)), int(match.group(2)))) if match else None


def numbers_equal(gold: tuple, pred: tuple) -> bool | None:
    """Exact equality; a percent (or a "million") on one side only may mean either value."""
    if len(gold) + len(pred) > 8:  # a scale word on one side or both
        if len(gold) == len(pred):
            return gold[1] * gold[4] == pred[1] * pred[4]
        scaled, other = (gold, pred) if len(gold) > 4 else (pred, gold)
        bare = numbers_equal(scaled[:4], other)
        return bare or numbers_equal(("num", scaled[1] * scaled[4]) + scaled[2:4], other)
    (_, g, g_pct, g_dec), (_, p, p_pct, p_dec) = gold, pred
    if g_pct == p_pct:
        same = g == p
    else:
        pct_value, other = (g, p) if g_pct else (p, g)
        other_dec = p_dec if g_pct else g_dec
        # "25%" may answer "#### 25"; but a value written as a fraction ("\frac{1}{4}") is a
        # proportion, so "0.25%" of it is 1/400, not 1/4
        fraction = other.denominator != 1 and not other_dec
        same = other == pct_value / 100 or (other == pct_value and not fraction)
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


def plain_number(text: str) -> Fraction | None:
    """A number with no percent and no units (an element of a tuple, matrix or complex number)."""
    if re.search(r"[A-Za-z%]", text.replace("\\frac", "")):
        return None
    value = number(text)
    return None if value is None else value[1]


def surd(text: str) -> tuple | None:
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


def pi_multiple(text: str) -> tuple | None:
    """``("pi", coefficient)``: ``6\\pi``, ``\\pi \\cdot 6``, ``\\frac{3\\pi}{4}``,
    ``\\frac{3}{4}\\pi``, ``\\frac{\\pi}{3}``."""
    match = next((m for m in (r.fullmatch(text) for r in _PI_RES) if m), None)
    if not match:
        return None
    parts = match.groupdict()
    den = int(parts.get("den") or 1)
    if den == 0:
        return None
    coef = Fraction(int(parts.get("coef") or 1), den)
    return "pi", -coef if parts["sign"] == "-" else coef


def _split_square(n: int) -> tuple[int, int]:
    """``n = k**2 * m`` with ``m`` squarefree: returns ``(k, m)``."""
    k, m, f = 1, n, 2
    while f * f <= m:
        while m % (f * f) == 0:
            m //= f * f
            k *= f
        f += 1
    return k, m


def complex_number(text: str) -> tuple | None:
    """``("complex", re, im)`` for ``a + bi``, ``a - i``, ``bi``, ``-i``."""
    match = _COMPLEX_RE.fullmatch(text)
    real = Fraction(match.group("re")) if match else Fraction(0)
    match = match or _IMAG_RE.fullmatch(text)
    if not match:
        return None
    imag = Fraction(match.group("im") or 1)
    return "complex", real, (-imag if match.group("sign") == "-" else imag)
