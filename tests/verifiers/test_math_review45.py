"""Follow-ups to the adversarial review s45a of the ``math`` verifier: each WRONG row is (gold,
completion) and must not be graded ``ok``; each RIGHT row is a correct answer that must stay
``ok`` (some of them regressed under the first round of fixes)."""

import pytest

from passband.verifiers import get

MATH = get("math")

# a unit letter touching a plain number, or after LaTeX spacing: still a unit after the fix that
# re-reads "3d" as 3*d (it made "\boxed{5m}" wrong)
UNIT_RIGHT = [
    ("5", r"\boxed{5m}"),
    ("30", r"\boxed{30s}"),
    ("5", r"\boxed{5\ m}"),
    ("5", r"\boxed{5~m}"),
    ("3", "Answer: 3h"),
]
UNIT_WRONG = [("3", r"\boxed{3d}"), ("3", r"\boxed{3t}"), ("42", r"\boxed{42 - t}")]


@pytest.mark.parametrize(("gold", "completion"), UNIT_RIGHT)
def test_a_unit_touching_a_number_stays_a_unit(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), UNIT_WRONG)
def test_a_letter_that_is_no_unit_stays_a_factor(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail


# a worded answer that opens with its result: the number, then what qualifies it (it was read
# whole, "18 dollars after 2 days", and graded wrong); arithmetic or a hedge after it stays wrong
RESULT_FIRST_RIGHT = [
    ("18", "Answer: 18 dollars after 2 days"),
    ("18", "The answer is 18 dollars for 2 days of work"),
    ("1200", "Answer: 1,200 dollars in 4 months"),
    ("180", "The answer is 180 km for 3 hours of driving."),
    ("45", "Final answer: 45 years old in 10 years"),
]
RESULT_FIRST_WRONG = [
    ("2", "Answer: 18 dollars after 2 days"),
    ("18", "Answer: 18 dollars or 20 dollars"),
    ("20", "Answer: 18 dollars or 20 dollars"),
    ("18", "Answer: 18 dollars less 2 dollars"),
    ("16", "Answer: 18 dollars less 2 dollars"),
    ("18", "The answer is 18 dollars instead of 20"),
    ("18", "Answer: 18 hours and 30 minutes"),
    ("18", "The answer is 18 dollars but maybe 20"),
]


@pytest.mark.parametrize(("gold", "completion"), RESULT_FIRST_RIGHT)
def test_a_worded_answer_opening_with_its_result_is_read_by_it(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), RESULT_FIRST_WRONG)
def test_a_worded_answer_with_more_values_is_no_result_first(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail
