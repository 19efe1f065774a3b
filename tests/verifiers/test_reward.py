"""Reward composition: weights, gates, penalties, primary status, field mapping, pickling."""

import pickle

import pytest

from passband.verifiers import (
    Reward,
    Verdict,
    answer_hedging,
    exact_match,
    length_cap,
    overlong,
    tag_format,
    verify_batch,
)

ANSWER = exact_match(pattern=r"<answer>(.*?)</answer>")


def _reward(**options):
    return Reward(
        {"correct": ANSWER, "format": (tag_format("think", "answer"), 0.2)},
        gates=["format"],
        penalties=[overlong(100, 20), answer_hedging()],
        fields={"answer": "gold"},
        **options,
    )


def test_total_and_components_by_name():
    v = _reward()("<think>2+2</think><answer>4</answer>", gold="4")
    assert v.passed and v.score == pytest.approx(1.2)
    assert dict(v.components) == {
        "correct": 1.0,
        "format": 0.2,
        "overlong": 0.0,
        "answer_hedging": 0.0,
    }


def test_a_penalty_that_took_nothing_reads_zero_not_minus_zero():
    """The README's composed reward showed ``'repeated_paragraphs': -0.0``."""
    from passband.verifiers import repeated_paragraphs

    reward = Reward.from_verifier("math", penalties=[overlong(512, 128), repeated_paragraphs()])
    v = reward("so the answer is \\boxed{18}", answer="18", num_tokens=300)
    assert [repr(v.components[k]) for k in ("overlong", "repeated_paragraphs")] == ["0.0"] * 2


def test_gate_failure_decides_and_status_is_wrong():
    v = _reward(gate_value=-1.0)("<answer>4</answer>", gold="4")
    assert v.status == "wrong" and v.score == -1.0 and "gate 'format'" in v.detail
    assert set(v.components) == {"correct", "format", "overlong", "answer_hedging"}


def test_primary_status_not_shaped_score_decides_passed():
    wrong = _reward()("<think>x</think><answer>5</answer>", gold="4")
    assert wrong.status == "wrong" and wrong.score == pytest.approx(
        0.2
    )  # format bonus, still not passed
    long_right = _reward()("<think>" + "x" * 200 + "</think><answer>4</answer>", gold="4")
    assert long_right.passed and long_right.score == pytest.approx(1.2 - 1.0)
    assert "overlong" in long_right.detail and "chars" in long_right.detail


def test_num_tokens_reaches_penalties_not_verifiers():
    seen = {}
    reward = Reward({"spy": _Spy(seen)}, penalties=[length_cap(10)])
    v = reward("abc", answer="1", num_tokens=11)
    assert "num_tokens" not in seen["kwargs"] and v.score == 0.0
    assert reward("abc", answer="1", num_tokens=5).score == 1.0


def test_a_reward_nested_as_a_term_gets_the_token_count_for_its_own_penalties():
    """The outer Reward popped num_tokens, so the inner one's penalties counted characters."""
    inner = Reward({"spy": _Spy({})}, penalties=[length_cap(10)])
    outer = Reward({"task": inner, "also": (_Spy({}), 0.0)})
    assert outer("abc", answer="1", num_tokens=11).score == 0.0  # 11 tokens over the cap of 10
    assert outer("abc", answer="1", num_tokens=5).score == 1.0
    assert outer("a" * 50, answer="1").score == 0.0  # no count given: characters, as before


class _Spy:
    def __init__(self, seen):
        self.seen = seen

    def __call__(self, completion, **kwargs):
        self.seen["kwargs"] = kwargs
        return Verdict.ok()


