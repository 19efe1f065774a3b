"""Text rules the verifiers share: what of a text shows on screen (the format check and the
repetition penalties: padding with characters that draw nothing neither fills a tag nor hides a
repeat), and where the answer part of a completion starts (math, hedging and JSON)."""

from __future__ import annotations

import unicodedata

__all__ = ["after_reasoning", "draws", "visible"]

# Controls, format marks (zero-width, bidi, tag characters), combining marks without a base,
# separators, private use and unassigned code points draw nothing; nor do the filler letters
# that render as blanks.
_BLANK_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"})
_FILLERS = frozenset("\u115f\u1160\u2800\u3164\uffa0\U0001d159\u17b4\u17b5\u180e")
_SILENT = frozenset({"Cf", "Mn", "Me", "Cs", "Co", "Cn"})  # dropped by ``visible``


def draws(ch: str) -> bool:
    """Whether ``ch`` shows on screen: not whitespace, not in ``_BLANK_CATEGORIES``, no filler."""
    return (
        not ch.isspace()
        and ch not in _FILLERS
        and unicodedata.category(ch) not in _BLANK_CATEGORIES
    )


def visible(text: str) -> str:
    """``text`` in NFKC without the characters that draw nothing and are not spaces (zero-width
    and bidi marks, variation selectors, combining marks, fillers); whitespace, controls included,
    is kept for the caller to split on. ``"a\\u200bb"`` and ``"ab"`` read the same."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(
        ch
        for ch in text
        if ch.isspace() or (ch not in _FILLERS and unicodedata.category(ch) not in _SILENT)
    )


def after_reasoning(text: str, *, first: bool = False) -> str:
    """After the last (or ``first``) ``</think>``; "" when a ``<think>`` never closes: whatever
    the reasoning says on the way is no answer."""
    close = text.find("</think>") if first else text.rfind("</think>")
    if close >= 0:
        return text[close + len("</think>") :]
    return "" if "<think>" in text else text
