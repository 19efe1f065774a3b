"""``Scorer``: what each kind of reward receives from a dataset row."""

from __future__ import annotations

import pytest

from passband.trainer._scoring import Scorer
from passband.verifiers import Reward, overlong

ROW = {"prompt": "2+2?", "answer": "4", "source": "unit"}


def test_a_reward_gets_the_reserved_token_count_and_no_prompt():
    scorer = Scorer(Reward.from_verifier("exact", penalties=[overlong(10, 5)]))
    assert scorer.reference(ROW, 7) == {"answer": "4", "source": "unit", "num_tokens": 7}
    verdict = scorer(["4"], [ROW], [9])[0]
    assert verdict.passed and verdict.components["overlong"] < 0  # 9 tokens counted, not 1 char


def test_a_verifier_name_gets_the_row_without_prompt_and_a_plain_callable_gets_it_all():
    assert Scorer("exact").reference(ROW, 7) == {"answer": "4", "source": "unit"}
    assert Scorer(lambda completion, **row: 1.0).reference(ROW, 7) == ROW
    assert Scorer("exact", references={"answer": "source"}).reference(ROW, 7) == {"answer": "unit"}


@pytest.mark.filterwarnings("ignore:passband.verify_batch")  # a closure: scored in this process
def test_trl_rewards_get_the_prompt_and_the_token_count_however_they_come():
    from passband.verifiers import as_trl_reward, from_trl_reward, register

    seen = []

    def trl_prompt(prompts, completions, **kwargs):
        seen.append(prompts[0])
        return [1.0 for _ in completions]

    register("test_scoring_trl_prompt", replace=True)(trl_prompt)
    for reward in (trl_prompt, from_trl_reward(trl_prompt), "test_scoring_trl_prompt"):
        seen.clear()
        assert Scorer(reward)(["4"], [ROW], [3])[0].passed and seen == ["2+2?"], reward
    longer = as_trl_reward(Reward.from_verifier("exact", penalties=[overlong(10, 5)]))
    verdict = Scorer(longer)(["4"], [{**ROW, "num_tokens": 1}], [9])[
        0
    ]  # a row's count is not believed
    assert verdict.passed and verdict.components["overlong"] < 0


def test_trls_own_overlong_penalty_reads_the_token_ids():
    from trl.rewards import get_soft_overlong_punishment

    scorer = Scorer(get_soft_overlong_punishment(max_completion_len=4, soft_punish_cache=2))
    verdicts = scorer(["a", "bbb", "ccccc"], [ROW] * 3, [[5], [5, 6, 7], [5, 6, 7, 8, 9]])
    assert [v.score for v in verdicts] == [0.0, -0.5, -1.0]  # DAPO's soft punishment, by tokens


def test_trls_own_rewards_score_conversational_rows():
    from trl.rewards import accuracy_reward, think_format_reward

    row = {"messages": [{"role": "user", "content": "2+2?"}], "solution": "$4$"}
    right, wrong = Scorer(accuracy_reward)(["So \\boxed{4}", "\\boxed{5}"], [row, row], [[1], [1]])
    assert right.passed and not wrong.passed and wrong.status == "wrong"
    formats = Scorer(think_format_reward)(["<think>x</think>4", "4"], [row, row], [[1], [1]])
    assert [v.passed for v in formats] == [True, False]


@pytest.mark.filterwarnings("ignore:passband.verify_batch")  # a closure: scored in this process
def test_token_ids_reach_trl_functions_that_take_them_and_no_one_else():
    from trl.rewards import get_soft_overlong_punishment

    def strict(prompts, completions, answer, source):  # no **kwargs: no token ids forced on it
        return [float(c == a) for c, a in zip(completions, answer)]

    assert Scorer(strict)(["4"], [ROW], [[1, 2]])[0].passed
    mixed = Reward({"acc": "exact", "len": (get_soft_overlong_punishment(4, 2), 1.0)})
    verdict = Scorer(mixed)(["4"], [ROW], [[1, 2, 3, 4, 5]])[0]  # a Reward's TRL term gets them
    assert verdict.passed and verdict.components["len"] == -1.0
    assert "_completion_ids" not in Scorer("exact").reference(ROW, [1, 2])  # only TRL's
