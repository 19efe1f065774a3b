"""Penalties: values at the edges, the unit each one counts in, validation, pickling."""

import pickle

import pytest

from passband.verifiers import (
    Verdict,
    answer_hedging,
    length_cap,
    length_normalized,
    ngram_repetition,
    overlong,
    repeated_paragraphs,
)

OK, WRONG = Verdict.ok(), Verdict.wrong()


class CharPairTokenizer:
    """Stands in for a HF tokenizer: one token per two characters."""

    def encode(self, text, add_special_tokens=False):
        return [text[i : i + 2] for i in range(0, len(text), 2)]


@pytest.mark.parametrize(
    "length,expected", [(50, 0.0), (80, 0.0), (90, -0.5), (100, -1.0), (500, -1.0)]
)
def test_overlong_dapo_shape(length, expected):
    outcome = overlong(100, 20)("x" * length, OK)
    assert outcome.value == pytest.approx(expected)
    assert "chars" in outcome.detail


def test_units_tokens_from_num_tokens_or_tokenizer():
    p = overlong(100, 20)
    by_count = p("short", OK, num_tokens=90)
    assert by_count.value == pytest.approx(-0.5) and "90 tokens" in by_count.detail
    by_tokenizer = overlong(100, 20, tokenizer=CharPairTokenizer())("x" * 180, OK)
    assert by_tokenizer.value == pytest.approx(-0.5) and "tokens" in by_tokenizer.detail


def test_length_normalized_only_for_correct_answers():
    p = length_normalized(100, weight=0.5)
    assert p("x" * 90, OK).value == 0.0
    assert p("x" * 150, OK).value == pytest.approx(-0.25)
    assert p("x" * 400, OK).value == pytest.approx(-0.5)
    wrong = p("x" * 400, WRONG)
    assert wrong.value == 0.0 and "not applied" in wrong.detail


def test_length_cap_zeroes():
    assert length_cap(10)("x" * 11, OK).zero_total
    assert not length_cap(10)("x" * 10, OK).zero_total
    assert length_cap(10)("x", OK, num_tokens=11).zero_total


def test_ngram_repetition():
    looping = "the cat sat on the mat " * 30
    varied = " ".join(f"w{i}" for i in range(200))
    assert ngram_repetition(4)(looping, OK).value < -0.8
    assert ngram_repetition(4)(varied, OK).value == 0.0
    assert "words" in ngram_repetition(4)(varied, OK).detail
    assert "tokens" in ngram_repetition(4, tokenizer=CharPairTokenizer())(varied, OK).detail
    assert ngram_repetition(4)("too short", OK).value == 0.0


def test_ngram_repetition_window_finds_a_loop_at_the_end_of_a_long_answer():
    varied = " ".join(f"w{i}" for i in range(600))
    loop = " ".join(["the cat sat on the mat and then it slept ."] * 20)
    whole = ngram_repetition(4)(varied + " " + loop, OK)
    windowed = ngram_repetition(4, window=100)(varied + " " + loop, OK)
    assert whole.value > -0.1 and "25%" in whole.detail  # diluted by the varied start
    assert (
        windowed.value == -1.0 and "100%" in windowed.detail and "from word 611" in windowed.detail
    )
    # the same loop first, then the varied text: the window finds it wherever it sits
    assert ngram_repetition(4, window=100)(loop + " " + varied, OK).value == windowed.value
    # no loop anywhere: nothing, and a completion shorter than the window is measured whole
    assert ngram_repetition(4, window=100)(varied, OK).value == 0.0
    short = "the cat sat on the mat " * 10
    assert ngram_repetition(4, window=1000)(short, OK) == ngram_repetition(4)(short, OK)


def test_a_loop_longer_than_the_window_and_invisible_padding_are_still_repeats():
    # a review: a 100- to 300-word paragraph pasted 20 times read as 0% at window=100 (only
    # repeats inside the window counted), and zero-width marks made every repeat look new
    for period in (50, 100, 150, 300):
        para = " ".join(f"p{i}" for i in range(period))
        assert ngram_repetition(4, window=100)(" ".join([para] * 20), OK).value == -1.0, period
    para = "We compute the total by adding the two values carefully here ."
    tagged = "\n\n".join(" ".join(w + "\u200b" * k for w in para.split()) for k in range(20))
    assert repeated_paragraphs()(tagged, OK).value == -0.95
    assert ngram_repetition(4)(tagged, OK).value < -0.9
    for blank in ("\n\u00a0\n", "\n\u200b\n"):  # a "blank" line that holds a space or a mark
        assert repeated_paragraphs()(blank.join([para] * 5), OK).value == -0.8


