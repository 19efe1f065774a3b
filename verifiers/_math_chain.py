r"""A chain of equalities states its last side only when every link of it is true.

math-verify compares the last side of ``\sqrt{4} = 3`` or ``8 - 4 = 3 remaining``, so a false
statement whose last side is the gold was rewarded. Each pair of neighbouring variable-free sides
is checked: in-process with exact fractions where both sides are plain arithmetic
(``_math_rules.false_chain``), else in the worker with sympy (``false_link``). A decimal side
approximates: the link holds when it is the other side rounded or cut to its last written place
(``\sqrt{2} = 1.414``, ``\pi = 3.14``, ``\frac{2}{3} = 0.66``); two exact sides must agree
exactly. A side sympy may misread is left alone (degrees, ``\bmod``, a ``\log`` without a base,
a percent): never a false link, so never a new wrong.

Before the check, a unit after a number is dropped when every side that has one has the same
(``8 apples - 4 apples = 3 apples``, ``8 - 4 = 3 remaining``; not ``1 hour = 60 minutes``), and
an ``x`` between two numbers is a product (``2 x 2 = 3``).
"""

from __future__ import annotations

import re

__all__ = ["chain_sides", "false_link", "link_holds"]

_EQ_SPLIT_RE = re.compile(r"(?<![<>!=\\])=(?!=)")  # "=", not "<=", ">=", "!=", "=="
_LETTER_RE = re.compile(r"(?<!\\)\b[A-Za-z]")  # a variable, not the letters of \frac
_TIMES_RE = re.compile(r"(?<=\d)\s*[x\u00d7]\s*(?=\d)")
# a unit right after a number: one or two words, or a \text{} word, with its power, before an
# operator or the side's end
_UNIT_RE = re.compile(
    r"(?<=\d)\s*(?:\\(?:text|mathrm|mbox)\s*\{\s*([A-Za-z]{2,}(?:\s+[A-Za-z]{2,})?)\s*\}"
    r"|(?<![A-Za-z])([A-Za-z]{2,}(?:\s+[A-Za-z]{2,})?))(?:\^\s*(?:\{\s*\d\s*\}|\d))?"
    r"(?=\s*(?:[-+*/)]|\\(?:times|cdot|div)(?![A-Za-z])|\Z))"
)
_DECIMAL_RE = re.compile(r"\d*\.(\d+)")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_JUXTAPOSED_RE = re.compile(r"(?<![_^{\w.])\d+\s+\.?\d")  # not a subscript: \log_2 9
# what sympy reads as written; anything else (degrees, \bmod, \log without a base) is not checked
_SAFE_COMMANDS = frozenset(
    "frac dfrac tfrac sqrt pi cdot times div left right ln lceil rceil lfloor rfloor binom "
    "sin cos tan".split()
)
_COMMAND_RE = re.compile(r"\\([A-Za-z]+)")


def chain_sides(pred: str) -> list[str]:
    """The variable-free sides of a chain of equalities, in order, with units dropped and ``x``
    between numbers read as a product; [] when ``pred`` is no chain."""
    sides = [s.strip() for s in _EQ_SPLIT_RE.split(pred.strip().strip("$"))]
    if len(sides) < 2 or len(sides) > 8:
        return []
    sides = [_THOUSANDS_RE.sub("", s) for s in sides]  # "54,000/10,800 = 5"
    if any(_JUXTAPOSED_RE.search(s) for s in sides):  # "14 * 1 1/2": a mixed number, or a typo
        return []  # read either way it may be false: never a false link
    sides = [_TIMES_RE.sub(r" \\times ", s.replace("\\$", "").replace("$", "")) for s in sides]
    units = {frozenset(_unit(m) for m in _UNIT_RE.finditer(s)) for s in sides} - {frozenset()}
    if len(units) == 1:  # "8 apples - 4 apples = 3 apples": one unit throughout
        sides = [_UNIT_RE.sub(" ", s).strip() for s in sides]
    return [s for s in sides if s and not _LETTER_RE.search(re.sub(r"\\[A-Za-z]+", " ", s))]


def _unit(match: re.Match) -> str:
    return (match.group(1) or match.group(2)).lower().rstrip("s")


def link_holds(x, y, a: str, b: str) -> bool:
    """Whether the values ``x`` of side ``a`` and ``y`` of side ``b`` are equal: exactly, or when a
    side is a decimal, rounded or cut to its last written place (``\\frac{2}{3} = 0.67`` or
    ``0.66``; not ``\\pi = 3.2``)."""
    gap, slack = abs(x - y), 1e-12 * max(1, abs(x), abs(y))
    places = [len(m.group(1)) for m in _DECIMAL_RE.finditer(f"{a} {b}")]
    if not places:
        return gap <= slack
    unit = 10.0 ** -min(places)
    if gap <= unit / 2 + slack:
        return True
    cut = y if _DECIMAL_RE.search(b) else x  # the decimal side, cut toward zero
    return gap < unit + slack and abs(cut) <= max(abs(x), abs(y)) - gap + slack


def false_link(pred: str) -> bool:
    """Whether two neighbouring variable-free sides of ``pred`` differ, by sympy (worker only)."""
    sides = chain_sides(pred)
    for a, b in zip(sides, sides[1:]):
        x, y = _value(a), _value(b)
        if x is not None and y is not None and not link_holds(x, y, a, b):
            return True
    return False


def _value(side: str) -> float | None:
    """The real value of a variable-free side sympy reads as written, else None."""
    from passband.verifiers._math_equiv import _parse_latex

    if "^\\circ" in side or "%" in side or "\\log" in side and "\\log_" not in side:
        return None
    if any(c not in _SAFE_COMMANDS for c in _COMMAND_RE.findall(side.replace("\\log_", "\\ln"))):
        return None
    parsed = next((p for p in _parse_latex(side) if not isinstance(p, str)), None)
    try:
        if parsed is None or parsed.free_symbols:
            return None
        value = complex(parsed.evalf(30))
    except (AttributeError, TypeError, ValueError, ArithmeticError):
        return None
    return value.real if value.imag == 0 and abs(value.real) < 1e300 else None
