"""json_schema after the stop-44 review: each case failed on the code before it.

Wrong answers that passed: a wrong value after a code block closed by four backticks, after
20,000 bracket openings, or opened with a zero-width mark; ``[^\\D]`` read as any script's digit.
Right answers refused: decimal ``multipleOf`` (19.99 "not a multiple of 0.01"), a citation ``[1]``
under a schema reached through ``$ref`` / ``anyOf``, a bare scalar answer, ``6.022e23``, a
draft-07 schema naming ``uuid``.
"""

import json

import pytest

from passband.verifiers import get

AGE = {
    "type": "object",
    "properties": {"age": {"type": "integer", "minimum": 0}},
    "required": ["age"],
}
PRICE = {"type": "object", "properties": {"price": {"type": "number", "multipleOf": 0.01}}}
FENCE = "```"


def judge(completion, schema):
    return get("json_schema")(completion, schema=schema)


@pytest.mark.parametrize("price", ["19.99", "0.07", "4.35", "19.95", "1e-2", "100", "0"])
def test_decimal_multiple_of_is_exact_for_right_answers(price):
    assert judge('{"price": ' + price + "}", PRICE).status == "ok"


@pytest.mark.parametrize(
    ("value", "step"), [("19.995", 0.01), (str(10**18), 1.5), ("0.3", 0.2), ("7", 2)]
)
def test_values_that_are_not_multiples_fail(value, step):
    schema = {"type": "object", "properties": {"n": {"multipleOf": step}}}
    verdict = judge('{"n": ' + value + "}", schema)
    assert verdict.status == "wrong" and "multipleOf" in verdict.detail


def test_every_cent_amount_is_a_multiple_of_a_cent():
    refused = [
        k for k in range(1, 2000) if judge('{"price": %.2f}' % (k / 100), PRICE).status != "ok"
    ]
    assert refused == []


@pytest.mark.parametrize("close", ["```", "````", "`````"])
def test_a_wrong_answer_after_a_code_block_is_judged_however_it_closes(close):
    text = f'Example: {{"age": 5}}\n\n{FENCE}python\nprint("hi")\n{close}\n\nMy answer: {{"age": -5}}\n'
    assert judge(text, AGE).status == "wrong"


def test_a_code_block_cut_off_after_a_right_answer_is_code_not_a_broken_answer():
    """A block that never closes (cut at max_new_tokens) runs to the end, as Markdown shows it:
    its Python dict is code, not a broken JSON answer (a regression review of the first fix)."""
    text = f"{FENCE}json\n{{\"age\": 5}}\n{FENCE}\n\n{FENCE}python\nd = {{'age': 5,\n"
    assert judge(text, AGE).status == "ok"


def test_a_closed_code_block_in_another_language_is_still_not_the_answer():
    text = f'{FENCE}python\nd = {{"age": -5}}\n````\n\nMy answer: {{"age": 5}}\n'
    assert judge(text, AGE).status == "ok"


def test_a_four_backtick_json_fence_is_read_as_json():
    assert judge('````json\n{"age": -5}\n````', AGE).status == "wrong"
    assert judge('````json\n{"age": 5}\n````', AGE).status == "ok"


def test_too_many_openings_to_scan_is_no_pass():
    text = '{"age": 5}\n' + "[1] " * 20_000 + '\n{"age": -5}'
    verdict = judge(text, AGE)
    assert verdict.status == "invalid" and "20,000" in verdict.detail
    assert judge('{"age": 5}\n' + "[1] " * 100 + '\n{"age": -5}', AGE).status == "wrong"


@pytest.mark.parametrize("mark", ["\u200b", "\ufeff", "\u2060", "\u00a0"])
def test_an_object_opened_with_an_invisible_mark_is_invalid_not_skipped(mark):
    text = "My answer: {" + mark + '"age": -5}\nExample of the format: {"age": 5}'
    assert judge(text, AGE).status == "invalid"


@pytest.mark.parametrize(
    ("pattern", "value", "status"),
    [
        (r"^[^\D]{5}$", "١٢٣٤٥", "wrong"),  # Arabic-Indic digits are not ECMA-262's digits
        (r"^[^\D]{5}$", "12345", "ok"),
        (r"^[^\W]+$", "héllo", "wrong"),
        (r"^[^\W]+$", "hello_1", "ok"),
        (r"^[\D]$", "١", "ok"),
        (r"^[\W]+$", "é!", "ok"),
        (r"^x\b", "xé", "ok"),  # é is no ASCII word character: a boundary after x
        (r"^x\B", "xé", "wrong"),
    ],
)
def test_negated_classes_and_boundaries_are_ascii_as_in_ecma(pattern, value, status):
    schema = {"type": "object", "properties": {"z": {"type": "string", "pattern": pattern}}}
    assert judge(json.dumps({"z": value}, ensure_ascii=False), schema).status == status


PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/P", "$defs": {"P": PERSON}},
        {"$ref": "#/definitions/P", "definitions": {"P": PERSON}},
        {"anyOf": [PERSON, {**PERSON, "required": []}]},
        {"allOf": [{"$ref": "#/$defs/P"}], "$defs": {"P": PERSON}},
    ],
)
def test_a_citation_in_prose_is_not_the_answer_under_a_ref_or_any_of_root(schema):
    assert judge('As described in [1], the record is {"name": "Ada"}', schema).status == "ok"
    assert judge('After steps [1, 2]: {"name": "Ada"}', schema).status == "ok"
    assert judge('As described in [1], the record is {"name": 5}', schema).status == "wrong"


