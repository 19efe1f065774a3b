"""Format verifiers: does the completion have the required shape (``regex``/``format``), and
does it equal the reference string (``exact``)?

Regexes come from users and datasets, and Python's ``re`` can backtrack for hours on a pattern
like ``(a+)+$``; so outside a worker process a match runs under ``call_with_deadline``, and
inside it the ``regex`` package stops a match at half the deadline; a runaway one becomes
``timeout`` (undecided: as a negative ``Reward`` term, "no match" would escape its penalty).
Parameterised variants are factories returning small picklable
classes with readable reprs (``tag_format("think", "answer")``).
"""

from __future__ import annotations

import decimal
import html
import math
import numbers
import re
import unicodedata

from passband.verifiers import _deadline
from passband.verifiers._coerce import clip
from passband.verifiers._text import draws
from passband.verifiers.registry import register
from passband.verifiers.verdict import Verdict

__all__ = ["exact_match", "regex_format", "tag_format"]

_FLAG_NAMES = {"DOTALL": re.DOTALL, "IGNORECASE": re.IGNORECASE, "MULTILINE": re.MULTILINE}


def regex_format(
    pattern: str, *, fullmatch: bool = True, flags: str = "DOTALL", timeout: float = 2.0
):
    """A verifier that passes when ``pattern`` matches the whole completion (or any part, with
    ``fullmatch=False``). ``flags``: ``|``-separated names among DOTALL, IGNORECASE, MULTILINE."""
    return _RegexFormat(pattern, fullmatch=fullmatch, flags=flags, timeout=timeout)


def tag_format(*tags: str, timeout: float | None = None):
    """``tag_format("think", "answer")``: ``<think>...</think>`` then ``<answer>...</answer>``,
    nothing else but whitespace around them, each tag exactly once, none inside another, none
    empty (holding only characters that draw nothing: whitespace, zero-width and bidi marks,
    controls, variation selectors, blank fillers). A tag of these names spelled any other way
    (``<Answer>``, ``</answer >``, ``< think>``) counts as one more tag, so it fails the check
    instead of passing as content. Linear in the completion: no backtracking regex, nothing to
    time out (``timeout`` is accepted for callers of the regex version and not needed)."""
    if not tags or not all(
        isinstance(t, str) and re.fullmatch(r"[A-Za-z_][\w.-]*", t) for t in tags
    ):
        raise ValueError(f"tag_format needs tag names like 'think', 'answer'; got {tags!r}")
    return _TagFormat(tuple(tags))


# entities that render as a space or nothing (HTML comments are cut by ``_html_shown``)
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")
# what a browser shows nothing of: processing instructions, CDATA and <!...> (bogus comments
# to the next '>'), and the content of script / style / template elements or of an element
# marked hidden (to its closing tag; one that never closes hides the rest)
_BOGUS_COMMENT = re.compile(r"<[?!][^>]*>?")
_HIDING = re.compile(
    r"<(script|style|template|noscript)\b[^<>]*>"
    r"|<([A-Za-z][\w-]*)\b[^<>]*?(?:\shidden\b|display\s*:\s*none|visibility\s*:\s*hidden)[^<>]*>",
    re.IGNORECASE,
)


def _html_shown(text: str) -> str:
    """``text`` without what HTML shows nothing of (comments, script / style / template / hidden
    elements' content, processing instructions, tags, blank entities): what a renderer shows.
    Linear: each end is found with ``str.find``; a comment or hidden element that never closes
    hides the rest, as in a browser."""
    out, at = [], 0
    while (start := text.find("<!--", at)) >= 0:
        out.append(text[at:start])
        end = text.find("-->", start + 4)
        at = len(text) if end < 0 else end + 3
    out.append(text[at:])
    text, out, at = "".join(out), [], 0
    lower = text.lower()
    while m := _HIDING.search(text, at):
        out.append(text[at : m.start()])
        close = lower.find(f"</{(m.group(1) or m.group(2)).lower()}", m.end())
        at = len(text) if close < 0 else close
    out.append(text[at:])
    # every tag (<br>, <span></span>) dropped, then every entity decoded (&#x20;, &Tab;, &shy;,
    # &ZeroWidthSpace;...): an answer of only those draws nothing (a review found it "non-empty")
    return html.unescape(_HTML_TAG.sub("", _BOGUS_COMMENT.sub("", "".join(out))))