def test_repeated_paragraphs():
    para = "Let us compute the sum of the first ten numbers carefully."
    text = "\n\n".join([para, "Something else entirely, another step.", para, para])
    outcome = repeated_paragraphs(weight=1.0)(text, OK)
    assert outcome.value == pytest.approx(-0.5) and "2 of 4" in outcome.detail
    assert repeated_paragraphs()("ok\n\nok\n\nok", OK).value == 0.0  # below min_chars


@pytest.mark.parametrize(
    "text,fires",
    [
        (r"So \boxed{3}.", False),
        (r"\boxed{3} and again \boxed{ 3 }", False),
        (r"\boxed{\frac{1}{2}}. The answer is 0.5.", False),
        ("#### 1,000\nThe answer is 1000.", False),
        (r"\boxed{3} or maybe \boxed{4}", True),
        ("The answer is 3.\nAnswer: 5", True),
        # the spellings the math verifier reads as an answer are all counted (an adversarial review)
        ("Final Answer: 41\nFinal Answer: 42", True),
        ("**Final Answer:** 41\n\n**Final Answer:** 42", True),
        ("#### 41\n #### 42", True),
        ("The answer is 41, or perhaps the answer is 42", True),
        ("The correct option is 41. The correct option is 42.", True),
        (r"\boxed 41 then \boxed{42}", True),
        # working inside <think> is not an answer; a box after "the answer is" is one statement
        (r"<think>maybe \boxed{41}? no</think>The answer is \boxed{42}.", False),
        ("The answer is 42.\n#### 42", False),
        # a second answer label on the same line (a new-user review)
        ("The answer is 18. Answer: 19", True),
        ("Answer: 18. Answer: 19", True),
        ("The answer is 18. Answer: 18", False),
    ],
)
def test_answer_hedging(text, fires):
    outcome = answer_hedging(1)(text, OK)
    assert (outcome.value < 0) == fires, outcome
    assert answer_hedging(1, zero_total=True)(text, OK).zero_total == fires


@pytest.mark.parametrize(
    "factory,kwargs,message",
    [
        (overlong, {"max_length": 10, "cache": 20}, "cache must be <="),
        (overlong, {"max_length": 0, "cache": 0}, "max_length must be a positive integer"),
        (length_normalized, {"target": 10, "weight": -1}, "weight must be a number >= 0"),
        (ngram_repetition, {"threshold": 1.0}, "threshold"),
        (ngram_repetition, {"window": 0}, "window must be a positive integer"),
        (length_normalized, {"target": 10, "weight": 1.5}, "weight must be at most 1"),
        (answer_hedging, {"max_distinct": 0}, "max_distinct"),
    ],
)
def test_validation_names_the_bad_value(factory, kwargs, message):
    with pytest.raises(ValueError, match=message):
        factory(**kwargs)


def test_picklable_with_readable_repr():
    for p in (
        overlong(100, 20),
        length_normalized(50),
        length_cap(9),
        ngram_repetition(),
        repeated_paragraphs(),
        answer_hedging(),
    ):
        clone = pickle.loads(pickle.dumps(p))
        assert repr(clone) == repr(p) and repr(p).startswith(p.name + "(")
    assert repr(overlong(100, 20)) == "overlong(max_length=100, cache=20, weight=1.0)"


def test_the_penalty_registry_holds_every_builtin_and_accepts_new_ones():
    from passband.verifiers import get_penalty, penalty_names, register_penalty

    assert penalty_names()[:6] == [
        "overlong",
        "length_cap",
        "length_normalized",
        "ngram_repetition",
        "repeated_paragraphs",
        "answer_hedging",
    ]
    assert get_penalty("overlong") is overlong
    with pytest.raises(ValueError, match="already registered"):
        register_penalty("overlong")(lambda: None)
    with pytest.raises(KeyError, match="Did you mean 'overlong'"):
        get_penalty("overlonng")

    @register_penalty("test_always_zero")
    def always_zero():
        return length_cap(10**9)

    try:
        assert (
            "test_always_zero" in penalty_names() and get_penalty("test_always_zero") is always_zero
        )
    finally:
        register_penalty("test_always_zero", replace=True)(always_zero)  # idempotent on reruns


