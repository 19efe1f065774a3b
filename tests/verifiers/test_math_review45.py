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


# a false equation whose last side is the gold (review s45a M6): every link of a chain of
# variable-free sides is checked (sympy in the worker); a decimal side may round or cut
CHAIN_WRONG = [
    ("3", r"\boxed{\sqrt{4} = 3}"),
    ("3", r"\boxed{\log_2 9 = 3}"),
    ("3", r"\boxed{|{-4}| = 3}"),
    ("3", r"\boxed{\lceil 3.5 \rceil = 3}"),
    ("3", r"\boxed{\pi = 3}"),
    ("3", r"\boxed{\sin(\pi) = 3}"),
    ("3", r"\boxed{10 \bmod 4 = 3}"),
    ("3", "Answer: 2 x 2 = 3"),
    ("3", "Answer: 40 * 10% = 3"),
    ("3", "Answer: 8 - 4 = 3 remaining"),
    ("3", "Answer: 8 apples - 4 apples = 3 apples"),
    ("3.2", r"\boxed{\pi = 3.2}"),
    ("5", r"\boxed{54,000/10,000 = 5}"),
    ("1.5", r"\boxed{\sqrt{2} = 1.5}"),
    ("5", r"\boxed{\binom{4}{2} = 5}"),
]
CHAIN_RIGHT = [
    ("2", r"\boxed{\sqrt{4} = 2}"),
    ("3", r"\boxed{\log_2 8 = 3}"),
    ("4", r"\boxed{\lceil 3.5\rceil = 4}"),
    ("3.14", r"\boxed{\pi = 3.14}"),
    ("1.414", r"\boxed{\sqrt{2} = 1.414}"),
    ("0.66", r"\boxed{\frac{2}{3} = 0.66}"),
    ("0.33", r"\boxed{\frac{1}{3} = 0.33}"),
    ("2", r"\boxed{10 \bmod 4 = 2}"),
    ("4", "Answer: 8 apples - 4 apples = 4 apples"),
    ("4", "Total: 2 + 2 = 4"),
    # unmarked, the last number is read: GSM8K's own solutions end in sloppy arithmetic ("$2000 /
    # 2/3 = $3000", "14 * 1 1/2 = 21", "7 blocks + 10 + 16 = 33 blocks"), and a chain read there
    # made 60 of its 7,473 reference solutions wrong
    ("3", "Total: 2 + 2 = 3"),
    ("21", "Ivan's bird feeder feeds 14 * 1 1/2 = 21 birds weekly."),
    ("3000", "his before-tax salary: $2000 / 2/3 = $3000"),
    ("5", "So it would take him 54,000/10,800=5 hours"),
    ("5", r"\boxed{54,000/10,800 = 5}"),
    ("21", r"\boxed{14 \times 1 1/2 = 21}"),
    ("4", "Answer: 2 x 2 = 4"),
    ("4", "Answer: 40 * 10% = 4"),
    ("75", r"She scored \(\frac{45}{60} \times 100 = 75\%\)."),
    (r"\frac{1}{2}", r"\boxed{\sin 30^\circ = \frac{1}{2}}"),
    ("2", r"\boxed{\log 100 = 2}"),
    ("60", "Answer: 1 hour = 60 minutes"),
    ("7", r"\boxed{x = \frac{14}{2} = 7}"),
    (r"\frac{\sqrt{3}}{2}", r"\boxed{\cos\frac{\pi}{6} = \frac{\sqrt{3}}{2}}"),
]


@pytest.mark.parametrize(("gold", "completion"), CHAIN_WRONG)
def test_a_false_equation_is_wrong_whatever_its_last_side(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), CHAIN_RIGHT)
def test_a_true_equation_states_its_last_side(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail


# a bound in words before the number (review s45a M1): not the number itself
BOUND_WRONG = [
    ("5", "It is under 5."),
    ("5", "It is below 5"),
    ("5", "The value is over 5."),
    ("5", "The value exceeds 5."),
    ("5", "The answer exceeds 5."),
    ("5", "It's up to 5."),
    ("5", "Answer: exceeds 5"),
    ("5", "So x is above 5."),
]
BOUND_RIGHT = [
    ("15", "The numbers add up to 15."),
    ("18", "The total comes up to 18."),
    ("5", "She handed over 5 dollars."),
    ("5", "There are 5 left over."),
    ("18", "Over 3 days she earns 18 dollars."),
    ("5", "The answer is 5, which is under 10."),
]


@pytest.mark.parametrize(("gold", "completion"), BOUND_WRONG)
def test_a_bound_in_words_is_not_its_number(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), BOUND_RIGHT)
def test_a_bound_word_elsewhere_leaves_the_answer(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail
