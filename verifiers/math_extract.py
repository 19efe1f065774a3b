"""Find the final answer in a math completion, and the gold answer in a dataset's reference.

Strategies, each taking the *last* match of its kind (models revise themselves). The first four
are markers, explicit statements of an answer; by default the marker latest in the text wins, and
the two fallbacks are used only when there is no marker (see ``extract_answer``):

- ``boxed``: ``\\boxed{...}`` / ``\\fbox{...}`` with nested braces (MATH, most chat models);
- ``gsm8k``: the line after ``####`` (GSM8K solutions and models trained on them);
- ``answer_is``: "the (final) answer is ...", cut at the end of the sentence;
- ``answer_line``: an ``Answer:`` / ``**Final Answer:**`` line (or the line after it);
- ``last_math``: the last ``\\(..\\)``, ``\\[..\\]`` or ``$..$`` span, if no number follows it;
- ``last_number``: the last number in the text (a fallback, like lm-eval's "flexible" match).

Everything here is linear in the input: the text is capped before any regex runs, and brace
matching is bounded, so hostile strings cannot make extraction slow.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from numbers import Number

__all__ = ["STRATEGIES", "chain_rhs", "extract_answer", "extract_gold"]

STRATEGIES = ("boxed", "gsm8k", "answer_is", "answer_line", "last_math", "last_number")
MARKERS = frozenset({"boxed", "gsm8k", "answer_is", "answer_line"})  # explicit answer statements

_BOX_RE = re.compile(r"\\(?:boxed|fbox)\b")
_BRACE_RE = re.compile(r"\\[{}]|[{}]")
_CALC_RE = re.compile(r"<<[^<>\n]{0,200}>>")  # GSM8K calculator annotations: <<9*2=18>>
_ANSWER_IS_RE = re.compile(r"answer\s+(?:is|would\s+be|will\s+be)\s*[:：]?", re.IGNORECASE)
_ANSWER_LINE_RE = re.compile(
    r"^[ \t>#*_]*(?:final\s+)?answer[ \t*_]*[:：][ \t*_]*(.*)$", re.IGNORECASE | re.MULTILINE
)
_SENTENCE_END_RE = re.compile(
    r"\.(?=\s|$)|;|\n|,\s+(?=[A-Za-z]{2,})|\s+(?:because|since|so|which)\s|\s+\((?=[A-Za-z]{2,})"
)
_NUMBER_RE = re.compile(r"(?<![\w.,])(-?\$?)(\d{1,3}(?:,\d{3})+(?![\d])|\d+)(\.\d+)?(?:/(\d+))?(?![\d])")
_DELIM_RE = re.compile(r"\\[()\[\]]|\$\$")
_CLOSER = {"\\(": "\\)", "\\[": "\\]", "$$": "$$"}
_PROSE_RE = re.compile(r"(?<!\\)\b[A-Za-z]{2,}\s+[A-Za-z]{2,}\b")
_FILLER_RE = re.compile(
    r"(?:(?:(?:the\s+)?(?:final\s+)?answer\s+is|therefore|thus|hence|so|then|simply|just|clearly|exactly"
    r"|equal\s+to|that)\b|=)\s*[,:]?\s*",
    re.IGNORECASE,
)
_WORDY_RE = re.compile(r"([A-Za-z]{2,})\b[^\\^=()]*?(-?\$?\d[\d,]*(?:\.\d+)?\s?%?)[^\\^=()]*")
_MATH_WORDS = ("sqrt", "pi", "frac", "ln", "log", "sin", "cos", "tan", "exp", "arc", "cot", "sec", "csc", "mod")
# Text after these is not the answer: end-of-turn tokens, or a few-shot model writing the next question.
_RUNON_MARKERS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>", "\n\nQuestion:", "\n\nQ:", "\n\nProblem:")
_MAX_BOX_TRIES = 8
_MAX_LINE = 300


def extract_answer(text: str, strategies=STRATEGIES, *, selection: str = "latest", max_chars: int = 20_000,
                   max_answer_chars: int = 1_000) -> tuple[str, str] | None:
    """``(strategy, answer_text)``, or None when the completion states no answer.

    selection ``"latest"``: of the answer *markers* found (boxed, gsm8k, answer_is, answer_line),
    the one latest in the text wins - a model's final answer comes last, after any "the answer is"
    in its working; the fallbacks (last_math, last_number) are used, in the given order, only when
    no marker is found. ``"first"``: the first strategy in the given order that finds something.
    A marker with nothing usable (an unclosed ``\\boxed{``) that wins means no answer.

    Only the last ``max_chars`` characters are read: final answers sit at the end, and the cap
    keeps every regex below cheap whatever the model wrote.
    """
    text = _cut_runon(text)[-max_chars:]
    if selection == "first":
        return _first(text, strategies, max_answer_chars)
    hits = []
    for rank, name in enumerate(strategies):
        hit = _EXTRACTORS[name](text, max_answer_chars) if name in MARKERS else None
        if hit is not None:
            hits.append((hit[0], -rank, name, hit[1].strip()))  # later wins; ties go to the earlier name
    if hits:
        _, _, name, answer = max(hits)
        return (name, answer) if answer else None
    return _first(text, [name for name in strategies if name not in MARKERS], max_answer_chars)


def _first(text: str, strategies, limit: int) -> tuple[str, str] | None:
    for name in strategies:
        hit = _EXTRACTORS[name](text, limit)
        if hit is not None and hit[1].strip():
            return name, hit[1].strip()
        if hit is not None and name == "boxed":
            return None  # a \boxed{ that never closes: truncated; the numbers before it are no answer
    return None


def _cut_runon(text: str) -> str:
    cuts = [at for at in (text.find(marker) for marker in _RUNON_MARKERS) if at > 0]
    return text[:min(cuts)] if cuts else text


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
    text = answer.strip()
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
    """``(where, content)`` of the last balanced ``\\boxed{...}``; earlier ones if it is cut off.

    ``(where, "")`` when the last box never closes (truncated); None when there is no box, or
    only empty ones (``\\boxed{}`` echoed from the prompt).
    """
    starts = [m.end() for m in _BOX_RE.finditer(text)][-_MAX_BOX_TRIES:]
    unclosed = None
    for start in reversed(starts):
        rest = text[start:start + limit + 2]
        stripped = rest.lstrip()
        if not stripped.startswith("{"):  # "\boxed 5": a single token
            token = re.match(r"[^\s$]+", stripped)
            if token and rest[:1].isspace():
                return start, token.group(0)
            continue
        offset = len(rest) - len(stripped)
        depth = 0
        for brace in _BRACE_RE.finditer(stripped):
            tok = brace.group(0)
            if len(tok) == 2:  # \{ or \}: a literal brace, not structure
                continue
            depth += 1 if tok == "{" else -1
            if depth == 0:
                content = rest[offset + 1:offset + brace.start()]
                if content.strip():
                    return start, content
                break
        else:
            unclosed = start if unclosed is None else unclosed
    return None if unclosed is None else (unclosed, "")


def _gsm8k(text: str, limit: int) -> tuple[int, str] | None:
    at = text.rfind("####")
    if at < 0:
        return None
    line = text[at + 4:].lstrip(" \t:").split("\n", 1)[0]
    return at, _trim_phrase(line[:limit + 50]) or ""


def _answer_is(text: str, limit: int) -> tuple[int, str] | None:
    last = None
    for last in _ANSWER_IS_RE.finditer(text):
        pass
    if last is None:
        return None
    return last.end(), _trim_phrase(text[last.end():last.end() + min(limit, _MAX_LINE) + 50]) or ""


def _answer_line(text: str, limit: int) -> tuple[int, str] | None:
    last = None
    for last in _ANSWER_LINE_RE.finditer(text):
        pass
    if last is None:
        return None
    phrase = last.group(1).strip(" *_")
    if not phrase:  # "**Final Answer:**" then the answer on the next non-empty line
        following = text[last.end():last.end() + _MAX_LINE * 4].strip().split("\n", 1)
        phrase = following[0] if following else ""
    if _BOX_RE.search(phrase):
        return last.start(1), (_boxed(phrase, limit) or (0, ""))[1]
    return last.start(1), _trim_phrase(phrase[:limit + 50]) or ""


def _trim_phrase(phrase: str) -> str | None:
    """The answer at the start of a sentence fragment: a math span, a currency amount or words."""
    phrase = phrase.lstrip(" \t*_:").replace("**", "")
    for _ in range(4):  # "The answer is therefore = 18": fillers before the answer
        filler = _FILLER_RE.match(phrase)
        if not filler or not filler.group(0):
            break
        phrase = phrase[filler.end():]
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
        if close > 0 and not _PROSE_RE.search(_drop_commands(phrase[1:close])):
            return phrase[1:close]  # "$\\frac{1}{2}$" or "$18$"
        currency = re.match(r"\$\s?(-?\d[\d,]*(?:\.\d+)?)", phrase)
        if currency:  # "$18 every day": a dollar amount
            return currency.group(1)
        phrase = phrase[1:]
    end = _SENTENCE_END_RE.search(phrase)
    phrase = phrase[:end.start()] if end else phrase
    wordy = _WORDY_RE.fullmatch(phrase.strip())
    if wordy and not wordy.group(1).lower().startswith(_MATH_WORDS):
        return wordy.group(2)  # "she makes 18 dollars": the number in a worded answer
    return phrase


def _unescaped_dollar(text: str, start: int) -> int:
    """Index of the next ``$`` that is not ``\\$`` (a literal dollar inside math), or -1."""
    match = re.compile(r"(?<!\\)\$").search(text, start)
    return match.start() if match else -1


def _last_math(text: str, limit: int) -> tuple[int, str] | None:
    """The last math span, unless a number comes after it (then ``last_number`` decides)."""
    spans = _delimited_spans(text) + _dollar_spans(text)
    if not spans:
        return None
    start, end, body = max(spans)
    if _NUMBER_RE.search(text, end) or len(body) > limit:
        return None
    return start, chain_rhs(body)


def _delimited_spans(text: str) -> list[tuple[int, int, str]]:
    """``\\(..\\)``, ``\\[..\\]`` and ``$$..$$`` spans, paired in one linear pass."""
    spans, opened = [], None
    for tok in _DELIM_RE.finditer(text):
        mark = tok.group(0)
        if opened is None:
            if mark in _CLOSER:
                opened = tok
        elif mark == _CLOSER[opened.group(0)]:
            spans.append((opened.start(), tok.end(), text[opened.end():tok.start()]))
            opened = None
    return spans


def _dollar_spans(text: str) -> list[tuple[int, int, str]]:
    """Single-``$`` spans, unless the ``$`` signs are currency (then the pairing is meaningless)."""
    text = text.replace("\\$", "  ").replace("$$", "  ")
    marks = [m.start() for m in re.finditer(r"\$", text)]
    if len(marks) % 2:
        return []
    spans = [(a, b + 1, text[a + 1:b]) for a, b in zip(marks[::2], marks[1::2])]
    if any(_PROSE_RE.search(_drop_commands(body)) for _, _, body in spans):
        return []
    return spans


def _drop_commands(body: str) -> str:
    """Math without its LaTeX commands and ``\\text{}`` words, to tell prose from formulas."""
    return re.sub(r"\\[A-Za-z]+\s*(\{[^{}]*\})?", " ", body)


def chain_rhs(body: str) -> str:
    """``9 \\times 2 = 18`` -> ``18``: the value of a computation is after its last ``=``.

    Also ``x = 3``, ``Total = 18`` and ``5 gallons * 8 pints = 40 pints`` (unit words); an equation
    with unknowns on the left (``2x + 3 = 7``) is left alone, as its right side is not the answer.
    """
    if "=" not in body:
        return body
    lhs, rhs = body.rsplit("=", 1)
    lhs = re.sub(r"\\(?:text|mathrm|textbf)\s*\{[^{}]*\}|\\(?:times|cdot|div|[dt]?frac|left|right)", " ", lhs)
    words = re.findall(r"[A-Za-z]+", lhs)
    computation = (
        not words
        or (len(words) == 1 and (len(words[0]) == 1 or len(words[0]) >= 3) and lhs.strip() == words[0])
        or (re.search(r"\d", lhs) and all(len(w) >= 2 for w in words))
    )
    return rhs.strip() if computation and rhs.strip() else body


def _last_number(text: str, limit: int) -> tuple[int, str] | None:
    last = None
    for last in _NUMBER_RE.finditer(_CALC_RE.sub(" ", text)):
        pass
    if last is None:
        return None
    return last.start(), last.group(0)[:limit + 1]


_EXTRACTORS = {
    "boxed": _boxed,
    "gsm8k": _gsm8k,
    "answer_is": _answer_is,
    "answer_line": _answer_line,
    "last_math": _last_math,
    "last_number": _last_number,
}
