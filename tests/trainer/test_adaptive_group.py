"""Adaptive group size through the trainer (``[curriculum] adaptive_group_size = true``): a round's
``group_size`` x prompts answers are split by the curriculum's posteriors, never below the floor;
each group's advantages are normalised within that group, and the loss normaliser counts the
real completions, so groups of different sizes train exactly as the same groups would alone."""

from __future__ import annotations

import pytest
import torch

from passband.curriculum.allocation import signal_chance
from passband.trainer import GRPOConfig, GRPOTrainer
from passband.trainer.advantages import group_advantage
from passband.trainer.sampling import UniformSampler, round_group_sizes

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")

G = 8


def _make_reward():
    """A closure, so it cannot be pickled and runs in this process (a worker would spend the
    verifier timeout importing this torch-heavy module)."""

    def reward(completion, **row):
        return float(len(set(completion)))  # varies between samples: every group has signal

    return reward


_reward = _make_reward()


def _rows(n=6):
    return [{"prompt": f"{i}+{i}="} for i in range(n)]


def _priors():
    """Prompt 0 and 1 nearly certain (solved / hopeless), the rest near a coin flip."""
    return {0: (39, 40), 1: (1, 40), 2: (20, 40), 3: (19, 40), 4: (21, 40), 5: (20, 40)}


def _trainer(tiny, tokenizer, tmp_path, adaptive=True, group_size=G, **kw):
    config = GRPOConfig(
        group_size=group_size,
        prompts_per_step=6,
        max_new_tokens=4,
        learning_rate=1e-2,
        beta=0.0,
        pretrained=False,
        max_steps=1,
        max_refill_rounds=0,
        output_dir=str(tmp_path / "run"),
        progress=False,
        seed=0,
        curriculum={"adaptive_group_size": adaptive, "prior_weight": 1.0},
        **kw,
    )
    return GRPOTrainer(tiny.model(tokenizer), tokenizer, _rows(), _reward, config, priors=_priors())


def test_the_round_budget_is_split_by_posterior_never_below_the_floor(tiny, tokenizer, tmp_path):
    t = _trainer(tiny, tokenizer, tmp_path)
    groups = t._rollout_groups(list(range(6)))
    sizes = [len(g.completions) for g in groups]
    assert sum(sizes) == G * 6 and min(sizes) >= 4, sizes
    assert len(set(sizes)) > 1, f"the posteriors differ, so the sizes should: {sizes}"
    # the split is the one that expects the most groups with signal (allocation.allocate)
    posteriors = [(p + 1, n - p + 1) for p, n in _priors().values()]
    expected = [sum(map(signal_chance, *zip(*posteriors), k)) for k in (sizes, [G] * 6)]
    assert expected[0] > expected[1], (sizes, expected)
    for g in groups:  # every row belongs to its own prompt
        assert len(g.verdicts) == len(g.truncated) == len(g.completions)
    fixed = _trainer(tiny, tokenizer, tmp_path / "fixed", adaptive=False)
    assert [len(g.completions) for g in fixed._rollout_groups(list(range(6)))] == [G] * 6


def test_advantages_are_normalised_within_each_group_of_its_own_size(tiny, tokenizer, tmp_path):
    t = _trainer(tiny, tokenizer, tmp_path)
    groups = t._rollout_groups(list(range(6)))
    adv = t._advantages(groups)
    assert adv.shape == (sum(len(g.completions) for g in groups),)
    start = 0
    for g in groups:  # each group alone, as a [1, G_i] batch
        rewards = torch.tensor([g.rewards])
        alone = group_advantage(rewards, torch.tensor([g.valid])).reshape(-1)
        assert torch.allclose(adv[start : start + len(g.rewards)], alone, atol=1e-6)
        start += len(g.rewards)


def test_mixed_sizes_train_the_same_split_into_micro_batches(tiny, tokenizer, tmp_path):
    """The normaliser is the whole batch's: one micro-batch or three give the same update."""
    one = _trainer(tiny, tokenizer, tmp_path / "one", grad_accum=1)
    three = _trainer(tiny, tokenizer, tmp_path / "three", grad_accum=3)
    for t in (one, three):  # Adam turns float noise into lr-sized steps; SGD shows the gradient
        t.optimizer = torch.optim.SGD(t.model.parameters(), lr=1.0)
    groups = one._rollout_groups(list(range(6)))
    assert len({len(g.completions) for g in groups}) > 1
    s1, s3 = one._update(groups), three._update(groups)
    for a, b in zip(one.model.parameters(), three.model.parameters()):
        assert torch.allclose(a, b, atol=1e-6, rtol=0)
    assert s1["loss"] == pytest.approx(s3["loss"], abs=1e-6)


def test_a_training_step_with_adaptive_sizes_updates_the_policy(tiny, tokenizer, tmp_path):
    t = _trainer(tiny, tokenizer, tmp_path)
    t._begin()
    m = t.train_step()
    assert t.policy_version == 1 and m["groups/effective"] >= 3, m["groups/effective"]
    assert m["loss"] is not None and m["groups/rolled"] == 6


def test_group_size_below_the_floor_is_refused_naming_both(tiny, tokenizer, tmp_path):
    with pytest.raises(ValueError, match="group_size = 3 < min_group_size = 4"):
        _trainer(tiny, tokenizer, tmp_path, group_size=3)


def test_a_sampler_split_that_breaks_the_budget_is_refused():
    class Greedy(UniformSampler):
        def group_sizes(self, prompt_ids, budget):
            return [budget] + [1] * (len(prompt_ids) - 1)

    with pytest.raises(ValueError, match="size >= 2 per prompt"):
        round_group_sizes(Greedy(range(3)), [0, 1, 2], 8)
    assert round_group_sizes(UniformSampler(range(3)), [0, 1, 2], 8) == [8, 8, 8]
    assert round_group_sizes(object(), [0, 1], 5) == [5, 5], "a sampler without a split: fixed G"
