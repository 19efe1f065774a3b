"""What one update reports and trains on: the sampler mismatch over the whole batch, and groups
the zero-variance filter keeps always carry an advantage."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from passband.trainer import GRPOConfig, GRPOTrainer
from passband.trainer.tis import logprob_mismatch
from passband.verifiers import Verdict

pytestmark = pytest.mark.filterwarnings("ignore:passband.verify_batch")


def _make_reward():
    def reward(completion, **row):  # a closure: scored in this process
        return float(len(set(completion)))

    return reward


def _trainer(tiny, tokenizer, path, **kw):
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=3,
        max_new_tokens=6,
        beta=0.0,
        pretrained=False,
        max_steps=1,
        max_refill_rounds=0,
        use_curriculum=False,
        output_dir=str(path),
        progress=False,
        seed=0,
        **kw,
    )
    rows = [{"prompt": f"{i}+{i}="} for i in range(3)]
    return GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, _make_reward(), config)


def _with_sampler_logprobs(groups, seed: int = 0):
    """Each completion's sampler log-probs: made-up values, far enough from the trainer's that
    the largest difference sits in one micro-batch only."""
    gen = torch.Generator().manual_seed(seed)
    for g in groups:
        g.sampler_logp = [
            (-3.0 * torch.rand(len(c), generator=gen)).tolist() for c in g.completions
        ]
    return groups


def test_rollout_mismatch_is_the_whole_batch_whatever_grad_accum(tiny, tokenizer, tmp_path):
    """``rollout/logp_diff_max`` is the batch's largest difference and the means are token
    means: a mean of the micro-batches' maxima read 1.33 for a batch whose max was 1.74."""
    reports = {}
    for accum in (1, 3):
        t = _trainer(tiny, tokenizer, tmp_path / str(accum), grad_accum=accum, tis_cap=2.0)
        groups = _with_sampler_logprobs(t._rollout_groups([0, 1, 2]))
        reports[accum] = t._update(groups)
    keys = ("rollout/logp_diff_mean", "rollout/logp_diff_max", "rollout/kl", "rollout/tis_capped")
    assert all(k in reports[1] for k in keys), reports[1]
    for key in keys:
        assert reports[3][key] == pytest.approx(reports[1][key], rel=1e-5, abs=1e-7), key


def test_the_mismatch_equals_logprob_mismatch_over_every_token(tiny, tokenizer, tmp_path):
    t = _trainer(tiny, tokenizer, tmp_path, grad_accum=2, tis_cap=2.0)
    groups = _with_sampler_logprobs(t._rollout_groups([0, 1, 2]), seed=1)
    trainer_lp, sampler_lp = [], []
    with torch.no_grad():
        for g in groups:  # the trainer's own log-probs, one sequence at a time
            for comp, sampled in zip(g.completions, g.sampler_logp):
                ids = torch.tensor([g.prompt_tokens + comp])
                logits = t.model(ids).logits[0, len(g.prompt_tokens) - 1 : -1].float()
                logits = logits / t.config.temperature
                lp = torch.log_softmax(logits, -1).gather(1, torch.tensor(comp)[:, None])[:, 0]
                trainer_lp.append(lp)
                sampler_lp.append(torch.tensor(sampled))
    trainer_all, sampler_all = torch.cat(trainer_lp)[None], torch.cat(sampler_lp)[None]
    whole = logprob_mismatch(trainer_all, sampler_all, torch.ones_like(trainer_all), 2.0)
    report = t._update(groups)
    for key, value in whole.items():
        assert report[key] == pytest.approx(value, rel=1e-4, abs=1e-6), key


def test_the_filter_and_the_advantages_agree_on_what_varies(tiny, tokenizer, tmp_path):
    """Rewards 1.0 and 1.0 + 1e-8 differed for the filter (float64) but not for the advantages
    (float32): the group trained with all-zero advantages, diluting the step. The filter reads
    them as the advantages do; a difference float32 keeps still trains."""
    t = _trainer(tiny, tokenizer, tmp_path)
    (g,) = t._rollout_groups([0])
    for step, varies in ((1e-8, False), (1e-5, True)):
        scores = [1.0, 1.0 + step, 1.0, 1.0 + step]
        group = dataclasses.replace(g, verdicts=[Verdict(s, "ok") for s in scores])
        assert group.zero_variance is not varies, step
        adv = t._advantages([group])
        assert torch.all(adv != 0) if varies else torch.all(adv == 0), (step, adv)
        assert adv.dtype == torch.float32


def test_a_registered_estimator_gets_float32_rewards(tiny, tokenizer, tmp_path):
    """An estimator with float32 weights of its own (``rewards @ W``) broke when the rewards
    came as float64 (``expected m1 and m2 to have the same dtype``)."""
    from passband.trainer import register_advantage
    from passband.trainer.registry import ADVANTAGE_REGISTRY

    weights = torch.eye(4)

    @register_advantage("test_float32_weights")
    def projected(rewards, valid):
        return (rewards - rewards.mean(dim=1, keepdim=True)) @ weights[: rewards.shape[1]][
            :, : rewards.shape[1]
        ]

    try:
        t = _trainer(tiny, tokenizer, tmp_path, advantage="test_float32_weights")
        groups = t._rollout_groups([0, 1])
        adv = t._advantages(groups)
        assert adv.dtype == torch.float32 and adv.shape == (8,)
    finally:
        ADVANTAGE_REGISTRY.functions.pop("test_float32_weights", None)
