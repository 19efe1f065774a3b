"""json_schema: block selection, strict parsing, drafts, formats, failing paths, bad schemas."""

import json
import time

import pytest

from passband.verifiers import get, json_schema_verifier

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "email": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
}
FENCE = "```"

# (completion, expected status, fragment expected in detail)
CASES = [
    (f'Here:\n{FENCE}json\n{{"name": "Ada", "age": 36}}\n{FENCE}', "ok", "```json"),
    # the last json block wins over an earlier valid one
    (
        f'{FENCE}json\n{{"name": "Ada", "age": 36}}\n{FENCE}\nFixed:\n{FENCE}json\n{{"name": "Ada"}}\n{FENCE}',
        "wrong",
        "'age' is a required",
    ),
    # every value standing as an answer is judged: a later bare block that is wrong fails it
    (
        f'{FENCE}json\n{{"name": "A", "age": 1}}\n{FENCE}\n{FENCE}\n{{"name": 5}}\n{FENCE}',
        "wrong",
        "value 2 of 2, bare ``` block",
    ),
    # chosen json block does not parse: invalid, no falling back to the valid bare JSON after it
    (
        f'{FENCE}json\n{{"name": "A", "age": 1,}}\n{FENCE}\nor {{"name": "A", "age": 1}}',
        "invalid",
        "not valid JSON",
    ),
    # bare block when there is no json block; other languages are skipped
    (
        f'{FENCE}python\nprint(1)\n{FENCE}\n{FENCE}\n{{"name": "A", "age": 2}}\n{FENCE}',
        "ok",
        "bare",
    ),
    # no fences: first balanced object that parses (the broken one is skipped)
    ('I think {name: A} no wait {"name": "A", "age": 3} done', "ok", "JSON value in the text"),
    ('The object is {"name": "A", "age": -4}.', "wrong", "$.age"),
    ('{"name": "A", "age": 1, "tags": ["x", 3]}', "wrong", "$.tags[1]"),
    ('{"name": "A", "age": 1, "email": "not-an-email"}', "wrong", "email"),
    # a repeated key is refused: json.loads kept the last and hid a wrong first one
    ('{"name": "A", "age": "x", "age": 5}', "invalid", "'age' appears twice"),
    ('{"name": "A", "age": 5, "age": "x"}', "invalid", "'age' appears twice"),
    # strictness: nothing is repaired
    (f'{FENCE}json\n{{"name": "A", "age": NaN}}\n{FENCE}', "invalid", "NaN"),
    (f'{FENCE}json\n{{"name": "A", "age": Infinity}}\n{FENCE}', "invalid", "Infinity"),
    (f"{FENCE}json\n{{'name': 'A', 'age': 1}}\n{FENCE}", "invalid", "not valid JSON"),
    (f'{FENCE}json\n{{"name": "A", // comment\n "age": 1}}\n{FENCE}', "invalid", "not valid JSON"),
    ("no json at all", "invalid", "no JSON"),
    ("", "invalid", "no JSON"),
    ("{" * 50_000, "invalid", "no JSON"),
    ("[" * 500 + "]" * 500, "wrong", "type='object' failed"),
    ("[" * 50_000 + "]" * 50_000, "invalid", "no JSON"),  # deeper than the parser's recursion limit
]


@pytest.mark.parametrize("completion,status,fragment", CASES)
def test_table(completion, status, fragment):
    verdict = get("json_schema")(completion, schema=PERSON)
    assert verdict.status == status, verdict
    assert fragment in verdict.detail


def test_schema_as_json_text_and_draft_from_dollar_schema():
    v = get("json_schema")
    assert v('{"name": "A", "age": 1}', schema=json.dumps(PERSON)).passed
    # draft-04 exclusiveMaximum is a boolean; under 2020-12 that schema would be invalid
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "maximum": 5,
        "exclusiveMaximum": True,
    }
    assert (
        v("[5]", schema={"type": "array", "items": draft4} | {"$schema": draft4["$schema"]}).status
        == "wrong"
    )
    assert v(
        "[4]", schema={"type": "array", "items": draft4} | {"$schema": draft4["$schema"]}
    ).passed
    assert (
        v("[5]", schema={"type": "array", "items": {"maximum": 5, "exclusiveMaximum": True}}).status
        == "error"
    )
    # 2020-12 default: prefixItems exists
    assert v("[1, 2]", schema={"prefixItems": [{"type": "string"}]}).status == "wrong"


