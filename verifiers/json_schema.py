"""``json_schema``: does the JSON in the completion validate against the reference ``schema``?

Every JSON value that stands as an answer is judged, and all must validate: a completion that
also states a wrong answer earns nothing (which values, and how strictly they are parsed:
``_json_extract``). The draft comes from ``$schema`` (default 2020-12). Formats are checked
(date-time, uri, hostname, duration, email, uuid, ... through the checker packages passband
installs, with stricter rules where those accept too much: ``_json_formats``); a schema naming a
standard format whose checker is missing, such as ``iri``, is an ``error``, never a pass.
``pattern`` is read as ECMA-262 reads it (``$`` only at the end, ASCII ``\\d`` / ``\\w``). A schema with
no top-level ``type`` whose keywords all describe objects (``properties``, ``required``, ...) wants
an object, and one whose keywords all describe arrays (``items``, ``minItems``, ...) an array: the
standard would let ``[]`` or ``"x"`` pass them vacuously, which no one writing them means. The first failing
path goes into ``detail``. Nesting up to ``MAX_DEPTH`` levels is parsed and validated (in the
worker, on a thread with a large stack); deeper is ``invalid``.
Schema ``pattern`` regexes run in Python's ``re``, which can backtrack for hours, so the check runs
under a hard time limit (waiting for a free worker counts against it, from any number of threads).
"""

from __future__ import annotations

import functools
import json
import sys
import threading
from decimal import Decimal
from fractions import Fraction

from passband.verifiers import _deadline
from passband.verifiers._coerce import clip
from passband.verifiers._json_extract import MAX_DEPTH, json_values, strict_loads, walk
from passband.verifiers._json_formats import (
    PATTERN_BUDGET,
    STANDARD_FORMATS,
    ecma_search,
    formats_named,
    strict_checker,
)
from passband.verifiers.registry import register
from passband.verifiers.verdict import Verdict

__all__ = ["extract_json", "json_schema_verifier"]

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
        sys.setrecursionlimit(max(old_limit, 10 * MAX_DEPTH))
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
            schema = strict_loads(schema)
        except ValueError as exc:
            return Verdict.error(f"reference field 'schema' is not valid JSON: {exc}")
    if not isinstance(schema, (dict, bool)):
        return Verdict.error(
            f"reference field 'schema' must be a JSON object, got {type(schema).__name__}"
        )
    schema = implied_type(schema)
    key = json.dumps(schema, sort_keys=True)
    try:
        validator = _compiled(key)
    except ValueError as exc:  # JSON text that is valid but not a valid schema
        return Verdict.error(str(exc))
    want = wanted_type(schema)
    values, labels, problem = json_values(completion, want)
    if problem:
        return Verdict.invalid(problem)
    for k, (instance, label) in enumerate(zip(values, labels)):
        if '"uniqueItems": true' in key and _longest_array(instance) > _MAX_UNIQUE_ITEMS:
            return Verdict.invalid(  # jsonschema compares unhashable items pairwise: minutes
                f"{label}: an array of more than {_MAX_UNIQUE_ITEMS} items under uniqueItems"
            )
        try:
            errors = list(validator.iter_errors(instance))
        except (OverflowError, ArithmeticError) as exc:  # the answer's own huge number or
            return Verdict.invalid(  # repetition ("1e4000" under multipleOf, "a{99999999999}")
                f"{label}: a value too large to check ({type(exc).__name__}: {clip(str(exc), 120)})"
            )
        except Exception as exc:  # unresolvable $ref and the like: a reference-data problem
            if _has_huge_number(instance):  # Decimal / float arithmetic inside a keyword
                return Verdict.invalid(f"{label}: a number too large to check")
            return Verdict.error(
                "reference field 'schema' could not be applied: "
                f"{type(exc).__name__}: {clip(str(exc), 200)}"
            )
        which = label if len(values) == 1 else f"value {k + 1} of {len(values)}, {label}"
        if errors:
            return Verdict.wrong(_failure(errors, which))
        if not _of_type(validator, instance, want):  # a type the schema implies, not states
            return Verdict.wrong(
                f"at $: type={want!r} (what the schema's $ref / anyOf / keywords want) failed: "
                f"{clip(repr(instance), 60)} is not of that type [{which}]"
            )
    where = labels[0] if len(values) == 1 else f"{len(values)} JSON values, every one"
    return Verdict.ok(f"valid JSON ({where}) matches the schema")


_OBJECT_KEYWORDS = frozenset(
    "properties required additionalProperties patternProperties minProperties maxProperties "
    "propertyNames dependentRequired dependentSchemas unevaluatedProperties".split()
)
_ARRAY_KEYWORDS = frozenset(
    "items prefixItems minItems maxItems contains minContains maxContains uniqueItems "
    "unevaluatedItems additionalItems".split()
)
_TYPELESS = frozenset("$schema $id $defs definitions title description $comment examples".split())


def implied_type(schema: object) -> object:
    """``schema`` with ``"type": "object"`` (or ``"array"``) added when it names no type and its
    other keywords all describe that type; else ``schema`` itself."""
    if not isinstance(schema, dict) or "type" in schema:
        return schema
    keys = set(schema) - _TYPELESS
    for words, kind in ((_OBJECT_KEYWORDS, "object"), (_ARRAY_KEYWORDS, "array")):
        if keys and keys <= words:
            return {**schema, "type": kind}
    return schema


