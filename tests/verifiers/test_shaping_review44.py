"""format, exact, penalties and Reward after the stop-44 review: each case failed before it.

``repeated_paragraphs`` missed copies numbered "**Step 3:**", "Attempt 3:", "a)" or "[3]"; an
``<answer>`` of hidden HTML passed ``format``; ``exact`` refused "12.0" for a float gold 12.0; a
``length_normalized`` heavier than the primary term scored a long right answer below a wrong one;
a term's ``sys.exit`` escaped a ``Reward`` called directly.
"""

import pytest

from passband.verifiers import Reward, Verdict, get, length_normalized, repeated_paragraphs

PARA = "Let me double-check the computation carefully to make sure nothing is off here."


@pytest.mark.parametrize(
    "form",
    [
        "Step {i}: {p}",
        "**Step {i}:** {p}",
        "Attempt {i}: {p}",
        "__Try #{i} -__ {p}",
        "{a}) {p}",
        "({a}) {p}",
        "[{i}] {p}",
        "{p} [{i}]",
        "{p} ({i})",
    ],
)
def test_numbered_copies_of_a_paragraph_are_repeats(form):
    text = "\n\n".join(form.format(i=i, a=chr(97 + i), p=PARA) for i in range(10))
    assert repeated_paragraphs()(text, Verdict.ok()).value == pytest.approx(-0.9)


def test_paragraphs_that_differ_in_their_numbers_are_not_repeats():
    text = "\n\n".join(
        [
            "First compute 3 + 4 = 7 for the apples in the basket.",
            "Then compute 5 + 6 = 11 for the pears in the basket.",
            "I think the answer is the sum of both counts here.",
        ]
    )
    assert repeated_paragraphs()(text, Verdict.ok()).value == 0.0


def test_the_readme_reward_does_not_pay_a_bold_numbered_loop():
    reward = Reward.from_verifier("math", penalties=[repeated_paragraphs()])
    loop = (
        "\n\n".join(f"**Step {i}:** {PARA}" for i in range(1, 30))
        + "\n\nThe answer is \\boxed{18}."
    )
    assert reward(loop, answer="18").score < 0.1


@pytest.mark.parametrize(
    "inner",
    [
        "<!-- unclosed comment",
        "<script>1</script>",
        "<style>p{}</style>",
        "<?x?>",
        "<![CDATA[]]>",
        "<span hidden>x</span>",
        '<div style="display: none">7</div>',
        "<template>7</template>",
    ],
)
def test_an_answer_of_html_that_shows_nothing_is_empty(inner):
    verdict = get("format")(f"<think>reasoning</think><answer>{inner}</answer>")
    assert verdict.status == "wrong" and "empty" in verdict.detail


@pytest.mark.parametrize(
    "inner",
    [
        "42",
        "<b>42</b>",
        "a < b",
        "x<y and y>z",
        "<p hidden>1</p>2",
        '<div style="color:red">5</div>',
    ],
)
def test_an_answer_that_shows_something_is_not_empty(inner):
    assert get("format")(f"<think>reasoning</think><answer>{inner}</answer>").status == "ok"


@pytest.mark.parametrize(
    ("completion", "gold", "status"),
    [
        ("12.0", 12.0, "ok"),
        ("12", 12.0, "ok"),
        ("0.00001", 1e-05, "ok"),
        ("1e-05", 1e-05, "ok"),
        ("12.5", 12.0, "wrong"),
        ("12.00001", 12.0, "wrong"),
        ("12.0", "12", "wrong"),  # a text gold is matched as text
    ],
)
def test_a_float_gold_matches_the_ways_it_is_written(completion, gold, status):
    assert get("exact")(completion, answer=gold).status == status


def test_a_length_penalty_heavier_than_the_primary_term_is_refused():
    with pytest.raises(ValueError, match="at most 0.5"):
        Reward({"correct": ("math", 0.5)}, penalties=[length_normalized(target=100, weight=1.0)])
    reward = Reward(
        {"correct": ("math", 0.5)}, penalties=[length_normalized(target=100, weight=0.5)]
    )
    right_long, wrong_short = (
        "x " * 200 + "The answer is \\boxed{18}.",
        "The answer is \\boxed{17}.",
    )
    assert reward(right_long, answer="18").score >= reward(wrong_short, answer="18").score


def test_a_term_that_exits_is_an_error_not_the_end_of_the_caller():
    def quits(completion, **_):
        raise SystemExit(3)

    verdict = Reward({"correct": quits})("x")
    assert verdict.status == "error" and "SystemExit" in verdict.detail


# A regression review of the fixes above found these; each failed on the first fixes.
@pytest.mark.parametrize(
    "labels", [("Room 101:", "Room 102:"), ("Test 1:", "Test 2:"), ("Q1.", "Q2.")]
)
def test_distinct_items_with_labels_are_not_numbered_copies(labels):
    text = "\n\n".join(f"{label} {PARA}" for label in labels)
    assert repeated_paragraphs()(text, Verdict.ok()).value == 0.0


def test_a_word_of_roman_letters_is_not_a_numeral():
    text = "Civic. " + PARA + "\n\nCivil. " + PARA
    assert repeated_paragraphs()(text, Verdict.ok()).value == 0.0


@pytest.mark.parametrize("gold, written", [("f32", "0.1"), ("fraction", "1/3")])
def test_a_gold_is_also_matched_as_it_prints(gold, written):
    from fractions import Fraction

    np = pytest.importorskip("numpy")
    value = np.float32(0.1) if gold == "f32" else Fraction(1, 3)
    assert get("exact")(written, answer=value).status == "ok"


def test_length_penalties_together_may_not_outweigh_the_primary_term():
    with pytest.raises(ValueError, match="weigh 1.6 together"):
        Reward(
            {"correct": "math"},
            penalties={
                "a": length_normalized(target=10, weight=0.8),
                "b": length_normalized(target=10, weight=0.8),
            },
        )
