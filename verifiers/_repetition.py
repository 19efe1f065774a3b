"""Counting repetition for the penalties (``ngram_repetition``, ``repeated_paragraphs``)."""

from __future__ import annotations

import re
from collections import Counter

_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")


def plain_words(text: str) -> list[str]:
    """The words of ``text`` lower-cased, without the punctuation around them ("Sat!" and "sat,"
    are one word; "3+4=7" keeps its inside; a word of punctuation alone, "=", stays)."""
    return [_EDGE_PUNCTUATION.sub("", w).lower() or w for w in text.split()]


# scripts written without spaces between words (CJK, kana, hangul, Thai, Lao, Khmer, Myanmar)
_UNSPACED_RE = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff]"
)
_LONG_RUN = 24  # characters: a longer "word" is cut into pieces of _PIECE
_PIECE = 8


def split_runs(words: list[str]) -> list[str]:
    """Words as compared without a tokenizer: a script without spaces one character at a time,
    a run over ``_LONG_RUN`` characters in pieces (a loop of "我需要再检查一下。", "=" * 3000 or
    "checkcheck..." was one word: 0% repeated)."""
    out: list[str] = []
    for word in words:
        if _UNSPACED_RE.search(word):
            out.extend(word)
        elif len(word) > _LONG_RUN:
            out.extend(word[i : i + _PIECE] for i in range(0, len(word), _PIECE))
        else:
            out.append(word)
    return out


def worst_window(grams: list[tuple], width: int) -> tuple[float, int]:
    """The largest share, over runs of ``width`` consecutive ``grams``, of n-grams seen earlier
    anywhere in the completion, and where that run starts. Over the whole completion that share
    is the unwindowed one (each repeat after its first); counting repeats within the run only
    missed a loop whose period is at least ``width`` (a 100-word paragraph pasted 20 times read
    as 0% at ``window=100``). One pass, a running sum."""
    seen: set[tuple] = set()
    flags = []
    for gram in grams:
        flags.append(gram in seen)
        seen.add(gram)
    total = best = sum(flags[:width])
    at = 0
    for i in range(width, len(flags)):
        total += flags[i] - flags[i - width]
        if total > best:
            best, at = total, i - width + 1
    return best / width, at


# a Markdown rule ("---", "***", "===") separates paragraphs as a blank line does
_RULE_LINE = re.compile(r"^[ \t]*(?:[-*_=~][ \t]*){3,}$", re.MULTILINE)
# numbering that makes a copied paragraph look new, in Markdown emphasis or not: a bullet, "3.",
# "(3)", "a)", "(ii)", "[3]", "Step 3", "**Attempt 3:**", "Try #3 -" (the words a loop counts
# with; "Room 101:" or "Test 2:" label distinct items); and a trailing "(3)" or "[3]"
_LOOP_WORDS = "step|attempt|try|retry|iteration|round|pass|trial|check|verification|cycle|loop"
_MARKER = re.compile(
    r"^\s*[*_#>]*\s*(?:[-*•+>]|\(?(?:\d+|[a-z]|[ivx]{1,4})[.)]|\[\d+\]|step\s+\d+\s*[:.)-]?"
    rf"|(?:{_LOOP_WORDS})\s*#?\d+\s*[:.)\-–—])\s*[*_]*\s+",
    re.IGNORECASE,
)
_TRAILING_NUMBER = re.compile(r"\s*(?:\(\d+\)|\[\d+\])\s*$")
_LINE_LOOP = 3  # a line counts as looping when it appears this many times


def _key(unit: str) -> str:
    unit = _TRAILING_NUMBER.sub("", _MARKER.sub("", unit))
    return " ".join(plain_words(unit))


def repeated_share(text: str, min_chars: int) -> tuple[int, int, str]:
    """``(repeated, units, unit name)`` for the larger share of two counts: paragraphs (split at
    blank lines and rules) that repeat an earlier one, and lines at least ``min_chars`` long that
    appear ``_LINE_LOOP`` times or more (one line pasted with single newlines). Both compare
    words up to case and edge punctuation, without numbering (``_MARKER``: "**Step 3:**", "a)")."""
    text = _RULE_LINE.sub("\n", text)
    units = [" ".join(p.split()) for p in re.split(r"\n\s*\n", _RULE_LINE.sub("\n\n", text))]
    paragraphs = [_key(p) for p in units if len(p) >= min_chars]
    lines = [_key(line) for line in text.split("\n") if len(line.strip()) >= min_chars]
    counts = Counter(paragraphs)
    best = (sum(c - 1 for c in counts.values()), len(paragraphs), "paragraphs")
    counts = Counter(lines)
    looping = sum(c - 1 for c in counts.values() if c >= _LINE_LOOP)
    if lines and looping / len(lines) > (best[0] / best[1] if best[1] else 0.0):
        best = (looping, len(lines), "lines")
    return best
