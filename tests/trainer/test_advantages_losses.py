"""Advantages and loss pieces against values computed by hand."""

from __future__ import annotations

import math

import pytest
import torch

from passband.trainer.advantages import ADVANTAGE_FUNCTIONS, get_advantage
from passband.trainer.losses import (
    AGGREGATIONS,
    BatchNorms,
    clipped_surrogate,
    get_aggregation,
    k3_kl,
    token_logprobs,
)
from passband.trainer.registry import ADVANTAGE_REGISTRY, AGGREGATION_REGISTRY

S3 = math.sqrt(1 / 3)  # unbiased std of [1, 0, 0, 1]


def test_registries_match_the_names_the_config_accepts():
    assert tuple(AGGREGATIONS) == tuple(AGGREGATION_REGISTRY.names())
    assert tuple(ADVANTAGE_FUNCTIONS) == tuple(ADVANTAGE_REGISTRY.names())
    with pytest.raises(KeyError, match="token_mean"):
        get_aggregation("nope")


@pytest.mark.parametrize(
    "name, rewards, valid, expected",
    [
        # (r - mean) / (unbiased std + eps): mean .5, std sqrt(1/3)
        ("group", [[1, 0, 0, 1]], None, [[0.5 / S3, -0.5 / S3, -0.5 / S3, 0.5 / S3]]),
        # masked entry (an error verdict scored 5) is left out of mean/std and gets 0
        (
            "group",
            [[1, 0, 0, 5]],
            [[1, 1, 1, 0]],
            [[(2 / 3) / S3, (-1 / 3) / S3, (-1 / 3) / S3, 0.0]],
        ),
        ("no_std", [[1, 0, 0, 1]], None, [[0.5, -0.5, -0.5, 0.5]]),
        ("no_std", [[2, 0], [3, 3]], None, [[1.0, -1.0], [0.0, 0.0]]),
        # batch std of [1, 0, 3, 3] (unbiased) = 1.5; group means .5 and 3
        ("batch_std", [[1, 0], [3, 3]], None, [[0.5 / 1.5, -0.5 / 1.5], [0.0, 0.0]]),
    ],
)
def test_advantages_match_hand_computed_values(name, rewards, valid, expected):
    r = torch.tensor(rewards, dtype=torch.float32)
    v = (
        torch.ones_like(r, dtype=torch.bool)
        if valid is None
        else torch.tensor(valid, dtype=torch.bool)
    )
    got = get_advantage(name)(r, v)
    assert torch.allclose(got, torch.tensor(expected), atol=1e-4), got


def test_clipped_surrogate_clips_on_the_side_that_matters():
    ratio = torch.tensor([[1.5, 0.5, 0.5, 1.5]])
    logp, old = torch.log(ratio), torch.zeros(1, 4)
    # one sequence per column would need [B]; use 4 sequences of one token instead
    loss, clipped = clipped_surrogate(
        logp.T, old.T, torch.tensor([1.0, 1.0, -1.0, -1.0]), 0.2, 0.28
    )
    # A>0: min(1.5, 1.28) = 1.28 (clipped); min(.5, .8) = .5 (not clipped)
    # A<0: min(-.5, -.8) = -.8 (clipped); min(-1.5, -1.28) = -1.5 (not clipped)
    assert torch.allclose(loss.T, torch.tensor([[-1.28, -0.5, 0.8, 1.5]]), atol=1e-6)
    assert clipped.T.tolist() == [[True, False, True, False]]


def test_mu_one_ratio_gives_the_plain_policy_gradient():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    loss, clipped = clipped_surrogate(logp, logp.detach(), torch.tensor([0.7]), 0.2, 0.28)
    loss.sum().backward()
    assert torch.allclose(logp.grad, torch.tensor([[-0.7, -0.7]]))  # d/dlogp of -A * ratio at 1
    assert not clipped.any()


def test_k3_kl_matches_formula_and_is_zero_at_equal_policies():
    logp, ref = torch.log(torch.tensor([[0.5]])), torch.log(torch.tensor([[0.25]]))
    assert k3_kl(logp, ref).item() == pytest.approx(0.5 + math.log(2) - 1, abs=1e-6)
    assert k3_kl(logp, logp).item() == 0.0