class _TagFormat:
    returns_verdict = True  # a Verdict for every answer: success_threshold decides nothing
    inline_safe = True  # linear, cannot hang: ``verify_batch`` may run it in the caller's process

    def __init__(self, tags: tuple[str, ...]):
        self.tags = tags
        alts = "|".join(re.escape(t) for t in tags)
        # any spelling of one of the tags: case, spaces, attributes, a slash in either place
        self._any = re.compile(rf"<\s*/?\s*(?:{alts})(?=[\s/>])[^<>]*>", re.IGNORECASE)

    def __repr__(self) -> str:
        return f"tag_format({', '.join(map(repr, self.tags))})"

    def __call__(self, completion: str, **_ignored) -> Verdict:
        """Row fields (a ``pattern`` among them) are ignored: the tags are the whole check."""
        if not isinstance(completion, str):
            return Verdict.invalid(f"completion is {type(completion).__name__}, not text")
        found = list(self._any.finditer(completion))
        expected = [f"{slash}{t}" for t in self.tags for slash in ("", "/")]
        spelled = [m.group(0) for m in found]
        if spelled != [f"<{e}>" for e in expected]:
            return Verdict.wrong(
                clip(f"format not matched: expected tags {self.tags}, found {spelled}", 200)
            )
        pieces = [completion[: found[0].start()], completion[found[-1].end() :]]
        pieces += [completion[a.end() : b.start()] for a, b in zip(found[1::2], found[2::2])]
        if any(draws(ch) for piece in pieces for ch in piece):
            return Verdict.wrong(f"format not matched: text outside the tags {self.tags}")
        for tag, a, b in zip(self.tags, found[0::2], found[1::2]):
            shown = _html_shown(completion[a.end() : b.start()])
            if not any(draws(ch) for ch in shown):
                return Verdict.wrong(f"format not matched: <{tag}> is empty")
        return Verdict.ok("format matched")


class _RowRegex:
    """``regex``: the row's ``pattern`` field must match the whole completion (DOTALL); a row
    without one gets the think/answer tag check."""

    returns_verdict = True

    def __init__(self, fallback: _TagFormat, timeout: float = 2.0):
        self.fallback, self.timeout = fallback, timeout

    def __repr__(self) -> str:
        return f"regex(row field 'pattern'; without one: {self.fallback!r})"

    def __call__(self, completion: str, *, pattern: str | None = None, **_ignored) -> Verdict:
        if pattern is None:
            return self.fallback(completion)
        try:
            check = _RegexFormat(pattern, fullmatch=True, flags="DOTALL", timeout=self.timeout)
        except ValueError as exc:
            return Verdict.error(f"reference field 'pattern': {exc}")
        return check(completion)


def exact_match(*, case_sensitive: bool = False, pattern: str | None = None, timeout: float = 2.0):
    """Equality with reference field ``answer`` after normalising both sides (Unicode NFKC,
    whitespace collapsed, surrounding quotes and final period dropped, case folded unless
    ``case_sensitive``). A list ``answer`` lists accepted answers: equal to any one passes (the
    list's own text, ``"['12', '13']"``, is no answer). With ``pattern`` (a regex with one
    group), the last match's group is compared instead of the whole completion."""
    if pattern is not None:
        _compile(pattern, "DOTALL")
    return _ExactMatch(case_sensitive=case_sensitive, pattern=pattern, timeout=timeout)


