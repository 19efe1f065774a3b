"""A reward function written for TRL's ``reward_funcs`` trains as its per-completion twin does."""

from __future__ import annotations

import pytest
import torch

from passband.trainer import GRPOConfig, GRPOTrainer

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")  # rewards of a test file


def _score(completion: str, answer: str) -> float:
    return len(set(completion)) / 8 + float(answer in completion)  # varies within a group


def per_completion(completion, answer, **row):
    return _score(completion, answer)


def trl_style(prompts, completions, answer, **kwargs):
    assert all(isinstance(p, str) and p.endswith("=") for p in prompts)  # the row's prompt
    return [_score(c, a) for c, a in zip(completions, answer)]


ROWS = [{"prompt": f"{i}+{i % 3}=", "answer": str(i % 10)} for i in range(8)]


def _config(tmp_path, name: str) -> GRPOConfig:
    return GRPOConfig(
        **dict(group_size=4, prompts_per_step=4, max_new_tokens=5, learning_rate=1e-3),
        **dict(pretrained=False, max_steps=3, use_curriculum=False, progress=False, seed=0),
        output_dir=str(tmp_path / name),
    )


def _run(tiny, tokenizer, tmp_path, name, reward):
    trainer = GRPOTrainer(tiny.model(tokenizer), tokenizer, ROWS, reward, _config(tmp_path, name))
    return trainer, [trainer.train_step() for _ in range(3)]


def test_a_trl_reward_function_trains_like_its_per_completion_twin(
    tiny, tokenizer, tmp_path, capsys
):
    ours, a = _run(tiny, tokenizer, tmp_path, "ours", per_completion)
    trl, b = _run(tiny, tokenizer, tmp_path, "trl", trl_style)
    assert "TRL reward function called per completion" in capsys.readouterr().out
    for x, y in zip(a, b):
        assert x["reward/mean"] == y["reward/mean"] > 0 and x["reward/std"] == y["reward/std"] > 0
        assert x["groups/effective"] == y["groups/effective"] > 0  # both trained on these
    for p, q in zip(ours.model.parameters(), trl.model.parameters()):
        assert torch.equal(p, q)


def test_a_completion_column_is_left_out_for_trl_and_named_for_passband_rewards(
    tiny, tokenizer, tmp_path
):
    from passband.errors import DataError

    rows = [{**r, "completion": "reference " + r["answer"]} for r in ROWS]  # TRL's format
    config = _config(tmp_path, "c")
    seen = []

    def trl_spy(prompts, completions, answer, **kwargs):
        seen.append(sorted(kwargs))
        assert [len(ids) for ids in kwargs["completion_ids"]] == [len(c) for c in completions]
        return [_score(c, a) for c, a in zip(completions, answer)]

    trainer = GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, trl_spy, config)
    assert (
        trainer.train_step()["reward/mean"] > 0
        and seen
        and all(k == ["completion_ids"] for k in seen)
    )
    with pytest.raises(DataError, match="column named 'completion'"):
        GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, per_completion, config)
