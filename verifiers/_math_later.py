r"""A later value after the graded answer, presented as the answer: the completion changed it.

The latest marker is graded ("\boxed{5}", "The answer is 5"), and a correction after it that is
no marker ("Never mind, it is 7.", "Edit: 41.", "Real answer: 7.", "Upon review, the total is
41.") says the completion's answer is another value. ``later_value`` finds one, for a plain-number
answer, when the later value is *presented as the answer*, never for working that merely mentions
a number ("\boxed{5}. This took 3 steps.", "\boxed{42}. So she has 42 - 1 = 41 left over"):

- a label that names it: "Edit: 41", "Update: it's 41", "Final: 7", "(Typo: should read 41.)",
  at the start of a sentence or line;
- a qualified noun: "the true count is 41", "Real answer: 7", "True answer = 7";
- the answer's own noun with a modal: "The answer should have been 7";
- "really" / "actually" after the verb: "so the total is really 41";
- in a sentence opened by a retraction ("Never mind", "My bad", "Disregard that", "Upon review",
  "So", "Actually"): "it's 7", "the total is 41", "there are 41 in total".

The value must end its sentence (or stand before ", not"): "Edit: 2 typos fixed" names no answer.
Linear: fixed regexes over a bounded window.
"""

from __future__ import annotations

import re

__all__ = ["later_value", "number"]

