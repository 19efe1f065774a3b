"""Rewrites that need both answers at once, applied before ``math_equiv`` compares them.

Each rule turns a pair of answer texts into a pair that the exact comparison (or math-verify)
decides correctly, or decides the pair itself:

- **Sequences with an ellipsis** (``1, 2, \\ldots, n``; ``2:8:18:\\ldots``) are compared term by
  term, here and only here: the same number of terms, the ellipsis at the same places, and every
  other term equal exactly. Nothing is accepted on the ellipsis alone (math-verify drops it and
  compares what is left as a set).
- **Multi-part answers** (several boxes, labelled parts, "or" lists): one rule. Parts are split at
  top-level commas, semicolons, "and" and "or". When every part of an answer is ``label = value``:
  - all labels the same (``x = -4 or x = 1``): the roots of one unknown, compared as a **set**;
  - distinct labels (``PQ = 6, RS = 2``; ``m = 3, n = 8``): an **ordered tuple**, in the order of
    the gold's labels when the gold has them too, else in the order written (the question's order),
    except that single letters go alphabetically (``y = 1, x = 2`` is the point ``(2, 1)``). A
    bracketed tuple against labelled parts is compared entry by entry in that order.
  A gold without labels and more than one part is compared the same way (set or tuple by the
  labels of the prediction).
- **Relations against intervals**: a one-variable relation (``-3 \\le x \\le 5``, ``t \\geq
  \\sqrt{3}``, ``x \\neq 2``) is rewritten as the interval or union it describes when the other
  side is written as one (it has ``\\infty``, ``\\cup`` or a square bracket).
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction

from passband.verifiers._math_chain import chain_sides, link_holds

__all__ = ["align", "false_chain", "open_chain"]

_ELLIPSIS_RE = re.compile(r"\\[lc]?dots\b|\\dotsc\b|\.\.\.|…")
_SEPARATORS = ",:;"
_LABEL_RE = re.compile(r"\s*([A-Za-z]{1,3}(?:_\{?\w{1,3}\}?)?'?)\s*=\s*([^=]+?)\s*")
_JOIN_RE = re.compile(r"\s+(?:and|or)\s+|\\text\s*\{\s*(?:and|or)\s*\}|\\(?:quad|qquad)\b")
_LE = r"(?:<=|\\leq?|\\leqslant|≤|<|\\lt)"
_GE = r"(?:>=|\\geq?|\\geqslant|≥|>|\\gt)"
_NE = r"(?:\\neq?|≠|!=)"
_VAR = r"(?P<var>[A-Za-z])"
_BOUND = r"(?P<{}>[^<>=≤≥\\]*?(?:\\(?:sqrt|frac|pi|infty|dfrac|tfrac)[^<>=≤≥]*?)?)"
_RANGE_RE = re.compile(
    rf"\s*{_BOUND.format('a')}\s*(?P<op1>{_LE})\s*{_VAR}\s*(?P<op2>{_LE})\s*{_BOUND.format('b')}\s*"
)
_FALLING_RE = re.compile(
    rf"\s*{_BOUND.format('a')}\s*(?P<op1>{_GE})\s*{_VAR}\s*(?P<op2>{_GE})\s*{_BOUND.format('b')}\s*"
)
_UPPER_RE = re.compile(rf"\s*{_VAR}\s*(?P<op>{_LE}|{_GE}|{_NE})\s*{_BOUND.format('b')}\s*")
_BOUND_FIRST_RE = re.compile(rf"\s*{_BOUND.format('b')}\s*(?P<op>{_LE}|{_GE}|{_NE})\s*{_VAR}\s*")
_INTERVAL_HINT_RE = re.compile(r"\\infty|∞|\\cup|^\s*\[|\]\s*$")


def align(gold: str, pred: str) -> tuple[str, str, bool | None]:
    """``(gold, pred, decided)``: possibly rewritten texts, and True/False when a rule decides."""
    if false_chain(pred):  # "3 = 2": a false statement, whichever side matches the gold
        return gold, pred, False
    if _ELLIPSIS_RE.search(gold) or _ELLIPSIS_RE.search(pred):
        return gold, pred, _same_sequence(gold, pred)
    interval = _as_interval(pred) if _INTERVAL_HINT_RE.search(gold) else None
    if interval:
        return gold, interval, None
    interval = _as_interval(gold) if _INTERVAL_HINT_RE.search(pred) else None
    if interval:
        return interval, pred, None
    parts = _multipart(gold, pred)
    if parts is not None and len(parts) == 3:
        return parts
    return (parts[0], parts[1], None) if parts else (gold, pred, None)


def false_chain(pred: str) -> bool:
    """Whether ``pred`` is a chain of equalities with two neighbouring variable-free sides that
    differ (``3=2``, ``x=2=3``, ``8 - 4 = 3 remaining``): math-verify would compare its last side
    and accept a false statement (``_math_chain``)."""
    return any(link is False for link in _links(pred))


def open_chain(pred: str) -> bool:
    """Whether a link of the chain ``pred`` is left to sympy (``\\sqrt{4} = 3``): the fast path
    must not decide ``pred`` by its last side."""
    return any(link is None for link in _links(pred))


def _links(pred: str) -> list[bool | None]:
    """Each link of a chain: True/False when decided in-process, None when undecided."""
    from passband.verifiers._math_equiv import fast_equal

    sides = chain_sides(pred)
    links = []
    for a, b in zip(sides, sides[1:]):
        pairs = [(_arithmetic(a, p), _arithmetic(b, p)) for p in ("/100", "")]  # 25% is 0.25 or 25
        if all(x is not None and y is not None for x, y in pairs):
            links.append(any(link_holds(x, y, a, b) for x, y in pairs))
            continue
        same = fast_equal(a, b)  # a decimal side approximates: sympy decides within its places
        links.append(None if same is False and re.search(r"\d\.\d", a + b) else same)
    return links


_ARITH_OPS = (
    (r"\bmod", "%"),
    (r"\times", "*"),
    (r"\cdot", "*"),
    (r"\div", "/"),
    ("{", "("),
    ("}", ")"),
)
_ARITH_RE = re.compile(r"[\d\s.+\-*/%()]{1,200}")
_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def _arithmetic(side: str, percent: str = "/100") -> Fraction | None:
    r"""The exact value of ``side`` when it is numbers joined by + - * / and brackets (LaTeX
    ``\times``, ``\cdot``, ``\div``, ``\frac``), else None. Evaluated on the parsed tree with
    fractions: no ``eval``, no powers, so no input can make it slow."""
    text = _FRAC_RE.sub(r"((\1)/(\2))", side.replace("\\left", "").replace("\\right", ""))
    text = re.sub(r"\\?%", percent, text)  # a percent sign: of 100, or a label ("x 100 = 75%")
    for latex, op in _ARITH_OPS:
        text = text.replace(latex, op)
    if not _ARITH_RE.fullmatch(text):
        return None
    try:
        return _evaluate(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _evaluate(node) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ValueError("not arithmetic")


_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Mod: lambda a, b: a % b if a.denominator == b.denominator == 1 else _no(),
}


def _no():
    raise ValueError("not arithmetic")


# ----------------------------------------------------------------------------- sequences


def _same_sequence(gold: str, pred: str) -> bool:
    from passband.verifiers._math_equiv import fast_equal, normalize

    g_terms, p_terms = _terms(normalize(gold)), _terms(normalize(pred))
    if g_terms is None or p_terms is None or len(g_terms) != len(p_terms):
        return False
    for g, p in zip(g_terms, p_terms):
        g_dots, p_dots = bool(_ELLIPSIS_RE.fullmatch(g)), bool(_ELLIPSIS_RE.fullmatch(p))
        if g_dots or p_dots:
            if g_dots != p_dots:
                return False
            continue
        if not (g.replace(" ", "") == p.replace(" ", "") or fast_equal(g, p) is True):
            return False
    return True


def _terms(text: str) -> list[str] | None:
    """Top-level terms split at ``,``/``:``/``;`` (one kind per sequence), brackets kept whole."""
    text = text.strip()
    if text[:1] in "([{" and _closes_at_end(text):
        text = text[1:-1]
    seps = {ch for ch in _split_points(text)}
    if len(seps) != 1:
        return None if len(seps) > 1 else [text]
    sep = seps.pop()
    return [t.strip() for t in _split(text, sep)]


def _split_points(text: str) -> list[str]:
    depth, found = 0, []
    for ch in text:
        depth += (ch in "([{") - (ch in ")]}")
        if depth == 0 and ch in _SEPARATORS:
            found.append(ch)
    return found


def _split(text: str, seps: str) -> list[str]:
    depth, parts, current = 0, [], []
    for ch in text:
        depth += (ch in "([{") - (ch in ")]}")
        if depth == 0 and ch in seps:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _closes_at_end(text: str) -> bool:
    """The bracket that opens ``text`` is the one that closes it (``(1, 2)`` yes, ``(1), (2)`` no)."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if depth == 0:
            return i == len(text) - 1
    return False