def test_terms_get_only_fields_they_accept_and_errors_are_contained():
    def strict(completion, answer):  # no **kwargs: extra row columns must not reach it
        return completion == answer

    def broken(completion, **reference):
        raise RuntimeError("boom")

    reward = Reward({"strict": strict, "broken": (broken, 0.5)})
    v = reward("4", answer="4", question="2+2?", id=7)
    assert v.components["strict"] == 1.0  # the strict term ran with only the field it takes
    # a term that could not judge leaves no total to train on: the sample is masked, not scored
    # as if that term gave 0 (a review: a completion escaped a negative term by making it fail)
    assert v.status == "error" and not v.checkable and "'broken'" in v.detail


def test_a_negative_term_cannot_be_escaped_by_making_its_check_time_out():
    from passband.verifiers import regex_format

    hedge = regex_format(r"(?:a|aa)+$|I think", fullmatch=False, timeout=0.5)
    reward = Reward({"correct": "math", "hedge_phrase": (hedge, -0.5)})
    assert reward("I think \\boxed{18}", answer="18").score == 0.5
    blown = reward("a" * 40 + "c I think \\boxed{18}", answer="18")
    assert blown.status == "timeout" and not blown.checkable and blown.score != 1.0


def test_a_hard_cap_never_raises_a_negative_total():
    from passband.verifiers import length_cap

    # a wrong answer at -1 rose to 0 by running past the cap (a review)
    reward = Reward.from_verifier("math", penalties=[overlong(600, 200), length_cap(2000)])
    wrong = "So \\boxed{17}. " + "x" * 1900
    assert reward(wrong, answer="18").score == -1.0
    assert reward(wrong + "y" * 300, answer="18").score == -1.0  # past the cap: still -1
    right = "So \\boxed{18}. " + "x" * 2100
    assert reward(right, answer="18").score == 0.0  # the cap takes a right answer's reward


def test_error_in_primary_keeps_status_for_masking():
    v = Reward.from_verifier("json_schema")('{"a": 1}', schema="{broken")
    assert v.status == "error" and not v.checkable


def test_construction_errors_name_the_problem():
    with pytest.raises(ValueError, match="at least one term"):
        Reward({})
    with pytest.raises(ValueError, match="gate 'fmt' is not a term"):
        Reward({"correct": "exact"}, gates=["fmt"])
    with pytest.raises(KeyError, match="Known verifiers"):
        Reward({"correct": "no_such_verifier"})
    with pytest.raises(ValueError, match="two penalties named 'overlong'"):
        Reward({"correct": "exact"}, penalties=[overlong(10, 5), overlong(20, 5)])


def test_picklable_readable_and_runs_in_verify_batch():
    reward = _reward()
    assert "gates=['format']" in repr(reward) and "overlong(max_length=100" in repr(reward)
    assert repr(pickle.loads(pickle.dumps(reward))) == repr(reward)
    completions = [
        "<think>a</think><answer>4</answer>",
        "<answer>4</answer>",
        r"<think>\boxed{1} \boxed{2}</think><answer>4</answer>",  # exploring, then one answer
        r"<think>a</think><answer>4 \boxed{1} or \boxed{4}</answer>",  # two answers stated
    ]
    verdicts = verify_batch(reward, completions, {"gold": "4"}, timeout=10, workers=2)
    assert [v.status for v in verdicts][:3] == ["ok", "wrong", "ok"]
    assert verdicts[2].components["answer_hedging"] == 0.0  # the reasoning's boxes are not answers
    assert verdicts[3].components["answer_hedging"] == -1.0


def test_failing_the_gate_never_escapes_a_penalty():
    """A wrong, unformatted, overlong answer must not outscore a right, formatted, overlong one."""
    from passband.verifiers import overlong, tag_format

    reward = Reward(
        terms={"correct": "math", "format": (tag_format("think", "answer"), 0.1)},
        gates=["format"],
        penalties=[overlong(512, 128)],
    )
    right = reward("<think>6*7</think><answer>\\boxed{42}</answer>", answer="42", num_tokens=520)
    skipped = reward("\\boxed{41}", answer="42", num_tokens=520)
    assert skipped.status == "wrong" and skipped.components["overlong"] == -1.0
    assert skipped.score == -1.0 < right.score
    assert reward("\\boxed{41}", answer="42", num_tokens=10).score == 0.0  # gate_value, no penalty