class _RegexFormat:
    returns_verdict = True  # a Verdict for every answer: success_threshold decides nothing

    def __init__(self, pattern, *, fullmatch, flags, timeout, label=None):
        _compile(pattern, flags)  # a bad pattern fails here, at construction
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.pattern, self.fullmatch, self.flags, self.timeout, self.label = (
            pattern,
            fullmatch,
            flags,
            timeout,
            label,
        )

    def __repr__(self) -> str:
        what = self.label or f"pattern={self.pattern!r}"
        return f"regex_format({what}, fullmatch={self.fullmatch})"

    def __call__(self, completion: str, *, pattern: str | None = None, **_ignored) -> Verdict:
        """Reference field ``pattern`` (from the dataset row) overrides the configured one."""
        pattern = self.pattern if pattern is None else pattern
        try:
            _compile(pattern, self.flags)
        except ValueError as exc:
            return Verdict.error(f"reference field 'pattern': {exc}")
        if not isinstance(completion, str):
            return Verdict.invalid(f"completion is {type(completion).__name__}, not text")
        try:
            budget = self.timeout / 2  # the rest of the deadline is for the worker's queue
            span = _bounded(
                _match,
                pattern,
                self.flags,
                self.fullmatch,
                completion,
                budget,
                timeout=self.timeout,
            )
        except _deadline.DeadlineExceeded:
            return Verdict.timeout(f"regex {clip(pattern, 80)!r} ran past {self.timeout:g} s")
        if span == TOO_SLOW:  # undecided, not "no match": as a negative term a slow check would
            # escape its penalty (``Reward`` masks a term that cannot judge)
            return Verdict.timeout(
                f"regex {clip(pattern, 80)!r} ran past its {budget:g} s matching budget"
            )
        if span is None:
            expected = (
                self.label if pattern is self.pattern and self.label else repr(clip(pattern, 120))
            )
            return Verdict.wrong(f"format not matched: expected {expected}")
        return Verdict.ok("format matched")


def _fold(text: str) -> str:
    """NFKC (full-width forms, ligatures, compatibility spaces), except superscripts and
    subscripts: NFKC turns ``10²`` into ``102`` and ``2¹⁰`` into ``210``, other numbers."""
    if text.isascii():
        return text  # NFKC leaves ASCII as it is (a character loop cost 10 ms a trainer step)
    if not any(_is_script(ch) for ch in text):
        return unicodedata.normalize("NFKC", text)
    return "".join(ch if _is_script(ch) else unicodedata.normalize("NFKC", ch) for ch in text)


def _is_script(ch: str) -> bool:
    return ord(ch) > 127 and unicodedata.decomposition(ch).startswith(("<super>", "<sub>"))


class _ExactMatch:
    returns_verdict = True
    reference_fields = ("answer",)  # the trainer checks every row has it before training

    def __init__(self, *, case_sensitive, pattern, timeout):
        self.case_sensitive, self.pattern, self.timeout = case_sensitive, pattern, timeout

    def __repr__(self) -> str:
        return f"exact_match(case_sensitive={self.case_sensitive}, pattern={self.pattern!r})"

    @property
    def inline_safe(self) -> bool:
        """Without a pattern, a normalise-and-compare linear in the input: it cannot hang, so
        ``verify_batch`` may run it in the caller's process (see there)."""
        return self.pattern is None

    def __call__(self, completion: str, *, answer: object = None, **_ignored) -> Verdict:
        if answer is None:
            return Verdict.error("reference field 'answer' is missing")
        if not isinstance(completion, str):
            return Verdict.invalid(f"completion is {type(completion).__name__}, not text")
        candidate = completion
        if self.pattern is not None:
            try:
                candidate = _bounded(_last_group, self.pattern, completion, timeout=self.timeout)
            except _deadline.DeadlineExceeded:
                return Verdict.timeout(f"answer pattern ran past {self.timeout:g} s")
            if candidate is None:
                return Verdict.invalid(f"no match for answer pattern {self.pattern!r}")
        golds = answer if isinstance(answer, (list, tuple)) else [answer]
        if not golds or not all(_gold_ok(g) for g in golds):
            return Verdict.error(
                "reference field 'answer' must be a string or a finite number, or a list of "
                f"them; got {clip(repr(answer), 120)}"
            )
        got = self._norm(candidate)
        if not got:
            return Verdict.invalid("empty answer")
        normed = [self._norm(t) for g in golds for t in _gold_texts(g)]
        if got in normed:
            return Verdict.ok("exact match")
        shown = [self._norm(_gold_texts(g)[0]) for g in golds]
        gold = shown[0] if len(shown) == 1 else f"any of {shown}"
        return Verdict.wrong(clip(f"{got!r} != {gold!r}", 200))

    def _norm(self, text: str) -> str:
        text = " ".join(_fold(text).split())
        text = text.strip().removesuffix(".").strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
            text = text[1:-1].strip()
        return text if self.case_sensitive else text.casefold()


