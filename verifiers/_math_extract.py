"""Find the final answer in a math completion, and the gold answer in a dataset's reference.

Strategies, each taking the *last* match of its kind (models revise themselves). The first four
are markers, explicit statements of an answer; by default the marker latest in the text wins, and
the two fallbacks are used only when there is no marker (see ``extract_answer``):

- ``boxed``: ``\\boxed{...}`` / ``\\fbox{...}`` with nested braces (MATH, most chat models);
- ``gsm8k``: the line after ``####`` (GSM8K solutions and models trained on them);
- ``answer_is``: "the (final) answer is ...", cut at the end of the sentence;
- ``answer_line``: an ``Answer:`` / ``**Final Answer:**`` line (or the line after it), also
  ``<answer>...</answer>``, "Corrected answer:", "Answer = ", a ``## Final Answer`` heading;
- ``last_math`` and ``last_number``: the last math span or number (``math_fallback``).

Only the final part of a completion is searched: after a closing ``</think>`` (a ``<think>`` that
never closes is reasoning cut off, so no answer), and before an end-of-turn token or a few-shot
model's next "Question:". Unicode math (``−``, ``√``, ``²``, ``½``, ``·``, ``≥``) is spelled as
LaTeX first (``_math_shape.to_latex``).

Everything here is linear in the input: the text is capped before any regex runs, and brace
matching is bounded, so hostile strings cannot make extraction slow.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from numbers import Number

from passband.verifiers._math_fallback import (
    PROSE_RE,
    clause_result,
    drop_commands,
    last_math,
    last_number,
    result_first,
)
from passband.verifiers._math_final import final_part
from passband.verifiers._math_shape import box_is_operand, hedged_boxes, in_cents, to_latex, unbold

__all__ = ["STRATEGIES", "extract_answer", "extract_gold", "gsm8k_answer", "locate_answer"]

STRATEGIES = ("boxed", "gsm8k", "answer_is", "answer_line", "last_math", "last_number")
MARKERS = frozenset({"boxed", "gsm8k", "answer_is", "answer_line"})  # explicit answer statements

_BOX_RE = re.compile(r"\\(?:boxed|fbox)\b")
_BRACE_RE = re.compile(r"\\[{}]|[{}]")
_ANSWER_IS_RE = re.compile(
    r"(?:answer|(?:correct|right|best)\s+(?:option|choice))\s+(?:is|would\s+be|will\s+be)\b\s*[:：]?",
    re.IGNORECASE,
)
# "Answer:" at a line's start or after a sentence ("The answer is 18. Answer: 19" states 19 last),
# also "My answer:", a bold label with no colon ("**Answer** 19") and a heading line ("## Final
# Answer", "**Final Answer**") whose answer is on the next line; group 1 is the rest of the line,
# read by lookahead so a later label on the line is found too
_ANSWER_LINE_RE = re.compile(
    r"(?:^|(?<=[.!?;,])[ \t]+)[ \t>#*_]*(?:(?:(?:final|my|the|correct(?:ed)?|revised|updated|new)\s+){0,2}"
    r"answer|final\s+result)(?:[ \t*_]*[:：=]|[ \t]*(?:\*\*|__)(?=[ \t]*\S)|[ \t*_]*$)[ \t*_]*(?=(.*)$)",
    re.IGNORECASE | re.MULTILINE,
)
_SENTENCE_END_RE = re.compile(
    r"\.(?=\s|$|[A-Z][a-z])|;|\n|,\s+(?=(?!(?:and|or)\s+[-$\\\d])[A-Za-z]{2,}(?!\w*\s*=))"
    r"|\s+(?:because|since|so|which)\s|\s+\((?=[A-Za-z]{2,})"  # ", and 3": the list goes on
)
_FILLER_RE = re.compile(
    r"(?:(?:(?:the\s+)?(?:final\s+)?answer\s+is|therefore|thus|hence|so|then|simply|just|clearly|exactly"
    r"|equal\s+to|that)\b|=)\s*[,:]?\s*",
    re.IGNORECASE,
)
_WORDY_RE = re.compile(r"([A-Za-z]{2,})\b[^\\^=()]*?(-?\$?\d[\d,]*(?:\.\d+)?\s?%?)[^\\^=()]*")
_MATH_WORDS = tuple("sqrt pi frac ln log sin cos tan exp arc cot sec csc mod".split())
_JOINER_RE = re.compile(  # what may separate sibling boxes
    r"\\[()\[\]]|\\\\|[$,;.\s]|\band\b|\bor\b|\b[A-Za-z]\s*=|\\(?:text|mbox)\s*\{\s*(?:and|or|,)?\s*\}|\\q?quad\b",
    re.IGNORECASE,
)
_SENTENCE_START_RE = re.compile(
    r"[A-Z][a-z']+,? (?:[A-Za-z']{2}|\d)"
)  # "Toulouse has", "Janet, who"
_GSM8K_LEAD_RE = re.compile(r"[ \t:]*")
# "####" opening a Markdown heading, not an answer: a heading word ("#### Step 2: Multiply"), or
# words with no digit at all ("#### Verification"); "#### She makes 18 dollars" is an answer
_HEADING_RE = re.compile(
    r"####[ \t]+[*_]*(?:step|part|case|verification|verify|check|checking|note|notes|solution"
    r"|summary|conclusion|explanation|answer|result|calculation|calculations|reasoning|analysis"
    r"|method|approach|problem|question)\b"
    r"|####[ \t]+[*_]*(?!(?:yes|no|true|false|[A-E])\b[\s.*_]*$)[A-Za-z][^\d\n]*$"
    r"|####[ \t]+[*_]*\d+[.)][ \t]+[A-Za-z]",  # "#### 3. Revenue": a numbered title
    re.IGNORECASE | re.MULTILINE,
)
_BULLET_RE = re.compile(r"^[-*+\u2022\u2013\u2014][ \t]+")
_OPTION_RE = re.compile(r"\(?[A-E]\)?\.?\Z")
_MAX_BOX_TRIES = 8
_MAX_LINE = 300


def extract_answer(
    text: str,
    strategies=STRATEGIES,
    *,
    selection: str = "latest",
    max_chars: int = 20_000,
    max_answer_chars: int = 1_000,
) -> tuple[str, str] | None:
    """``(strategy, answer_text)``, or None when the completion states no answer.

    selection ``"latest"``: of the answer *markers* found (boxed, gsm8k, answer_is, answer_line),
    the one latest in the text wins - a model's final answer comes last, after any "the answer is"
    in its working; the fallbacks (last_math, last_number) are used, in the given order, only when
    no marker is found. ``"first"``: the first strategy in the given order that finds something.
    A marker with nothing usable (an unclosed ``\\boxed{``) that wins means no answer.

    Only the last ``max_chars`` characters are read: final answers sit at the end, and the cap
    keeps every regex below cheap whatever the model wrote.
    """
    found = locate_answer(
        text,
        strategies,
        selection=selection,
        max_chars=max_chars,
        max_answer_chars=max_answer_chars,
    )
    return None if found is None else (found[0], found[1])


def locate_answer(
    text: str,
    strategies=STRATEGIES,
    *,
    selection: str = "latest",
    max_chars: int = 20_000,
    max_answer_chars: int = 1_000,
) -> tuple[str, str, int, str] | None:
    """``extract_answer``'s find with where it sits: ``(strategy, answer, position, searched)``,
    ``searched`` being the text that was read (the final part, without code blocks) and
    ``position`` the answer's place in it (``_math_guard`` reads the words around it)."""
    text = final_part(text)[-max_chars:]
    text = in_cents(text)
    if selection == "first":
        return _first(text, strategies, max_answer_chars)
    hits = []
    for rank, name in enumerate(strategies):
        hit = _EXTRACTORS[name](text, max_answer_chars) if name in MARKERS else None
        if hit is not None:
            hits.append(
                (hit[0], -rank, name, hit[1].strip())
            )  # later wins; ties go to the earlier name
    if hits:
        where, _, name, answer = max(hits)
        return (name, answer, where, text) if answer else None
    return _first(text, [name for name in strategies if name not in MARKERS], max_answer_chars)


def _first(text: str, strategies, limit: int) -> tuple[str, str, int, str] | None:
    for name in strategies:
        hit = _EXTRACTORS[name](text, limit)
        if hit is not None and hit[1].strip():
            return name, hit[1].strip(), hit[0], text
        if hit is not None and name == "boxed":
            return (
                None  # a \boxed{ that never closes: truncated; the numbers before it are no answer
            )
    return None


def extract_gold(answer, *, max_chars: int = 20_000) -> str:
    """The gold answer as text; raises ``ValueError`` saying what is wrong with it.

    Accepts a number, a LaTeX answer, a GSM8K solution ending in ``#### 42`` or a MATH solution
    with a ``\\boxed{}`` answer - the same extraction the completions get.
    """
    if answer is None:
        raise ValueError("is None; give the gold answer (a number, a LaTeX string or a solution)")
    if isinstance(answer, bool) or not isinstance(answer, (str, Number)):
        raise ValueError(f"must be a number or a string, got {type(answer).__name__}")
    if isinstance(answer, Number) and not isinstance(answer, str):
        return _number_text(answer)
    text = to_latex(answer.strip())
    if len(text) > max_chars:
        raise ValueError(f"is {len(text)} characters long; the limit is {max_chars}")
    if "####" in text:
        gold = _gsm8k(text, max_chars)[1]
        if not gold:
            raise ValueError("has '####' but no answer after it")
    elif _BOX_RE.search(text):
        gold = _boxed(text, max_chars)[1]
        if not gold:
            raise ValueError("has a \\boxed{} answer with unbalanced braces or nothing inside")
    else:
        gold = text
    gold = gold.strip().strip("$").strip()
    if not gold:
        raise ValueError("is empty")
    return gold


def _number_text(value: Number) -> str:
    if isinstance(value, (int, Fraction)):
        return str(value)
    if isinstance(value, complex):
        return str(value)
    number = float(value)  # float, Decimal, numpy scalars
    if not math.isfinite(number):
        raise ValueError(f"is not a finite number: {value!r}")
    return str(int(number)) if number.is_integer() else repr(number)


# ----------------------------------------------------------------------------- strategies


def _boxed(text: str, limit: int) -> tuple[int, str] | None:
    """``(where, content)`` of the last balanced ``\\boxed{...}``.

    ``(where, "")`` when the last box never closes (truncated: an earlier box is not the answer
    it ends on; an unclosed box before a closed one is skipped); None when there is no box, or
    only empty ones (``\\boxed{}`` echoed from the prompt). Boxes side by side ("$\\boxed{-2}$ and
    $\\boxed{3}$") are one answer with several parts: ``-2, 3``.
    """
    boxes = [(m.start(), m.end()) for m in _BOX_RE.finditer(text)][-_MAX_BOX_TRIES:]
    unclosed = None
    for i in range(len(boxes) - 1, -1, -1):
        body = _box_body(text, boxes[i][1], limit)
        if body is None:
            continue
        if body[1] < 0:
            if i == len(boxes) - 1:  # a last answer cut off: an earlier box is not what it says
                return boxes[i][1], ""
            unclosed = boxes[i][1] if unclosed is None else unclosed
            continue
        enclosing = [b for b in boxes[:i] if _encloses(text, b[1], boxes[i][0], limit)]
        if enclosing or _BOX_RE.search(body[0]):
            return boxes[i][1], ""  # a box inside a box: which one is the answer is not stated
        parts, at = [body[0]], boxes[i][0]
        for start, end in reversed(boxes[:i]):  # siblings joined by "and", "," or "$ $" only
            sibling = _box_body(text, end, limit)
            gap = text[sibling[1] : at] if sibling and sibling[1] >= 0 else "?"
            if len(gap) > 40 or _JOINER_RE.sub("", gap):
                before = text[max(0, start - 120) : start]  # two different values offered:
                if sibling and hedged_boxes(gap, sibling[0], body[0], before):  # neither is stated
                    return boxes[i][1], ""
                break
            if sibling[0].strip() not in {p.strip() for p in parts}:  # a repeated box: one answer
                parts.append(sibling[0])
            at = start
        if box_is_operand(text, at, body[1]):
            return boxes[i][1], ""  # "-\boxed{18}", "2\boxed{18}", "\boxed{18}^2": not 18
        return boxes[i][1], ", ".join(reversed(parts))
    return None if unclosed is None else (unclosed, "")


def _encloses(text: str, body_start: int, inner: int, limit: int) -> bool:
    """Whether the box whose body starts at ``body_start`` is still open at ``inner``."""
    body = _box_body(text, body_start, limit)
    return body is not None and (body[1] < 0 or body[1] > inner)


def _box_body(text: str, start: int, limit: int) -> tuple[str, int] | None:
    """``(content, end)`` of the box opened at ``start``; ``("", -1)`` if it never closes; None if empty."""
    rest = text[start : start + limit + 2]
    stripped = rest.lstrip()
    offset = len(rest) - len(stripped)
    if not stripped.startswith("{"):  # "\boxed 5": a single token
        token = re.match(r"[^\s$]+", stripped)
        if token and rest[:1].isspace():
            return token.group(0), start + offset + token.end()
        return None
    depth = 0
    for brace in _BRACE_RE.finditer(stripped):
        tok = brace.group(0)
        if len(tok) == 2:  # \{ or \}: a literal brace, not structure
            continue
        depth += 1 if tok == "{" else -1
        if depth == 0:
            content = rest[offset + 1 : offset + brace.start()]
            return (content, start + offset + brace.end()) if content.strip() else None
    return "", -1


def _gsm8k(text: str, limit: int) -> tuple[int, str] | None:
    """The last ``####`` that is an answer marker, not a Markdown heading ("#### Step 2: ...",
    "#### Verification": its step number was read as the answer, and it hid a box before it)."""
    at = len(text)
    while (at := text.rfind("####", 0, at)) >= 0:
        if not _HEADING_RE.match(text, at) and not (at and text[at - 1] == "#"):  # "#####"
            return at, gsm8k_answer(text, at, limit)
    return None


def gsm8k_answer(text: str, at: int, limit: int) -> str:
    """The answer on the line after the ``####`` at ``at`` ("" when there is none)."""
    start = _GSM8K_LEAD_RE.match(text, at + 4).end()  # past "####" and its spaces or colon
    return _trim_phrase(text[start : start + limit + 50].split("\n", 1)[0]) or ""


def _answer_is(text: str, limit: int) -> tuple[int, str] | None:
    last = previous = None
    for match in _ANSWER_IS_RE.finditer(text):
        previous, last = last, match
    if last is None:
        return None
    if previous is not None and not text[last.end() :].strip(" \t\n.:*"):
        last = previous  # "... The answer is 160.The answer is" cut off: the one before counts
    rest = text[
        last.end() : last.end() + limit + 50
    ]  # a long answer is read whole, up to the answer limit
    if not rest.split("\n", 1)[0].strip(" \t*_:"):  # "The answer is:\n\n$18"
        rest = rest.lstrip(" \t\n*_:")
    return last.end(), _trim_phrase(rest) or ""


def _answer_line(text: str, limit: int) -> tuple[int, str] | None:
    """The last answer label that has something after it (a trailing "Final answer" with
    nothing below states nothing, and an earlier label stands)."""
    for last in reversed(list(_ANSWER_LINE_RE.finditer(text))):
        phrase, lines = last.group(1).strip(" *_"), []
        if not phrase:  # "**Final Answer:**" then the answer on the next non-empty line
            following = text[last.end() : last.end() + _MAX_LINE * 4]
            lines = [line.strip() for line in following.split("\n") if line.strip()][:2]
            phrase = lines[0] if lines else ""
        phrase = _BULLET_RE.sub("", phrase)  # "- 12", "— 18": a bullet or a dash, no minus
        loose = not re.search(r"[:：=]", last.group(0))  # "**Final Answer**", "## Answer"
        listed = len(lines) == 2 and _bare(lines[0]) and _bare(lines[1])  # "12\n13" below it
        if listed or (loose and not _bare(phrase)):
            continue  # a list of values, or prose under a heading: no single stated answer
        if phrase:
            return _line_answer(last, phrase, limit)
    return None


def _bare(phrase: str) -> bool:
    """A line that is a value and no more: a box, or a short line with a digit and at most
    three words ("12 apples", "$18", "\\frac{1}{2}"), or an option ("(B)")."""
    p = phrase.strip(" \t*_")
    if _BOX_RE.search(p):
        return True
    words = re.findall(r"[A-Za-z]{2,}", re.sub(r"\\[A-Za-z]+", " ", p))
    return len(p) <= 40 and len(words) <= 3 and bool(re.search(r"\d", p) or _OPTION_RE.match(p))


def _line_answer(last: re.Match, phrase: str, limit: int) -> tuple[int, str]:
    if _BOX_RE.search(phrase):
        return last.start(1), (_boxed(phrase, limit) or (0, ""))[1]
    if _SENTENCE_START_RE.match(phrase) and not _FILLER_RE.match(phrase):
        # "Answer: Toulouse has 160 sheep, so together they have 260 sheep." - a sentence: its last number
        stated = clause_result(phrase[: limit + 50])
        if stated is not None:
            return last.start(1), stated
    return last.start(1), _trim_phrase(phrase[: limit + 50]) or ""


def _trim_phrase(phrase: str) -> str | None:
    """The answer at the start of a sentence fragment: a math span, a currency amount or words."""
    phrase = unbold(phrase.lstrip(" \t*_:"))
    for _ in range(4):  # "The answer is therefore = 18": fillers before the answer
        filler = _FILLER_RE.match(phrase)
        if not filler or not filler.group(0):
            break
        phrase = phrase[filler.end() :]
    if phrase.startswith(("\\(", "\\[")):
        close = phrase.find("\\)" if phrase[1] == "(" else "\\]", 2)
        return phrase[2:close] if close > 0 else None
    if phrase.startswith("\\$"):  # escaped dollar: currency
        phrase = phrase[2:]
    elif phrase.startswith("$$"):
        close = phrase.find("$$", 2)
        return phrase[2:close] if close > 0 else None
    elif phrase.startswith("$"):
        close = _unescaped_dollar(phrase, 1)
        if close > 0 and not PROSE_RE.search(drop_commands(phrase[1:close])):
            return phrase[1:close]  # "$\\frac{1}{2}$" or "$18$"
        currency = re.match(r"\$\s?(-?\d[\d,]*(?:\.\d+)?)", phrase)
        if currency:  # "$18 every day": a dollar amount
            return currency.group(1)
        phrase = phrase[1:]
    end = _SENTENCE_END_RE.search(phrase)
    first = phrase[: end.start()] if end else phrase
    wordy = _WORDY_RE.fullmatch(first.strip())
    if wordy and not wordy.group(1).lower().startswith(_MATH_WORDS):
        # "she makes 18 dollars": the number in a worded answer; its last, as in a capitalised
        # sentence ("after eating one of her 42 cookies she has 41" states 41)
        return clause_result(phrase) or wordy.group(2)
    return result_first(first) or first  # "18 dollars after 2 days" states 18


def _unescaped_dollar(text: str, start: int) -> int:
    """Index of the next ``$`` that is not ``\\$`` (a literal dollar inside math), or -1."""
    match = re.compile(r"(?<!\\)\$").search(text, start)
    return match.start() if match else -1


_EXTRACTORS = {
    "boxed": _boxed,
    "gsm8k": _gsm8k,
    "answer_is": _answer_is,
    "answer_line": _answer_line,
    "last_math": last_math,
    "last_number": last_number,
}
