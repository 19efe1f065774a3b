"""A stated answer with words that change it is not that answer: found by an adversarial review
(negation, retraction, hedges, operations, nested boxes, code blocks, false equations, multisets,
wrong labels). Each was graded ``ok`` before; a false positive trains the policy to write it."""

import time

import pytest

from passband.verifiers import get

math = get("math")

REWARDED_BEFORE = [
    ("The answer is not 42.", "42"),
    ("Answer: not 42", "42"),
    ("So the answer is never 7.", "7"),
    ("The answer is not 42 but 41.", "42"),
    ("The answer is 42... wait no. Actually it is 41.", "42"),
    ("The answer is 42. Wait, it is 41.", "42"),
    ("The answer is 42 (incorrect).", "42"),
    ("Answer: 42 (wrong), correct is 41", "42"),
    ("The answer is 42 — just kidding, it's 41.", "42"),
    ("The answer is negative 42", "42"),
    ("The answer is minus 42", "42"),
    ("The answer is 5 squared", "5"),
    ("The answer is twice 42", "42"),
    ("The answer is half of 42", "42"),
    ("The answer is the square root of 5", "5"),
    ("The answer is 5 reciprocal", "5"),
    ("The answer is at least 42", "42"),
    ("The answer is less than 42", "42"),
    ("The answer is 42 or more", "42"),
    ("The answer is $42$ times 3", "42"),
    (r"The answer is \(42\) times 3", "42"),
    ("$42$ squared", "42"),
    (r"The answer is: $\frac{1}{2}$ of 84", "1/2"),
    (r"\boxed{\neg 5}", "5"),
    (r"\boxed{\not 5}", "5"),
    ("The answer is $42$ or $43$", "42"),
    ("The answer is 42, or 43.", "42"),
    ("The answer is 42 (or possibly 43).", "42"),
    ("Answer: $42$ (approximately $43$)", "42"),
    ("#### $42 or $43", "42"),
    (r"\boxed{-4}; \boxed{1}", "1"),
    (r"\boxed{-4}. \boxed{1}", "1"),
    (r"\boxed{-\boxed{5}}", "5"),
    (r"\boxed{1\boxed{5}}", "5"),
    (r"\boxed{5^{\boxed{2}}}", "2"),
    ("```python\nprint('The answer is 42')\n```\nOutput unknown.", "42"),
    ("```python\n# Answer: 42\nprint(41)\n```", "42"),
    ("```python\nprint(42)\n```\nI don't know.", "42"),
    ("42 is wrong; the correct total is unknown.", "42"),
    ("I think it's 41. Hmm, 42 is also possible. I can't decide.", "42"),
    (r"\boxed{3=2}", "2"),
    (r"\boxed{2=3}", "3"),
    (r"\boxed{x=2=3}", "3"),
    (r"\boxed{1, 2, 2}", "1, 2"),
    (r"\boxed{1, 2}", "1, 1, 2"),
    (r"\boxed{1, 2, 2}", "1, 1, 2"),
    (r"\boxed{m = 3, m = 8}", "m = 3, n = 8"),
]

STILL_RIGHT = [
    ("The answer is 42.", "42"),
    ("The answer is 42 because 6 times 7 is 42.", "42"),
    ("The answer is 25 square meters.", "25"),
    ("The answer is 5 cm squared.", "5"),
    ("The answer is No.", "No"),
    (r"\boxed{x \neq 2}", r"x \neq 2"),
    ("The roots are x = -4 or x = 1.", "-4, 1"),
    ("So she has 5 more apples than Tom. The answer is 5.", "5"),
    ("The answer is 7. This is the number of apples Tom does not eat.", "7"),
    (r"The final answer is $\boxed{18}$. I hope it is correct.", "18"),
    (r"\boxed{42} and \boxed{42}", "42"),
    (r"\boxed{2 = 2}", "2"),
    (r"\boxed{\frac{6}{3} = 2}", "2"),
    ("There is 32 - 28 = $4 million left.", "#### 4"),  # a unit of the question (labelled data)
    ("It takes 2 hours and 40 minutes, or 160 minutes.", "#### 160"),
    ("The solutions are $\\boxed{x=2}$ and $\\boxed{x=2}$ (a double root).", "x = 2"),
    ("He runs a total of 540m per week.", "#### 540"),
    ("```python\nprint(6 * 7)\n```\nThe answer is 42.", "42"),
]


def test_the_detail_names_the_word_that_qualified_it():
    assert "qualified by 'not'" in math("The answer is not 42.", answer="42").detail
    assert "qualified by 'Wait'" in math("The answer is 42. Wait, it is 41.", answer="42").detail


# A second answer after the graded one (stop 35): a heading or bold label with no colon, "My
# answer:", or an alternative offered after it. The box was graded before and passed.
LATER_ANSWER = [
    ("So x = 12.\n\n\\boxed{12}\n\n**Final Answer**\n13", "12"),
    ("\\boxed{12}\n\n**Final Answer**\n\n13", "12"),
    ("\\boxed{12}\n\n## Final Answer\n13", "12"),
    ("\\boxed{12}\n\nFinal answer\n13", "12"),
    ("\\boxed{12}\nMy answer: 13", "12"),
    ("\\boxed{12}\n**Answer** 13", "12"),
    ("\\boxed{12}\nAlternatively, 13.", "12"),
    ("\\boxed{12}\nAlternatively, the answer could be $13$.", "12"),
    ("\\boxed{12}\nOr maybe 13?", "12"),
    ("The answer is 12. Perhaps 13.", "12"),
]

LATER_STILL_RIGHT = [
    ("\\boxed{12}\nAlternatively, 3 \\times 4 = 12 checks it.", "12"),
    ("\\boxed{12}\nAlternatively, we can count: 3 rows of 4 gives 12.", "12"),
    ("\\boxed{12}\nMaybe I should double-check: 3 x 4 = 12.", "12"),
    ("**Final Answer**\n\\boxed{12}", "12"),
    ("**Final Answer**\nThe final answer is $\\boxed{12}$.", "12"),
    ("**Final Answer**\n12 apples", "12"),
    ("## Final Answer\n\nThe answer is 12.", "12"),
    ("So 12.\n\n**Answer** 12", "12"),
    ("Let me verify my answer: 12 x 3 = 36. \\boxed{12}", "12"),
    ("#### 12\n\nFinal answer", "12"),  # a label with nothing after it states nothing
    ("\\boxed{12}\n\n**Final Answer**\n13", "13"),  # the latest statement is the answer
]


# From a fifth review (stop 35): a piece of an expression, a range or a question read by the
# last-number fallback; an <answer> tag, correction labels and a later value after the answer.
REWARDED_BEFORE_5 = [
    ("So the area is 12π.", "12"),
    ("So x = \\frac{1}{2}", "2"),
    ("So x = \\sqrt{2}.", "2"),
    ("So x = 10²", "2"),
    ("So x ≠ 12", "12"),
    ("So the total is between 12 and 13.", "13"),
    ("So the total is 12-13 apples.", "13"),
    ("So the area is 12 by 13.", "13"),
    ("So she has 3 and 1/2 pies left.", "1/2"),
    ("Is it 13?", "13"),
    ("13 haha jk", "13"),
    ("<answer>12 or 13</answer>", "13"),
    ("<answer>\\sqrt{2}</answer>", "2"),
    ("\\boxed{12}\n\n<answer>13</answer>", "12"),
    ("\\boxed{12}\n\nCorrected answer: 13", "12"),
    ("\\boxed{12}\n\nThe answer: 13", "12"),
    ("\\boxed{12}\n\nRevised answer: 13", "12"),
    ("\\boxed{12}\n\nAnswer = 13", "12"),
    ("\\boxed{12}\n\nFinal result: 13", "12"),
    ("\\boxed{12}\n\nHmm, let me recheck: 3*4+1 = 13. So it's 13.", "12"),
    ("\\boxed{12}\n\nMy previous answer was wrong. It's 13.", "12"),
    ("\\boxed{12}\n\nIt's 13, not 12.", "12"),
    ("The answer is 12. However, the answer could also be 13.", "12"),
    ("The answer is\n\\[\n12\n\\]\nor\n\\[\n13\n\\]", "12"),
    ("The answer is (B). (C) is also correct.", "B"),
    ("~~~\n\\boxed{13}\n~~~\nThe answer is 12.", "13"),  # a box in a ~~~ fence is code
]