_TAIL = 300  # characters after the answer's clause where a retraction-led restatement counts
_VALUE = (  # a plain number, maybe in math or bold, that ends its sentence
    r"(?:\$|\\\(|\*\*|\\boxed\{|[ \t])*(?P<v>-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    r"(?:\$|\\\)|\*\*|\})*[ \t]*(?=[.!;)]+(?:\s|\Z)|[ \t]*(?:\n|\Z)|,\s*not\b)"
)
_START = r"(?:^|[.!?;]\s+|\(\s*)[ \t*#_>]*"  # a sentence, line or parenthesis starts
_NOUN = r"(?:answer|total|count|result|value|sum|number|amount)"
_REALLY = r"(?:really|actually|in\s+fact|truly)"
_IS = r"(?:is|was|equals|=|:|comes\s+to|should\s+(?:be|read|have\s+been)|must\s+be|would\s+be)"
_STATED = (  # a sentence of its own ("that's 7" in a check is working)
    r"(?:^|[.!?]\s+)[ \t]*(?:(?:so|actually|hence|thus|therefore),?\s+){lead}(?:it's|it\s+is)\s+"
    r"(?:actually\s+)?\$?(?P<v>-?\d[\d,]*(?:\.\d+)?)\$?[ \t]*(?=[.!](?:\s|\Z)|,\s*not\b|\n|\Z)"
)
_STATED_RE = re.compile(_STATED.format(lead="?"), re.IGNORECASE | re.MULTILINE)
# further on only as a conclusion ("So it's 13."): a bare "It is 3." there is a check's working
_FAR_STATED_RE = re.compile(_STATED.format(lead=""), re.IGNORECASE | re.MULTILINE)
# further on, a retraction that names a value: "Actually, the answer might be 13." (beyond _TAIL
# a retraction word alone is usually a re-check: "Wait, let me verify... yes.")
_FAR_RETRACT_RE = re.compile(
    r"\b(?:wait|actually|oops|correction|i\s+was\s+wrong|scratch\s+that|on\s+second\s+thought)\b"
    r"[,:]?[^.!?\n]{0,40}?\b(?:(?:final\s+)?answer|result|it)\s*(?:'s|is|was|(?:should|must|might|"
    r"would|could)\s+be)\s+(?:actually\s+)?(?:\$|\\\(|\\boxed\{)*[ \t]*"
    r"(?P<v>-?\d[\d,]*(?:\.\d+)?)(?![\d.,]*\s*(?:[-+*/^=x×]|(?:minus|plus|times|divided|over|less|more|of)\b))",
    re.IGNORECASE,
)
_FLAGS = re.IGNORECASE | re.MULTILINE
# anywhere after it: a label, a qualified noun, the answer with a modal, "is really"
_NAMED_RES = (
    re.compile(  # "Edit: 41", "Update: it's 41", "Final: 7", "(Typo: should read 41.)"
        rf"{_START}(?:edit(?:ed)?|update[ds]?|revised|revision|correction|corrected|typo|erratum"
        r"|final|fix(?:ed)?)(?:\s+answer)?[ \t*_]*:[ \t*_]*"
        rf"(?:(?:it's|it\s+is|should\s+(?:be|read)|the\s+answer\s+is)\s+)?{_VALUE}",
        _FLAGS,
    ),
    re.compile(  # "the true count is 41", "Real answer: 7", "True answer = 7"
        rf"\b(?:real|true|actual|correct|right|proper|revised|corrected|updated)\s+(?:final\s+)?"
        rf"{_NOUN}[ \t*_]*{_IS}\s*(?:{_REALLY}\s+)?{_VALUE}",
        _FLAGS,
    ),
    re.compile(  # "The answer should have been 7", "the answer is actually 7"
        rf"\banswer\s+(?:should\s+(?:have\s+been|be|read)|must\s+(?:have\s+been|be)"
        rf"|(?:is|was)\s+{_REALLY}|was\s+supposed\s+to\s+be)\s+{_VALUE}",
        _FLAGS,
    ),
    re.compile(rf"\b{_NOUN}\s+(?:is|was)\s+{_REALLY}\s+{_VALUE}", _FLAGS),  # "total is really 41"
)
# near it, in a sentence a retraction opens: "Never mind, it is 7.", "Upon review, the total is 41."
_LEAD = (
    r"never\s*mind|my\s+bad|disregard|ignore\s+(?:that|this|the\s+above)|scratch\s+that|whoops"
    r"|oops|sorry|upon\s+(?:review|reflection|re-?checking|closer\s+inspection)|on\s+(?:review"
    r"|reflection|second\s+thought|closer\s+inspection)|after\s+(?:review|re-?checking)"
    r"|hold\s+on|(?:i\s+)?double[- ]?counted|(?:i\s+)?miscounted|(?:i\s+)?miscalculated"
)
_LED_RE = re.compile(
    rf"{_START}[^.!?\n]{{0,60}}?\b(?:{_LEAD})\b[^.!?\n]{{0,80}}?\b(?:(?:it's|it\s+is|that's"
    rf"|that\s+is|(?:the\s+)?{_NOUN}\s+(?:is|was|comes\s+to))\s+(?:{_REALLY}\s+)?{_VALUE}"
    rf"|there\s+(?:are|is|were)\s+(?:{_REALLY}\s+|only\s+)?(?P<n>-?\d[\d,]*)(?:\s+[a-z]+)?"
    r"\s+in\s+total(?=[ \t]*(?:[.!;]|\n|\Z)))",
    _FLAGS,
)


def number(text: str) -> float | None:
    """``text`` as a plain number ("1,234", "$18"), or None."""
    try:
        return float(text.replace(",", "").strip("$ "))
    except ValueError:
        return None


def later_value(far: str, answer: str) -> str | None:
    """A plain number that ``far`` (the text after a plain-number answer's clause) presents as
    the answer and that differs from it, or None: "So it's 13." or a retraction-led sentence
    within ``_TAIL`` characters; a label, a qualified noun ("the true count is 41") or a
    retraction that names the answer ("Actually, the answer might be 13.") anywhere in ``far``."""
    mine = number(answer)
    if mine is None:
        return None
    near = far[:_TAIL]
    searches = [(_STATED_RE, near), (_FAR_STATED_RE, far), (_FAR_RETRACT_RE, far), (_LED_RE, near)]
    for pattern, where in searches + [(named, far) for named in _NAMED_RES]:
        for stated in pattern.finditer(where):
            value = stated.group("v") or stated.groupdict().get("n")
            if float(value.replace(",", "")) != mine:
                return stated.group(0).strip()
    return None
