"""Is a predicted answer equal to the gold one?

Two paths. ``fast_equal`` decides plain numbers (``$1,000``, ``12.00``, ``-3``, ``25\\%``,
``\\frac{3}{4}``, ``18 dollars``, ``x = 3``) and the other shapes of ``math_forms`` exactly, with
fractions and no sympy, in microseconds; it answers None when it cannot decide. ``slow_compare``
hands the rest (symbolic expressions, pi, unions, anything unusual) to math-verify's ``parse`` +
``verify``, which runs sympy and can take unbounded time on hostile input: callers run it through
``call_with_deadline`` in a killable worker. math-verify's own ``signal.alarm`` timeouts are off
(they break in threads); the worker's deadline replaces them.

math-verify is imported at module level on purpose: the deadline workers are forked from a server
that preloads ``passband.verifiers``, so a replacement worker starts with sympy already loaded
instead of spending its first deadline importing it.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from functools import lru_cache

from latex2sympy2_extended.latex2sympy2 import NormalizationConfig
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from passband.verifiers._math_chain import false_link
from passband.verifiers._math_exact import complex_equal, contradicts
from passband.verifiers._math_fallback import chain_rhs
from passband.verifiers._math_forms import OTHER_CHOICE_RE, exact_value, values_equal
from passband.verifiers._math_shape import unbold

__all__ = ["fast_equal", "normalize", "repair", "slow_compare"]

_DIGIT_GROUP_RE = re.compile(r"(?<=\d)(?:,?\\[,!]\s*|\\[,!]?,\s*)(?=\d{3}(?!\d))")
_SPACING_RE = re.compile(r"(?<!\\)\\[,;:> ]|\\q?quad\b|~|\\displaystyle|\\left\b\.?|\\right\b\.?")
_WRAPPER_RE = re.compile(
    r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}"
)
# a degree sign, with the scale after it ("5^{\circ}C", "5°F"); a bare "C" elsewhere stays
_DEGREE_RE = re.compile(r"(?:\^\s*\{?\\circ\}?|\\circ\b|\\degree\b|°)(?:\s*[CF](?![A-Za-z]))?")
_FRAC_RE = re.compile(r"\\[dt]frac(?![A-Za-z])")
_ASSIGN_RE = re.compile(r"([A-Za-z])\s*=\s*(.+)", re.DOTALL)
# Spellings of the same LaTeX: e^{2} / e^2, \sqrt2 / \sqrt{2}, \frac12 / \frac{1}{2}.
_CANON = (
    (re.compile(r"\^\{\s*([A-Za-z0-9])\s*\}"), r"^\1"),
    (re.compile(r"\\sqrt\s*([A-Za-z0-9])"), r"\\sqrt{\1}"),
    (re.compile(r"\\frac\s*([A-Za-z0-9])\s*([A-Za-z0-9])"), r"\\frac{\1}{\2}"),
)
_NOT_A_SUM_RE = re.compile(
    r"[=<>,;|!]|\\(?:pm|mp|cup|cap|setminus|le|ge|ne|neq|in|to|leq|geq)\b|(?:[\^*/]|\\cdot|\\times)\s*[+-]"
)
_TERM_RE = re.compile(r"[+-]?[^+\-]+")
_CHOICE_VALUE_RE = re.compile(r"\([A-E]\)\s+([^()\s].{0,40})")
_SPACE_RE = re.compile(r"(?<!\d) +| +(?!\d)")
_THOUSANDS_SPACE_RE = re.compile(r"(?<=\d) (?=\d{3}(?!\d))")
# a plain decimal's written places, trailing zeros included (not a mantissa: "1.50e-3", "1.5 \times")
_DECIMAL_RE = re.compile(r"(?<![\d.])\d*\.(\d+)(?![\d.eE])(?!\s*(?:\\times|\\cdot|×))")
_IMAGINARY_RE = re.compile(r"(?<![A-Za-z\\])i(?![A-Za-z])|\\sqrt\s*\{\s*-")
_PAREN_SQRT_RE = re.compile(r"\\sqrt\s*\(([^()]{1,40})\)")  # 7\sqrt(3): a root, never "7"
_UPRIGHT_CONST_RE = re.compile(
    r"\\(?:mathrm|mathit|text|rm|operatorname)\s*\{\s*([ei])\s*\}"
)  # \mathrm{e}
# Reading what math-verify dropped: letters in words (``\text{ cm}``) and command names are not
# free letters; a parse that ends in an operator stopped midway ("42 - t" read as "42 -").
_WORDS_RE = re.compile(r"\\(?:text[a-z]*|math[a-z]+|mbox|operatorname)\s*\{[^{}]*\}")
_COMMAND_RE = re.compile(r"\\[A-Za-z]+")
_LETTERS_RE = re.compile(r"[A-Za-z]+")
_ENDS_IN_OPERATOR_RE = re.compile(r"(?:[-+*/^=]|\\cdot|\\times|\\div)\s*$")
# a plain number and one letter after a space (also LaTeX's "\ ", "\,"): a unit ("5 m", "10 s"),
# as math-verify reads it; touching the number, only a common unit ("5m", "30s"; "3d" is 3*d)
_NUMBER_UNIT_RE = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:(?:\s|\\[ ,;:]|~)+[A-Za-z]|[mshgl])")
# math-verify's own parse with its unit stripping off: "3d" is 3*d, not 3
_NO_UNITS = [
    LatexExtractionConfig(
        normalization_config=NormalizationConfig(units=False, malformed_operators=True, nits=True)
    ),
    ExprExtractionConfig(),
]
_IN_SET_RE = re.compile(
    r"^[A-Za-z]\s*\\in(?![A-Za-z])\s*(?=[\[(\\{]|\\(?:mathbb|emptyset|varnothing))"
)


def normalize(text: str) -> str:
    """Strip the wrappers that never change the value: ``$``, ``\\text{}``, spacing, ``\\left``."""
    text = text.strip()
    text = text.replace("\\$", "").replace("$", "").replace("\\%", "%").replace("−", "-")
    text = text.replace("€", "").replace("£", "").replace("\\euro", "").replace("\\pounds", "")
    text = repair(text.replace("{,}", ",").replace("\\(", "").replace("\\)", ""))
    text = _DIGIT_GROUP_RE.sub(",", text).replace("\\!", "")
    text = _THOUSANDS_SPACE_RE.sub(",", text)
    text = _SPACING_RE.sub(" ", text)
    text = _FRAC_RE.sub(r"\\frac", text)
    text = _DEGREE_RE.sub("", text)
    for _ in range(3):  # nested \text{\textbf{..}}; bounded
        text = _WRAPPER_RE.sub(r" \1 ", text)
    for regex, repl in _CANON:
        text = regex.sub(repl, text)
    text = unbold(text)
    text = " ".join(text.split())
    return text.rstrip(" .").strip()


def repair(text: str) -> str:
    """Spellings both paths must read alike: ``7\\sqrt(3)`` is a root (math-verify reads 7),
    ``\\mathrm{e}`` is ``e`` (math-verify stops reading at it),
    ``\\varnothing`` is ``\\emptyset``, and in ``x \\in [-3, 5]`` the set is the answer."""
    text = _PAREN_SQRT_RE.sub(r"\\sqrt{\1}", text)
    text = _UPRIGHT_CONST_RE.sub(r"\1", text)
    text = text.replace("\\varnothing", "\\emptyset").replace("\\{\\}", "\\emptyset")
    return _IN_SET_RE.sub("", text.strip())


def fast_equal(gold: str, pred: str) -> bool | None:
    """True/False when both sides have an exact value (``math_forms``); None to go the slow way."""
    g, p = normalize(gold), normalize(pred)
    if not g or not p:
        return None
    if g == p or _squeeze(g) == _squeeze(p):
        return True
    g_var, g = _split_assignment(g)
    p_var, p = _split_assignment(p)
    if g_var and p_var and g_var != p_var:
        return None
    if _squeeze(g) == _squeeze(p) or _same_terms(g, p):  # "y = 2x + 3" vs "3+2x"
        return True
    g_val = exact_value(g)
    choice = _CHOICE_VALUE_RE.fullmatch(p)
    if choice and OTHER_CHOICE_RE.search(choice.group(1)):
        return False  # "(B) 12 or (C) 15": two choices, a hedge
    if choice and g_val is not None and g_val[0] != "choice":
        p = choice.group(1)  # "(D) 15" for a gold of 15: the value behind the letter
    p_val = exact_value(p) if g_val is not None else None
    if g_val is None or p_val is None:
        return None
    return values_equal(g_val, p_val)


def _squeeze(text: str) -> str:
    """Without spaces, except between digits: ``2 6 0`` is not ``260`` (``20 500`` was joined already)."""
    return _SPACE_RE.sub("", text)


def _same_terms(gold: str, pred: str) -> bool:
    """``x^2 + 7x + 10`` vs ``10 + 7x + x^2``: the same terms in another order (True only when sure)."""
    if _NOT_A_SUM_RE.search(gold) or _NOT_A_SUM_RE.search(pred):
        return False
    g_terms, p_terms = _terms(gold), _terms(pred)
    return g_terms is not None and len(g_terms) > 1 and g_terms == p_terms


def _terms(text: str) -> list[str] | None:
    """Signed top-level terms, sorted; None when a sign sits inside brackets (no safe split)."""
    text = text.replace(" ", "")
    depth = 0
    for ch in text:
        depth += ch in "({[" and 1 or ch in ")}]" and -1 or 0
        if depth and ch in "+-":
            return None
    terms = _TERM_RE.findall(text)
    if "".join(terms) != text:
        return None
    return sorted(t if t[0] in "+-" else "+" + t for t in terms)


def _split_assignment(text: str) -> tuple[str | None, str]:
    """``x = 3`` -> ``("x", "3")``; ``9 \\times 2 = 18`` -> ``(None, "18")``; else unchanged."""
    match = _ASSIGN_RE.fullmatch(text)
    if match and "=" not in match.group(2):
        return match.group(1), match.group(2).strip()
    return None, chain_rhs(text)


# ----------------------------------------------------------------------------- slow path


def slow_compare(gold: str, pred: str) -> tuple[str, str]:
    """``(status, detail)`` from math-verify; status is ``ok``, ``wrong``, ``invalid`` or ``error``.

    Top-level and returning plain tuples so that it pickles into a deadline worker.
    """
    _quiet_math_verify()
    gold_parsed = _parse_gold(gold)
    if not _has_math(gold_parsed):
        return (
            "error",
            f"reference field 'answer': math-verify cannot parse the gold answer {_short(gold)}",
        )
    pred_parsed = _parse_latex(pred)
    if not _has_math(pred_parsed):
        return "invalid", f"cannot parse the answer {_short(pred)}"
    if false_link(pred):  # "\\sqrt{4} = 3": a false statement, whichever side matches the gold
        return "wrong", f"{_short(pred)} is a false equation"
    try:
        same = _agree(gold, pred, gold_parsed, pred_parsed)
    except Exception as exc:  # math-verify swallows most errors itself; be sure
        return "invalid", f"cannot compare {_short(pred)} with the gold: {type(exc).__name__}"
    if same:
        return "ok", f"{_short(pred)} equals {_short(gold)}"
    return "wrong", f"{_short(pred)} is not {_short(gold)}"


def _agree(gold: str, pred: str, gold_parsed: list, pred_parsed: list) -> bool:
    """math-verify's verdict on some pair of parses, unless ``math_exact`` shows the values differ."""
    g, p = _first_math(gold_parsed), _first_math(pred_parsed)
    if verify(gold_parsed, pred_parsed, timeout_seconds=None, raise_on_error=False):
        percent = "%" in gold or "%" in pred  # math-verify's own percent rule (25% = 25) stands
        places = max((len(m) for m in _DECIMAL_RE.findall(f"{gold} {pred}")), default=0)
        return percent or g is None or p is None or not contradicts(g, p, places)
    if _IMAGINARY_RE.search(gold) or _IMAGINARY_RE.search(pred):
        return g is not None and p is not None and complex_equal(g, p)
    return False