STILL_RIGHT_5 = [
    ("<think>3*4=12</think>\n<answer>\\boxed{12}</answer>", "12"),  # R1-Zero: ">" is no relation
    ("<think>ok</think>\n<answer> \\boxed{12} </answer>", "12"),
    ("<think>ok</think>\n<answer>\\frac{1}{2}</answer>", "\\frac{1}{2}"),
    ("<think>ok</think>\n<answer>(1, 2)</answer>", "(1, 2)"),
    ("<think>ok</think>\n<answer>B</answer>", "B"),
    ("<think>ok</think>\n<answer>\nThe answer is 12.\n</answer>", "12"),
    ("> \\boxed{12}", "12"),  # a markdown quote
    ("Total => \\boxed{12}", "12"),
    ("**Final Answer**\n- 12", "12"),  # a bullet, not a minus
    ("~~~\n\\boxed{13}\n~~~\nThe answer is 12.", "12"),
    ("\\boxed{12}\n\nThat's 12 apples in total, and it is 3 more than Tom's 9.", "12"),
    ("\\boxed{12}\n\nSo it's 12.", "12"),
    ("The answer is 12. It is 12 because 3 x 4 = 12.", "12"),
    ("She has 12 apples.", "12"),
    ("The total is 20 - 7 = 13.", "13"),
    ("There are 5 red and 7 blue, so 12 in total.", "12"),
    ("He has 1/2 of the pie.", "1/2"),
    ("we get $6 for it", "6"),
]


BOX_ADDS = [
    ("The answer is 2 sqrt(3).", "2"),  # math-verify read the plain root as its 2
    ("\\boxed{2 sqrt(3)}", "2"),
    ("\\boxed{12..13}", "12"),
    ("\\boxed{12 \\text{ (?)}}", "12"),
    ("\\boxed{12\\text{+}}", "12"),
    ("\\boxed{12 \\text{ (I think)}}", "12"),
    ("\\boxed{12 \\text{ (lower bound)}}", "12"),
    ("The answer is 12\u200b3.", "12"),  # a zero-width space inside a number: 123
]


BOX_RIGHT = [
    ("The answer is 2 sqrt(3).", "2\\sqrt{3}"),
    ("\\boxed{12 \\text{ apples}}", "12"),
    ("\\boxed{\\text{260 sheep}}", "260"),
    ("Thus, Janet makes $\\textbf{18}$ dollars.", "18"),
    ("\\boxed{1, 2, \\ldots, n}", "1, 2, \\ldots, n"),
    ("Let me think. The answer is 12.", "12"),
    ("So 10² = 100. The answer is 100.", "100"),
]


# A sixth review (stop 35): the fifth review's rules refused right answers, and its tag handling
# let qualified answers through. Each row was graded as its list says by the code before the fix.
RIGHT_AFTER_REVIEW_6 = [
    ("$\\boxed{\\frac{1}{2}}$\n\nThis could also be written as 0.5.", "\\frac{1}{2}"),
    ("The answer is \\boxed{12}.\n\nNote: This problem could also be solved another way.", "12"),
    (
        "**Final Answer**\n\nJanet has 16 - 3 - 4 = 9 eggs left. She makes 9 × $2 = $18 every day.",
        "18",
    ),
    ("## Final Answer\nWith 9 eggs left (16 - 3 - 4), she earns $18.", "18"),
    ("### Final Answer\n1. Eggs left: 9\n2. Earnings: $18", "18"),
    ("**Final Answer** — 18", "18"),
    ("**The answer** depends on the eggs: 16 - 3 - 4 = 9, so she makes 9 * 2 = 18.", "18"),
    ("The minimum value is \\boxed{12} and the bound is tight.", "12"),
    (
        "The final answer is $\\boxed{18}$.\n\nLet me verify: 16 - 3 - 4 = 9 eggs remain, that's 9.",
        "18",
    ),
    ("The total distance is \\boxed{12} km.\nIn meters, that is 12000.", "12"),
    (
        "The answer is 5.\n\n(Note: x = -5 is also possible algebraically, but not as a length.)",
        "5",
    ),
    (
        "The answer is \\boxed{18}.\n\nAnother way:\n$$9 \\times 2 = 18$$\nor\n$$32 - 14 = 18$$",
        "18",
    ),
    ("The answer is 12.\n\nAlternatively:\n1. Multiply 3 by 4.\n2. Get 12.", "12"),
    ("\\boxed{45 \\text{ minutes (0.75 hours)}}", "45"),
    ("\\boxed{12 \\text{ m^2}}", "12"),
    ("Day 5 – 12 apples", "12"),
    ("Therefore, Janet makes \\textbf{18} dollars.", "18"),
]