# ----------------------------------------------------------------------------- relations


def _as_interval(text: str) -> str | None:
    """``-3 \\le x \\le 5`` (or ``5 \\ge x \\ge -3``) -> ``[-3, 5]``; ``x > 2`` (or ``2 < x``) ->
    ``(2, \\infty)``; ``x \\neq 2`` -> a union."""
    text = text.strip().strip("$").strip()
    for regex, rising in ((_RANGE_RE, True), (_FALLING_RE, False)):
        match = regex.fullmatch(text)
        if match and match.group("a").strip() and match.group("b").strip():
            (low, op_low), (high, op_high) = (("a", "op1"), ("b", "op2"))[:: 1 if rising else -1]
            return (
                f"{'(' if _strict(match.group(op_low)) else '['}{match.group(low).strip()}, "
                f"{match.group(high).strip()}{')' if _strict(match.group(op_high)) else ']'}"
            )
    match = _UPPER_RE.fullmatch(text) or _BOUND_FIRST_RE.fullmatch(text)
    if not match or not match.group("b").strip() or _mentions(match.group("b"), match.group("var")):
        return None
    op, bound = match.group("op"), match.group("b").strip()
    if re.fullmatch(_NE, op):
        return f"(-\\infty, {bound}) \\cup ({bound}, \\infty)"
    upper = bool(re.fullmatch(_LE, op)) == (match.re is _UPPER_RE)  # x < b, or b > x
    if upper:
        return f"(-\\infty, {bound}{')' if _strict(op) else ']'}"
    return f"{'(' if _strict(op) else '['}{bound}, \\infty)"