@pytest.mark.parametrize(
    "schema,fragment",
    [
        ("{not json", "not valid JSON"),
        ({"type": "nonsense"}, "not a valid schema"),
        ({"$schema": "https://example.com/my-draft"}, "unknown $schema"),
        ({"$ref": "https://example.com/remote.json"}, "could not be applied"),
        (None, "missing"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_malformed_schema_is_error(schema, fragment):
    kwargs = {} if schema is None else {"schema": schema}
    verdict = get("json_schema")('{"a": 1}', **kwargs)
    assert verdict.status == "error" and fragment in verdict.detail, verdict


def test_catastrophic_pattern_is_bounded_by_own_time_limit():
    verifier = json_schema_verifier(timeout=1.0)
    schema = {"properties": {"a": {"pattern": "^(a+)+$"}}}
    start = time.monotonic()
    verdict = verifier('{"a": "' + "a" * 40 + '!"}', schema=schema)
    # stop 36: a string the pattern runs away on is no match (a timeout is masked in training)
    assert verdict.status in ("wrong", "timeout") and verdict.score == 0.0, verdict
    assert time.monotonic() - start < 3.0
    assert verifier('{"a": "aaa"}', schema=schema).passed  # replaced worker serves the next one
    assert repr(verifier) == "json_schema_verifier(timeout=1)"


def test_factory_validates_timeout():
    with pytest.raises(ValueError, match="timeout"):
        json_schema_verifier(timeout=0)


# ---- hostile shapes: long LaTeX before the JSON, cut-off values, deep nesting, broken schemas -----
_LATEX = (
    r"We have $\frac{1}{2} + x^{2}$ on $[0, 1]$ and \{a, b\} with \begin{cases} 1 \end{cases}. "
    * 12_000
)


def test_json_after_a_megabyte_of_latex_is_found():
    completion = _LATEX + '\nSo the record is {"name": "Ada", "age": 36}.'
    assert len(completion) > 1_000_000
    verdict = get("json_schema")(completion, schema=PERSON)
    assert verdict.status == "ok", verdict


@pytest.mark.parametrize(
    "completion",
    [
        '[{"name": "Ada", "age": 36}, {"name": "Bob", "age": 4',  # cut inside the second item
        'Here: [{"name": "Ada", "age": 36}, ',
        '{"people": [{"name": "Ada", "age": 36}',
    ],
)
def test_a_value_cut_off_midway_is_invalid_not_judged_by_its_inner_parts(completion):
    verdict = get("json_schema")(completion, schema=PERSON)
    assert verdict.status == "invalid", verdict
    assert "cut off" in verdict.detail


@pytest.mark.parametrize(
    "schema,status", [({"type": "array"}, "ok"), ({"type": "object"}, "wrong")]
)
def test_ten_thousand_deep_nesting_is_judged(schema, status):
    completion = "[" * 10_000 + "]" * 10_000
    verdict = get("json_schema")(completion, schema=schema)
    assert verdict.status == status, verdict


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "objekt"},
        {"properties": 5},
        {"pattern": "("},
        {"$ref": "#/nowhere"},
        "{not json",
        [1, 2],
        {"minimum": "three"},
    ],
)
def test_malformed_schemas_are_errors_never_passes(schema):
    verdict = get("json_schema")('{"name": "Ada", "age": 36}', schema=schema)
    assert verdict.status == "error", verdict


@pytest.mark.parametrize(
    "fmt, bad, good",
    [
        ("date-time", "x", "2026-12-01T10:00:00Z"),
        ("uri", "not a uri", "https://example.com/a"),
        ("hostname", "-bad-.com", "example.com"),
        ("duration", "P1X", "P1D"),
        ("email", "nobody", "a@example.com"),
    ],
)
def test_string_formats_are_checked(fmt, bad, good):
    """An unchecked format passes any string: a wrong answer rewarded."""
    verifier = get("json_schema")
    schema = {"type": "object", "properties": {"d": {"type": "string", "format": fmt}}}
    assert verifier(json.dumps({"d": bad}), schema=schema).status == "wrong"
    assert verifier(json.dumps({"d": good}), schema=schema).passed


def test_a_format_that_cannot_be_checked_is_an_error_not_a_pass():
    from jsonschema import Draft202012Validator

    # passband leaves out rfc3987-syntax (3 s of import in every worker): iri has no checker
    assert "iri" not in Draft202012Validator.FORMAT_CHECKER.checkers
    schema = {"properties": {"d": {"format": "iri"}}}
    verdict = get("json_schema")('{"d": "anything"}', schema=schema)
    assert verdict.status == "error" and "cannot be checked" in verdict.detail


_A = {
    "type": "object",
    "properties": {"a": {"type": "integer"}},
    "required": ["a"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "schema, completion",
    [
        # a valid fragment nested inside a broken value was judged (a second review, 2026-12-04)
        (_A, '{"a": NaN, "meta": {"a": 5}}'),
        (_A, '{"a": "x", "list": [1,2,], "meta": {"a": 5}}'),
        (_A, "{'a': 'x', \"m\": {\"a\": 5}}"),
        (_A, '{"a": "x", // c\n "m": {"a": 5}}'),
        (_A, '[0, 1] {"a": "bad", "m": {"a": 5}, "z": '),  # cut off after a passed-over value
        # numbers a double cannot hold were rounded before the check
        (_A, '{"a": 1.0000000000000001}'),
        (
            {"type": "object", "properties": {"n": {"maximum": 9007199254740992}}},
            '{"n": 9007199254740993.0}',
        ),
        ({"type": "object", "properties": {"n": {"const": 0}}}, '{"n": 1e-400}'),
        # a ```json line closed the first block, and the real answer was lost
        (_A, '```json\n{"a": 1}\n```json\n{"a": "x"}\n```'),
    ],
)
def test_wrong_json_is_never_graded_ok(schema, completion):
    verdict = get("json_schema")(completion, schema=schema)
    assert verdict.status != "ok", verdict.detail


def test_right_json_around_broken_values_and_precise_numbers_still_passes():
    check = get("json_schema")
    number = {"type": "object", "properties": {"x": {"type": "number"}}}
    assert check('values [1, 2, x] then {"a": 5}', schema=_A).status == "ok"
    assert check('see {a} and {"a": 5}', schema=_A).status == "ok"
    assert check('{"x": 3.141592653589793}', schema=number).status == "ok"
    assert check('{"x": 0.1}', schema=number).status == "ok"
    assert check('```json\n{"a": 5}\n```', schema=_A).status == "ok"


def test_deeply_nested_broken_brackets_are_scanned_once():
    """``[[[...NaN...]]]`` re-scanned the rest of the text from every bracket: 5 s (a masked
    ``timeout``) at 8,000 levels."""
    start = time.monotonic()
    verdict = get("json_schema")("[" * 8000 + "NaN" + "]" * 8000, schema=_A)
    assert verdict.status == "invalid" and time.monotonic() - start < 2.0


def _one(fmt: str | None = None, pattern: str | None = None, **more) -> dict:
    prop = {"type": "string", **({"format": fmt} if fmt else {}), **more}
    if pattern:
        prop["pattern"] = pattern
    return {"type": "object", "properties": {"v": prop}, "required": ["v"]}


_AGE = {
    "type": "object",
    "properties": {"age": {"type": "integer", "maximum": 100}},
    "required": ["age"],
}


@pytest.mark.parametrize(
    "schema, completion",
    [
        # formats jsonschema's checkers let through (a third review, 2026-12-04)
        (_one("email"), '{"v": "@"}'),
        (_one("email"), '{"v": "not an email@"}'),
        (_one("email"), '{"v": "@@@"}'),
        (_one("idn-email"), '{"v": "\\n@\\n"}'),
        (_one("uuid"), '{"v": "12345678-1234-5678-1234-5678-12345678"}'),
        (_one("uuid"), '{"v": "+2345678-1234-5678-1234-567812345678"}'),
        (_one("uuid"), '{"v": "12345678-1234-5678-1234-56781234567\\uff18"}'),
        (_one("date-time"), '{"v": "2023-01-01T00:00:00Z\\n"}'),
        (_one("time"), '{"v": "12:00:00Z\\n"}'),
        (_one("hostname"), '{"v": "example.com\\n"}'),
        (_one("uri"), '{"v": "http://a.com\\n"}'),
        (_one("duration"), '{"v": "P1.5Y"}'),
        (_one("duration"), '{"v": "P0.5D"}'),
        # pattern: ECMA's $ is the end of the string, its \d ASCII
        (_one(pattern="^[0-9]{3}$"), '{"v": "123\\n"}'),
        (_one(pattern="^\\d{3}$"), '{"v": "\\u0661\\u0662\\u0663"}'),
        # a value that breaks the schema was skipped (int() refuses 4,301 digits) for a later one
        (_AGE, '{"age": ' + "9" * 5000 + '} {"age": 5}'),
        # a broken answer was skipped for a later example that parses
        (_AGE, 'Answer: {"age": NaN}\nFormat example: {"age": 5}'),
        (_AGE, 'Answer: {"age": 200,}\n(e.g. {"age": 5})'),
        # the first of several answers was judged, or a ```json block over later prose
        (_AGE, 'Draft: {"age": 5}\nWait, correction, final answer: {"age": "five"}'),
        (_AGE, '{"age": 5}{"age": "x"}'),
        (_AGE, '```python\nprint({"age": 5})\n```\nAnswer: {"age": "x"}'),
        (_AGE, 'The format:\n```json\n{"age": 0}\n```\nMy answer: {"age": "unknown"}'),
        (_AGE, '```json\n{"age": 5}\n```\nActually the correct answer is {"age": -3.5}'),
        (_AGE, '{"age": "five", "age": 5}'),
    ],
)
def test_a_wrong_answer_anywhere_in_the_completion_is_never_ok(schema, completion):
    verdict = get("json_schema")(completion, schema=schema)
    assert verdict.status != "ok", verdict.detail


def test_right_answers_written_plainly_still_pass():
    check = get("json_schema")
    assert check('{"v": "ada.lovelace+x@example.co.uk"}', schema=_one("email")).passed
    assert check('{"v": "user@localhost"}', schema=_one("email")).passed
    assert check('{"v": "12345678-1234-5678-1234-567812345678"}', schema=_one("uuid")).passed
    assert check('{"v": "P1Y2M3DT4H5M6S"}', schema=_one("duration")).passed
    assert check('{"v": "2023-01-01T00:00:00Z"}', schema=_one("date-time")).passed
    assert check('{"v": "123"}', schema=_one(pattern="^[0-9]{3}$")).passed
    assert check('{"v": "a$b"}', schema=_one(pattern="^a[$]b$")).passed
    # the reasoning's drafts do not count, the same answer twice does
    done = '<think>maybe {"age": "x"}</think>\n```json\n{"age": 5}\n```\nSo: {"age": 5}'
    verdict = check(done, schema=_AGE)
    assert verdict.passed and "2 JSON values" in verdict.detail
    # reasoning that never closes states no answer, as for math
    unfinished = check('<think>so {"age": 5}', schema=_AGE)
    assert unfinished.status == "invalid" and "never closes" in unfinished.detail
    # a schema that nests an unchecked format deeper than 64 levels is still an error
    deep: dict = {"format": "iri"}
    for _ in range(80):
        deep = {"allOf": [deep]}
    assert check('{"v": "x"}', schema={"properties": {"v": deep}}).status == "error"


_S = {
    "type": "object",
    "properties": {"age": {"type": "integer", "minimum": 0}},
    "required": ["age"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "completion",
    [
        # a wrong answer still hidden from the every-value rule (a fourth review, 2026-12-04)
        '<think>ok</think>\n{"age": -5}\n</think>\n{"age": 30}',  # a second </think>
        '{"age": 30}\n```{"age": -5}```\n',  # a one-line ``` span read as a fence opener
        '{"age": 30}\n```js x``` and the answer is {"age": -5}\n',
        '{"age": 30}\nAnswer: [{"age": -5}]',  # inside a value of another type
        '{"age": 30}\n[1, {"age": -5}]',
        '```json\n{"age": 30}\n```\n```jsonc\n{"age": -5}\n```',  # a JSON dialect's fence
        '```json\n{"age": 30}\n```\n```text\n{"age": -5}\n```',  # a prose fence
    ],
)
def test_a_wrong_answer_is_found_wherever_it_is_stated(completion):
    verdict = get("json_schema")(completion, schema=_S)
    assert verdict.status != "ok", verdict.detail


@pytest.mark.parametrize(
    "schema, text",
    [
        (
            _one(pattern="^\\S+$"),
            "a\u00a0b",
        ),  # ECMA's \s is Unicode: \S excludes a no-break space
        (_one(pattern="^.$"), "\u2028"),  # ECMA's . matches no line terminator
    ],
)
def test_patterns_read_as_ecma_reads_them(schema, text):
    assert get("json_schema")(json.dumps({"v": text}), schema=schema).status == "wrong"


def test_right_answers_explained_in_prose_still_pass():
    check = get("json_schema")
    # JSON named in inline code is not an answer: the explanation after a right one is fine
    named = '{"age": 30}\nThis satisfies the schema `{"type": "object"}`; unknown would be `{}`.'
    assert check(named, schema=_S).passed
    assert check('```jsonc\n{"age": 30}\n```', schema=_S).passed  # a dialect's fence, strict JSON
    assert check('```JSON\n{"age": 30}\n```', schema=_S).passed
    assert check('Here:\n```text\n{"age": 30}\n```', schema=_S).passed
    assert check('{"v": "2024"}', schema=_one(pattern="^\\d{4}$")).passed


_UNTYPED = {"properties": {"a": {"type": "integer"}}, "required": ["a"]}
_EMAIL = {"type": "object", "properties": {"e": {"type": "string", "format": "email"}}}


@pytest.mark.parametrize(
    "schema, completion",
    [
        (_UNTYPED, "[]"),  # object keywords and no type: the standard lets any array pass
        ({"title": "t", **_UNTYPED}, "[1, 2]"),
        ({"items": {"type": "integer"}, "minItems": 1}, '{"a": 1}'),
        (_EMAIL, '{"e": "user@[300.1.1.1]"}'),  # an address literal holds a real address
        (_EMAIL, '{"e": "user@[IPv6:1.2.3.4]"}'),
        (_S, "```json\n{\"age\": 30}\n```\nActually the answer is {'age': -1}"),  # a dict after it
    ],
)
def test_typeless_schemas_bad_address_literals_and_a_later_dict_fail(schema, completion):
    verdict = get("json_schema")(completion, schema=schema)
    assert not verdict.passed and verdict.score == 0.0, verdict


def test_typeless_schemas_and_address_literals_still_pass():
    check = get("json_schema")
    assert check('{"a": 1}', schema=_UNTYPED).passed
    assert check("[1]", schema={"items": {"type": "integer"}}).passed
    assert check('{"e": "user@[192.168.0.1]"}', schema=_EMAIL).passed
    assert check('{"e": "user@[IPv6:::1]"}', schema=_EMAIL).passed
    assert check("[1]", schema={"anyOf": [{"type": "array"}]}).passed  # no keyword implies a type


@pytest.mark.parametrize(
    "schema, completion",
    [
        (_one(fmt="regex"), '{"v": "a{99999999999}"}'),
        (
            {"type": "object", "properties": {"v": {"type": "array", "uniqueItems": True}}},
            json.dumps({"v": [{"a": i} for i in range(3000)]}),  # pairwise: past 5 s
        ),
    ],
)
def test_an_answer_too_big_to_check_is_invalid_not_a_masked_error(schema, completion):
    """Stop 35 (a review of masked verdicts): these were error or timeout, which training masks."""
    start = time.perf_counter()
    verdict = get("json_schema")(completion, schema=schema)
    assert verdict.status == "invalid" and time.perf_counter() - start < 3.0, verdict


@pytest.mark.parametrize(
    "schema, completion, status",
    [  # were an OverflowError / InvalidOperation inside jsonschema's float multipleOf (stop 35)
        (_one(multipleOf=0.01, type="number"), '{"v": 1' + "0" * 3999 + "}", "ok"),
        (_one(multipleOf=0.03, type="number"), '{"v": 1' + "0" * 3999 + "}", "wrong"),
        (_one(multipleOf=5, type="integer"), '{"v": 1' + "0" * 5000 + "}", "wrong"),  # a Decimal
    ],
)
def test_huge_numbers_under_multiple_of_are_checked_exactly_and_fast(schema, completion, status):
    start = time.perf_counter()
    verdict = get("json_schema")(completion, schema=schema)
    assert verdict.status == status and time.perf_counter() - start < 3.0, verdict


def test_long_arrays_of_plain_items_under_unique_items_are_still_checked():
    schema = {"type": "object", "properties": {"v": {"type": "array", "uniqueItems": True}}}
    assert get("json_schema")(
        json.dumps({"v": [str(i) for i in range(5000)]}), schema=schema
    ).passed


@pytest.mark.parametrize(
    "pattern, good, bad",
    [
        ("^\\p{L}+$", "héllo", "h3llo"),
        ("^[\\p{Lu}]\\p{Ll}*$", "Hello", "hello"),
        ("^(?<y>\\d{4})$", "2024", "202"),
        ("^(?<y>\\d{4})-\\k<y>$", "2024-2024", "2024-2025"),
    ],
)
def test_ecma_patterns_python_lacks_are_checked_not_errors(pattern, good, bad):
    """Stop 36: ``\\p{L}``, ``(?<name>...)`` and ``\\k<name>`` are ECMA-262; the schema was
    refused as invalid (an ``error`` verdict, masking the answer either way)."""
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}
    assert get("json_schema")(json.dumps({"a": good}), schema=schema).status == "ok"
    assert get("json_schema")(json.dumps({"a": bad}), schema=schema).status == "wrong"


@pytest.mark.parametrize(
    "fmt, value, ok",
    [
        ("date-time", "1998-12-31T23:59:60Z", True),
        ("date-time", "1998-12-31T15:59:60.123-08:00", True),
        ("date-time", "1998-12-31T23:59:61Z", False),
        ("date-time", "1998-12-31T22:59:60Z", False),  # second 60 but not at 23:59 UTC
        ("date-time", "1998-12-32T23:59:60Z", False),
        ("time", "23:59:60Z", True),
        ("time", "12:00:60Z", False),
        ("regex", "(?<a>x)\\k<a>", True),
        ("regex", "([a-z]", False),
    ],
)
def test_leap_seconds_and_ecma_regexes_as_formats(fmt, value, ok):
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    verdict = get("json_schema")(json.dumps({"v": value}), schema=schema)
    assert verdict.status == ("ok" if ok else "wrong"), verdict


_PEOPLE = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
        "required": ["name", "age"],
    },
}


