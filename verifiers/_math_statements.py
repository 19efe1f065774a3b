"""Every answer a math completion states, for ``answer_hedging``: read the way the extractors of
``_math_extract`` read each one, so a spelling the verifier takes as the answer is counted too.
"""

from __future__ import annotations

import re

from passband.verifiers._math_extract import (
    _ANSWER_IS_RE,
    _ANSWER_LINE_RE,
    _BOX_RE,
    _box_body,
    _final_part,
    _trim_phrase,
    gsm8k_answer,
)

__all__ = ["stated_answers"]


def stated_answers(text: str, *, max_chars: int = 20_000, limit: int = 200) -> list[str]:
    """Every answer the completion *states* (not only the last): each box (``\\boxed{..}`` or
    ``\\boxed 5``), each "the answer is ..." / "the correct option is ...", each ``Answer:`` line
    and each ``####`` line, read as the extractors read them, in the final part only (after
    ``</think>``, outside code). ``answer_hedging`` counts how many differ."""
    text = _final_part(text)[-max_chars:]
    found = []
    for box in _BOX_RE.finditer(text):
        body = _box_body(text, box.end(), limit)
        if body is not None and body[1] >= 0:
            found.append((box.start(), body[0]))
    for marker in _ANSWER_IS_RE.finditer(text):
        phrase = _trim_phrase(text[marker.end() : marker.end() + limit]) or ""
        if not _BOX_RE.search(text, marker.end(), marker.end() + 40):  # its box is counted
            found.append((marker.start(), phrase))
    for line in _ANSWER_LINE_RE.finditer(text):
        phrase = line.group(1).strip(" *_")
        if phrase and not _BOX_RE.search(phrase) and not _ANSWER_IS_RE.search(phrase):
            found.append((line.start(1), _trim_phrase(phrase[:limit]) or ""))
    for hashes in re.finditer(r"####", text):
        found.append((hashes.start(), gsm8k_answer(text, hashes.start(), limit)))
    return [answer.strip() for _, answer in sorted(found) if answer.strip()]
