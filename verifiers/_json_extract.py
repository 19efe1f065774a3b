"""Which JSON in a completion ``json_schema`` judges: every value that stands as an answer.

A reward must not pay for a completion that also states a wrong answer, so every candidate is
judged and all must validate (``json_values``):
1. only the text after the first ``</think>``: the reasoning may hold drafts (a ``<think>`` that
   never closes leaves no answer, as for ``math``; a second ``</think>`` hides nothing);
2. every fenced block tagged ``json`` (or ``jsonc``, ``json5``, ``jsonl``...): it must parse as
   strict JSON (else ``invalid``), whatever its type;
3. every untagged or prose (``text``, ``markdown``) fenced block whose whole body parses; one
   that does not is read as text. A fence opens a line and its info string has no backtick, so
   a one-line ```` ```{...}``` ```` span is text; it closes on a line of at least as many
   backticks (CommonMark), and one that never closes runs to the end of the text;
4. in the rest of the text (blocks in other languages and single-backtick inline code, which
   names JSON rather than states it, left out), every balanced ``{...}`` or ``[...]`` of the
   schema's top-level ``type`` that parses, and every value of another type that holds one of
   that type inside it (``[{"age": -5}]`` for an object schema is judged and fails, not passed
   over with its object). Only brackets that can open JSON are tried (``{"``, ``{}``, ``[1``,
   ``["``...), so the ``\\frac{1}{2}`` of a long LaTeX preamble does not use up the scan. A
   value that opens and never closes (cut off) is ``invalid``, and so is an object that opens
   like JSON (``{"``) and does not parse (``NaN``, a trailing comma): a broken answer is not
   skipped for a later example that parses. Arrays that do not parse (``[0, 1)``) are passed
   over. When no value has the wanted type, the first one found is judged (and fails on its
   type). Invisible format characters after a bracket (``{\u200b"``) count as space there;
   more than ``_MAX_SCAN_STARTS`` openings is ``invalid`` (the rest would go unjudged);
5. with nothing found so far, the whole completion when it is one JSON value (``42``).
Parsing is strict JSON: NaN/Infinity, trailing commas, comments and single quotes are rejected,
nothing is repaired, a key repeated in one object is rejected (``json.loads`` would keep the last
and hide the first), and a number a double cannot hold exactly is rejected rather than rounded.
Nesting up to ``MAX_DEPTH`` levels is parsed; deeper is ``invalid``.
"""

from __future__ import annotations

import decimal
import json
import re

from passband.verifiers._coerce import clip
from passband.verifiers._text import after_reasoning

__all__ = ["json_values", "strict_loads", "MAX_DEPTH"]

# a fence opens a line; its info string holds no backtick (CommonMark), so ```{"a": 1}``` on one
# line is inline code, read with the text, not a block whose first line is dropped. It closes on a
# line of its own, or right after a JSON value's last bracket ('{"a": 1}```'), not after any code
_FENCE = re.compile(  # a closing run of backticks at least as long as the opening one (CommonMark)
    r"^[ \t]*(```+)[ \t]*([^\s`]*)[^\n`]*\n(.*?)"
    r"(?:^[ \t]*(\1`*)[ \t]*$|(?<=[}\]])(\1`*)[ \t]*$|\Z)",
    re.DOTALL | re.MULTILINE,
)
_PROSE_FENCES = frozenset({"", "text", "txt", "plaintext", "plain", "markdown", "md", "output"})
_INLINE_CODE = re.compile(r"(?<!`)`[^`\n]+`(?!`)")  # `{}` in a sentence names JSON, states none
_MAX_SCAN_STARTS = 20_000  # bare-text scan: openings tried (the deadline bounds the rest)
# An opening bracket that can start JSON: not LaTeX's \frac{1}, ^{2} or [0, 1] ... but [1, 2] is JSON.
# Between a bracket and what follows, invisible format characters (a zero-width space, a BOM)
# count as space: '{\u200b"age": -5}' shows as JSON, and must be judged (it is invalid), not skipped.
_GAP = r"[\s\u00ad\u200b-\u200f\u2060-\u2064\ufeff]*"
_JSON_START = re.compile(  # with a single quote: tried, fails, and its insides are skipped
    rf"""\{{{_GAP}(?:["'}}]|//|/\*|[A-Za-z_]\w*\s*:\s*["'\[{{\-\d])"""
    rf"""|\[{_GAP}(?:[\[{{"'\]\-\d]|true\b|false\b|null\b)"""
)
# an object that opens like JSON, like a Python dict ({'a': ...}), with a comment (JSONC) or with
# a bare key and a JSON value ({name: "Bob"}, JavaScript): broken is invalid, not skipped for an
# earlier valid example
_OBJECT_START = re.compile(rf"""\{{{_GAP}(?:["']|//|/\*|[A-Za-z_]\w*\s*:\s*["'\[{{\-\d])""")
MAX_DEPTH = 20_000
_INT_DIGITS = 4_000  # longer integers parse as Decimal (Python's int() refuses > 4,300 digits)


