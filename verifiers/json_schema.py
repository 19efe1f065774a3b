"""``json_schema``: does the JSON in the completion validate against the reference ``schema``?

Which JSON is judged, in this order, with no falling back once a block is chosen:
1. the last fenced block tagged ``json``;
2. failing that, the last bare fenced block (no language tag);
3. failing that, the first balanced ``{...}`` or ``[...]`` in the text that parses.
A chosen block that does not parse is ``invalid``. Parsing is strict JSON: NaN/Infinity, trailing
commas, comments and single quotes are rejected and nothing is repaired; with duplicate keys the
last one wins (as in ``json.loads``). The draft comes from ``$schema`` (default 2020-12), formats
are checked, and the first failing path goes into ``detail``. Schema ``pattern`` regexes run in
Python's ``re``, which can backtrack for hours, so the check runs under a hard time limit.
"""

from __future__ import annotations

import functools
import json
import re

from passband.verifiers import _deadline
from passband.verifiers._coerce import clip
from passband.verifiers.registry import register
from passband.verifiers.verdict import Verdict

__all__ = ["extract_json", "json_schema_verifier"]

_FENCE = re.compile(r"^[ \t]*```[ \t]*([^\s`]*)[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.DOTALL | re.MULTILINE)
_MAX_SCAN_STARTS = 200  # bare-text scan: try at most this many opening brackets


def json_schema_verifier(*, timeout: float = 5.0):
    """The ``json_schema`` verifier with its own hard time limit (seconds)."""
    if not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return _JsonSchema(float(timeout))


class _JsonSchema:
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
            return _judge(completion, schema)
        try:
            return _deadline.call_with_deadline(_judge, completion, schema, timeout=self.timeout, queue_counts=True)
        except _deadline.DeadlineExceeded:
            return Verdict.timeout(f"schema validation ran past {self.timeout:g} s (catastrophic pattern?)")
        except _deadline.WorkerCrashed as exc:
            return Verdict.error(f"json_schema worker crashed: {exc}")


def _judge(completion: str, schema: object) -> Verdict:
    if isinstance(schema, (str, bytes)):
        try:
            schema = _strict_loads(schema)
        except ValueError as exc:
            return Verdict.error(f"reference field 'schema' is not valid JSON: {exc}")
    if not isinstance(schema, (dict, bool)):
        return Verdict.error(f"reference field 'schema' must be a JSON object, got {type(schema).__name__}")
    try:
        validator = _compiled(json.dumps(schema, sort_keys=True))
    except ValueError as exc:  # JSON text that is valid but not a valid schema
        return Verdict.error(str(exc))
    found, instance, where = extract_json(completion)
    if not found:
        return Verdict.invalid(where)
    try:
        errors = list(validator.iter_errors(instance))
    except Exception as exc:  # unresolvable $ref and the like: a reference-data problem
        return Verdict.error(f"reference field 'schema' could not be applied: {type(exc).__name__}: {clip(str(exc), 200)}")
    if not errors:
        return Verdict.ok(f"valid JSON ({where}) matches the schema")
    from jsonschema import exceptions

    best = exceptions.best_match(errors)
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    rule = f"{best.validator}={clip(repr(best.validator_value), 60)}"
    return Verdict.wrong(f"at {_path(best)}: {rule} failed{more}: {clip(best.message, 200)} [{where}]")


@functools.lru_cache(maxsize=256)
def _compiled(schema_json: str):
    """A checked validator per distinct schema: datasets repeat a few schemas over many rows, and
    checking a schema against its metaschema costs more than validating one instance."""
    from jsonschema import exceptions, validators

    schema = json.loads(schema_json)
    cls = validators.validator_for(schema, default=None) if isinstance(schema, dict) else None
    if cls is None and isinstance(schema, dict) and "$schema" in schema:
        raise ValueError(f"reference field 'schema': unknown $schema {clip(str(schema['$schema']), 80)!r}")
    cls = cls or validators.Draft202012Validator
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        raise ValueError(f"reference field 'schema' is not a valid schema at {_path(exc)}: {clip(exc.message, 200)}") from None
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def extract_json(text: str) -> tuple[bool, object, str]:
    """``(found, value, where)``: the JSON value the verifier judges, or why there is none."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    for wanted, label in (("json", "last ```json block"), ("", "last bare ``` block")):
        chosen = [body for lang, body in blocks if lang == wanted]
        if chosen:
            try:
                return True, _strict_loads(chosen[-1]), label
            except ValueError as exc:
                return False, None, f"the {label} is not valid JSON: {clip(str(exc), 200)}"
    decoder = _strict_decoder()
    for start in _bracket_starts(text):
        try:  # raw_decode parses exactly one balanced value starting here, or fails
            return True, decoder.raw_decode(text, start)[0], "first JSON value in the text"
        except (ValueError, RecursionError):
            continue
    return False, None, "no JSON object or array found in the completion"


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _strict_decoder() -> json.JSONDecoder:
    return json.JSONDecoder(parse_constant=_reject_constant)


def _strict_loads(text: str | bytes) -> object:
    """``json.loads`` minus NaN/Infinity; every failure is a ValueError."""
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
    for m in re.finditer(r"[\[{]", text):
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