def _gold_ok(gold: object) -> bool:
    """A gold answer is text or a finite number: None or NaN (a missing cell) is no answer, or
    the completion "None" / "nan" would pass."""
    if isinstance(gold, (str, bool)):
        return True
    return isinstance(gold, numbers.Real) and math.isfinite(gold)


def _gold_texts(gold: object) -> list[str]:
    """How a gold answer may be written, its shortest form first: a float ``12.0`` (a float
    column of a data frame) as ``12`` or ``12.0``, ``1e-05`` as ``0.00001`` too."""
    if isinstance(gold, numbers.Real) and not isinstance(gold, (bool, numbers.Integral)):
        text = repr(float(gold))
        plain = format(decimal.Decimal(text), "f")
        forms = [str(int(gold))] if float(gold).is_integer() else []
        # str(gold) too: a float32's 0.1, a Fraction's 1/3
        return list(dict.fromkeys([*forms, str(gold), text, plain]))
    return [str(gold)]


def _compile(pattern: str, flags: str) -> re.Pattern:
    if not isinstance(pattern, str):
        raise ValueError(f"pattern must be a string, got {type(pattern).__name__}")
    bits = 0
    for name in filter(None, (f.strip() for f in flags.split("|"))):
        if name not in _FLAG_NAMES:
            raise ValueError(f"unknown regex flag {name!r}; use {'|'.join(_FLAG_NAMES)}")
        bits |= _FLAG_NAMES[name]
    try:
        return re.compile(pattern, bits)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc}): {clip(pattern, 80)!r}") from None


def _bounded(fn, *args, timeout: float):
    """Run in a killable worker unless we already are in one (whose deadline then applies)."""
    if _deadline.in_worker():
        return fn(*args)
    return _deadline.call_with_deadline(fn, *args, timeout=timeout, queue_counts=True)


TOO_SLOW = "too slow"  # ``_match``: the pattern ran past its matching budget on this text


def _match(pattern: str, flags: str, fullmatch: bool, text: str, budget: float | None = None):
    r"""The span matched, None, or ``TOO_SLOW`` when matching ran past ``budget`` seconds. The
    ``regex`` package stops a match at a deadline, so the worker is not killed; its engine also
    finishes many patterns that ``re`` backtracks on for ever (a looping completion of 168,000
    characters against ``^<think>.*?</think>\s*<answer>.*?</answer>$``: a masked ``timeout``
    under ``re``, a ``wrong`` in 0.9 s here)."""
    compiled = _compile(pattern, flags)
    if budget:
        import regex

        try:
            bounded = regex.compile(pattern, compiled.flags)
        except Exception:  # noqa: BLE001 - a pattern only ``re`` reads: unbounded, as before
            bounded = None
        if bounded is not None:
            try:
                m = (
                    bounded.fullmatch(text, timeout=budget)
                    if fullmatch
                    else bounded.search(text, timeout=budget)
                )
            except TimeoutError:
                return TOO_SLOW
            return m.span() if m else None
    m = compiled.fullmatch(text) if fullmatch else compiled.search(text)
    return m.span() if m else None


def _last_group(pattern: str, text: str):
    last = None
    for m in _compile(pattern, "DOTALL").finditer(text):
        last = m
    if last is None:
        return None
    return last.group(1) if last.re.groups else last.group(0)


exact = register("exact")(_ExactMatch(case_sensitive=False, pattern=None, timeout=2.0))
think_answer = register("format")(tag_format("think", "answer"))
register("regex")(_RowRegex(think_answer))
