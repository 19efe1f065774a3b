"""Ordered pairs written with their names: ``(y, x) = (1, 2)`` states x = 2 and y = 1.

math-verify reads such an answer as its right side, the tuple ``(1, 2)``, and compares it position
by position with the gold ``(1, 2)``: a pair written in another order than the gold's passed. When
the names are distinct single letters, the answer's values are put in the names' alphabetical
order (the order a bare gold pair is written in: ``(x, y)``, ``(a, b, c)``), and a named gold's
too.
"""

from __future__ import annotations

import re

__all__ = ["in_name_order"]

_NAMED_RE = re.compile(r"^\s*\(\s*([A-Za-z](?:\s*,\s*[A-Za-z])+)\s*\)\s*=\s*(\(.*\))\s*$")


def in_name_order(gold: str, pred: str) -> tuple[str, str] | None:
    """``(gold, pred)`` with named tuples rewritten in the names' order, or None (nothing named
    out of order, or the shapes do not match)."""
    g, p = _named(gold), _named(pred)
    if p is None:  # a bare pair against a named gold keeps the gold's own order
        return None
    if g is None and _values(gold.strip().strip("$")) is None:
        return None
    out = []
    for text, named in ((gold, g), (pred, p)):
        out.append(text if named is None else "(" + ", ".join(v for _, v in sorted(named)) + ")")
    return out[0], out[1]


def _named(text: str) -> list[tuple[str, str]] | None:
    match = _NAMED_RE.match(text.strip().strip("$"))
    if not match:
        return None
    names = [n.strip() for n in match.group(1).split(",")]
    values = _values(match.group(2))
    if values is None or len(values) != len(names) or len(set(names)) != len(names):
        return None
    return list(zip(names, values))


def _values(text: str) -> list[str] | None:
    """The top-level items of ``(a, b, ...)``; None if ``text`` is not one such tuple."""
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return None
    items, depth, start = [], 0, 1
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return None  # "(1, 2) + (3, 4)": the first parenthesis closes early
        elif ch == "," and depth == 1:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:-1].strip())
    return items if len(items) >= 2 and all(items) and depth == 0 else None