def _first_math(parsed: list):
    return next((item for item in parsed if not isinstance(item, str)), None)


def _has_math(parsed: list) -> bool:
    """math-verify falls back to the raw string when parsing fails; that is not a parse."""
    return any(not isinstance(item, str) for item in parsed)


@lru_cache(maxsize=2048)
def _parse_gold(gold: str) -> list:
    """Cached: one gold answer is compared with a whole group of completions."""
    return _parse_latex(gold)


def _parse_latex(text: str) -> list:
    body = repair(text.replace("$", ""))
    if not body:
        return []
    try:
        parsed = parse(f"${body}$", parsing_timeout=None, raise_on_error=False)
        if any(isinstance(item, str) and _dropped(body, item) for item in parsed):
            parsed = parse(f"${body}$", _NO_UNITS, parsing_timeout=None, raise_on_error=False)
    except Exception:  # noqa: BLE001 - any parser failure means "not parsable"
        return []
    # math-verify reports the text it parsed; with braces left open it stopped midway and the
    # value is a fragment ("2 + \frac{1}{\mathrm{e}}" read as 2): no parse at all is safer.
    if any(isinstance(item, str) and item.count("{") != item.count("}") for item in parsed):
        return []
    return parsed


def _dropped(body: str, read: str) -> bool:
    """Did math-verify's unit stripping drop part of the value? ``42 - t`` read as ``42 -``,
    ``3d`` or ``2\\pi h`` read without the letter: a free letter (outside ``\\text{}`` and command
    names) is missing from what it read, or what it read ends in an operator. A dropped word after
    a space stays a unit (``5 cm``, ``2\\pi ft``), and so does one letter after a plain number (``5 m``)."""
    if _NUMBER_UNIT_RE.fullmatch(body.strip()):
        return False
    if _ENDS_IN_OPERATOR_RE.search(read) and not _ENDS_IN_OPERATOR_RE.search(body):
        return True
    kept = Counter(word for word, _ in _free_letters(read))
    for word, spaced in _free_letters(body):
        if kept[word]:
            kept[word] -= 1
        elif len(word) == 1 or not spaced:
            return True
    return False


def _free_letters(text: str) -> list[tuple[str, bool]]:
    """The runs of letters that are not words or command names, each with: is a space before it?"""
    text = _COMMAND_RE.sub("#", _WORDS_RE.sub("#", text))
    return [
        (m.group(), m.start() > 0 and text[m.start() - 1].isspace())
        for m in _LETTERS_RE.finditer(text)
    ]


def _quiet_math_verify() -> None:
    # Disabling math-verify's signal timeouts makes it log a warning per process; the deadline
    # worker is the timeout, so the warning is noise. Only ever runs inside worker processes.
    for name in ("math_verify", "math_verify.parser", "math_verify.grader"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
