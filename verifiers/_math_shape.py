r"""The shape of an answer before it is compared: Unicode math spelled as LaTeX, and answers that
state no single value.

math-verify reads ``2√3`` as 2, ``3½`` as 3 and ``10⁶`` as 10: its parser stops at the first
character it does not know and keeps what it read so far, so the wrong answer is rewarded.
``to_latex`` spells the Unicode forms models write as LaTeX first (``2\sqrt{3}``, ``(3+\frac{1}{2})``,
``10^{6}``, ``\cdot``, ``\geq``, a curly apostrophe as ``'``), so they are read whole.

``not_a_value`` names what is wrong with an answer that, whatever its parse, is no value: a bound
or a comparison (``\geq 18``, ``< 18``, ``3 \approx 4``), an expression cut off at an operator
(``3 +``, ``3 \times``, ``0^+``, ``18?``), a number in another base (``22_3``) where the gold
has none, or a unit followed by more (``18 \text{ h } 20 \text{ min}``). The verifier grades
those ``invalid``. ``box_is_operand`` says when a ``\boxed{}`` is part of an expression
(``-\boxed{18}``, ``2\boxed{18}``, ``\boxed{18}^2``, ``\boxed{18} + 2``): then it is no answer.
"""

from __future__ import annotations

import re
import unicodedata

from passband.verifiers._math_forms import exact_value, values_equal
from passband.verifiers._math_toplevel import foreign_part

__all__ = ["COMBINING_RE", "to_latex", "not_a_value", "box_is_operand", "in_cents"]

_PLAIN = {
    "\u2212": "-",  # minus sign
    "\u2010": "-",  # hyphens some models write as the minus: "‑18" is -18
    "\u2011": "-",
    "\u2012": "-",
    "\ufe63": "-",
    "\uff0d": "-",
    "\u2013": "-",  # en dash: "3–4" is a range, never 3
    "\u2014": "-",
    "\u2796": "-",  # heavy minus sign: "➖ 5" is -5
    "\u02d7": "-",  # modifier letter minus sign
    "\u2795": "+",  # heavy plus sign
    "\u2797": r"\div ",
    "\u00d7": r"\times ",
    "\u00f7": r"\div ",
    "\u00b7": r"\cdot ",
    "\u22c5": r"\cdot ",
    "\u2217": "*",
    "\u2044": "/",  # fraction slash: "1⁄2"
    "\u2248": r"\approx ",
    "\u222a": r"\cup ",  # "(-∞, 1) ∪ (2, ∞)"; an unknown symbol is no value (_math_toplevel)
    "\u2229": r"\cap ",
    "\u2208": r"\in ",
    "\u2234": r"\therefore ",
    "\u2216": r"\setminus ",
    "\u2205": r"\emptyset ",
    "\u2213": r"\mp ",
    "\u2219": r"\cdot ",  # bullet operator: "2∙3"
    "\u2215": "/",  # division slash
    "\u22ef": r"\cdots ",
    "\u2220": r"\angle ",
    "\u2218": r"\circ ",  # ring operator, written for degrees: "30∘"
    "\u2265": r"\geq ",
    "\u2264": r"\leq ",
    "\u2260": r"\neq ",
    "\u00b1": r"\pm ",
    "\u221e": r"\infty ",
    "\u03c0": r"\pi ",
    "\u2019": "'",  # "isn’t": the doubt word, not an answer "n’t 22"
    "\u2018": "'",
}
_SUPERSCRIPT = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-"))
_SUBSCRIPT = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋", "0123456789+-"))  # "101₂" is base 2: 101_{2}
_VULGAR = {
    "½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅖": (2, 5),
    "⅗": (3, 5), "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8),
    "⅞": (7, 8),
}  # fmt: skip
_PLAIN_RE = re.compile("|".join(map(re.escape, _PLAIN)))
_SUPERSCRIPT_RE = re.compile(f"[{''.join(_SUPERSCRIPT)}]+")
_SUBSCRIPT_RE = re.compile(f"[{''.join(_SUBSCRIPT)}]+")
# a combining mark left after NFC ("5\u0338" struck through, "5\u20e0" prohibited, "3\u0304" a
# repeating bar): the digit under it is not the plain digit
COMBINING_RE = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_VULGAR_RE = re.compile(rf"(\d*)\s*([{''.join(_VULGAR)}])")
_ROOT_RE = re.compile(r"√\s*(\d+(?:\.\d+)?|[A-Za-z])")
_UNICODE_RE = re.compile(r"[^\x00-\x7f]")


# a plain-text root, "2 sqrt(3)" or "sqrt 3" (math-verify read "2 sqrt(3)" as 2)
_PLAIN_ROOT_RE = re.compile(r"(?<![\\A-Za-z])sqrt\s*(?:\(([^()\n]{1,40})\)|(\d+(?:\.\d+)?)\b)")


def to_latex(text: str) -> str:
    """``text`` with the Unicode math forms above, and a plain ``sqrt(3)``, written as LaTeX."""
    if "sqrt" in text:
        text = _PLAIN_ROOT_RE.sub(lambda m: r"\sqrt{" + (m.group(1) or m.group(2)) + "}", text)
    if not _UNICODE_RE.search(text):
        return text
    text = _PLAIN_RE.sub(lambda m: _PLAIN[m.group(0)], unicodedata.normalize("NFC", text))
    text = _ROOT_RE.sub(r"\\sqrt{\1}", text).replace("√", r"\sqrt")
    text = _SUPERSCRIPT_RE.sub(
        lambda m: "^{" + "".join(_SUPERSCRIPT[c] for c in m.group(0)) + "}", text
    )
    text = _SUBSCRIPT_RE.sub(
        lambda m: "_{" + "".join(_SUBSCRIPT[c] for c in m.group(0)) + "}", text
    )
    return _VULGAR_RE.sub(_vulgar, text)


def _vulgar(match: re.Match) -> str:
    whole, (a, b) = match.group(1), _VULGAR[match.group(2)]
    frac = rf"\frac{{{a}}}{{{b}}}"
    return f"({whole}+{frac})" if whole else frac  # "3½" is the mixed number 3 + 1/2


_RELATION = r"\\(?:geq?|leq?|neq?|approx|sim|simeq|gtrsim|lesssim|gg|ll)(?![A-Za-z])|[<>]=?|!="
_LEADING_RELATION_RE = re.compile(rf"^\s*(?:{_RELATION})")
_RELATION_RE = re.compile(_RELATION)
_LETTER_RE = re.compile(r"(?<!\\)\b[A-Za-z]")
_COMMAND_RE = re.compile(r"\\[A-Za-z]+")
_DANGLING_RE = re.compile(
    r"(?:[-+*/^_=,?]|\\(?:times|cdot|div|pm|mp|sqrt|frac|dfrac|tfrac|over|ast)|\^\{?[-+]\}?"
    r"|\\text\w*\s*\{\s*[-+*/?]\s*\})\s*$"  # "12\text{+}": at least 12
)
_RANGE_RE = re.compile(r"\d\s*\.{2,3}\s*-?\d")  # "12..13" (a sequence has commas: "1, 2, ..., n")
# a value, then text with a question mark: "12 \text{ (?)}" (a number there is often its unit's
# conversion, "45 \text{ minutes (0.75 hours)}", and stays)
_TEXT_VALUE_RE = re.compile(r"\d[^\\{}]*\\(?:text|textrm|mbox)\s*\{[^{}]*\?[^{}]*\}")
_BASE_RE = re.compile(r"\d\s*_\s*\{?\s*\d")
_ALTERNATIVES_RE = re.compile(  # "18|19", "x = 18 | 19": two candidates ("|-3|" is one value)
    r"^(?:[A-Za-z]\s*=\s*)?-?\d+(?:\.\d+)?\s*%?\s*(?:\||\\mid|\\vert)\s*-?\d+(?:\.\d+)?\s*%?$"
)
_SPACING_RE = re.compile(r"\\[,;:! ]|\\q?quad\b|~|\\[bB]igg?(?![A-Za-z])")  # "3 \\big| 4"
# a unit after a number, and then more: "18 \text{ hours } 20 \text{ minutes}", "18 \text{ cm} =
# 20 \text{ m}", "5 \text{ dollars and } 50 \text{ cents}"; math-verify reads only the first number
_UNIT_THEN_MORE_RE = re.compile(
    r"\d(?:\s|\\[,;:! ])*\\(?:text|textrm|textnormal|textbf|mathrm|mbox)\s*"
    r"\{(?!\s*(?:or|and|,)\s*\})[^{}]*\}"  # "3 \text{ and } 5" joins the parts of one answer
    r"(?:\s*\^\s*(?:\{[^{}]*\}|\w))?\s*(?=[^\s.^]|\.\s*\S)"
)


def _alternatives(text: str) -> bool:
    return bool(_ALTERNATIVES_RE.match(_SPACING_RE.sub("", text).replace("\\%", "%").strip()))


def not_a_value(pred: str, gold: str) -> str | None:
    """Why ``pred`` states no single value to compare with ``gold``, or None."""
    text = pred.strip().strip("$").strip().rstrip(".").strip()
    if not text:
        return None
    if _LEADING_RELATION_RE.match(text) and not _LEADING_RELATION_RE.match(gold.strip("$ ")):
        return "is a bound, not a value"
    if _RELATION_RE.search(text) and not _LETTER_RE.search(_COMMAND_RE.sub(" ", text)):
        if not _consistent_approximation(text):  # "\frac{1}{6} \approx 0.1667" states 1/6
            return "compares two values; it states none"
    if _DANGLING_RE.search(text):
        return "stops at an operator"
    if _RANGE_RE.search(text) and not _RANGE_RE.search(gold):
        return "is a range, not a value"
    if _TEXT_VALUE_RE.search(text) and not _TEXT_VALUE_RE.search(gold):
        return "has a question mark in its text"
    if _alternatives(text) and not _alternatives(gold.strip("$ ")):
        return "lists two values split by a bar, not one"
    if COMBINING_RE.search(text) and not COMBINING_RE.search(gold):
        return "carries a combining mark (a slash, a bar, an enclosing sign)"
    if _BASE_RE.search(text) and not _BASE_RE.search(gold):
        return "is written in another base"
    if _UNIT_THEN_MORE_RE.search(text) and not _UNIT_THEN_MORE_RE.search(gold):
        return "goes on after its unit: several quantities, not one value"
    approximation = bool(_APPROX_RE.search(text)) and _consistent_approximation(text)
    return foreign_part(text, gold.strip("$ "), approximation)


_APPROX_RE = re.compile(r"\\(?:approx|simeq)(?![A-Za-z])")


def _consistent_approximation(text: str) -> bool:
    """``exact \\approx decimal`` where both sides are numbers within 1% of each other: the exact
    side is the answer (``\\frac{1}{6} \\approx 0.1667``). ``3 \\approx 4`` is not."""
    from passband.verifiers._math_equiv import normalize
    from passband.verifiers._math_forms import exact_value

    sides = _APPROX_RE.split(text)
    if len(sides) != 2 or _RELATION_RE.search(sides[0]) or _RELATION_RE.search(sides[1]):
        return False
    a, b = (exact_value(normalize(side.strip())) for side in sides)
    if a is None or b is None or a[0] != "num" or b[0] != "num":
        return False
    return abs(a[1] - b[1]) <= abs(a[1]) / 100


_BOX_BEFORE_RE = re.compile(  # a factor only when it touches the box; an operator on its line
    r"(?:[\d)]\$?|(?:[-+/^]|\\(?:times|cdot|div|pm|mp|sqrt|frac))[ \t$]*)\Z"
)
_BOX_AFTER_RE = re.compile(
    r"[(\dA-Za-z]|\\(?:pi|pm|mp)(?![A-Za-z])|,\d{3}|\{,\}|\\,\s*\d"
    r"|[\s$]*(?:\^(?!\s*\{?\s*\\circ)|[_/]|\\(?:times|cdot|div|sqrt|frac|pm|mp)(?![A-Za-z])"
    r"|[-+=]\s*\$?\s*[\d(\\])"  # "\boxed{18}^{\circ}": degrees, not a power
    r"|\s*(?:\\text\s*\{\s*)?hundreds?\b"
    r"|!(?=[ \t]*(?:[$a-z\d=+*/]|\\[\])]))"  # "$\boxed{18}!$": a factorial
)  # "(", a digit or a letter only when it touches the box: "\boxed{18} (the total)" is an aside


