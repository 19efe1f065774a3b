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
from passband.verifiers._coerce import as_verdict

# The rewards defined inside tests cannot be sent to worker processes: verify_batch scores them
# here, and says so with a warning (the module-level ones reach workers when imported by name).
pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")


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


def np_exact(completion, answer="", **row):
    import numpy as np

    return np.bool_(completion.strip() == answer)


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


# --- the first review's findings, one test each ---------------------------------------------


def trl_repeats_the_question(prompts, completions, **kwargs):
    return [float(c[0]["content"] == p[-1]["content"]) for p, c in zip(prompts, completions)]


def test_an_sft_rows_reference_answer_is_not_part_of_the_prompt():
    fn = with_success_rule(trl_repeats_the_question, 0.5)
    sft = [{"role": "user", "content": "What is 2+5?"}, {"role": "assistant", "content": "7"}]
    assert fn("What is 2+5?", messages=sft).passed  # the prompt's last message is the user's
    assert not fn("7", messages=sft).passed


def test_numpy_and_tensor_values_are_numbers():
    import numpy as np
    import torch

    def close(completions, answer, **kwargs):
        return [
            np.isclose(float(c), float(a)) if c[0].isdigit() else 0.0
            for c, a in zip(completions, answer)
        ]

    def as_array(completions, **kwargs):
        return np.array([0.75 for _ in completions], dtype=np.float32)

    def as_tensor(completions, **kwargs):
        return [torch.tensor(0.25) for _ in completions]

    checked = with_success_rule(close, 0.5)
    verdicts = [as_verdict(checked(c, answer="7")) for c in ("7", "7.0", "abc", "8")]
    assert [v.status for v in verdicts] == ["ok", "ok", "wrong", "wrong"]
    high = with_success_rule(as_array, 0.7)("x")  # the configured threshold decides, not 0.5
    assert high.passed and high.score == pytest.approx(0.75)
    low = with_success_rule(as_tensor, 0.2)("x")
    assert low.passed and low.score == pytest.approx(0.25)


def test_a_passband_reward_reading_a_completions_column_is_not_trl_style():
    def agrees_with_refs(response, completions, **row):
        return float(response in completions)

    def trl_after_prompts(prompts, completions, **kwargs):
        return [1.0 for _ in completions]

    assert not is_trl_reward(agrees_with_refs) and is_trl_reward(trl_after_prompts)
    assert with_success_rule(agrees_with_refs, 0.5)("a", completions=["a", "b"]).passed


def test_as_trl_rewards_fields_and_the_threshold_survive_the_round_trip():
    fn = as_trl_reward(Reward({"correct": "exact"}), fields={"answer": "solution"})
    back = from_trl_reward(fn)
    assert isinstance(back, Reward) and back.fields == {"answer": "solution"}
    assert back("4", solution="4").passed and not back("5", solution="4").passed
    shaped = as_trl_reward(TrlClass())  # a plain 0.25: the success rule's threshold decides
    assert with_success_rule(shaped, 0.2)("x").passed
    assert not with_success_rule(shaped, 0.5)("x").passed


def test_an_async_trl_reward_is_awaited():
    async def slow_exact(completions, answer, **kwargs):
        return [float(c == a) for c, a in zip(completions, answer)]

    assert with_success_rule(slow_exact, 0.5)("3", answer="3").passed
    assert not with_success_rule(slow_exact, 0.5)("4", answer="3").passed


def test_prescoring_gives_a_trl_reward_the_prompt(tmp_path):
    from passband.curriculum.prescore import prescore

    rows = [{"prompt": f"say {i}", "answer": str(i)} for i in range(3)]

    def generate(prompts, n):  # answers that repeat the prompt's last word
        return [[p.split()[-1]] * n for p in prompts]

    def trl_prompt_word(prompts, completions, **kwargs):
        return [float(p.split()[-1] == c) for p, c in zip(prompts, completions)]

    result = prescore(
        rows, generate, trl_prompt_word, out_path=tmp_path / "s.jsonl", progress=False, k=4
    )
    assert [(r["passes"], r["trials"]) for r in result.rows] == [(4, 4)] * 3


# --- the regression review's findings -----------------------------------------------------


def test_a_passband_reward_wrapping_a_trl_one_with_functools_wraps_stays_passband():
    import functools

    @functools.wraps(trl_exact)
    def wrapped(completion, **row):
        return trl_exact([completion], [row["answer"]])[0]

    assert not is_trl_reward(wrapped)
    assert with_success_rule(wrapped, 0.5)("5", answer="5").passed


