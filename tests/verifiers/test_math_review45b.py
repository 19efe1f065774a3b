"""Third round of follow-ups to the adversarial review s45a of the ``math`` verifier: each WRONG
row is (gold, completion) and must not be graded ``ok``; each RIGHT row is a correct answer that
must stay ``ok``."""

import pytest

from passband.verifiers import get

MATH = get("math")
BOX5 = r"The final answer is \boxed{5}."
BOX42 = r"So the total is $\boxed{42}$."

# H1: a later value presented as the answer, after the graded marker (the earlier value was graded)
LATER_WRONG = [
    ("5", BOX5 + " Never mind, it is 7."),
    ("5", BOX5 + " My bad, it's 7."),
    ("5", BOX5 + " Disregard that; it's 7."),
    ("5", BOX5 + " Real answer: 7."),
    ("5", BOX5 + " True answer = 7."),
    ("5", BOX5 + " The answer should have been 7."),
    ("5", BOX5 + " Final: 7."),
    ("42", BOX42 + " Upon review, the total is 41."),
    ("42", BOX42 + " Hmm, I double-counted, so the total is really 41."),
    ("42", BOX42 + "\n\nEdit: 41."),
    ("42", BOX42 + "\n\nUpdate: it's 41."),
    ("42", BOX42 + "\n\nRevised: 41"),
    ("42", BOX42 + "\n\n(Typo: should read 41.)"),
    ("42", r"Students often get $\boxed{42}$; the true count is 41."),
    ("42", r"A common mistake would give \boxed{42}."),
]
# working after the answer mentions other numbers, or restates the same one
LATER_RIGHT = [
    ("5", BOX5 + " This took 3 steps."),
    ("42", r"\boxed{42}. So she has 42 - 1 = 41 left over after giving one away"),
    ("6", r"Each gets \boxed{6}. However, note that the total is 42, so each of 7 gets 6."),
    ("3", r"\boxed{3}. Double-checking: 3 x 4 = 12, and the total is 12."),
    ("18", "The answer is 18.\nFinal: 18"),
    ("18", "\\boxed{18}\n\nEdit: formatting."),
    ("3", "\\boxed{3}\n\nUpdate: 3 more cases were considered."),
    ("20", r"\boxed{20}. The real total is 25 - 5 = 20."),
    ("42", r"\boxed{42}. Hold on, let me double check: 6 x 7 = 42. Yes, it's 42."),
    ("8", "So each gets \\boxed{8}.\n\nThe total is 24."),
    ("15", "#### 15\n\nFinal: 15 dollars"),
    ("2", r"The answer is \boxed{2}. My bad earlier, the first step gave 4 but it's 2."),
    ("7", r"Fixing the error gives \boxed{7}."),
]


@pytest.mark.parametrize(("gold", "completion"), LATER_WRONG)
def test_a_later_value_presented_as_the_answer_replaces_it(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), LATER_RIGHT)
def test_working_after_the_answer_is_no_new_answer(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail


# M5: Unicode forms that are not the plain number: a subscript base, a combining mark, a minus
UNICODE_WRONG = [
    ("101", "\\boxed{101\u2082}"),
    ("101", "The answer is 101\u2082."),
    ("5", "\\boxed{5\u2082}"),
    ("5", "\\boxed{5\u0338}"),
    ("5", "\\boxed{5\u20e0}"),
    ("5", "So it is 5\u0338."),
    ("5", "The answer is \u2796 5"),
    ("5", "The answer is \u02d7 5"),
]
UNICODE_RIGHT = [
    ("-5", "The answer is \u2796 5"),
    ("x_2", "\\boxed{x\u2082}"),
    ("5", "x =\u0338 4. The answer is 5."),  # NFC: "=" with the slash is "≠"
    ("2", "\\boxed{2\u2009}"),
]


@pytest.mark.parametrize(("gold", "completion"), UNICODE_WRONG)
def test_unicode_forms_that_change_the_number_are_not_it(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), UNICODE_RIGHT)
def test_unicode_forms_spelled_as_latex_keep_their_value(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail


# M4: text that does not render, or a few-shot run-on after the answer, gives no answer
UNRENDERED_WRONG = [
    ("42", "The answer is 41.\n\n`The answer is 42`"),
    ("42", "\\boxed{41}\n% \\boxed{42}"),
    ("42", "\\boxed{41} \\iffalse \\boxed{42} \\fi"),
    ("42", "~~Answer: 42~~"),
    ("42", "The answer is 41.\nAssistant: \\boxed{42}"),
    ("42", "The answer is 41.\n\nExample: 6*7 = \\boxed{42}"),
    ("42", "The answer is 41.\n\n### Exercise\nCompute 6*7. Answer: 42"),
    ("42", "#### 41\n\nSimilarly, for the next problem: #### 42"),
]
UNRENDERED_RIGHT = [
    ("42", "~~\\boxed{41}~~ \\boxed{42}"),  # a struck-out first attempt
    ("5", "\\boxed{5~~\\text{cm}}"),  # LaTeX spaces, no strikethrough
    ("42", "Answer: `\\boxed{42}`"),
    ("25", "The answer is 25%.\n% of the total is given."),
    ("5", "Example: n=2 gives 3.\n\nSo the answer is \\boxed{5}"),
    ("5", "The answer is the sum.\n\nExample: 2+3.\n\nSo the answer is \\boxed{5}"),
    ("12", "The answer is 12. Check with `print(3*4)` which prints 12."),
]


@pytest.mark.parametrize(("gold", "completion"), UNRENDERED_WRONG)
def test_text_that_does_not_render_or_runs_on_gives_no_answer(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), UNRENDERED_RIGHT)
def test_rendered_answers_around_code_and_tildes_stay(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail


# M7: a remark after the answer that says it is a bound, an estimate, not right or not checked
QUALIFIED_WRONG = [
    ("5", BOX5 + " This is only a lower bound."),
    ("5", BOX5 + " This is only an upper bound; the true value is smaller."),
    ("5", BOX5 + " This overestimates the true value."),
    ("5", BOX5 + " Give or take one."),
    ("5", BOX5 + " Plus or minus one."),
    ("5", r"The final answer is \boxed{5} +/- 1"),
    ("5", r"The final answer is \boxed{5} -ish."),
    ("5", r"The final answer is \boxed{5} (rounded)."),
    ("5", BOX5 + " That's an estimate."),
    ("5", BOX5 + " This may be incorrect."),
    ("5", BOX5 + " This is likely incorrect."),
    ("5", BOX5 + " That can't be right, though."),
    ("5", BOX5 + " I haven't verified this."),
    ("5", r"The final answer is \boxed{5} I hope."),
    ("5", BOX5 + " The above is wrong."),
    ("5", BOX5 + " Hmm, that's not right."),
]
QUALIFIED_RIGHT = [
    ("100", r"The final answer is $\boxed{100}$. I hope it is correct."),
    ("100", r"The final answer is $\boxed{100}$ I hope it is correct."),
    ("5", BOX5 + " This bound is tight."),
    ("5", BOX5 + " This is a lower bound that is attained at n = 2."),
    ("5", BOX5 + " That can't be right, so let me recheck: 2 + 3 = 5. Yes."),
    ("5", BOX5 + " It is not wrong to add them first."),
    ("5", "Rounding to the nearest whole number, the answer is \\boxed{5} (rounded)."),
    ("5", r"We need \boxed{5} buses (rounded up)."),
    ("500", r"Estimating, we get \boxed{500}. That's an estimate."),
    ("5", BOX5 + " That's right."),
    ("42", "\\boxed{42}\n\nI hope this helps."),
]


@pytest.mark.parametrize(("gold", "completion"), QUALIFIED_WRONG)
def test_a_remark_that_the_answer_is_inexact_or_unchecked_qualifies_it(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), QUALIFIED_RIGHT)
def test_remarks_that_leave_the_answer_exact_stay_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail


# "X, not Y" says the answer against another value: it was read as doubt ("not") on the answer
CONTRAST_RIGHT = [
    ("42", "The answer is 42, not 41."),
    ("42", "The answer is 42 (not 41)."),
    ("42", r"\boxed{42}, not 41"),
    ("42", r"The answer is $\boxed{42}$, not 41."),
    ("42", "The answer is $42$ (not $41$)."),
    ("42", "It's 42, not 41."),  # unmarked: the fallback read the last number, 41
    ("42", "So there are 42 apples, not 41."),
    ("42", "She has 42 (not 41)."),
]
CONTRAST_WRONG = [
    ("41", "The answer is 42, not 41."),  # the answer is 42, whatever it is said against
    ("42", "The answer is 41, not 42."),
    ("42", "The answer is not 42."),
    ("42", "The answer is 42, or not."),
    ("42", "The answer is 42, not necessarily."),
    ("42", r"\boxed{42}, not 42"),
    ("41", "It's 42, not 41."),
    ("41", "So there are 42 apples, not 41."),
]


@pytest.mark.parametrize(("gold", "completion"), CONTRAST_RIGHT)
def test_an_answer_said_against_another_value_passes(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail


@pytest.mark.parametrize(("gold", "completion"), CONTRAST_WRONG)
def test_a_contrast_never_passes_the_other_value_or_a_doubt(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", verdict.detail


# two boxes, each under its own option, interpretation or method, offer two answers (review s45a
# M2): "Case 1: / Case 2:" was already refused, "Option 1: / Option 2:" passed on the last box
LABELLED_BOXES_WRONG = [
    ("4", "Option 1: \\boxed{3}\nOption 2: \\boxed{4}"),
    ("4", "With replacement: \\boxed{3}. Without replacement: \\boxed{4}."),
    ("4", "Method A gives \\boxed{3}; method B gives \\boxed{4}."),
    ("4", "Interpretation 1: \\boxed{3}\nInterpretation 2: \\boxed{4}"),
]
LABELLED_BOXES_RIGHT = [
    ("4", "First I got \\boxed{3}, but rechecking, the answer is \\boxed{4}."),
    ("4", "The area is \\boxed{3}. The perimeter is \\boxed{4}."),
    ("4", "We compute \\boxed{3} first. With that, the total is \\boxed{4}."),
    ("4", "With 2 more apples she has \\boxed{4}."),
]


@pytest.mark.parametrize(("gold", "completion"), LABELLED_BOXES_WRONG)
def test_boxes_under_two_options_are_no_single_answer(gold, completion):
    assert MATH(completion, answer=gold).status != "ok"


@pytest.mark.parametrize(("gold", "completion"), LABELLED_BOXES_RIGHT)
def test_a_later_box_that_is_no_other_option_still_passes(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", verdict.detail
