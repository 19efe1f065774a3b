"""The fallback answer extractors of ``math_extract``: used only when a completion states no answer.

- ``last_math``: the last ``\\(..\\)``, ``\\[..\\]`` or ``$..$`` span, if no number follows it;
- ``last_number``: the last number in the text (lm-eval's "flexible" match), with the refinements
  that real model output needs, checked on the 8.8k GSM8K reference solutions (80 more right,
  2 more wrong than the plain last number): in the closing sentence, the amount of "pay $64 for 16
  glasses" and the result of "540 meters in 3 sprints" rather than the qualifier after it; a
  trailing "Note: ..." or "(9 eggs x $2)" is ignored; mixed numbers (``1 1/2``), ``$.50`` and
  ``1 million`` are numbers; failing any digit, a number word ("five apples") or the last bold
  phrase (``**(B)**``, ``\\textbf{Tuesday}``).

A last number that is one piece of something larger states nothing either: inside
``\\frac{1}{2}`` or ``10^{2}``, before ``\\pi`` or ``(``, in "12 or 13", "12-13", "12 by 13",
"between 12 and 13", the fraction of "3 and 1/2", or a question ("Is it 13?").

A completion cut off mid-sentence ("... so the total is") states nothing: the numbers in its
working are not an answer, so the fallbacks find nothing there.

Everything is linear in the input (the caller caps its length first).
"""

from __future__ import annotations

import re

from passband.verifiers._math_rules import false_chain

__all__ = [
    "NUMBER_RE",
    "PROSE_RE",
    "chain_rhs",
    "clause_result",
    "drop_commands",
    "last_math",
    "last_number",
    "result_first",
]

NUMBER_RE = re.compile(
    r"(?<![\w.,])(-?\$?)"
    r"(?:(\d{1,3}(?:,\d{3})+(?![\d])|\d{1,3}(?: \d{3})+(?![\d/\w-])|\d+)"  # 1,234 | 2 500 | 42
    r"(\.\d+)?(?: \d+/\d+(?![\d/])|/\d+)?|\.\d+)(?![\d])"  # decimals, mixed numbers, fractions
    r"(?: (?:hundred|thousand|million|billion)\b){0,3}"
)
PROSE_RE = re.compile(r"(?<!\\)\b[A-Za-z]{2,}\s+[A-Za-z]{2,}\b")
_CALC_RE = re.compile(r"<<[^<>\n]{0,200}>>")  # GSM8K calculator annotations: <<9*2=18>>
_DELIM_RE = re.compile(r"\\[()\[\]]|\$\$")
_CLOSER = {"\\(": "\\)", "\\[": "\\]", "$$": "$$"}
_SENTENCE_RE = re.compile(r"[.!?](?=\s|$)|\n")
_COUNTED_RE = re.compile(r"\s*[A-Za-z]")  # "16 glasses": a count of things, not the amount paid
_FOR_RE = re.compile(r"\s+(?:for|from)\s+(?:[A-Za-z]+\s+){0,2}")  # "$64 for 16 glasses"
_DANGLING_RE = re.compile(
    r"(?:\b(?:and|or|so|the|a|an|of|to|is|are|was|were|be|by|for|from|with|then|but|because|which|that"
    r"|we|this|as|if|into|than|plus|minus|equals|gives|get|let's|let|times|over|divided\s+by"
    r"|multiplied\s+by)|[=+(/^]|(?<=\d)\s*(?:[-x]|\\div)|\\times|\\cdot)[\s*_]*$",
    re.IGNORECASE,
)
# after the last number, an operator and what it works on ("Then 18 * x", "Then 18 *"): that
# number is an operand of an unfinished expression, not the answer (in "**18**" and "*18* apples"
# the stars are emphasis)
_OPERAND_RE = re.compile(
    r"\s+\*(?!\*)|\*(?=[A-Za-z(\d])|\s*(?:[\u00d7\u00f7^]|\\(?:times|cdot|div)(?![A-Za-z]))"
    r"|\s*[+/]\s*(?:[\d(\\$]|[A-Za-z](?![A-Za-z]))"  # "$18 / month" is a rate
    r"|!(?:[ \t]*[a-z\d(=+*/\\]|\$)"  # "18! ways", "$18!$": a factorial ("Wow, 18!" is not)
)
# before the last number, a digit and a colon: "1:18" is a ratio, "3:18 pm" a time, not 18;
# a numbered label is not ("Week 3:210 pages"; "Step 2: 18" has a space after its colon)
_RATIO_BEFORE_RE = re.compile(
    r"(?:\b(step|week|day|month|year|part|case|round|stage|level|phase|line|row|item|question"
    r"|problem|q)\s*)?\d+(?::|\s+:\s+)\Z",
    re.IGNORECASE,
)
# the last number is one piece of a larger value, a second value or a question: "\frac{1}{2}",
# "\sqrt{2}", "10^{2}" (a brace, caret or slash right before it), "3 and 1/2", "12 or 13",
# "between 12 and 13", "12-13", "12 by 13" (a number and a joiner before it); "12\pi", "12(",
# "12_3", "Is it 13?" (after it)
_PIECE_BEFORE_RE = re.compile(
    r"(?:(?<!\\text)(?<!\\textbf)(?<!\\mathbf)(?<!\\mathrm)\{|[\^_/]|\\[A-Za-z]+"  # not \textbf{18}
    r"|\d\$?\s*(?:or|by|x|\u00d7)\s*\$?|\d[-\u2013]"  # "12-13"; "Day 5 - 12" is a dash
    r"|\bbetween\s+\$?-?\d[\d,.]*\s*and\s*\$?)[ \t]*\Z",
    re.IGNORECASE,
)
_CONTRAST_GAP_RE = re.compile(r"(?:[ \t]*[A-Za-z]+){0,2}[ \t]*(?:,[ \t]*|\([ \t]*)not[ \t]+\$?")
_MIXED_BEFORE_RE = re.compile(r"\d\s+and\s*\Z")  # "3 and 1/2" is 3.5 ("$5 and $6": the $6)
_PIECE_AFTER_RE = re.compile(r"[_({]|\$?\s*(?:\\pi(?![A-Za-z])|\u03c0|\\sqrt|\?)")
_WORD_NUMBER_RE = re.compile(
    r"\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b",
    re.IGNORECASE,
)
_PREP_RE = re.compile(
    r"(?<!result)(?<!results)(?<!resulting)\s(?:in|for|from|after|over|per|within|during|every|each|out\s+of)\s+"
    r"(?:(?:the|a|first|next|last|all|each|every|his|her|their)\s+){0,2}$"
)
_NOTE_RE = re.compile(r"(?:^|\n|\()[ \t*_]*(?:Note|Explanation)\b", re.IGNORECASE)
_ASIDE_RE = re.compile(
    r"\((?=[^()]*[A-Za-z\u00d7*+])(?![^()]*=)[^()]{1,300}\)[\s.!]*$"
)  # a closing aside
_ROOT = r"-?\d+(?:\.\d+)?(?:/\d+)?"
_ROOTS_RE = re.compile(
    rf"(?<![A-Za-z])([a-z])\s*=\s*{_ROOT}(?:\s*(?:,\s*)?(?:or|and|,)\s*\1\s*=\s*{_ROOT})+"
)
_BOLD_RE = re.compile(r"\*\*([^*\n]{1,80})\*\*|\\textbf\{([^{}\n]{1,80})\}")


def last_math(text: str, limit: int) -> tuple[int, str] | None:
    """The last math span, unless a number comes after it (then ``last_number`` decides)."""
    if truncated(text):
        return None
    spans = _delimited_spans(text) + _dollar_spans(text)
    if not spans:
        return None
    start, end, body = max(spans)
    if NUMBER_RE.search(text, end) or len(body) > limit:
        return None
    return start, body if false_chain(body) else chain_rhs(body)  # "9 \times 3 = 18": false


