"""``json_schema``: does the JSON in the completion validate against the reference ``schema``?

Which JSON is judged, in this order, with no falling back once a block is chosen:
1. the last fenced block tagged ``json``;
2. failing that, the last bare fenced block (no language tag);
3. failing that, the first balanced ``{...}`` or ``[...]`` in the text that parses. Only brackets
   that can open JSON are tried (``{"``, ``{}``, ``[1``, ``["``...), so the ``\frac{1}{2}`` of a
   long LaTeX preamble does not use up the scan; a value that opens and is never closed (an array
   cut off midway) is ``invalid``: what is inside it is not the answer.
A chosen block that does not parse is ``invalid``. Parsing is strict JSON: NaN/Infinity, trailing
commas, comments and single quotes are rejected and nothing is repaired; with duplicate keys the
last one wins (as in ``json.loads``). The draft comes from ``$schema`` (default 2020-12), formats
are checked (date-time, uri, hostname, duration, ... through the checker packages passband
installs; a schema naming a standard format whose checker is missing, such as ``iri``, is an
``error``, never a pass), and the first failing path goes into ``detail``.
Nesting up to ``_MAX_DEPTH`` levels is parsed and validated (in the worker, on a thread with a
large stack); deeper is ``invalid``.
Schema ``pattern`` regexes run in Python's ``re``, which can backtrack for hours, so the check runs
under a hard time limit (waiting for a free worker counts against it, from any number of threads).
"""

from __future__ import annotations

import decimal
import functools
import json
import re
import sys
import threading

from passband.verifiers import _deadline
from passband.verifiers._coerce import clip
from passband.verifiers.registry import register
from passband.verifiers.verdict import Verdict

__all__ = ["extract_json", "json_schema_verifier"]

_FENCE = re.compile(
    r"^[ \t]*```[ \t]*([^\s`]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.DOTALL | re.MULTILINE
)
_MAX_SCAN_STARTS = (
    20_000  # bare-text scan: openings tried (each a cheap parse; the deadline bounds the rest)
)
# An opening bracket that can start JSON: not LaTeX's \frac{1}, ^{2} or [0, 1] ... but [1, 2] is JSON.
_JSON_START = re.compile(  # with a single quote: tried, fails, and its insides are skipped
    r"""\{\s*["'}]|\[\s*(?:[\[{"'\]\-\d]|true\b|false\b|null\b)"""
)
_MAX_DEPTH = 20_000
_DEEP_STACK = 512 << 20  # bytes of C stack for the parse and validation of deeply nested values


def json_schema_verifier(*, timeout: float = 5.0):
    """The ``json_schema`` verifier with its own hard time limit (seconds)."""
    if not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return _JsonSchema(float(timeout))


class _JsonSchema:
    returns_verdict = True  # a Verdict for every answer: success_threshold decides nothing
    reference_fields = ("schema",)  # the trainer checks every row has it before training

    def __init__(self, timeout: float):
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"json_schema_verifier(timeout={self.timeout:g})"

    def __call__(self, completion: str, *, schema: object = None, **_ignored) -> Verdict:
        if schema is None:
            return Verdict.error("reference field 'schema' is missing")
        if not isinstance(completion, str):
            return Verdict.invalid(f"completion is {type(completion).__name__}, not text")
        if _deadline.in_worker():
            return _judge_deep(completion, schema)
        try:
            return _deadline.call_with_deadline(
                _judge_deep, completion, schema, timeout=self.timeout, queue_counts=True
            )
        except _deadline.DeadlineExceeded:
            return Verdict.timeout(
                f"schema validation ran past {self.timeout:g} s (catastrophic pattern?)"
            )
        except _deadline.WorkerCrashed as exc:
            return Verdict.error(f"json_schema worker crashed: {exc}")


def _judge_deep(completion: str, schema: object) -> Verdict:
    """``_judge`` on a thread with a large stack and recursion limit, so 10k-deep JSON is judged.

    Only ever runs in a killable worker: a C stack overflow there crashes the worker (an
    ``error``), never the caller. The recursion limit is the process's, so it is restored after.
    """
    box: list[Verdict] = []
    old_stack, old_limit = threading.stack_size(), sys.getrecursionlimit()
    try:
        threading.stack_size(_DEEP_STACK)
        sys.setrecursionlimit(max(old_limit, 10 * _MAX_DEPTH))
        thread = threading.Thread(
            target=lambda: box.append(_judge(completion, schema)), daemon=True
        )
        thread.start()
    finally:
        threading.stack_size(old_stack)
    thread.join()
    sys.setrecursionlimit(old_limit)
    return box[0] if box else Verdict.error("json_schema: the check failed without a verdict")


def _judge(completion: str, schema: object) -> Verdict:
    if isinstance(schema, (str, bytes)):
        try:
            schema = _strict_loads(schema)
        except ValueError as exc:
            return Verdict.error(f"reference field 'schema' is not valid JSON: {exc}")
    if not isinstance(schema, (dict, bool)):
        return Verdict.error(
            f"reference field 'schema' must be a JSON object, got {type(schema).__name__}"
        )
    try:
        validator = _compiled(json.dumps(schema, sort_keys=True))
    except ValueError as exc:  # JSON text that is valid but not a valid schema
        return Verdict.error(str(exc))
    found, instance, where = extract_json(
        completion, schema.get("type") if isinstance(schema, dict) else None
    )
    if not found:
        return Verdict.invalid(where)
    try:
        errors = list(validator.iter_errors(instance))
    except Exception as exc:  # unresolvable $ref and the like: a reference-data problem
        return Verdict.error(
            f"reference field 'schema' could not be applied: {type(exc).__name__}: {clip(str(exc), 200)}"
        )
    if not errors:
        return Verdict.ok(f"valid JSON ({where}) matches the schema")
    from jsonschema import exceptions

    best = exceptions.best_match(errors)
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    rule = f"{best.validator}={clip(repr(best.validator_value), 60)}"
    return Verdict.wrong(
        f"at {_path(best)}: {rule} failed{more}: {clip(best.message, 200)} [{where}]"
    )