WRONG_AFTER_REVIEW_6 = [
    ("The answer isn't <answer>12</answer>", "12"),
    ("The answer is at least <answer>12</answer> apples.", "12"),
    ("<answer>12</answer> or more", "12"),
    ("<answer>12</answer> is wrong.", "12"),
    ("<answer>12</answer> or 13", "12"),
    ("Between <answer>12</answer> and 13.", "12"),
    ("<answer>12</answer>^2", "12"),
    ("<answer>12</answer>0", "12"),
    ("I guess <answer>12</answer>", "12"),
    ("## Final Answer\n- 12\n- 13", "12"),
    ("**Final Answer**\n12\n13", "12"),
    ("Final Answer:\n12\n13", "12"),
    ("My answer: 12\nThe correct answer: 13", "12"),
    ("x =< \\boxed{12}", "12"),
    ("The answer is n\u034fot 12.", "12"),
]


MORE_WRONG = [  # the first review's last items (stop 35)
    ("Answer: B. If not, C.", "B"),
    ("The answer is twelve squared.", "12"),
    ("The answer is twelve hundred.", "12"),
]
MORE_RIGHT = [
    ("The answer is twelve.", "12"),
    ("The answer is 144, that is twelve squared.", "144"),
    ("If not, we get 5. The answer is 12.", "12"),
]

WRONG = (
    MORE_WRONG
    + REWARDED_BEFORE
    + LATER_ANSWER
    + REWARDED_BEFORE_5
    + BOX_ADDS
    + WRONG_AFTER_REVIEW_6
)
RIGHT = (
    MORE_RIGHT + STILL_RIGHT + LATER_STILL_RIGHT + STILL_RIGHT_5 + BOX_RIGHT + RIGHT_AFTER_REVIEW_6
)


@pytest.mark.parametrize("completion, gold", WRONG)
def test_a_qualified_answer_is_not_rewarded(completion, gold):
    verdict = math(completion, answer=gold)
    assert not verdict.passed and verdict.score == 0.0, verdict


@pytest.mark.parametrize("completion, gold", RIGHT)
def test_plain_answers_and_units_still_pass(completion, gold):
    verdict = math(completion, answer=gold)
    assert verdict.passed, verdict


@pytest.mark.parametrize(
    "completion",
    [
        "\\boxed{12^{999999999}}",
        "\\boxed{(12)^{(999999)^{9}}}",
        "\\boxed{9!!!!!!}",
        "\\boxed{99999999!}",
        "\\boxed{(10^{100})!}",
        "\\boxed{\\binom{10^{9}}{10^{8}}}",
        "\\boxed{\\Gamma(10^{9})}",
        "\\boxed{" + "\\frac{1}{" * 16 + "12" + "}" * 16 + "}",
        "\\boxed{(x+y+z+w)^{40}}",
        "\\boxed{e^{e^{e^{e^{e}}}}}",
    ],
)
def test_an_answer_too_big_to_evaluate_is_invalid_not_a_masked_timeout(completion):
    """Stop 35 (a review of masked verdicts): each ran sympy past the 3 s limit, and a timeout
    is masked in training, so the policy escaped its zero reward."""
    start = time.perf_counter()
    verdict = math(completion, answer="12")
    assert verdict.status == "invalid" and time.perf_counter() - start < 1.0, verdict


@pytest.mark.parametrize(
    "completion, gold",
    [
        ("\\boxed{(a+b)^{12}}", "(b+a)^{12}"),
        ("\\boxed{(1+\\sqrt{2})^{20}}", "(\\sqrt{2}+1)^{20}"),
        ("\\boxed{2^{2^{3}}}", "256"),
        ("\\boxed{\\binom{10}{3}}", "120"),
        ("\\boxed{10!}", "3628800"),
        ("\\boxed{\\frac{1}{\\frac{1}{2}}}", "2"),
    ],
)
def test_powers_factorials_and_fractions_of_normal_size_still_pass(completion, gold):
    assert math(completion, answer=gold).passed