def truncated(text: str) -> bool:
    """The completion stops mid-sentence ("... so the total is"): it never stated an answer."""
    return bool(_DANGLING_RE.search(text[-40:]))


def _delimited_spans(text: str) -> list[tuple[int, int, str]]:
    """``\\(..\\)``, ``\\[..\\]`` and ``$$..$$`` spans, paired in one linear pass."""
    spans, opened = [], None
    for tok in _DELIM_RE.finditer(text):
        mark = tok.group(0)
        if opened is None:
            if mark in _CLOSER:
                opened = tok
        elif mark == _CLOSER[opened.group(0)]:
            spans.append((opened.start(), tok.end(), text[opened.end() : tok.start()]))
            opened = None
    return spans


def _dollar_spans(text: str) -> list[tuple[int, int, str]]:
    """Single-``$`` spans, unless the ``$`` signs are currency (then the pairing is meaningless)."""
    text = text.replace("\\$", "  ").replace("$$", "  ")
    marks = [m.start() for m in re.finditer(r"\$", text)]
    if len(marks) % 2:
        return []
    spans = [(a, b + 1, text[a + 1 : b]) for a, b in zip(marks[::2], marks[1::2])]
    if any(PROSE_RE.search(drop_commands(body)) for _, _, body in spans):
        return []
    return spans


def drop_commands(body: str) -> str:
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
    lhs = re.sub(
        r"\\(?:text|mathrm|textbf)\s*\{[^{}]*\}|\\(?:times|cdot|div|[dt]?frac|left|right)", " ", lhs
    )
    words = re.findall(r"[A-Za-z]+", lhs)
    computation = (
        not words
        or (
            len(words) == 1
            and (len(words[0]) == 1 or len(words[0]) >= 3)
            and lhs.strip() == words[0]
        )
        or (re.search(r"\d", lhs) and all(len(w) >= 2 for w in words))
    )
    return rhs.strip() if computation and rhs.strip() else body


def last_number(text: str, limit: int) -> tuple[int, str] | None:
    """The last number, less the qualifiers of the closing sentence ("$64 for 16 glasses", "in 3 weeks")."""
    if truncated(text):
        return None
    text = _CALC_RE.sub(lambda m: " " * len(m.group(0)), text)  # positions kept for the caller
    note = None
    for note in _NOTE_RE.finditer(text):  # noqa: B007 - keeps the last match
        pass
    if note is not None and NUMBER_RE.search(text, 0, note.start()):
        text = text[: note.start()]  # "... 260 sheep in total.\n\nNote: Charleston alone has 80."
    aside = _ASIDE_RE.search(text, max(0, len(text) - 400))
    if aside is not None and NUMBER_RE.search(text, 0, aside.start()):
        text = text[: aside.start()]  # "She makes $18 per day (9 eggs x $2)."
    roots = _roots(text)
    if roots is not None:
        return roots
    numbers = list(NUMBER_RE.finditer(text))
    if not numbers:
        return _no_digits(text)
    last = numbers[-1]
    sentence_start = max((m.end() for m in _SENTENCE_RE.finditer(text, 0, last.start())), default=0)
    money = [m for m in numbers if m.start() >= sentence_start and "$" in m.group(1)]
    if money and money[-1] is not last and "=" not in text[money[-1].end() :]:
        later = [m for m in numbers if m.start() > money[-1].start()]
        gap = text[money[-1].end() : later[0].start()]
        if _FOR_RE.fullmatch(gap) and all(_COUNTED_RE.match(text, m.end()) for m in later):
            return money[-1].start(), money[-1].group(0)[: limit + 1]
    same = [m for m in numbers if m.start() >= sentence_start]
    while len(same) > 1 and _counted_after(text, same[-2], same[-1]):
        same.pop()  # "He runs 540 meters in 3 sprints": the 3 qualifies the 540
    if len(same) > 1 and _CONTRAST_GAP_RE.fullmatch(text, same[-2].end(), same[-1].start()):
        same.pop()  # "It's 42, not 41.": the value said, not the one it is said against
    ratio = _RATIO_BEFORE_RE.search(text, max(0, same[-1].start() - 24), same[-1].start())
    if _OPERAND_RE.match(text, same[-1].end()) or (ratio and not ratio.group(1)):
        return None
    before = max(0, same[-1].start() - 24), same[-1].start()
    if _PIECE_BEFORE_RE.search(text, *before) or (
        "/" in same[-1].group(0) and _MIXED_BEFORE_RE.search(text, *before)
    ):
        return None
    if _PIECE_AFTER_RE.match(text, same[-1].end()):
        return None
    return same[-1].start(), same[-1].group(0)[: limit + 1]