def test_a_reward_cannot_be_infinite_nor_raise_on_a_term_or_penalty_out_of_range():
    """A second review (2026-12-04): a custom term returning inf made a wrong answer's total inf,
    a penalty returning a plain float raised AttributeError, inf or NaN weights raised at call
    time, and a Reward whose every term is a gate raised a bare StopIteration."""
    from passband.verifiers import Verdict

    with pytest.raises(ValueError, match="finite"):
        Reward({"a": ("exact", float("inf"))})
    with pytest.raises(ValueError, match="finite"):
        Reward({"a": "exact"}, gate_value=float("nan"))
    with pytest.raises(ValueError, match="primary"):
        Reward({"a": "exact", "b": "exact"}, gates=["a", "b"])
    huge = Reward({"a": "exact", "b": (lambda c, **_: 1e308, 10.0)})
    verdict = huge("5", answer="4")
    assert verdict.status == "error" and verdict.score == 0.0 and "total is inf" in verdict.detail

    class PlainFloat:
        def __call__(self, completion, verdict, num_tokens=None):
            return 0.5

    verdict = Reward({"a": "exact"}, penalties={"p": PlainFloat()})("4", answer="4")
    assert verdict.status == "error" and "penalty 'p' raised" in verdict.detail
    assert Verdict(1.0, "ok").score == 1.0


def test_repeated_paragraphs_are_found_with_windows_line_endings():
    from passband.verifiers.penalties import repeated_paragraphs

    text = "The answer is 4 because two and two make four.\r\n\r\n" * 10
    lf = Reward({"a": "exact"}, penalties=[repeated_paragraphs()])(
        text.replace("\r", ""), answer="x"
    )
    crlf = Reward({"a": "exact"}, penalties=[repeated_paragraphs()])(text, answer="x")
    assert crlf.components == lf.components and min(crlf.components.values()) < 0


def _shaped_low(completion, **_):
    return 0.1


def test_a_plain_number_passes_at_the_default_success_threshold_everywhere():
    from passband.verifiers import verify_batch

    low = Reward({"a": _shaped_low})("no")
    assert (low.score, low.passed) == (0.1, False)  # it passed at any score above 0
    assert Reward({"a": lambda c, **_: 0.5})("yes").passed
    (batched,) = verify_batch(_shaped_low, ["no"], [{}], timeout=5, workers=1)
    assert (batched.score, batched.status) == (0.1, "wrong")


def test_length_normalized_beside_a_partial_credit_primary_is_refused():
    """A long right program scored 0.5 against 0.75 for a short one failing one of four asserts."""
    from passband.verifiers import code_verifier, length_normalized

    with pytest.raises(ValueError, match="gives partial credit to wrong ones"):
        Reward.from_verifier(code_verifier(partial_credit=True), penalties=[length_normalized(10)])
    Reward.from_verifier(code_verifier(), penalties=[length_normalized(10)])  # all or nothing: fine


def test_verdicts_without_components_share_one_empty_mapping():
    """Each plain verdict allocated two dicts and a proxy: a 2,000-item batch then set off a full
    garbage collection over the whole process inside verify_batch (bench_verify_batch.py)."""
    import pickle

    from passband.verifiers import Verdict

    a, b = Verdict.ok(), Verdict(0.0, "wrong", "x")
    assert a.components is b.components and dict(a.components) == {}
    given = {"t": 1.0}
    c = Verdict(1.0, "ok", "", given)
    given["t"] = 2.0  # copied, not shared
    assert dict(c.components) == {"t": 1.0} and c.components is not a.components
    assert (
        pickle.loads(pickle.dumps(c)) == c and dict(pickle.loads(pickle.dumps(a)).components) == {}
    )