@functools.lru_cache(maxsize=256)
def _compiled(schema_json: str):
    """A checked validator per distinct schema: datasets repeat a few schemas over many rows, and
    checking a schema against its metaschema costs more than validating one instance."""
    from jsonschema import exceptions, validators

    schema = json.loads(schema_json)
    cls = validators.validator_for(schema, default=None) if isinstance(schema, dict) else None
    if cls is None and isinstance(schema, dict) and "$schema" in schema:
        raise ValueError(
            f"reference field 'schema': unknown $schema {clip(str(schema['$schema']), 80)!r}"
        )
    cls = cls or validators.Draft202012Validator
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        raise ValueError(
            f"reference field 'schema' is not a valid schema at {_path(exc)}: {clip(exc.message, 200)}"
        ) from None
    missing = sorted(_STANDARD_FORMATS & _formats(schema) - set(cls.FORMAT_CHECKER.checkers))
    if missing:  # it would pass any string: fail closed rather than reward unchecked output
        raise ValueError(
            f"reference field 'schema' uses format {missing[0]!r}, which cannot be checked here "
            "(its checker package is not installed: see jsonschema's format extras)"
        )
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


_STANDARD_FORMATS = frozenset(
    "date-time date time duration email idn-email hostname idn-hostname ipv4 ipv6 uri "
    "uri-reference iri iri-reference uuid uri-template json-pointer relative-json-pointer "
    "regex".split()
)


def _formats(schema, depth: int = 0) -> set[str]:
    """Every ``format`` a schema names (its checker must exist, see ``_validator``)."""
    if depth > 64:
        return set()
    if isinstance(schema, dict):
        found = {schema["format"]} if isinstance(schema.get("format"), str) else set()
        for value in schema.values():
            found |= _formats(value, depth + 1)
        return found
    if isinstance(schema, list):
        return set().union(*(_formats(v, depth + 1) for v in schema))
    return set()


def extract_json(text: str, want: object = None) -> tuple[bool, object, str]:
    """``(found, value, where)``: the JSON value the verifier judges, or why there is none.

    ``want``: the schema's top-level ``type`` (a name or a list). In bare text, a value of another
    type (the ``[0, 1]`` of an interval before the object) is passed over for a later one that has
    it; if none has, the first value found is judged.
    """
    depth = _depth(text)
    if depth > _MAX_DEPTH:
        return (
            False,
            None,
            f"no JSON within the nesting limit: brackets nest {depth} levels deep (limit {_MAX_DEPTH})",
        )
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    for wanted, label in (("json", "last ```json block"), ("", "last bare ``` block")):
        chosen = [body for lang, body in blocks if lang == wanted]
        if chosen:
            try:
                return True, _strict_loads(chosen[-1]), label
            except ValueError as exc:
                return False, None, f"the {label} is not valid JSON: {clip(str(exc), 200)}"
    decoder, first = _strict_decoder(), None
    wanted = {want} if isinstance(want, str) else set(want) if isinstance(want, list) else None
    passed_over = 0  # the end of a value of the wrong type: its own parts are not answers either
    for start in _bracket_starts(text):
        if start < passed_over:
            continue
        try:  # raw_decode parses exactly one balanced value starting here, or fails
            value, passed_over = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            close = _close_of(text, start)
            if close is None:
                return (
                    False,
                    None,
                    f"the JSON value at character {start} is cut off (it never closes)",
                )
            passed_over = close  # a broken value: a fragment inside it is no answer either
            continue
        if wanted is None or _json_type(value) & wanted:
            return True, value, "first JSON value in the text"
        first = first or (value,)
    if first is not None:
        return True, first[0], "first JSON value in the text"
    return False, None, "no JSON object or array found in the completion"


def _json_type(value: object) -> set[str]:
    return (
        {"object"} if isinstance(value, dict) else {"array"} if isinstance(value, list) else set()
    )


def _depth(text: str) -> int:
    """How deep brackets nest (outside strings); cheap when there are few brackets."""
    if text.count("[") + text.count("{") <= _MAX_DEPTH:
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


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400: JSON has no infinity either
        raise ValueError(f"{text[:40]} is out of the range of a JSON number (it reads as infinity)")
    exact = decimal.Decimal(text)
    if value == 0 and exact != 0:
        raise ValueError(f"{text[:40]} underflows to 0: a check would judge another number")
    if exact != decimal.Decimal(value) and (
        len(exact.normalize().as_tuple().digits) >= 17
        or (abs(value) >= 2**53 and exact == exact.to_integral_value())
    ):  # 1.0000000000000001 would pass "integer", 9007199254740993.0 a maximum of 2^53
        raise ValueError(
            f"{text[:40]} has more digits than a double holds: it would read as {value!r}"
        )
    return value


def _strict_decoder() -> json.JSONDecoder:
    return json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def _strict_loads(text: str | bytes) -> object:
    """``json.loads`` minus NaN/Infinity (and numbers that overflow to it); every failure is a
    ValueError."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return _strict_decoder().decode(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(str(exc)) from None


def _bracket_starts(text: str):
    count = 0
    for m in _JSON_START.finditer(text):
        yield m.start()
        count += 1
        if count >= _MAX_SCAN_STARTS:
            return


def _path(error) -> str:
    path = getattr(error, "json_path", None)
    if path:
        return path
    return "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)


json_schema = register("json_schema")(_JsonSchema(5.0))