def test_a_token_count_of_any_numeric_type_is_a_token_count():
    import numpy as np

    # np.int64(3000) and 3000.0 fell back to counting the characters of a short completion
    for n in (np.int64(120), 120.0, 120):
        assert length_cap(100)("short", OK, num_tokens=n).zero_total, n
    assert not length_cap(100)("short", OK, num_tokens=-5).zero_total  # not a count: characters


@pytest.mark.parametrize(
    "completion",
    [
        # a second answer the math verifier itself reads went uncounted (a review, 2026-12-04)
        "The answer is 17.\n\\boxed{18}",  # a box within 40 characters hid the phrase
        "The answer is 17 \\boxed{}\n\nHence \\boxed{18}",  # so did an empty box
        "\\boxed{17" + " " * 250 + "}.\n\nLet me re-check.\n\n\\boxed{18}",  # past 200 chars
        "Answer: 17 (my answer is 18)\n\n\\boxed{18}",  # the Answer: line was dropped whole
        "So \\boxed{18}.\n\nQuestion: check. Answer: 17",  # after a run-on marker
        "<think>work</think>The answer is \\boxed{17}.</think>Hence \\boxed{18}",  # 2nd </think>
        "The answer is 18 or 17.\n\\boxed{18}",  # words after the value that hold another one
    ],
)
def test_hedging_counts_every_answer_the_verifier_could_read(completion):
    from passband.verifiers import Reward

    reward = Reward.from_verifier("math", penalties=[answer_hedging()])
    verdict = reward(completion, answer="18")
    assert verdict.components["answer_hedging"] == -1.0, verdict.detail


@pytest.mark.parametrize(
    "completion",
    [
        "Answer: 18 apples\n\\boxed{18}",
        "Answer: $18^\\circ$ \\boxed{18}",
        "Answer: 18\\%\n\\boxed{18}",
        "Answer: (my answer is 18)",
        "The answer is $\\boxed{18}$.",
        "The answer is: **18**\n\nAnswer: 18",
        # the value, then words about it (a fourth review: each cost -1 beside the right box)
        "The answer is 18 \u2014 the number of cookies.\n\\boxed{18}",
        "The answer is 18: Sam has 18 cookies left.\n\\boxed{18}",
        "The answer is 3:45 PM.\n\\boxed{3:45}",
        # an option with its value, names with their values, the roots listed two ways
        "The answer is (C) 12.\n\n\\boxed{C}",
        "The answer is (C) 12.\n\n\\boxed{12}",
        "The answer is $(x, y) = (1, 2)$.\n\\boxed{(1, 2)}",
        "The answer is x = -4 or x = 1.\n\\boxed{-4, 1}",
        "The answer is x = 3.\n\\boxed{3}",
        # an exact value with its decimal, a number in words
        "The answer is $\\frac{2}{3} \\approx 0.667$.\n\\boxed{\\frac{2}{3}}",
        "The answer is one million.\n\\boxed{10^6}",
        "The answer is twenty-five apples.\n\\boxed{25}",
    ],
)
def test_one_answer_written_twice_is_not_hedging(completion):
    # the same value with a unit, a degree sign or a percent counted as a second answer and
    # took a clean right answer's reward away
    assert answer_hedging()(completion, OK).value == 0.0


@pytest.mark.parametrize(
    "completion",
    [
        "The answer is (C) 12.\n\n\\boxed{D}",
        "The answer is x = 3.\n\\boxed{4}",
        "The answer is $(x, y) = (1, 2)$.\n\\boxed{(2, 1)}",
        "The answer is x = -4 or x = 1.\n\\boxed{-4, 2}",
        "The answer is 12 or 13.\n\\boxed{12}",
        "The answer is 2/3 ≈ 0.667.\n\\boxed{0.5}",
        "The answer is twenty-five apples.\n\\boxed{26}",
        # a review (stop 37): two options with one value, and names with swapped values
        "The answer is (C) 12.\n\n\\boxed{(D) 12}",
        "The answer is 12.\n\\boxed{(C) 12}\nThe answer is (D) 12",
        "The answer is 12 or 13.\n\\boxed{12, 13}",
        "The answer is (x, y) = (1, 2).\n\n\\boxed{(y, x) = (1, 2)}",
        "The answer is x = 1, y = 2.\n\n\\boxed{x = 2, y = 1}",
    ],
)
def test_two_answers_set_side_by_side_are_still_hedging(completion):
    assert answer_hedging()(completion, OK).value == -1.0


