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

# a relation, arrow or connective math-verify reduced to one of its sides
TOP_LEVEL_WRONG = [
    ("5", r"\boxed{x \approx 5}"),
    ("5", "Answer: x ≈ 5"),
    ("5", r"\boxed{x \sim 5}"),
    ("5", r"\boxed{x \to 5}"),
    ("5", r"\boxed{6 \Rightarrow 5}"),
    ("5", r"\boxed{6 \implies 5}"),
    ("5", r"\boxed{6 \mapsto 5}"),
    ("5", r"\boxed{x \notin 5}"),
    ("5", r"\boxed{x \nless 5}"),
    ("5", r"\boxed{x \gg 5}"),
    ("5", r"\boxed{x \mid 5}"),
    ("5", r"\boxed{x \subset 5}"),
    ("5", "Answer: x =/= 5"),
    ("5", "Answer: x ≯ 5"),
    ("5", "Answer: x -> 5"),
    ("5", "Answer: x → 5"),
    ("5", r"\boxed{f(x) \to 5}"),
    ("4", r"\boxed{3 \equiv 4}"),
    ("4", r"\boxed{3 \cong 4}"),
    ("4", r"\boxed{3 \iff 4}"),
    ("4", r"\boxed{3 \cup 4}"),
    ("4", r"\boxed{3 \land 4}"),
    ("4", r"\boxed{3 \& 4}"),
    ("4", r"\boxed{3 \setminus 4}"),
    ("4", r"\boxed{3 \\ 4}"),
    ("4", r"\boxed{3 & 4}"),
    ("4", r"\boxed{\begin{cases} 3 \\ 4 \end{cases}}"),
    ("4", r"\boxed{3 \hspace{1cm} 4}"),
    ("4", r"\boxed{3 \enspace 4}"),
    ("4", r"\boxed{3 \colon 4}"),
    ("4", r"\boxed{3\big| 4}"),
    ("3", r"\boxed{3 \tag{4}}"),
    ("2", r"\boxed{a \Rightarrow 2}"),
]
TOP_LEVEL_RIGHT = [
    (r"\frac{1}{6}", r"\boxed{\frac{1}{6} \approx 0.1667}"),
    ("5", r"\boxed{x = 5}"),
    ("5", r"\boxed{2x = 10 \implies x = 5}"),
    ("5", r"\boxed{\therefore x = 5}"),
    ("3", r"\boxed{x \equiv 3 \pmod{5}}"),
    ("[2,5]", r"\boxed{x \in [2,5]}"),
    (r"(-\infty, 1) \cup (2, \infty)", r"\boxed{(-\infty, 1) \cup (2, \infty)}"),
    (r"(-\infty,1)\cup(2,\infty)", "Answer: (-∞, 1) ∪ (2, ∞)"),
    (r"\mathbb{R} \setminus \{0\}", r"\boxed{\mathbb{R} \setminus \{0\}}"),
    (r"\{x \mid x > 0\}", r"\boxed{\{x \mid x > 0\}}"),
    (
        r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
        r"\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}}",
    ),
    ("1", r"\boxed{\lim_{x \to 0} \frac{\sin x}{x}}"),
    ("3", r"\boxed{\left\lfloor \pi \right\rfloor}"),
    ("12", r"\boxed{12\hspace{1mm}\text{cm}}"),
    ("5", r"\boxed{5 \textdollar}"),
    (r"\frac{\pi}{2}", r"\boxed{\arccot 0}"),
    (r"x \to 5", r"\boxed{x \to 5}"),
    ("30", "The answer is ∠ABC = 30°."),
    (r"\emptyset", r"\boxed{∅}"),
]


@pytest.mark.parametrize("gold, completion", DROPPED_WRONG)
def test_a_value_math_verify_read_only_part_of_is_not_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", (gold, completion, verdict.detail)


@pytest.mark.parametrize("gold, completion", DROPPED_RIGHT)
def test_units_and_letters_of_the_gold_stay_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", (gold, completion, verdict.status, verdict.detail)


@pytest.mark.parametrize("gold, completion", TOP_LEVEL_WRONG)
def test_a_relation_or_connective_at_the_top_level_is_no_value(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", (gold, completion, verdict.detail)


@pytest.mark.parametrize("gold, completion", TOP_LEVEL_RIGHT)
def test_what_a_value_may_hold_at_its_top_level_stays_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", (gold, completion, verdict.status, verdict.detail)


# a worded answer is read by its result, the last number of its clause, as a capitalised one is
# (gold, completion, the value it states)
WORDED = [
    ("180", "Answer: after 3 hours, the distance is 180 km", "3"),
    ("41", "Final answer: after eating one of her 42 cookies she has 41.", "42"),
    ("41", "Final answer: of her 42 cookies, 41 remain.", "42"),
    ("41", "Final answer: there were 42 cookies and now 41 remain.", "42"),
    ("41", "Final answer: she had 42 cookies, so after eating one she has 41.", "42"),
    ("41", "Final answer: She had 42 cookies, so after eating one she has 41.", "42"),
    ("41", "The answer is that after eating one of her 42 cookies she has 41.", "42"),
    ("41", "#### from 42 cookies she keeps 41", "42"),
    ("45", "The answer is: in 10 years she will be 45", "10"),
    ("5", "The answer is: with 20 dollars she buys 5 toys", "20"),
    ("18", "#### she makes 18 dollars every 2 days", "2"),
    ("18", "#### she makes 18 dollars in 3 weeks", "3"),
    ("64", "The answer is she pays 64 dollars for 16 glasses.", "16"),
    ("4", "The answer is she needs 4 more boxes to reach 20.", "20"),
]


@pytest.mark.parametrize("gold, completion, other", WORDED)
def test_a_worded_answer_states_the_result_of_its_clause(gold, completion, other):
    assert MATH(completion, answer=gold).status == "ok", (gold, completion)
    assert MATH(completion, answer=other).status != "ok", (other, completion)


# two values joined by words math-verify reads as the first value
WORDS_WRONG = [
    (r"\frac{1}{2}", r"\boxed{\frac{1}{2} \text{ OR } \frac{2}{3}}"),
    (r"\sqrt{2}", r"\boxed{\sqrt{2} \textbf{ or } \sqrt{3}}"),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{2} \text{ vs } \frac{2}{3}}"),
    (r"\frac{\pi}{6}", r"\boxed{\frac{\pi}{6} \text{ or rather } \frac{\pi}{3}}"),
    (r"2\pi", r"\boxed{2\pi \text{ (}3\pi\text{)}}"),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{2} \text{ otherwise } \frac{2}{3}}"),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{2} \text{ to } \frac{2}{3}}"),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{2} \text{ or \frac{2}{3}}}"),
]
WORDS_RIGHT = [
    ("1, 2", r"\boxed{x = 1 \text{ or } x = 2}"),
    (r"\text{(B)}", r"\boxed{\textbf{(B)} 12}"),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{2} \text{ cup}}"),
    ("5", r"\boxed{5 \text{ apples}}"),
]


@pytest.mark.parametrize("gold, completion", WORDS_WRONG)
def test_values_joined_by_words_are_no_single_value(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status != "ok", (gold, completion, verdict.detail)


@pytest.mark.parametrize("gold, completion", WORDS_RIGHT)
def test_a_value_and_its_words_stay_ok(gold, completion):
    verdict = MATH(completion, answer=gold)
    assert verdict.status == "ok", (gold, completion, verdict.status, verdict.detail)
