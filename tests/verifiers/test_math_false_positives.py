"""Wrong answers the ``math`` verifier once rewarded (an adversarial review, 2026-12-04): each
row is (gold, completion) and must not be graded ``ok``. Beside them, the right answers written
the same ways, which must stay ``ok``: the fixes may not buy safety with recall."""

import pytest

from passband.verifiers import get

MATH = get("math")
_PAD = " We verify this carefully." * 20  # 520 characters of checking after the answer

WRONG = [
    # unicode math that math-verify read only the start of
    ("2", r"\boxed{2√3}"),
    ("2", "The answer is 2√3"),
    ("2", "#### 2√2"),
    ("2", r"\boxed{2²}"),
    ("10", "The answer is 10⁶"),
    ("3", r"\boxed{3½}"),
    ("3", "The answer is 3¼"),
    ("3", r"\boxed{3–4}"),
    ("3", "The answer is 3 ≈ 4"),
    ("2", "The answer is 2·3"),
    ("1", "The answer is 1⁄2"),
    # bounds, relations, questions and expressions cut off at an operator
    ("18", "The answer is ≥ 18."),
    ("18", "The answer is < 18"),
    ("18", "The answer is 18+."),
    ("18", "The answer is 18?"),
    ("3", r"\boxed{3 +}"),
    ("3", r"\boxed{3 \times}"),
    ("3", r"\boxed{3 \sqrt}"),
    ("0", r"\boxed{0^+}"),
    ("22", r"\boxed{22_3}"),
    ("22", r"The answer is $\neq 22$."),
    # a hedge between two choices
    (r"\text{(A)}", "The correct option is (A) or (C)."),
    ("A", "The answer is (A) or (C)."),
    (r"\text{(A)}", r"\boxed{(A) \text{ or } (C)}"),
    (r"\text{(A)}", "**Answer: (A) or (B)**"),
    (r"\text{(B)}", "The answer is (B) 12 or (C) 15."),
    (r"\text{(A)}", r"\boxed{(A) / (C)}"),
    # a false arithmetic statement
    ("18", r"\boxed{9 \times 3 = 18}"),
    ("18", "#### 9*3=18"),
    ("18", r"\boxed{20 - 3 = 18}"),
    ("3", r"\boxed{x = 2+2 = 3}"),
    ("18", r"\[ \text{Total} = 9 \times 3 = 18 \]"),
    # labelled parts against a tuple, in another order
    ("x=2, y=-1", r"\boxed{(-1, 2)}"),
    ("m=3, n=8", r"\boxed{(8, 3)}"),
    ("(1,2)", r"\boxed{y=1, x=2}"),
    # a list cut at its Oxford comma
    ("1, 2", "The answer is 1, 2, and 3."),
    # what stands right around the box
    ("18", r"$-\boxed{18}$"),
    ("18", r"x = -\boxed{18}"),
    ("18", r"2\boxed{18}"),
    ("18", r"\boxed{18}^2"),
    ("18", r"not \boxed{18}"),
    # an answer revised, supposed or rejected
    ("18", r"\boxed{18}. Let me double check: 9 * 3 = 27. Hmm so the answer should be 27"),
    ("18", "\\boxed{18}\n\nDouble-check: 9*3 = 27 ≠ 18. The correct total is 27."),
    ("18", "Suppose the answer is 18. Then 2*18=36 which is too big."),
    ("18", "A common mistake is to say the answer is 18."),
    ("18", "The answer is 18; no, 22."),
    ("18", "The answer is 18 (should be 22)."),
    ("18", "Final answer: 18 (after correction: 22)"),
    ("18", "The answer is 18, then add 4 to get 22."),
    ("18", "The answer is 18... or 22."),
    ("18", "The answer is 18, nope, 22."),
    ("18", "The answer is $18$, $22$"),
    # hedges and bounds in words
    ("22", "The answer isn’t 22."),
    ("22", "The answer might be 22."),
    ("22", "The answer seems to be 22."),
    ("22", "The answer is ~22."),
    ("22", "The answer is up to 22."),
    ("22", "The answer is close to 22."),
    ("22", "The answer is an estimated 22."),
    ("22", "I'm not sure, but the answer is 22."),
    ("22", "The answer is 22 at minimum."),
    ("22", "The answer is 22 max."),
    ("3", "The answer is 3ish."),
    # a word after the number that changes it
    ("22", "The answer is 22 dozen."),
    ("22", "The answer is 22 doubled."),
    ("22", "The answer is 22 factorial."),
    ("3", r"\boxed{3 \text{ squared}}"),
    ("1", "The answer is one less."),
    # a completion cut off at an operator
    ("18", "So 18 -"),
    ("18", "Then 18 /"),
    ("18", "The total is 18 x"),
    ("18", "so we have 18 times"),
    ("18", "Then 18 *"),
    ("18", "Then 18 * x"),
    ("18", "She has 18*x apples"),
    ("18", "it is 18 + 2x"),
    # "hundred" scales the number it follows
    ("22", "The answer is 22 hundred."),
    ("22", "So 22 hundred dollars."),
    ("22", r"\boxed{22 \text{ hundred}}"),
    ("12", "Total: 12 hundred thousand"),
    ("1200", "Total: 12 hundred thousand"),
    ("18", "The answer is 18 hundreds."),
    # a unit and then more: math-verify read only the first number (a second review, 2026-12-04)
    ("18", r"\boxed{18 \text{ hours } 20 \text{ minutes}}"),
    ("5", r"\boxed{5 \text{ dollars and } 50 \text{ cents}}"),
    ("3", r"\boxed{3\text{ ft } 6\text{ in}}"),
    ("18", r"\boxed{18\text{ cm}} \text{ or } \boxed{20\text{ cm}}"),
    ("18", r"\boxed{18 \text{ cm}, 20 \text{ cm}}"),
    ("18", r"\boxed{18 \text{ cm} = 20 \text{ m}}"),
    ("18", r"\boxed{18 \text{ cm}^2 - 2\text{ cm}^2}"),
    ("18", r"The area is $18 \text{ cm} \times 20 \text{ cm}$"),
    ("6", r"\boxed{6 \text{ inches by } 18 \text{ inches}}"),
    # a word or sign right before the box or the number
    ("18", r"The answer is negative \boxed{18}."),
    ("18", r"The total is approximately $\boxed{18}$."),
    ("18", r"~\boxed{18}"),
    ("18", r"$x \approx \boxed{18}$"),
    ("18", r"She needs at least $\boxed{18}$ boxes."),
    ("18", r"$x < \boxed{18}$"),
    ("18", r"The answer is between \boxed{18} and 20."),
    ("18", r"It isn't \boxed{18}; it's 20."),
    ("18", r"The answer is 20, rather than $\boxed{18}$."),
    ("18", r"The probability is 1 in \boxed{18}."),
    ("18", "So x is negative 18."),
    ("18", "So the total is approximately 18."),
    ("18", "So she needs fewer than 18 boxes."),
    ("18", "So the chance is one in 18."),
    ("18", "So the probability is 1 / 18."),
    ("18", "So x = \u201118."),  # a non-breaking hyphen is a minus
    # ranges, and a box that is an operand
    ("18", "The answer is anywhere from 18 to 22."),
    ("18", "The answer is from 18 to 20."),
    ("18", "The answer is within 18-22."),
    ("18", r"$\boxed{18} + 2 = 20$"),
    ("18", r"$\boxed{18} = 20$"),
    ("18", r"$\boxed{18} \pm 2$"),
    ("18", r"$\boxed{18},000$"),
    ("18", r"$\boxed{18}\pi$"),
    ("18", r"$\boxed{18}x$"),
    ("18", r"\boxed{18} hundred"),
    # the last box is cut off: an earlier, different one is not the answer
    ("18", r"\boxed{18}. Let me double-check: 9 + 11 = \boxed{20"),
    # a factorial, a ratio or a time read as the number before or after it (third review)
    ("18", r"The answer is $\boxed{18}!$"),
    ("18", r"So \[\boxed{18}!\]"),
    ("18", "That gives 18! ways."),
    ("18", "It is $18!$"),
    ("18", "The ratio is 1:18."),
    ("18", "The ratio of boys to girls is 2:18"),
    ("18", "The ratio is 1 : 18"),
    ("18", "At 3:18 pm she leaves."),
    # a later "Answer:" on the same line changes the answer (a new-user review)
    ("18", r"\boxed{18}. Answer: 19"),
    ("18", "The answer is 18. Answer: 19"),
    ("18", "Answer: 18. Answer: 19"),
    ("18", "#### 18. Answer: 19"),
    ("18", "The answer is 18, answer: 19"),
    (r"\text{(A)}", "The correct option is (A). Answer: (B)"),
    # Python's power read as Markdown bold and stripped (stop 36): 2**3 was 23
    ("23", "The answer is 2**3"),
    ("23", "Final: 2**3"),
    ("210", r"The answer is \boxed{2**10}"),
    ("52", "so 5 ** 2 = 25. The answer is 5 ** 2"),
    # a retraction naming another value past the 300 characters the guard read (stop 36)
    ("12", "The answer is 12." + _PAD + " Actually, it might be 13."),
    ("12", "The answer is 12." + _PAD + " Wait, the answer is $13$."),
    ("12", r"\boxed{12}" + _PAD + " So it's 13."),
    # a third review (stop 36): Markdown "####" headings read as the GSM8K marker
    (
        "2",
        "#### Step 1: Eggs sold\n16 - 3 - 4 = 9\n\n#### Step 2: Price\n9 * 2 = 18\n\nShe makes **$18**.",
    ),
    ("3", "#### Step 3: Total\nThe total is 3 + 4 + 5 = 12 apples."),
    # a hedge or a negation before the box, a conditional case, a question
    ("43", r"The answer is 42 or \boxed{43}."),
    ("19", r"I'm torn between 18 and \boxed{19}."),
    ("19", r"\boxed{18} or possibly \boxed{19}"),
    ("19", "If n is even: \\boxed{18}\nIf n is odd: \\boxed{19}"),
    ("13", "So we get $x = 12$ or $x = 13$."),
    ("12", r"The answer cannot be $\boxed{12}$."),
    ("12", r"$x$ is not equal to $\boxed{12}$."),
    ("12", r"Hence $x = \boxed{12}$ is extraneous."),
    ("12", "We reject $x = 12$."),
    ("12", r"We can rule out \boxed{12}."),
    ("12", r"\boxed{12}?"),
    ("12", r"Is it $\boxed{12}$?"),
    # digit groups split by no-break / narrow spaces, HTML superscripts, a zero for a tiny value
    ("500", "\\boxed{2\u202f500}"),
    ("500", "#### 2\u202f500"),
    ("10", "The answer is 10<sup>6</sup>."),
    (r"\frac{1}{3000000}", r"\boxed{0.0}"),
    # the same review, second round: numbered and 5-hash headings, hedges between boxes,
    # negations, retractions in other words, a decimal wrong in its last place
    ("3", "### Solution\n\n#### 1. Eggs\n16-3-4=9.\n\n#### 3. Revenue\n9 * $2 = $18.\n\nSo $18."),
    ("2", "\\boxed{18}\n\n##### Note 2"),
    ("19", r"\boxed{18} (or \boxed{19})"),
    ("19", "\\boxed{18}\n\nOR\n\n\\boxed{19}"),
    ("19", r"\boxed{18} \lor \boxed{19}"),
    ("19", r"\boxed{18}, alternatively \boxed{19}"),
    ("12", r"\boxed{18} if she sells all eggs, otherwise \boxed{12}"),
    ("19", r"$18 \text{ or } \boxed{19}$"),
    ("19", r"It could be 18, it could be \boxed{19}."),
    ("19", r"\boxed{18 \lor 19}"),
    ("12", r"It is never \boxed{12}."),
    ("12", r"It is impossible for the answer to be \boxed{12}."),
    ("12", r"Therefore \boxed{12} is impossible."),
    ("12", "The answer != 12."),
    ("12", "\\boxed{12}\n\nOn reflection, 13."),
    ("12", "\\boxed{12}\n\nI miscounted; the real total is 13."),
    ("12", "\\boxed{12}\n\nBut that's wrong. 13."),
    ("12", "The answer is 12.\n\nHmm, maybe 13 instead."),
    ("A", "The answer is (A).\n\nOn reflection, (C)."),
    (r"\pi", r"\boxed{3.1415929}"),
    (r"\frac{1}{4}", r"\boxed{0.25\%}"),  # a fraction is a proportion: 0.25% is 1/400
    # trailing zeros are written places: 1.4142140 claims 7 places and is 4 units off in the 7th
    (r"\sqrt{2}", r"\boxed{1.4142140}"),
    (r"\sqrt{2}", r"\boxed{1.41421360}"),
    (r"\frac{1}{3}", r"\boxed{0.33330}"),
    ("18", r"The answer is \boxed{18|19}"),  # two candidates split by a bar
    ("19", r"The answer is \boxed{18 \mid 19}"),
    ("18", r"The answer is \boxed{18\,|\,19}"),
    ("18", r"The answer is \boxed{x = 18 | 19}"),
    ("18", r"The answer is \boxed{18\% | 19\%}"),
    ("100", "Answer: The number of days to reach 100 is 7."),  # the subject, not the answer
    ("6", "Answer: $6 and 30 cents"),  # one amount, $6.30
    ("6", "She has 6 dollars and 30 cents left. The answer is 6 dollars and 30 cents."),
    ("20", "Answer: She needs 4 more boxes to reach 20."),  # 20 is the goal, 4 the answer
]