def test_branches_of_different_types_still_judge_every_value():
    schema = {"anyOf": [PERSON, {"type": "array", "maxItems": 0}]}
    assert judge('Steps [1, 2]: {"name": "Ada"}', schema).status == "wrong"


@pytest.mark.parametrize(
    ("completion", "schema", "status"),
    [
        ('"alice@example.com"', {"type": "string", "format": "email"}, "ok"),
        ("42", {"type": "integer", "minimum": 0}, "ok"),
        ("-3", {"type": "integer", "minimum": 0}, "wrong"),
        ('"not an email"', {"type": "string", "format": "email"}, "wrong"),
        ("<think>hmm</think> 42", {"type": "integer"}, "ok"),
        ("The answer is 42.", {"type": "integer"}, "invalid"),
    ],
)
def test_a_whole_completion_that_is_one_json_value_is_judged(completion, schema, status):
    assert judge(completion, schema).status == status


@pytest.mark.parametrize("number", ["6.022e23", "1e23", "1.5e300", "6.022e-23"])
def test_large_floats_with_few_digits_are_numbers(number):
    schema = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
    assert judge('{"n": ' + number + "}", schema).status == "ok"


@pytest.mark.parametrize(
    ("number", "bound", "status"),
    [
        ("9007199254740993.0", {"maximum": 2**53}, "wrong"),
        ("9007199254740992.0", {"maximum": 2**53}, "ok"),
        ("1e23", {"exclusiveMaximum": 10**23}, "wrong"),  # the double of 1e23 is below 10**23
        ("1e23", {"maximum": 10**23 - 1}, "wrong"),
        ("1e23", {"maximum": 10**23, "type": "integer"}, "ok"),
    ],
)
def test_an_integral_number_past_two_to_the_53_compares_as_written(number, bound, status):
    schema = {"type": "object", "properties": {"n": bound}}
    assert judge('{"n": ' + number + "}", schema).status == status


def test_a_multiple_of_is_judged_on_the_number_as_written():
    """8.009999999999999 reads as the double of 8.01: no multiple of 0.01 as written."""
    assert judge('{"price": 8.009999999999999}', PRICE).status == "wrong"
    assert judge('{"price": 8.01}', PRICE).status == "ok"


@pytest.mark.parametrize(
    ("draft", "fmt", "good", "bad"),
    [
        (
            "http://json-schema.org/draft-07/schema#",
            "uuid",
            "123e4567-e89b-12d3-a456-426614174000",
            "nope",
        ),
        ("http://json-schema.org/draft-07/schema#", "duration", "P1D", "P1.5Y"),
        ("http://json-schema.org/draft-04/schema#", "date", "2024-01-31", "2024-02-30"),
    ],
)
def test_a_standard_format_an_older_draft_lacks_is_checked_by_the_latest_rule(
    draft, fmt, good, bad
):
    schema = {
        "$schema": draft,
        "type": "object",
        "properties": {"x": {"type": "string", "format": fmt}},
    }
    assert judge(json.dumps({"x": good}), schema).status == "ok"
    assert judge(json.dumps({"x": bad}), schema).status == "wrong"


def test_a_false_schema_says_so():
    verdict = judge('{"a": 1}', False)
    assert (
        verdict.status == "wrong"
        and "None=None" not in verdict.detail
        and "false" in verdict.detail
    )


# A regression review of the fixes above found these; each failed on the first fixes.
TYPELESS_REF = {
    "$ref": "#/$defs/P",
    "$defs": {"P": {"properties": {"name": {"type": "string"}}, "required": ["name"]}},
}
EMAIL_OR_PHONE = {
    "properties": {"email": {"type": "string"}, "phone": {"type": "string"}},
    "anyOf": [{"required": ["email"]}, {"required": ["phone"]}],
}


@pytest.mark.parametrize("schema", [TYPELESS_REF, EMAIL_OR_PHONE])
@pytest.mark.parametrize(
    "completion", ["42", "true", "null", '"I do not know"', "[1]", "Steps [1]"]
)
def test_a_value_of_another_type_fails_a_schema_that_implies_an_object(schema, completion):
    assert judge(completion, schema).status in ("wrong", "invalid")


def test_the_object_such_schemas_want_still_passes():
    assert judge('See [1]: {"name": "Ada"}', TYPELESS_REF).status == "ok"
    assert judge('{"phone": "555"}', EMAIL_OR_PHONE).status == "ok"


@pytest.mark.parametrize("value", [r"\b+", r"\B*", r"x\b{2}"])
def test_a_quantified_word_boundary_is_no_ecma_regex(value):
    schema = {"type": "object", "properties": {"re": {"type": "string", "format": "regex"}}}
    assert judge(json.dumps({"re": value}), schema).status == "wrong"
    assert judge(json.dumps({"re": r"\bcat\b"}), schema).status == "ok"


def test_brackets_inside_one_parsed_value_do_not_count_toward_the_scan_limit():
    schema = {"type": "array"}
    assert judge(json.dumps([[i, i] for i in range(20_001)]), schema).status == "ok"
