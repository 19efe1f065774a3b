"""TRL reward functions in passband: detected by their ``completions`` parameter, called once per
completion with the row's columns as one-item lists, read like any reward's value."""

from __future__ import annotations

import pickle

import pytest

from passband.curriculum._success import describe_success_rule, with_success_rule
from passband.verifiers import (
    Reward,
    as_trl_reward,
    from_trl_reward,
    is_trl_reward,
    verify_batch,
)


def trl_exact(completions, answer, **kwargs):
    return [float(c.strip() == str(a)) for c, a in zip(completions, answer)]


def trl_with_prompts(prompts, completions, **kwargs):
    return [1.0 if p and c.startswith(p[0]) else 0.0 for p, c in zip(prompts, completions)]


def trl_chat(completions, **kwargs):
    return [float(c[0]["content"] == "yes") for c in completions]


def trl_none(completions, **kwargs):
    return [None for _ in completions]


def trl_too_many(completions, **kwargs):
    return [1.0, 0.0]


def passband_exact(completion, answer, **row):
    return float(completion.strip() == str(answer))


class TrlClass:
    def __call__(self, completions, **kwargs):
        return [0.25 for _ in completions]


def test_detection_by_the_completions_parameter():
    assert (
        is_trl_reward(trl_exact) and is_trl_reward(trl_with_prompts) and is_trl_reward(TrlClass())
    )
    assert not is_trl_reward(passband_exact)
    assert not is_trl_reward("exact") and not is_trl_reward(Reward({"c": "exact"}))
    assert not is_trl_reward(len)  # no signature to read
    assert not is_trl_reward(from_trl_reward(trl_exact))  # already adapted


def test_one_completion_per_call_with_columns_as_lists():
    seen = {}

    def spy(prompts, completions, answer, level, **kwargs):
        seen.update(prompts=prompts, completions=completions, answer=answer, level=level, kw=kwargs)
        return [0.75]

    fn = from_trl_reward(spy)
    assert fn("42", prompt="6*7=", answer="42", level=2, num_tokens=3) == 0.75
    assert seen == {
        "prompts": ["6*7="],
        "completions": ["42"],
        "answer": ["42"],
        "level": [2],
        "kw": {},  # passband's num_tokens is not a column
    }
    assert fn.__name__ == "spy"


def test_a_conversational_row_gets_message_completions():
    chat = [{"role": "user", "content": "ok?"}]
    fn = from_trl_reward(trl_chat)
    assert fn("yes", messages=chat) == 1.0 and fn("no", prompt=chat) == 0.0


def test_values_read_as_any_rewards_and_bad_shapes_are_errors():
    checked = with_success_rule(trl_exact, 0.5)  # what training, score and verify apply
    assert checked("7", answer="7").passed and not checked("8", answer="7").passed
    assert checked("8", answer="7").status == "wrong"
    shaped = with_success_rule(TrlClass(), 0.5)("x")  # a plain number under the threshold
    assert shaped.score == 0.25 and shaped.status == "wrong"
    verdicts = verify_batch(
        with_success_rule(trl_none, 0.5), ["a"], [{}], timeout=10, workers=1
    )  # TRL's "not applicable" is not a zero: not a trial
    assert verdicts[0].status == "error" and not verdicts[0].checkable
    bad = verify_batch(with_success_rule(trl_too_many, 0.5), ["a"], [{}], timeout=10, workers=1)
    assert bad[0].status == "error" and "one value per completion" in bad[0].detail
    assert "returned 2 values" in bad[0].detail


def test_a_list_from_an_undetected_batch_reward_names_the_fix():
    def batch(texts, **kwargs):  # a batch reward whose parameter is not called completions
        return [1.0 for _ in texts]

    verdict = verify_batch(with_success_rule(batch, 0.5), ["a"], [{}], timeout=10, workers=1)[0]
    assert verdict.status == "error" and "from_trl_reward" in verdict.detail


def test_the_success_rule_line_says_so_and_the_adapter_pickles():
    assert "TRL reward function called per completion" in describe_success_rule(trl_exact, 0.5)
    assert "TRL" not in describe_success_rule(passband_exact, 0.5)
    fn = pickle.loads(pickle.dumps(from_trl_reward(trl_exact)))
    assert fn("3", answer=3) == 1.0


def test_as_trl_reward_round_trips_to_the_reward_it_wraps():
    composed = Reward({"correct": "exact"})
    assert from_trl_reward(as_trl_reward(composed)) is composed
    with pytest.raises(TypeError, match="needs a callable"):
        from_trl_reward(42)


def test_prescoring_with_a_trl_reward_counts_as_its_per_completion_twin(tmp_path):
    from passband.curriculum.prescore import prescore

    rows = [{"prompt": f"q{i}", "answer": str(i % 3)} for i in range(6)]

    def generate(prompts, n):  # the same answers for every prompt: 0, 1, 2, 0
        return [[str(j % 3) for j in range(n)] for _ in prompts]

    counts = {}
    for fn in (passband_exact, trl_exact):
        out = tmp_path / f"{fn.__name__}.jsonl"
        result = prescore(rows, generate, fn, out_path=out, progress=False, k=4)
        counts[fn.__name__] = [(r["passes"], r["trials"]) for r in result.rows]
    assert counts["trl_exact"] == counts["passband_exact"]
    assert counts["trl_exact"] == [(2, 4), (1, 4), (1, 4)] * 2


def test_a_reward_term_written_for_trl_is_called_per_completion():
    composed = Reward({"correct": trl_exact, "bonus": (TrlClass(), 0.5)})
    right, wrong = composed("7", answer="7"), composed("8", answer="7")
    assert right.passed and right.score == pytest.approx(1.125)  # 1 + 0.5 x 0.25
    assert not wrong.passed and wrong.score == pytest.approx(0.125)