def box_is_operand(text: str, start: int, end: int) -> bool:
    """Whether the box at ``text[start:end]`` is an operand: a sign, factor or power stands right
    before or after it, so what the completion states is not the box's content. (``*`` is left
    out: ``**Answer:** \\boxed{18}`` is Markdown bold.)"""
    return bool(
        _BOX_BEFORE_RE.search(text[max(0, start - 12) : start])
        or _BOX_AFTER_RE.match(text, end, end + 12)
    )


# Python's power between two operands (``2**3``, ``x**2``): not Markdown bold, which sits against a
# space or the text's edge on one side. Stripping it as bold read ``2**3`` as 23.
_POWER_RE = re.compile(r"(?<=[0-9A-Za-z)}])\*\*(?=[0-9A-Za-z({\\-])")


def unbold(text: str) -> str:
    """Markdown bold removed; a ``**`` between two operands is a power, written ``^``."""
    return _POWER_RE.sub("^", text).replace("**", "")


# between two boxes, a hedge that is no joiner: "\boxed{18} (or \boxed{19})", "\lor", "vs",
# ", alternatively", "... otherwise \boxed{12}": neither box is the stated answer
_HEDGE_GAP_RE = re.compile(
    r"\bor\b|\\(?:lor|vee)\b|\balternatively\b|\bvs\b|\botherwise\b|\|", re.IGNORECASE
)


# a sentence that opens one case of several: "When n is odd, ...", "Case 2:", "Method 1 gives"
_CASE_HEAD_RE = re.compile(  # not "If we double it, we get": working, not a case
    r"\A[\s*_#>;,-]*(?:\*\*)?(?:case|sub-?case|method|approach|otherwise|else|alternatively"
    r"|option|interpretation|alternative|with|without"  # "Option 1: ... Option 2: ..."
    r"|(?:if|when)(?!\s+(?:we|you|i)\b))\b",
    re.IGNORECASE,
)


def hedged_boxes(gap: str, first: str, second: str, before: str = "") -> bool:
    """Two boxes with ``gap`` between them offer two different values: "18 (or 19)" (a gap of at
    most 60 characters), or two cases side by side, each sentence opening a case ("When n is
    even, the answer is 5. When n is odd, the answer is 6."; ``before``: the text before the
    first box). The same value twice ("\\frac12 or 0.5", "or equivalently") is no hedge."""
    offered = len(gap) <= 60 and bool(_HEDGE_GAP_RE.search(gap))
    cases = len(gap) <= 160 and all(_CASE_HEAD_RE.search(_sentence_head(t)) for t in (before, gap))
    return (offered or cases) and not _same(first, second)


def _sentence_head(text: str) -> str:
    """The last sentence (or line) of ``text``, where a box that ends it starts its sentence."""
    return re.split(r"[.!?](?=\s)|\n", text)[-1]


def _same(a: str, b: str) -> bool:
    """Two boxes that say the same value (``\\frac12`` or ``0.5``): "or equivalently", no hedge."""
    if a.strip() == b.strip():
        return True
    x, y = (exact_value(t.strip()) for t in (a, b))
    return x is not None and y is not None and values_equal(x, y) is True


# "$6 and 30 cents", "6 dollars and 5 cents": one amount (read as its first number it was 6)
_CENTS_RE = re.compile(
    r"(?P<sign>\\?\$\s*)?(?<![\d.])(?P<whole>\d{1,9})(?P<unit>\s+dollars?)?\s+and\s+(?P<cents>\d{1,2})\s*cents?\b"
)


def _in_cents(match: re.Match) -> str:
    if not (match.group("sign") or match.group("unit")):
        return match.group(0)  # "3 and 30 cents": no dollars were named
    amount = f"{match.group('whole')}.{int(match.group('cents')):02d}"
    return f"{match.group('sign') or ''}{amount}{match.group('unit') or ''}"


def in_cents(text: str) -> str:
    """``text`` with each amount in dollars and cents written as one decimal."""
    return _CENTS_RE.sub(_in_cents, text) if "cent" in text else text