@pytest.mark.parametrize(
    "completion",
    [
        'For example [{"name": "Ann", "age": 30}].\n\nFinal answer:\n[\n  {"name": "Bob", "age": -5},\n]',
        'For example [{"name": "Ann", "age": 30}].\n\nFinal answer:\n[{"name": "Bob", "age": -5}, ...]',
    ],
)
def test_a_broken_array_is_invalid_not_skipped_for_an_earlier_example(completion):
    """Stop 36 (a review): a broken array was passed over, so an earlier valid example was judged."""
    assert get("json_schema")(completion, schema=_PEOPLE).status == "invalid"
    assert get("json_schema")('Final answer:\n[{"name": "Ann", "age": 30}]', schema=_PEOPLE).passed


def test_a_string_a_pattern_runs_away_on_is_no_match_not_a_masked_timeout():
    """Stop 36 (a review): a common email pattern backtracked for 5 s on a plain wrong string,
    and the timeout was masked; now it is no match after the pattern's 1 s budget."""
    pattern = r"^([a-zA-Z0-9]+[._-]?)*[a-zA-Z0-9]+@[a-zA-Z0-9-]+\.[a-zA-Z]{2,}$"
    schema = {"type": "object", "properties": {"email": {"type": "string", "pattern": pattern}}}
    verdict = get("json_schema")(json.dumps({"email": "johnsmith" * 3}), schema=schema)
    assert verdict.status == "wrong", verdict
    assert get("json_schema")(json.dumps({"email": "john.smith@example.com"}), schema=schema).passed


