"""Exact second opinions on math-verify's answers, in the sympy worker.

math-verify compares values numerically in places where exactness matters: ``(a - b).evalf(15,
chop=True) == 0`` calls ``1/5^{60}`` and ``1/5^{61}`` equal (both chop to zero), and floats are
rounded to 6 decimal places, so ``10^{-8}`` equals ``2 \\cdot 10^{-8}``. It also has no imaginary
unit unless the text looks complex. Two functions fix that:

- ``contradicts(gold, pred)``: after math-verify said "equal", check the pair again. Exact on both
  sides (no float in either): the difference must be exactly zero - sympy's rational arithmetic
  when it is a number, else its value at 60 significant digits (no equal pair of exact values
  differs there) or, with unknowns (``e`` read as a variable), its value at random rational
  points. With a decimal on one side, that decimal is an approximation: the values must agree to
  its own precision (within half of the decimal's last written place; a zero approximates no
  nonzero value), never by an absolute rounding that makes every small number equal.
- ``complex_equal(gold, pred)``: ``i`` as the imaginary unit, compared exactly (``\\sqrt{-1}``,
  ``i^2``, ``e^{i\\pi/2}``).

Both are conservative in the direction of safety: ``contradicts`` answers True only when the
values are shown to differ; ``complex_equal`` answers True only when the difference is shown zero.
"""

from __future__ import annotations

import random

import sympy
from sympy import Expr, Float, I

__all__ = ["complex_equal", "contradicts"]

_DIGITS = 60
_POINTS = 3


def contradicts(gold: object, pred: object, written_places: int = 0) -> bool:
    """True when two parsed values math-verify accepted are shown to differ (see module doc).

    ``written_places``: the most decimal places written in either text, trailing zeros counted
    (a parsed float has lost them: ``1.4142140`` claims 7 places, its float shows 6)."""
    if not (_plain_expr(gold) and _plain_expr(pred)):
        return False
    try:
        if gold.atoms(Float) or pred.atoms(Float):
            return _floats_differ(gold, pred, written_places)
        diff = (
            sympy.expand(gold - pred) if (gold.free_symbols or pred.free_symbols) else gold - pred
        )
        if diff == 0:
            return False
        if diff.is_Rational:
            return True  # exact rational arithmetic: nonzero
        return _nonzero(diff, gold, pred)
    except Exception:  # noqa: BLE001 - sympy failing to decide is no evidence of a difference
        return False


def complex_equal(gold: object, pred: object) -> bool:
    """``gold == pred`` with ``i`` as the imaginary unit, shown exactly (False when undecided)."""
    if not (_plain_expr(gold) and _plain_expr(pred)):
        return False
    try:
        g, p = (_with_i(x) for x in (gold, pred))
        if g.free_symbols or p.free_symbols:
            return False
        diff = sympy.simplify(sympy.expand_complex(g - p))
        return diff == 0
    except Exception:  # noqa: BLE001
        return False


def _plain_expr(value: object) -> bool:
    """A sympy expression that is a value: not a relation, set, tuple, boolean or matrix."""
    return (
        isinstance(value, Expr) and not value.is_Relational
        if isinstance(value, sympy.Basic)
        else False
    )


def _with_i(value: Expr) -> Expr:
    subs = {s: I for s in value.free_symbols if s.name in ("i", "\\imath")}
    subs.update({s: sympy.E for s in value.free_symbols if s.name == "e"})
    return value.subs(subs) if subs else value


def _nonzero(diff: Expr, gold: Expr, pred: Expr) -> bool:
    """The difference is clearly nonzero at ``_DIGITS`` digits (at random points if it has unknowns)."""
    symbols = sorted(diff.free_symbols, key=lambda s: s.name)
    rng = random.Random(0)
    points = (
        [{}]
        if not symbols
        else [
            {s: sympy.Rational(rng.randint(101, 997), rng.randint(101, 997)) for s in symbols}
            for _ in range(_POINTS)
        ]
    )
    for point in points:
        d, g, p = (abs(complex(x.subs(point).evalf(_DIGITS))) for x in (diff, gold, pred))
        scale = max(g, p)
        if not d > 10.0 ** (-_DIGITS // 2) * scale and not (scale == 0 and d > 0):
            return False  # zero (or too close to tell) at this point: no contradiction shown
    return True


def _floats_differ(gold: Expr, pred: Expr, written_places: int = 0) -> bool:
    """A decimal approximates: they differ by over half the decimal's last written place."""
    if gold.free_symbols or pred.free_symbols:
        return False
    g, p = complex(gold.evalf(30)), complex(pred.evalf(30))
    d, scale = abs(g - p), max(abs(g), abs(p))
    places = [_places(f) for f in (gold.atoms(Float) | pred.atoms(Float))] + [written_places]
    half_place = 0.5 * 10.0 ** -max(places)
    if d and not (g and p):  # "0.0" for 1/3000000: a zero approximates no nonzero value
        return True
    # within half the last written place ("3.14" for pi); a wrong digit there is a wrong answer
    # ("3.1415929" for pi: within 1e-5 relatively, 5 units off in its last place)
    return d > half_place * (1 + 1e-9) + 1e-12 * scale


def _places(value: Float) -> int:
    """Decimal places written: ``0.25`` -> 2 (from the shortest repr of the float)."""
    text = repr(float(value))
    if "e" in text:
        mantissa, exp = text.split("e")
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        return max(decimals - int(exp), 0)
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0