def _mentions(text: str, var: str) -> bool:
    """``var`` appears as a letter of its own (not the ``t`` of ``\\sqrt``)."""
    return re.search(rf"(?<![A-Za-z\\]){var}(?![A-Za-z])", text) is not None


def _strict(op: str) -> bool:
    return op in ("<", ">", "\\lt", "\\gt")


# ----------------------------------------------------------------------------- multi-part


def _multipart(gold: str, pred: str) -> tuple | None:
    """Labelled parts and "or" lists as one set or tuple on both sides (see the module docstring)."""
    g_parts, p_parts = _parts(gold), _parts(pred)
    # "(-1, 2)" against "x=2, y=-1": the bracketed side's entries are the parts, in order
    if len(g_parts) == 1 and len(p_parts) >= 2 and _labels(p_parts):
        g_parts = _tuple_entries(gold) or g_parts
    if len(p_parts) == 1 and len(g_parts) >= 2 and _labels(g_parts):
        p_parts = _tuple_entries(pred) or p_parts
    if len(p_parts) >= 2 and len(g_parts) >= 2 and len(g_parts) != len(p_parts):
        return gold, pred, False  # "1, 2, 2" is not "1, 2": a part more or less, not a set
    if len(p_parts) < 2 or len(g_parts) != len(p_parts):
        return None
    if _same_set_other_counts(g_parts, p_parts):
        return gold, pred, False  # "1, 2, 2" against "1, 1, 2"
    g_labels, p_labels = _labels(g_parts), _labels(p_parts)
    if g_labels and p_labels and {lbl for lbl, _ in g_labels} != {lbl for lbl, _ in p_labels}:
        return gold, pred, False  # "m = 3, m = 8" answers "m = 3, n = 8" with the wrong labels
    if p_labels is None and g_labels is None:
        if any(_JOIN_RE.search(t) for t in (gold, pred)):  # "3 or 5": a bare list, as a set
            return ", ".join(g_parts), ", ".join(p_parts)
        return None
    labels = p_labels or g_labels
    if len(set(lbl for lbl, _ in labels)) == 1:  # x = -4 or x = 1: the roots, a set
        return ", ".join(_values(g_parts, g_labels)), ", ".join(_values(p_parts, p_labels))
    if g_labels and p_labels:  # both labelled: the prediction's parts in the gold's order
        by_label = dict(p_labels)
        if set(by_label) != {lbl for lbl, _ in g_labels} or len(by_label) != len(p_labels):
            return None
        return _tuple(v for _, v in g_labels), _tuple(by_label[lbl] for lbl, _ in g_labels)
    return _tuple(_values(g_parts, _by_letter(g_labels))), _tuple(
        _values(p_parts, _by_letter(p_labels))
    )


def _tuple_entries(text: str) -> list[str] | None:
    """The entries of a parenthesised tuple ``(a, b)``, else None."""
    text = text.strip().strip("$").strip()
    if len(text) < 2 or text[0] != "(" or text[-1] != ")" or not _closes_at_end(text):
        return None
    entries = [p.strip() for p in _split(text[1:-1], ",")]
    return entries if len(entries) >= 2 and all(entries) else None


def _by_letter(labels):
    """Single-letter labels in alphabetical order, as an ordered pair is written (``(x, y)``):
    ``y=1, x=2`` is the point (2, 1). Other labels keep the order written."""
    if labels and all(len(lbl) == 1 and lbl.isalpha() for lbl, _ in labels):
        return sorted(labels, key=lambda pair: pair[0])
    return labels


def _same_set_other_counts(a: list[str], b: list[str]) -> bool:
    key = [sorted(p.replace(" ", "") for p in parts) for parts in (a, b)]
    return set(key[0]) == set(key[1]) and key[0] != key[1]


def _parts(text: str) -> list[str]:
    text = _JOIN_RE.sub(",", text.strip().strip("$").strip())
    return [p.strip() for p in _split(text, ",;") if p.strip()]


def _labels(parts: list[str]) -> list[tuple[str, str]] | None:
    matches = [_LABEL_RE.fullmatch(p) for p in parts]
    if not all(matches):
        return None
    return [(m.group(1), m.group(2)) for m in matches]


def _values(parts: list[str], labels) -> list[str]:
    return [v for _, v in labels] if labels else parts


def _tuple(values) -> str:
    return "(" + ", ".join(values) + ")"