def test_a_half_open_interval_in_prose_is_no_json():
    """Stop 36 (a review): "[0, 150)" read as an array cut off made the right answer invalid, and
    a later "(0, 150]" closed it, hiding a wrong draft between them."""
    schema = {
        "type": "object",
        "properties": {"age": {"type": "integer", "minimum": 0, "maximum": 150}},
        "required": ["age"],
    }
    right = 'Valid ages are in [0, 150).\n```json\n{"age": 30}\n```'
    assert get("json_schema")(right, schema=schema).passed
    hidden = 'Ages in [0, 150). Draft: {"age": 200}, the range (0, 150]. Final: {"age": 30}'
    assert get("json_schema")(hidden, schema=schema).status == "wrong"


@pytest.mark.parametrize(
    "final",
    ['{name: "Bob", age: -5}', '{ // the person\n "name": "Bob", "age": -5}'],
)
def test_a_javascript_or_commented_final_object_is_invalid_not_skipped(final):
    """Stop 36 (a review): a bare-key or commented object was never tried as JSON, so the valid
    example before it was judged."""
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    }
    completion = 'Example: {"name": "Ann", "age": 30}\nFinal: ' + final
    assert get("json_schema")(completion, schema=schema).status == "invalid"
    prose = 'The set {x: x > 0} is open. Answer: {"name": "Ann", "age": 30}'
    assert get("json_schema")(prose, schema=schema).passed