RIGHT = [
    ("4", "Answer: She needs 4 more boxes to reach 20."),
    ("7", "Answer: The number of days to reach 100 is 7."),
    # a named pair is read as written: the problem may ask for (n, m) (a review of stop 37)
    ("(3, 4)", r"The answer is \boxed{(n, m) = (3, 4)}"),
    ("(1, 2)", r"Final answer: $(x, y) = (1, 2)$"),
    ("20", "Answer: He needs to reach 20."),
    ("6.30", "Answer: $6 and 30 cents"),
    ("6.05", "The answer is 6 dollars and 5 cents."),
    ("3", r"The answer is \boxed{|-3|}"),
    (r"\sqrt{2}", r"\boxed{1.4142136}"),
    (r"\sqrt{2}", r"\boxed{1.41421356}"),
    ("2.5", r"\boxed{2.5000}"),
    (r"\frac{5}{2}", r"\boxed{2.50}"),
    (r"\frac{1}{3}", r"\boxed{0.333333}"),
    ("2\\sqrt{3}", r"\boxed{2√3}"),
    ("4", r"\boxed{2²}"),
    ("3.5", r"\boxed{3½}"),
    ("6", "The answer is 2·3"),
    ("0.5", "The answer is 1⁄2"),
    ("-3", "The answer is −3."),
    ("18", r"\boxed{9 \times 2 = 18}"),
    ("18", "#### 9*2=18"),
    ("18", r"\[ \text{Total} = 9 \times 2 = 18 \]"),
    ("x=2, y=-1", r"\boxed{(2, -1)}"),
    ("(1,2)", r"\boxed{x=1, y=2}"),
    ("(1,2)", r"\boxed{y=2, x=1}"),
    ("1, 2, 3", "The answer is 1, 2, and 3."),
    (r"\text{(A)}", "The correct option is (A)."),
    (r"\text{(B)}", "The answer is (B) 12."),
    ("18", r"$\boxed{18}$"),
    ("18", r"so $x = \boxed{18}$"),
    ("18", r"The answer is \boxed{18}."),
    ("-18", r"$\boxed{-18}$"),
    ("18", "The answer is 18."),
    ("18", "The answer is 18 apples."),
    ("22", "Let me double check: 9 + 13 = 22. The answer is 22."),
    ("x > 3", r"\boxed{x > 3}"),
    ("1011_2", r"\boxed{1011_2}"),
    ("18", "So the total is 18"),
    ("2\\sqrt{2}", r"\boxed{\sqrt{8}}"),
    ("\\frac{1}{2}", "The answer is 0.5"),
    ("4", "She needs 4 more."),  # a count after the number, not a difference
    ("4", "He needs four more boxes."),
    ("A", "Since option (B) is incorrect, the answer is (A)."),  # an eliminated option, no doubt
    ("7", "Option C gives the wrong answer, so the answer is 7."),
    ("18", "The answer isn't 22; it's 18."),  # "answer is" inside "answer isn't" is no marker
    ("18", "So she has *18* apples"),  # emphasis, not an operator
    ("18", "It costs $18 / month"),  # a rate
    ("2200", "The answer is 22 hundred."),
    ("2200", "So 22 hundred dollars."),
    ("1200000", "Total: 12 hundred thousand"),
    ("150", "The answer is 1.5 hundred"),
    ("4", "He paid $4 million."),  # the question may count in millions (labelled rows)
    ("4000000", "He paid $4 million."),
    ("18", r"\boxed{18 \text{ cm}^2}"),
    ("2000", r"\boxed{2 \times 10^3 \text{ m}}"),
    ("3, 5", r"$\boxed{3 \text{ and } 5}$"),
    ("18", r"She needs at least 18 boxes, so the answer is \boxed{18}."),
    ("18", "She had 20 and gave 2, so 20 - 2 = 18."),
    ("18", "It went from 20 down to 18."),
    ("-18", "So x = \u201118."),
    ("94", "Thus, 2146 + x >= 2250\nThus, x >= 94"),  # GSM8K's own working: the least needed
    ("220", "Lola takes 220 seconds.\nBecause 200 < 220 Lola wins."),
    ("18", "She sells 9 eggs, so she makes 9 * 2 = <<9*2=18>>18 dollars."),
    ("18", r"So it is $\boxed{18}$!"),  # an exclamation, not a factorial
    ("18", r"So it is \boxed{18}!"),
    ("18", "Wow, 18!"),
    ("18", "So she has 18! The end."),
    ("18", "She earns $18!"),
    ("18", "Step 2: 18"),
    ("210", "300-90=210 pages remain\nWeek 3:210 pages"),  # a numbered label (a GSM8K solution)
    ("1:18", r"$\boxed{1:18}$"),
    ("18", "The answer is 18. Answer: 18"),
    ("18", "So, answer: 18."),
    ("18", "The answer is 18. Answer: $18$."),
    ("8", "The answer is 2**3"),
    ("1024", r"x = 2**10 = 1024. The answer is $\boxed{2**10}$"),
    ("23", "So the answer is **23**."),
    ("23", "**Answer:** 23"),
    ("12", "The answer is 12." + _PAD + " Actually, it might be 12."),
    ("12", "The answer is 12." + _PAD + " Wait, let me verify: 5 + 7 = 12. Yes."),
    ("12", "The answer is 12." + _PAD + " Actually, the total is 15 minus 3 = 12."),
    ("12", "The answer is 12." + _PAD + " Actually, 5 + 7 is 12 so it checks."),
    (
        "18",
        "#### Step 1: Eggs sold\n16 - 3 - 4 = 9\n\n#### Step 2: Price\n9 * 2 = 18\n\nShe makes **$18**.",
    ),
    ("18", "\\boxed{18}\n\n#### Verification\nAll good."),
    ("18", "So 9*2=18\n#### 18"),
    ("18", "#### Final Answer\n18"),
    ("5", "#### x = 5"),
    ("Yes", "#### Yes"),
    ("43", r"So the answer is \boxed{43}."),
    ("3", r"The roots are 2 or 3, and the larger one is \boxed{3}."),
    ("3", r"We reject x = -2 since lengths are positive, so x = \boxed{3}."),
    ("3", r"It is not 5, so the answer is \boxed{3}."),
    ("11", r"The number of ways to choose 2 or more is \boxed{11}."),
    ("12", r"If we add them: 5+7 = \boxed{12}"),
    ("12", "So the answer is \\boxed{12}.\nAny questions?"),
    ("2500", "\\boxed{2\u202f500}"),
    ("2500", "#### 2\u00a0500"),
    ("18", "The answer is\u00a018."),
    ("1000000", "The answer is 10<sup>6</sup>."),
    ("0", r"\boxed{0.0}"),
    (r"\pi", r"\boxed{3.1415927}"),
    ("18", "\\boxed{18}\n\nWe verify: 9 * 2 = 18."),
    ("18", "The answer could be found by adding, so the answer is \\boxed{18}."),
    # a regression review of the fixes above (stop 36): right answers they refused
    (r"\frac{1}{2}", r"The probability is $\boxed{\frac{1}{2}}$ (or $\boxed{0.5}$)."),
    (r"\frac{3}{4}", r"$\boxed{\frac{3}{4}}$ or equivalently $\boxed{0.75}$"),
    (
        "12",
        "The area is $\\boxed{12}$.\n\n"
        + _PAD
        + "\nWait, let me double-check: the width is 3 and the length is 4, so 12. Correct.",
    ),
    (
        "12",
        "So the answer is $\\boxed{12}$.\n\n"
        + _PAD
        + "\nActually, the key fact is 3 boxes hold 4 each, confirming 12.",
    ),
    (
        "12",
        "So the answer is $\\boxed{12}$.\n\n" + _PAD + "\nWhat is the number of rows? It is 3.\n",
    ),
    ("24", "We get $\\boxed{24}$.\n\nNote: one could also count the complement instead."),
    ("19", "When all cases are added together: $\\boxed{19}$"),
    ("19", "If we add everything up: \\boxed{19}"),
    ("7", "The answer is \\boxed{7}.\n\nA common error is to miscount the endpoints."),
    ("12", "Is the answer $\\boxed{12}$? Yes."),
    (r"\frac{1}{4}", r"\boxed{25\%}"),
    ("25", r"\boxed{25\%}"),
    ("0.25", r"\boxed{25\%}"),
    ("#### 50", "The answer is 50%"),
]


@pytest.mark.parametrize("gold, completion", WRONG)
def test_a_wrong_answer_is_never_graded_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", (gold, completion, verdict.detail)


@pytest.mark.parametrize("gold, completion", RIGHT)
def test_the_right_answer_written_the_same_ways_stays_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", (gold, completion, verdict.status, verdict.detail)