def json_values(text: str, want: object = None) -> tuple[list, list[str], str | None]:
    """``(values, labels, problem)``: every JSON value that stands as an answer in ``text`` and
    where each was found, or why the completion has no judgeable JSON (``problem``; the values
    are then empty). ``want``: the schema's top-level ``type`` (a name or a list)."""
    if "<think>" in text and "</think>" not in text:
        return [], [], "the reasoning never closes (<think> without </think>): no answer"
    text = after_reasoning(text, first=True)  # a second </think> hides nothing after the first
    depth = _depth(text)
    if depth > MAX_DEPTH:
        return (
            [],
            [],
            (
                f"no JSON within the nesting limit: brackets nest {depth} levels deep "
                f"(limit {MAX_DEPTH})"
            ),
        )
    values, labels, cut = [], [], []
    for m in _FENCE.finditer(text):
        lang, body = m.group(2).lower(), m.group(3)
        tagged = "json" in lang  # json, jsonc, json5, jsonl, ndjson, geojson, application/json
        if not tagged and lang not in _PROSE_FENCES:
            cut.append(m.span())  # code in another language: its dicts are not the answer (one
            continue  # that never closes runs to the end, as Markdown shows it)
        try:
            values.append(strict_loads(body))
        except ValueError as exc:
            if tagged:
                return [], [], f"a ```{lang} block is not valid JSON: {clip(str(exc), 200)}"
            continue  # a block of prose: read with the text
        labels.append(f"```{lang} block" if lang else "bare ``` block")
        cut.append(m.span())
    rest = "".join(text[a:b] if i % 2 == 0 else "\n" for i, (a, b) in enumerate(_gaps(cut, text)))
    rest = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), rest)
    try:
        found, labels_found, problem = _scan(rest, want)
    except _TooManyStarts:
        return [], [], f"more than {_MAX_SCAN_STARTS:,} brackets that may open JSON: not judged"
    if problem:
        return [], [], problem
    values, labels = values + found, labels + labels_found
    kinds = {want} if isinstance(want, str) else set(want) if isinstance(want, list) else set()
    scalar = want is None or bool(kinds - _CONTAINERS)
    if not values and scalar:  # a scalar answer ('42', '"a@b.org"') that is the whole completion
        try:
            return [strict_loads(text.strip())], ["the whole completion"], None
        except ValueError:
            pass
    if not values:
        return [], [], "no JSON object or array found in the completion"
    return values, labels, None


def _gaps(cut: list[tuple[int, int]], text: str):
    """Alternating kept / cut spans of ``text`` (kept ones at even positions)."""
    start = 0
    for a, b in cut:
        yield start, a
        yield a, b
        start = b
    yield start, len(text)


_CONTAINERS = {"object", "array"}
_ARRAY_START = re.compile(r'\[\s*[\[{"]')  # "[{", "[[", '["': an array of JSON values


def _scan(text: str, want: object) -> tuple[list, list[str], str | None]:
    decoder, first, values = _decoder(), None, []
    wanted = {want} if isinstance(want, str) else set(want) if isinstance(want, list) else None
    passed_over = 0  # the end of the last value: its own parts are not answers
    tried = 0  # openings tried, not those inside a value already parsed
    for start in _bracket_starts(text):
        if start < passed_over:
            continue
        tried += 1
        if tried > _MAX_SCAN_STARTS:  # what follows would go unjudged: no pass for it
            raise _TooManyStarts
        try:  # raw_decode parses exactly one balanced value starting here, or fails
            value, passed_over = decoder.raw_decode(text, start)
            if _SURROGATE_ESCAPE.search(text, start, passed_over):
                _check_unicode(value)
        except (ValueError, RecursionError) as exc:
            pos = getattr(exc, "pos", None)  # where the decoder gave up
            parsed = text[start:pos] if isinstance(pos, int) and pos > start else None
            if parsed is not None and not _json_like(text, start, parsed, wanted):
                continue  # a bracket in prose ("ages in [0, 150)"): the scan goes on inside it
            close = _close_of(text, start)
            if close is None:
                return [], [], f"a JSON value is cut off (it never closes): {_head(text, start)}"
            # a broken answer is no answer: an earlier valid "example" must not stand for it
            return [], [], f"{_head(text, start)} is not valid JSON: {clip(str(exc), 200)}"
        if wanted is None or _json_type(value) & wanted or _holds(value, wanted):
            values.append(value)  # [{"age": -5}] for an object schema: judged (it fails), not
            # passed over with the wrong object inside it
        elif first is None:
            first = value
    if not values and first is not None:
        return [first], ["the first JSON value in the text (not of the schema's type)"], None
    return values, ["JSON value in the text"] * len(values), None


def _json_like(text: str, start: int, parsed: str, wanted: set[str] | None) -> bool:
    """Whether a bracket that failed to parse was meant as JSON: an object (``{"``), an array
    holding one, or an array of the type the schema wants ("[0, 150)" in prose is neither)."""
    return bool(
        _OBJECT_START.match(text, start)
        or '{"' in parsed
        or wanted is not None
        and "array" in wanted
        and _ARRAY_START.match(text, start)
    )


def _holds(value: object, wanted: set[str]) -> bool:
    """Whether ``value`` has, at any depth inside it, an object or array of a ``wanted`` type."""
    return any(_json_type(item) & wanted for item in walk(value))  # its own: the caller checked


def walk(value: object):
    """``value`` and every value inside it, at any depth (a loop: no recursion limit)."""
    stack = [value]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _head(text: str, start: int) -> str:
    head = text[start : start + 40]
    return repr(head + "…" if len(text) > start + 40 else head)


def _json_type(value: object) -> set[str]:
    return (
        {"object"} if isinstance(value, dict) else {"array"} if isinstance(value, list) else set()
    )


def _depth(text: str) -> int:
    """How deep brackets nest (outside strings); cheap when there are few brackets."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    for token in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        ch = token.group(0)
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _close_of(text: str, start: int) -> int | None:
    """Where the bracket at ``start`` closes (strings skipped), or None when it is still open at
    the end of the text: truncated. One linear scan, so broken values cost no more than valid ones
    (``[[[...NaN...]]]`` used to be re-scanned from every bracket: quadratic)."""
    depth = 0
    for token in re.finditer(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', text[start:]):
        ch = token.group(0)
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return start + token.end()
    return None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


class Written(float):
    """A JSON number as a float that keeps the text it was written as: ``multipleOf`` divides
    that exactly (``8.009999999999999`` reads as the double of ``8.01``, and is no multiple of
    ``0.01``)."""

    text: str


def _finite_float(text: str) -> float | int:
    """A JSON number with a fraction or an exponent: the float it reads as, or, for an integral
    value past 2^53 that no double holds (``1e23``, ``9007199254740993.0``), the exact ``int``:
    a schema's bound then compares with the number written, not its rounding."""
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400: JSON has no infinity either
        raise ValueError(f"{text[:40]} is out of the range of a JSON number (it reads as infinity)")
    exact = decimal.Decimal(text)
    if value == 0 and exact != 0:
        raise ValueError(f"{text[:40]} underflows to 0: a check would judge another number")
    if exact != decimal.Decimal(value):
        if abs(value) >= 2**53 and exact == exact.to_integral_value():
            return int(exact)
        if len(exact.normalize().as_tuple().digits) >= 17:  # 1.0000000000000001 would pass
            raise ValueError(  # "integer"
                f"{text[:40]} has more digits than a double holds: it would read as {value!r}"
            )
    number = Written(value)
    number.text = text
    return number


def _any_int(text: str):
    """An integer of any length: ``int`` up to ``_INT_DIGITS`` digits, else a ``Decimal`` (a
    number, never an ``integer`` to jsonschema). ``int()`` raised on 4,301 digits, and the scan
    then skipped a value that broke the schema's ``maximum`` for a later one."""
    return int(text) if len(text) <= _INT_DIGITS else decimal.Decimal(text)


def _unique_keys(pairs: list) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key[:40]!r} appears twice in one object")
        out[key] = value
    return out


def _decoder() -> json.JSONDecoder:
    return json.JSONDecoder(
        parse_constant=_reject_constant,
        parse_float=_finite_float,
        parse_int=_any_int,
        object_pairs_hook=_unique_keys,
    )


def strict_loads(text: str | bytes) -> object:
    """``json.loads`` minus NaN/Infinity, repeated keys and numbers a double would round; every
    failure is a ValueError."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        value = _decoder().decode(text)
        if _SURROGATE_ESCAPE.search(text):
            _check_unicode(value)
        return value
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(str(exc)) from None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_unicode(value: object) -> None:
    """A string holding half of a surrogate pair (``"\\ud800"`` alone) is not Unicode text: it
    cannot be written as UTF-8, so the value is not valid JSON (RFC 8259, section 8.2)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"a string with a lone surrogate: {item[:40]!r}") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class _TooManyStarts(Exception):
    """The bare-text scan met more than ``_MAX_SCAN_STARTS`` openings: the rest is not judged."""


def _bracket_starts(text: str):
    for m in _JSON_START.finditer(text):
        yield m.start()