def test_only_numpy_and_torch_numbers_become_numbers():
    import numpy as np

    from passband.verifiers._coerce import plain_value

    for odd in (np.ma.array(1.0, mask=True), np.ma.masked, np.datetime64(1, "ns"), np.array("7")):
        assert plain_value(odd) is odd and as_verdict(odd).status == "error"

    class Looks:  # shape () and item(), but not an array library's number
        shape = ()

        def item(self):
            return 1.0

    assert as_verdict(Looks()).status == "error"
    assert plain_value(np.complex64(1)) == np.complex64(1)  # a complex number is no score


def test_an_as_trl_reward_function_is_recorded_by_its_primary_term():
    from passband.curriculum._success import success_source

    fn = as_trl_reward(Reward({"correct": "exact"}))
    assert success_source(from_trl_reward(fn)) == "exact"


def test_prescoring_strips_an_sft_rows_answer_and_leaves_a_completion_column_out(tmp_path):
    from passband.curriculum.prescore import prescore

    rows = [
        {
            "messages": [
                {"role": "user", "content": f"say {i}"},
                {"role": "assistant", "content": str(i)},
            ],
            "completion": str(i),  # TRL's prompt-completion data keeps the answer here
        }
        for i in range(3)
    ]
    asked = []

    def generate(prompts, n):  # what the model is asked: never the reference answer
        asked.extend(prompts)
        return [[p[-1]["content"].split()[-1]] * n for p in prompts]

    def trl_saw(prompts, completions, **kwargs):
        assert "completion" not in kwargs and prompts[0][-1]["role"] == "user"
        return [1.0 for _ in completions]

    out = tmp_path / "s.jsonl"
    result = prescore(
        rows,
        generate,
        trl_saw,
        out_path=out,
        progress=False,
        k=2,
        first=2,
        prompt_column="messages",
    )
    assert [(r["passes"], r["trials"]) for r in result.rows] == [(2, 2)] * 3
    assert asked and all(p[-1]["role"] == "user" for p in asked)


# --- the third review's findings --------------------------------------------------------


def test_a_trl_function_behind_a_plain_decorator_is_still_one():
    import functools

    def logged(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            return fn(*args, **kwargs)

        return inner

    assert is_trl_reward(logged(trl_exact))
    assert with_success_rule(logged(trl_exact), 0.5)("2", answer="2").passed


def test_pre_scores_and_training_name_a_trl_reward_alike():
    from passband.curriculum._success import success_source
    from passband.verifiers import register

    register("test_trl_named_exact", replace=True)(trl_exact)
    for raw in (trl_exact, as_trl_reward(Reward({"correct": "exact"}))):
        assert success_source(raw) == success_source(from_trl_reward(raw))
    assert success_source(from_trl_reward(trl_exact)) == "test_trl_named_exact"
    assert success_source(as_trl_reward(Reward({"correct": "exact"}))) == "exact"


def test_check_verifier_takes_trl_functions_and_numpy_numbers():
    from passband.verifiers.testing import check_verifier

    assert check_verifier(np_exact, {"answer": "1"}).ok
    assert check_verifier(trl_exact, {"answer": "1"}).ok


def test_prescoring_keeps_a_prompts_assistant_prefill_as_training_does(tmp_path):
    from passband.curriculum.prescore import prescore

    prefill = [
        {"role": "user", "content": "Name a prime."},
        {"role": "assistant", "content": "It is"},
    ]
    rows = [{"prompt": prefill, "conv": prefill, "answer": "7"}]
    asked = []

    def generate(prompts, n):
        asked.extend(prompts)
        return [["7"] * n for _ in prompts]

    kw = dict(progress=False, k=2, first=2)
    prescore(rows, generate, "exact", out_path=tmp_path / "a.jsonl", **kw)
    prescore(rows, generate, "exact", out_path=tmp_path / "b.jsonl", messages_column="conv", **kw)
    assert asked == [
        prefill,
        prefill[:1],
    ]  # a prompt column as it is; SFT messages without the answer


def test_a_dataset_column_named_completion_ids_is_not_taken_for_token_ids():
    got = {}

    def spy(completions, **kwargs):
        got.update(kwargs)
        return [1.0]

    assert from_trl_reward(spy)("hi", prompt="p", completion_ids=[1, 2, 3, 4, 5, 6]) == 1.0
    assert "completion_ids" not in got  # outside training there are no token ids