@pytest.mark.parametrize(
    "value, ok",
    [
        (r"(?i)^abc$", False),
        (r"(?P<year>\d{4})", False),
        (r"^abc\Z", False),
        (r"a++(?>b)", False),
        (r"^[a-z]+$", True),
        (r"\p{L}+", True),
        (r"[*+?]+", True),
        (r"(?<y>\d{4})\k<y>", True),
    ],
)
def test_the_regex_format_is_ecma_syntax_not_pythons(value, ok):
    """Stop 36 (a review): any pattern Python compiles passed; (?i), (?P<..>), \\Z and a++ are
    not JavaScript regexes. A schema's own Python-style pattern still compiles."""
    schema = {"type": "object", "properties": {"r": {"type": "string", "format": "regex"}}}
    verdict = get("json_schema")(json.dumps({"r": value}), schema=schema)
    assert verdict.status == ("ok" if ok else "wrong"), verdict
    own = {"type": "object", "properties": {"a": {"type": "string", "pattern": r"(?i)^abc$"}}}
    assert get("json_schema")(json.dumps({"a": "ABC"}), schema=own).passed


def test_a_fence_closed_at_the_end_of_the_last_code_line_is_read():
    """'```json\\n{"a": 1}```': the closing fence shares the code's last line (models write it);
    it was read as JSON followed by backticks and called invalid."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert get("json_schema")('```json\n{"a": 1}```', schema=schema).status == "ok"
    wrong = get("json_schema")('```json\n{"a": "x"}```\nThen {"a": 1}', schema=schema)
    assert wrong.status == "wrong", wrong  # the block is the answer; the text after is not
    inside = '```json\n{"a": 1,\n "b": "```"}\n```'  # backticks inside a string close nothing
    assert get("json_schema")(inside, schema=schema).status == "ok"


def test_a_code_line_ending_in_backticks_does_not_close_its_block():
    """A review (stop 37): a Python line ending in ``` closed the block, and a dict of the code
    after it was judged as the answer."""
    schema = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}}
    completion = (
        '```python\nfence = "```"\nprint(fence)```\ntest = {"age": -1}\n```\n\n'
        'Answer:\n```json\n{"age": 30}\n```'
    )
    assert get("json_schema")(completion, schema=schema).status == "ok"


def test_a_second_draft_in_any_json_fence_is_judged_and_lone_surrogates_are_not_text():
    """Stop 38's review: ```ndjson / ```geojson / ```application/json blocks went unjudged, and a
    string holding half a surrogate pair (which cannot be written as UTF-8) passed."""
    from passband.verifiers import get

    check = get("json_schema")
    schema = {
        "type": "object",
        "properties": {"age": {"type": "integer", "minimum": 0}, "name": {"type": "string"}},
        "required": ["age", "name"],
    }
    good = '{"age": 30, "name": "A"}'
    for lang in ("ndjson", "geojson", "application/json"):
        assert not check(f'{good}\n\n```{lang}\n{{"age": -1}}\n```', schema=schema).passed, lang
    assert not check('{"age": 30, "name": "\\ud800"}', schema=schema).passed
    assert not check('```json\n{"age": 30, "name": "\\udc00x"}\n```', schema=schema).passed
    assert check('{"age": 30, "name": "\\ud83d\\ude00"}', schema=schema).passed  # a full pair
