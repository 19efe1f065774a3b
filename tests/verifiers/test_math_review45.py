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
