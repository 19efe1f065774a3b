"""``Scorer``: what each kind of reward receives from a dataset row."""

from __future__ import annotations

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
