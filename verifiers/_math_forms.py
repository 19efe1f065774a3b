"""Exact values of the answer shapes that need no sympy, for ``math_equiv.fast_equal``.

``exact_value(text)`` reads a normalised answer as a tagged tuple, or None when it is anything
else (then math-verify decides). Every reader accepts only a narrow, unambiguous shape: a wrong
``None`` costs a few milliseconds of sympy, a wrong value costs a wrong reward.

Shapes: plain numbers with optional percent and unit words (``$1,000``, ``12.00``, ``25%``,
``18 dollars``), fractions (``\\frac{3}{4}``, ``3/4``), mixed numbers (``1 1/2``, ``2\\frac{1}{4}``),
repeating decimals (``0.\\overline{3}``), number words (``three bolts``), small exact powers
(``7 \\times 10^4``, ``2^{10}``, ``5!``, ``\\binom{10}{3}``), surds (``2\\sqrt{2}``,
``\\frac{\\sqrt{3}}{2}``), complex numbers ``a + bi``, choices ``(C)`` / ``(B) 12``, words
``\\text{Devon}``, matrices, sets, bare lists (``3 and 5``, ``\\pm 2``), tuples, intervals of numbers
and the one-variable inequalities that describe them (``x \\le 2``, ``-1 < x \\le 3``).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["exact_value", "values_equal"]

_NUM_RE = re.compile(
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
_AND_RE = re.compile(r"\s+(?:and|or)\s+")
_PM_RE = re.compile(r"\\pm\s*(.+)")
_INEQ = r"(<|>|\\le|\\leq|\\ge|\\geq|\\lt|\\gt|≤|≥|<=|>=)"
_INEQ_RE = re.compile(rf"[a-z]\s*{_INEQ}\s*(?P<b>[-+]?\d+(?:\.\d+)?)")
_RANGE_RE = re.compile(
    rf"(?P<a>[-+]?\d+(?:\.\d+)?)\s*{_INEQ}\s*[a-z]\s*{_INEQ}\s*(?P<b>[-+]?\d+(?:\.\d+)?)"
)
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
_CHOICE_RE = re.compile(
    r"\(?([A-E])\)?|\(([A-E])\)\s+[^()\s].{0,40}"
)  # "(B) 12": AMC's letter and value
_WORDS_RE = re.compile(r"[A-Za-z]{3,}(?: [A-Za-z]{2,})*|[A-Za-z]{2,}(?: [A-Za-z]{2,})+")
_MATRIX_RE = re.compile(r"\\begin\{([pbB]?matrix)\}(.*)\\end\{\1\}", re.DOTALL)
# Words that are mathematics, not units or names: "2 pi" is not 2, "\text{sin}" is not a word.
_MATH_WORDS = {
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
_INFINITIES = {
    "\\infty": float("inf"),
    "+\\infty": float("inf"),
    "-\\infty": float("-inf"),
    "∞": float("inf"),
    "-∞": float("-inf"),
    "inf": float("inf"),
    "-inf": float("-inf"),
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_MAX_DIGITS = 400
_MAX_RADICAND = 10**8


def exact_value(text: str) -> tuple | None:
    """``(kind, ...)`` for a shape in this module's list, else None."""
    for reader in (
        _number,
        _surd,
        _pi,
        _complex,
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
    if text[:1] == "(" and text[-1:] == ")" and "," not in text and text.count("(") == 1:
        text = text[1:-1].strip()  # "(6)"
    special = _special_number(text)
    if special is not None:
        return "num", special, False, False
    match = _NUM_RE.fullmatch(text)
    if not match or not (match.group("int") or match.group("dec")):
        return None
    unit = (match.group("unit") or "").strip()
    if unit and (
        len(unit.split()[0]) < 2 or set(re.split(r"[\s.\-/^{}\d]+", unit.lower())) & _MATH_WORDS
    ):
        return None
    digits = (match.group("int") or "0").replace(",", "") + (match.group("dec") or "")
    if len(digits) > _MAX_DIGITS:
        return None
    value = -Fraction(digits) if match.group("sign") == "-" else Fraction(digits)
    scale = _SCALES.get(unit.split()[0].lower() if unit else "")
    if scale:  # "$4 million": 4 when the question counts in millions, else 4000000
        return "num", value, bool(match.group("pct")), bool(match.group("dec")), scale
    return "num", value, bool(match.group("pct")), bool(match.group("dec"))


def _special_number(text: str) -> Fraction | None:
    """Exact values of mixed numbers, repeating decimals ``0.\\overline{3}`` and number words."""
    value = _power(text)
    if value is not None:
        return value
    if (
        set(re.findall(r"[a-z]+", text.replace("\\frac", "").lower())) & _MATH_WORDS
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


def _numbers_equal(gold: tuple, pred: tuple) -> bool | None:
    """Exact equality; a percent (or a "million") on one side only may mean either value."""
    if len(gold) + len(pred) > 8:  # a scale word on one side or both
        if len(gold) == len(pred):
            return gold[1] * gold[4] == pred[1] * pred[4]
        scaled, other = (gold, pred) if len(gold) > 4 else (pred, gold)
        bare = _numbers_equal(scaled[:4], other)
        return bare or _numbers_equal(("num", scaled[1] * scaled[4]) + scaled[2:4], other)
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


def _pi(text: str) -> tuple | None:
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
    return ("choice", match.group(1) or match.group(2)) if match else None


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
    if pm and _plain_number(pm.group(1)) is not None:
        value = _plain_number(pm.group(1))
        return "set", frozenset({value, -value})
    text = _AND_RE.sub(",", text)  # "3 and 5"
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