def _roots(text: str) -> tuple[int, str] | None:
    """ "The roots are x = -4 or x = 1.": every root in the closing sentence, not just the last."""
    last = None
    for last in _ROOTS_RE.finditer(text, max(0, len(text) - 400)):  # noqa: B007 - keeps the last
        pass
    if last is None or _SENTENCE_RE.search(text.rstrip(" .!\n*$"), last.end()):
        return None
    return last.start(), last.group(0)


def _counted_after(text: str, before: re.Match, number: re.Match) -> bool:
    gap = text[before.end() : number.start()]
    return (
        "=" not in gap
        and bool(_PREP_RE.search(gap[-30:]))
        and bool(_COUNTED_RE.match(text, number.end()))
    )


def _no_digits(text: str) -> tuple[int, str] | None:
    """ "She has five apples." / "The correct option is **(B)**.": a number word, else a bold phrase."""
    last = None
    for last in _WORD_NUMBER_RE.finditer(text):  # noqa: B007 - keeps the last match
        pass
    if last is not None:
        return last.start(), last.group(0)
    for last in _BOLD_RE.finditer(text):  # noqa: B007 - keeps the last match
        pass
    if last is not None:
        return last.start(), (last.group(1) or last.group(2)).strip()
    return None


_CLAUSE_END_RE = re.compile(r"\.(?=\s|$)|;|\n|\s+(?:because|since|which|as)\s|\s+\(")
# after a number, "to reach N" is the goal ("4 more boxes to reach 20"); else the subject
_GOAL_RE = re.compile(
    r"\s+(?:in\s+order\s+)?to\s+(?:reach|get\s+to|make\s+it\s+to|hit|arrive\s+at)\s"
)


def clause_result(sentence: str) -> str | None:
    """The last number of the first clause of a worded answer (its result: "after 3 hours, the
    distance is 180 km" states 180), before a goal ("4 more boxes to reach 20" states 4)."""
    end = _CLAUSE_END_RE.search(sentence)
    clause = sentence[: end.start()] if end else sentence
    goal = _GOAL_RE.search(clause)
    if goal and re.search(r"\d", clause[: goal.start()]):
        clause = clause[: goal.start()]
    stated = last_number(clause, len(clause))
    return stated[1] if stated is not None and re.search(r"\d", stated[1]) else None


# a number, its unit word, then words only, with a number among them ("18 dollars after 2 days")
_NUMBER_FIRST_RE = re.compile(
    r"(-?\d[\d,]*(?:\.\d+)?)\s+(?!(?:hundred|thousand|[mb]illion|dozen|gross|score)s?\b)"
    r"[A-Za-z]{2,}\b(?=[A-Za-z\s,']*\d[A-Za-z\d\s,']*\Z)"
)


def result_first(phrase: str) -> str | None:
    """The number a worded answer opens with, when what follows qualifies it: "18 dollars after 2
    days", "180 km in 3 hours" (its clause's result is that number too); None otherwise."""
    lead = _NUMBER_FIRST_RE.match(phrase)
    return lead.group(1) if lead and clause_result(phrase) == lead.group(1) else None