def wanted_type(schema: object, root: object = None, depth: int = 0) -> object:
    """The top-level ``type`` the answer must have (a name or a list), for finding it in prose:
    the schema's own or implied one, else the one a local ``$ref`` names, or that every branch of
    an ``anyOf`` / ``oneOf`` (or some branch of an ``allOf``) names; None when unknown, and then
    every bracket in the text is judged (a citation ``[1]`` failed an object schema reached by
    ``$ref``)."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > 8:
        return None
    schema = implied_type(schema)
    if "type" in schema:
        return schema["type"]
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node = root
        for part in ref[2:].split("/"):
            node = (
                node.get(part.replace("~1", "/").replace("~0", "~"))
                if isinstance(node, dict)
                else None
            )
        return wanted_type(node, root, depth + 1)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            kinds = [wanted_type(b, root, depth + 1) for b in branches]
            return kinds[0] if all(k is not None and k == kinds[0] for k in kinds) else None
    branches = schema.get("allOf")
    if isinstance(branches, list):
        return next(
            (k for b in branches if (k := wanted_type(b, root, depth + 1)) is not None), None
        )
    return None


def _of_type(validator, instance: object, want: object) -> bool:
    """Whether ``instance`` has the type ``wanted_type`` found (any, when none or unknown): a
    ``$ref`` or ``anyOf`` root with no ``type`` of its own let a bare ``42`` pass an object
    schema whose branches only name ``required``."""
    names = [want] if isinstance(want, str) else want if isinstance(want, list) else []
    try:
        return not names or any(validator.is_type(instance, t) for t in names)
    except Exception:  # noqa: BLE001 - an unknown type name: the schema check decides alone
        return True


_MAX_UNIQUE_ITEMS = 1_000  # 3,000 objects under uniqueItems took jsonschema past 5 s


def _longest_array(value: object) -> int:
    """The longest array whose items jsonschema's uniqueItems compares pairwise: objects,
    arrays, or items of more than one type (plain strings or numbers are sorted: fast)."""
    return max(
        (
            len(v)
            for v in walk(value)
            if isinstance(v, list)
            and (len({type(x) for x in v}) > 1 or any(isinstance(x, (dict, list)) for x in v))
        ),
        default=0,
    )


def _has_huge_number(value: object) -> bool:
    return any(
        isinstance(v, Decimal) or (type(v) is int and v.bit_length() > 1024) for v in walk(value)
    )


def _failure(errors: list, where: str) -> str:
    from jsonschema import exceptions

    best = exceptions.best_match(errors)
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    if best.validator is None:  # the schema (or a subschema) is false: nothing is allowed
        rule = "the schema false"
    else:
        rule = f"{best.validator}={clip(repr(best.validator_value), 60)}"
    return f"at {_path(best)}: {rule} failed{more}: {clip(best.message, 200)} [{where}]"


def _exact_multiple_of(validator, step, instance, schema):
    """``multipleOf`` in exact decimal arithmetic: jsonschema divides floats, so ``19.99`` was
    "not a multiple of 0.01" and ``10**18`` passed ``1.5``. An answer's number is read as it was
    written (``_json_extract.Written``), a schema's float as its shortest decimal."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "number"):
        return
    if Fraction(_decimal(instance)) % Fraction(_decimal(step)):
        yield ValidationError(f"{instance!r} is not a multiple of {step!r}")


def _decimal(number) -> Decimal:
    """A number as the decimal it was written as: a parsed JSON number's own text, a schema's
    float its shortest repr, an int or a Decimal itself."""
    if isinstance(number, Decimal):
        return number
    if isinstance(number, float):
        return Decimal(getattr(number, "text", None) or repr(number))
    return Decimal(number)


def _ecma_pattern_keyword(validator, pattern, instance, schema):
    """``pattern`` as ECMA-262 reads it (``_json_formats.ecma_pattern``), not ``re.search``'s."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    found = ecma_search(pattern, instance)
    if found is None:
        yield ValidationError(
            f"{clip(instance, 60)!r}: {pattern!r} ran past its {PATTERN_BUDGET:g} s budget on "
            "it (counted as no match)"
        )
    elif not found:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


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
        # patterns in the schema are ECMA-262 regexes (named groups, \\p{L}), not Python's
        cls.check_schema(schema, format_checker=strict_checker(cls, schema=True))
    except exceptions.SchemaError as exc:
        raise ValueError(
            f"reference field 'schema' is not a valid schema at {_path(exc)}: {clip(exc.message, 200)}"
        ) from None
    checker = strict_checker(cls)
    missing = sorted(STANDARD_FORMATS & formats_named(schema) - set(checker.checkers))
    if missing:  # it would pass any string: fail closed rather than reward unchecked output
        raise ValueError(
            f"reference field 'schema' uses format {missing[0]!r}, which cannot be checked here "
            "(its checker package is not installed: see jsonschema's format extras)"
        )
    strict = validators.extend(
        cls, {"pattern": _ecma_pattern_keyword, "multipleOf": _exact_multiple_of}
    )
    return strict(schema, format_checker=checker)


def extract_json(text: str, want: object = None) -> tuple[bool, object, str]:
    """``(found, value, where)``: the last JSON value that stands as an answer in ``text`` (the
    final one), or why there is none. The verifier judges every such value, not only this one
    (``_json_extract.json_values``); ``want`` is the schema's top-level ``type``."""
    values, labels, problem = json_values(text, want)
    if problem:
        return False, None, problem
    return True, values[-1], labels[-1]


def _path(error) -> str:
    path = getattr(error, "json_path", None)
    if path:
        return path
    return "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)


json_schema = register("json_schema")(_JsonSchema(5.0))
