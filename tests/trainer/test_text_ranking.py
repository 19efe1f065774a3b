"""The trainer gives the curriculum its prompts' texts, so unseen prompts are ranked by them
(``CurriculumConfig.predict_fresh``): a real tiny model, the shipped ``FakeRollout`` answering
by the prompt's format, the real ``exact`` verifier."""

from __future__ import annotations

import json

import pytest

from passband.trainer import FakeRollout, GRPOConfig, GRPOTrainer

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")


def _rows():
    """Three formats: solved (always right), out of reach (always wrong), in band (half)."""
    rows = []
    for i in range(1200):
        kind = ("solved", "hopeless", "mixed")[i % 3]
        rows.append({"prompt": f"{kind} {i}?", "answer": "yes"})
    return rows


def _respond(prompt, sample, seed):
    text = prompt if isinstance(prompt, str) else str(prompt)
    if "solved" in text:
        return "yes"
    if "hopeless" in text:
        return "no"
    return "yes" if seed % 2 else "no"


def _zero_variance_share(tiny, tokenizer, tmp_path, predict: bool) -> tuple[float, dict]:
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=8,
        max_new_tokens=4,
        learning_rate=1e-4,
        beta=0.0,
        pretrained=False,
        max_steps=14,
        output_dir=str(tmp_path / str(predict)),
        progress=False,
        verifier_workers=1,
        curriculum={"predict_fresh": predict},
    )
    backend = FakeRollout(tokenizer, respond=_respond)
    trainer = GRPOTrainer(
        tiny.model(tokenizer), tokenizer, _rows(), "exact", config, rollout_backend=backend
    )
    trainer.train()
    trainer.close()
    lines = [
        json.loads(x) for x in (tmp_path / str(predict) / "metrics.jsonl").read_text().splitlines()
    ]
    late = lines[8:]  # the model ranks after 32 first looks: about 3 steps of 12 prompts
    rolled = sum(m["groups/rolled"] for m in late)
    dropped = sum(m["groups/dropped"] for m in late)
    return dropped / rolled, lines[-1]


def test_the_trainer_ranks_unseen_prompts_by_their_text(tiny, tokenizer, tmp_path):
    with_texts, last = _zero_variance_share(tiny, tokenizer, tmp_path, True)
    without, last_off = _zero_variance_share(tiny, tokenizer, tmp_path, False)
    assert last["curriculum/fresh_model/looks"] >= 32
    assert "curriculum/fresh_model/looks" not in last_off
    # two thirds of the prompts are unanimous (and 1 in 8 groups of the rest). Measured: 0.29 of
    # the groups rolled from step 9 on were dropped with texts, 0.68 without
    assert without >= 0.5, without
    assert with_texts <= 0.4, with_texts