def test_a_loop_with_varied_punctuation_and_case_is_still_a_repeat():
    """Stop 35: punctuation and case made each copy of a looped sentence look new."""
    marks = [".", "!", ",", ";", "?", "...", ":", "!!"]
    loop = " ".join(
        f"{'The' if k % 2 else 'the'} answer might be twelve{marks[k % len(marks)]}"
        for k in range(40)
    )
    assert ngram_repetition()(loop, OK).value < -0.5
    paragraphs = "\n\n".join(
        f"Let me check the sum again{marks[k % len(marks)]} It is twelve" for k in range(6)
    )
    assert repeated_paragraphs()(paragraphs, OK).value < -0.5
    varied = "The cat sat on the mat. A dog ran in the park! Birds sang: 3+4=7, then 5*6=30."
    assert ngram_repetition()(varied, OK).value == 0.0


@pytest.mark.parametrize(
    "completion",
    ["<think>x</think>\n\\boxed{12}\n<answer>13</answer>", "\\boxed{12}\n\n**Final Answer**\n13"],
)
def test_hedging_reads_answer_tags_and_headings_as_the_verifier_does(completion):
    """Stop 35: the math verifier reads <answer> tags and a heading's next line as answers, so
    the hedging count must too (it saw one answer in each)."""
    assert answer_hedging()(completion, OK).value == -1.0
    assert answer_hedging()("<answer>12</answer>\n\n**Final Answer**\n\\boxed{12}", OK).value == 0


def test_hedging_over_hundreds_of_boxes_is_fast():
    """Stop 35: each answer was compared with every distinct one (1,000 boxes: 40 s, a masked
    timeout under verify_batch); the penalty stops once the cap is passed."""
    import time

    text = " ".join(f"\\boxed{{{i}}}" for i in range(5000)) + " \\boxed{12}"
    start = time.perf_counter()
    assert answer_hedging()(text, OK).value == -1.0
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "looping",
    [
        "答案是42。" + "我需要再检查一下这个计算是否正确。" * 50,
        "=" * 3000,
        "checkcheckcheck" * 400,
    ],
)
def test_loops_without_spaces_are_repetition(looping):
    """Stop 36 (a review): split on spaces alone, these were one word each and read as 0%."""
    from passband.verifiers.penalties import ngram_repetition
    from passband.verifiers.verdict import Verdict

    assert ngram_repetition()(looping, Verdict.ok("x")).value < -0.9
    honest = (
        "我们先计算总数：每盒有12支铅笔，一共有5盒，所以总共有60支铅笔。"
        "然后减去用掉的15支，剩下45支。最后平均分给3个同学，每人得到15支。答案是15。"
    )
    assert ngram_repetition()(honest, Verdict.ok("x")).value == 0.0


_LOOP_LINE = "Let me recompute the total number of apples carefully."


@pytest.mark.parametrize(
    "looping",
    [
        "\n".join([_LOOP_LINE] * 20),
        "\n---\n".join(["Para one is here and long enough to count."] * 5),
        "\n\n".join(f"Step {i}: recompute the total number of apples." for i in range(10)),
        "\n\n".join(f"Recompute the total number of apples carefully ({i})" for i in range(10)),
        "\n".join(f"- recompute the total number of apples carefully {''}" for _ in range(10)),
    ],
)
def test_repeated_paragraphs_sees_lines_rules_and_numbering(looping):
    """Stop 36 (a review): a line pasted with single newlines, copies between rules, and copies
    numbered "Step i:" or "(i)" read as 0 repeated."""
    from passband.verifiers.penalties import repeated_paragraphs
    from passband.verifiers.verdict import Verdict

    assert repeated_paragraphs()(looping, Verdict.ok("x")).value <= -0.8
    honest = "\n\n".join(
        f"Step {i}: add {i} and {i + 1} to get {2 * i + 1} apples in the basket." for i in range(6)
    )
    assert repeated_paragraphs()(honest, Verdict.ok("x")).value == 0.0
