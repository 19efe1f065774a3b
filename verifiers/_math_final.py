"""Where the answer of a math completion can be, spelled as the extractors read it.

``final_part``: after the reasoning (a ``<think>`` that never closes leaves nothing), before an
end-of-turn token or a few-shot model's next "Question:", code blocks left out (``print('The
answer is 42')`` states none). ``spelled``: zero-width marks dropped, ``<answer>`` tags as an
``Answer:`` line, Unicode math as LaTeX. Literal finds and linear regexes only.
"""

from __future__ import annotations

import re

from passband.verifiers._math_shape import to_latex
from passband.verifiers._text import after_reasoning

__all__ = ["CODE_RE", "final_part", "spelled"]

# Text after these is not the answer: end-of-turn tokens, or a few-shot model writing the next question.
_RUNON_MARKERS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "</s>",
    "<|im_start|>",
    "<|start_header_id|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    "\nHuman:",
    "\nUser:",
    "\nAssistant:",
    "Next question:",
)
_NEXT_QUESTION_RE = re.compile(
    r"\n(?:\n[ \t]{0,4}(?:Problem|Q)|[ \t]{0,4}Question)[ \t]{0,2}\d{0,3}[ \t]{0,2}:"
)
CODE_RE = re.compile(
    r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL
)  # fenced code blocks; an unclosed one to the end
# "<answer>12</answer>" (the R1-Zero template) is an answer line; its ">" is no relation
_INVISIBLE_RE = re.compile("[\u00ad\u034f\u061c\u180e\u200b-\u200f\u2060-\u2069\ufeff]")
# a no-break, narrow or thin space between digit groups is a thousands separator; elsewhere a space
_GROUP_SPACE_RE = re.compile("(?<=\\d)[\u00a0\u2009\u202f](?=\\d{3}(?!\\d))")
_OTHER_SPACE_RE = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
# HTML super- and subscripts: "10<sup>6</sup>" is 10^{6}, not 10 followed by 6
_HTML_SCRIPT_RE = re.compile(r"<(sup|sub)>([^<>]{0,40})</\1>", re.IGNORECASE)
# a tag that opens a line starts an answer line and one that ends a line ends it; inside a
# sentence a tag is dropped, so its words still qualify the answer ("isn't <answer>12</answer>")
_ANSWER_TAG_RE = re.compile(
    r"(?P<open>^[ \t]*<answer\s*>)|(?P<close></answer\s*>[ \t]*$)|</?answer\s*>",
    re.IGNORECASE | re.MULTILINE,
)


# text that does not render: a LaTeX comment line, an \iffalse block, ~~struck out~~ (not LaTeX's
# "5~~cm", where "~" is a space)
_UNRENDERED_RE = re.compile(
    r"^[ \t]*%[^\n]*|\\iffalse(?![A-Za-z]).*?(?:\\fi(?![A-Za-z])|\Z)"
    r"|(?<![^\s(>*_])~~(?=\S)[^~\n]{1,300}?(?<=\S)~~(?![^\s.,;:!?)*_])",
    re.MULTILINE | re.DOTALL,
)
_INLINE_CODE_RE = re.compile(r"`[^`\n]{1,200}`")
_CODE_ANSWER_RE = re.compile(r"\banswer\b|####|\\boxed", re.IGNORECASE)
# an answer stated with its value: after it, a worked example or the next exercise is a run-on
_ANSWERED_RE = re.compile(r"(?:\\boxed\s*\{|####|\banswer\s*(?:is|:))[\s$*\\(]*-?\d", re.IGNORECASE)
_EXAMPLE_RE = re.compile(
    r"\n[ \t#*>]*(?:another\s+)?(?:example|exercise|practice(?:\s+problem)?|next\s+problem)\b"
    r"[^\n]{0,40}?(?::|\n)|(?:\n|[.!]\s+)(?:similarly,?\s+)?for\s+the\s+next\s+"
    r"(?:problem|question|exercise)\b",
    re.IGNORECASE,
)


def final_part(text: str) -> str:
    """Where the answer can be: after the reasoning, before any run-on (literal finds: linear),
    without code or text that does not render."""
    text = after_reasoning(text)
    cuts = [at for at in (text.find(marker) for marker in _RUNON_MARKERS) if at > 0]
    question = _NEXT_QUESTION_RE.search(text, 1)
    cuts += [question.start()] if question else []
    text = text[: min(cuts)] if cuts else text
    text = CODE_RE.sub("\n", text)  # code is not an answer: print('The answer is 42')
    text = (
        _UNRENDERED_RE.sub(" ", text) if "%" in text or "~~" in text or "iffalse" in text else text
    )
    text = _late_code(text) if "`" in text else text
    example = _EXAMPLE_RE.search(text)
    if example and _ANSWERED_RE.search(text, 0, example.start()):
        text = text[: example.start()]  # "The answer is 41.\n\nExample: 6*7 = \boxed{42}"
    return spelled(text)


def _late_code(text: str) -> str:
    """``text`` without the inline code that states an answer after one was stated outside
    code ("The answer is 41.\n\n`The answer is 42`"); "The answer is `42`" keeps its answer."""
    blank = _INLINE_CODE_RE.sub(lambda m: " " * len(m.group(0)), text)
    stated = _ANSWERED_RE.search(blank)
    if not stated:
        return text
    return _INLINE_CODE_RE.sub(
        lambda m: (
            " " if m.start() > stated.start() and _CODE_ANSWER_RE.search(m.group(0)) else m.group(0)
        ),
        text,
    )


def spelled(text: str) -> str:
    """``text`` as the extractors read it: zero-width marks dropped ("12\\u200b3" is 123, not
    12), ``<answer>`` tags as an ``Answer:`` line, Unicode math as LaTeX ("2√3" is not 2)."""
    text = _INVISIBLE_RE.sub("", text)
    text = _GROUP_SPACE_RE.sub("", text)  # "2\u202f500" is 2500, not "2 500" read as 500
    text = _OTHER_SPACE_RE.sub(" ", text)
    text = _HTML_SCRIPT_RE.sub(
        lambda m: ("^{" if m.group(1).lower() == "sup" else "_{") + m.group(2) + "}", text
    )
    text = _ANSWER_TAG_RE.sub(
        lambda m: "\nAnswer: " if m.group("open") else "\n" if m.group("close") else "", text
    )
    return to_latex(text)