def test_aggregations_by_hand():
    loss = torch.tensor([[1.0, 2.0, 3.0], [4.0, 9.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    norms = BatchNorms(tokens=4, sequences=2, constant=5)
    assert get_aggregation("token_mean")(loss, mask, norms).item() == pytest.approx(10 / 4)
    assert get_aggregation("seq_mean_token_mean")(loss, mask, norms).item() == pytest.approx(
        (2 + 4) / 2
    )
    assert get_aggregation("constant_norm")(loss, mask, norms).item() == pytest.approx(10 / (2 * 5))


@pytest.mark.parametrize("name", AGGREGATION_REGISTRY.names())
def test_micro_batches_sum_to_the_full_batch_loss(name):
    torch.manual_seed(0)
    loss = torch.randn(6, 5)
    mask = (torch.rand(6, 5) > 0.3).float()
    mask[:, 0] = 1.0
    norms = BatchNorms(tokens=int(mask.sum()), sequences=6, constant=5)
    fn = get_aggregation(name)
    parts = (
        fn(loss[:2], mask[:2], norms)
        + fn(loss[2:5], mask[2:5], norms)
        + fn(loss[5:], mask[5:], norms)
    )
    assert parts.item() == pytest.approx(fn(loss, mask, norms).item(), abs=1e-6)


def test_token_logprobs_equals_log_softmax_gather():
    torch.manual_seed(0)
    logits, targets = torch.randn(2, 3, 7), torch.randint(0, 7, (2, 3))
    want = torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(token_logprobs(logits, targets), want, atol=1e-6)


class _CaptureSGD:
    """Records each step's gradient and changes nothing (lr 0)."""

    def __init__(self, params):
        self.params, self.grads, self.param_groups = list(params), [], [{"lr": 0.0}]

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self):
        self.grads.append(torch.cat([p.grad.flatten() for p in self.params if p.grad is not None]))


@pytest.mark.parametrize("aggregation", ["token_mean", "seq_mean_token_mean", "constant_norm"])
def test_masked_completions_are_left_out_of_every_normaliser(
    tiny, tokenizer, tmp_path, aggregation
):
    """A verifier error in a group weighed the others down by the masked share (0.75 of the
    gradient with 2 of 8 masked) under the sequence-counting aggregations."""
    from passband.trainer import FakeRollout, GRPOConfig, GRPOTrainer
    from passband.trainer._batch import Group
    from passband.verifiers import Verdict

    def enc(text):
        return tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]

    def groups(masked: bool):
        answers = [("15", 1.0), ("16", 0.0), ("155", 1.0), ("9", 0.0)]
        verdicts = [Verdict(s, "ok" if s else "wrong") for _, s in answers]
        comps = [enc(a) for a, _ in answers]
        if masked:
            verdicts += [Verdict.error("checker failed"), Verdict(0.0, "timeout")]
            comps += [enc("777"), enc("7")]
        return [Group(0, enc("12+3=")[:-1], comps, [False] * len(comps), verdicts, 0)]

    grads = []
    for masked in (True, False):
        config = GRPOConfig(
            group_size=4,
            prompts_per_step=1,
            max_new_tokens=8,
            beta=0.0,
            pretrained=False,
            max_grad_norm=0.0,
            loss_aggregation=aggregation,
            output_dir=str(tmp_path / f"{aggregation}{masked}"),
            progress=False,
            use_curriculum=False,
        )
        rows = [{"prompt": "12+3="}]
        backend = FakeRollout(tokenizer, max_new_tokens=8)
        trainer = GRPOTrainer(
            tiny.model(tokenizer),
            tokenizer,
            rows,
            lambda c, **r: 0.0,
            config,
            rollout_backend=backend,
        )
        trainer.optimizer = _CaptureSGD(trainer.model.parameters())
        trainer._update(groups(masked))
        grads.append(trainer.optimizer.grads[0])
    assert torch.allclose(grads[0], grads[1], atol=1e-7), (grads[0].norm() / grads[1].norm()).item()


def test_a_short_batch_is_weighed_by_its_share_of_the_planned_one():
    """``weigh_short_batches`` (stop 38): 7 sequences of a planned 16 normalise as 16 would, so
    the step is 7/16 of a full one; a full batch, and the setting off, normalise by what trained."""
    from types import SimpleNamespace

    from passband.trainer._update import batch_norms

    config = SimpleNamespace(
        prompts_per_step=4, group_size=4, max_new_tokens=8, weigh_short_batches=True
    )
    seqs = [([1], [2, 3], True)] * 6 + [([1], [2, 3, 4], False)]  # 7 trained, 1 of them masked
    norms = batch_norms(seqs, config)
    assert (norms.tokens, norms.sequences, norms.constant) == (12 * 16 / 7, 6 * 16 / 7, 8)
    assert batch_norms([([1], [2, 3], True)] * 16, config).tokens == 32  # whole: as trained
    # counted in groups when the trainer says how many: 4 small groups (adaptive sizes) are a
    # whole batch, 2 of a planned 4 are half of one
    assert batch_norms(seqs, config, groups=4).tokens == 12
    assert batch_norms(seqs, config, groups=2).tokens == 24
    config.weigh_short_batches = False
    assert (batch_norms(seqs, config).tokens, batch_norms(seqs, config).sequences) == (12, 6)
