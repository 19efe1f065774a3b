"""Wrong answers the ``math`` verifier rewarded because math-verify read only part of them (an
adversarial review, s45a): each WRONG row is (gold, completion) and must not be graded ``ok``;
each RIGHT row is the right answer written the same ways and must stay ``ok``."""

import pytest

from passband.verifiers import get

MATH = get("math")

# math-verify's unit stripping dropped a letter of the value ("42 - t" read as "42 -")
DROPPED_WRONG = [
    ("42", r"\boxed{42 - t}"),
    ("42", r"\boxed{42 + c}"),
    ("42", r"\boxed{42 \cdot m}"),
    ("3", r"\boxed{3d}"),
    ("3", r"\boxed{3 + d}"),
    ("3", r"\boxed{3 + n + m}"),
    (r"2\pi", r"\boxed{2\pi h}"),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{2} t}"),
    (r"\sqrt{2}", r"\boxed{\sqrt{2} m}"),
    ("2", "Answer: 2 + m"),
    ("2", "The answer is $2 - t$."),
]
DROPPED_RIGHT = [
    ("3d", r"\boxed{3d}"),
    (r"2\pi h", r"\boxed{2\pi h}"),
    ("5", r"\boxed{5 \text{ cm}}"),
    ("5", "The answer is 5 cm."),
    ("5", r"\boxed{\$5}"),
    ("5", r"\boxed{5 m}"),
    ("10", "#### 10 s"),
    (r"2\pi", r"\boxed{2\pi cm}"),
    (r"2\pi", r"\boxed{2\pi\ \mathrm{cm}^2}"),
    (r"\frac{1}{2}", r"\boxed{0.5 \mathrm{m}}"),
    (r"\sqrt{2}", r"\boxed{\sqrt{2}\text{ m}^2}"),
    (r"\frac{1}{3}\pi r^2 h", r"\boxed{\frac13 \pi r^2 h}"),
]


@pytest.mark.parametrize("gold, completion", DROPPED_WRONG)
def test_a_value_math_verify_read_only_part_of_is_not_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", (gold, completion, verdict.detail)


@pytest.mark.parametrize("gold, completion", DROPPED_RIGHT)
def test_units_and_letters_of_the_gold_stay_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", (gold, completion, verdict.status, verdict.detail)
