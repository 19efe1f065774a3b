"""Loss and gradient parity with TRL's ``GRPOTrainer`` on identical prompts, completions and rewards.

Both trainers get the same tiny real model (pad = EOS, as in SmolLM2 and many instruct models),
the same four prompts, the same fixed completions (injected through passband's ``RolloutBackend``
seam and TRL's ``rollout_func``), and the same verifier (``exact``, through ``as_trl_reward`` for
TRL). The batch has a group with one success, a group with zero variance, truncated completions
and completions that end in the EOS / pad token. One SGD step with lr = 1 and no clipping makes
the parameter change equal to minus the gradient, so the gradients are compared exactly.

Equivalent settings: TRL ``loss_type = "dapo"`` = passband ``loss_aggregation = "token_mean"``;
TRL ``scale_rewards = "group"`` = passband ``advantage = "group"``; beta 0; one inner iteration.

TRL divides by (std + 1e-4), passband by (std + 1e-6): a 2e-4 relative difference in every
advantage, far below what changes learning; the tests set passband's ``EPS`` to TRL's so that
everything else is compared to float precision.

The one difference on purpose: with ``filter_zero_variance`` (passband's default) a dropped group
is out of the batch, its tokens out of the normaliser too; TRL keeps it, advantages 0, tokens
counted. So passband's gradient is TRL's times (all tokens / kept tokens): the same direction.
"""

from __future__ import annotations

import copy

import pytest
import torch

from passband.trainer.rollout import Rollout, RolloutBackend

pytest.importorskip("trl")

G, MAX_NEW = 4, 6
# prompt -> (answer, G completions); "|" marks EOS; no "|" and MAX_NEW chars = truncated.
BATCH = {
    "1+1=": ("a", ["a|", "bb|", "bcbcbc", "c|"]),  # one success of four
    "2+2=": ("d", ["bb|", "ccc|", "bbbbbb", "e|"]),  # no success: zero variance
    "3+3=": ("a", ["a|", "a|", "cbcbcb", "dd|"]),  # two of four
    "4+4=": ("e", ["e|", "e|", "e|", "bcdeab"]),  # three of four, one truncated
}


def _eos_pad_tokenizer(factories):
    """The character tokenizer with pad = EOS, as in SmolLM2 (``<|im_end|>``) and Qwen chat models."""
    tok = factories.tokenizer()
    tok.pad_token = tok.eos_token
    return tok


def _completion_ids(tok, text: str) -> list[int]:
    ids = tok(text.rstrip("|"), add_special_tokens=False)["input_ids"]
    return ids + ([tok.eos_token_id] if text.endswith("|") else [])


class _FixedRollout(RolloutBackend):
    """A ``RolloutBackend`` that returns the fixed completions of ``BATCH`` for each prompt."""

    def __init__(self, tok):
        self.tok, self.policy_version = tok, 0
        self.pad_id = tok.pad_token_id

    def rollout(self, prompts, n, seeds=None):
        n = n if isinstance(n, int) else n[0]  # every prompt gets the same G here
        seqs = [(self.tok(p)["input_ids"], c) for p in prompts for c in BATCH[p][1][:n]]
        ids = [_completion_ids(self.tok, c) for _, c in seqs]
        return Rollout(
            [p for p, _ in seqs],
            ids,
            self.tok.batch_decode(ids, skip_special_tokens=True),
            [not c.endswith("|") and len(c) >= MAX_NEW for _, c in seqs],
            self.policy_version,
            n,
        )

    def sync(self, model, policy_version):
        self.policy_version = policy_version


def _rows():
    return [{"prompt": p, "answer": a} for p, (a, _) in BATCH.items()]


def _passband_step(model, tok, tmp_path, **changes):
    """One passband step with SGD(lr=1): returns (loss, parameter change = -gradient)."""
    from passband.trainer import GRPOConfig, GRPOTrainer

    config = GRPOConfig(
        group_size=G,
        prompts_per_step=len(BATCH),
        max_new_tokens=MAX_NEW,
        learning_rate=1e-6,
        beta=0.0,
        clip_low=0.2,
        clip_high=0.2,
        loss_aggregation="token_mean",
        advantage="group",
        max_grad_norm=0.0,
        use_curriculum=False,
        max_steps=1,
        output_dir=str(tmp_path / "pb"),
        progress=False,
        verifier_workers=1,
        **changes,
    )
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    trainer = GRPOTrainer(model, tok, _rows(), "exact", config, rollout_backend=_FixedRollout(tok))
    trainer.optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1.0)
    metrics = trainer.train()
    return metrics["loss"], {k: v.detach() - before[k] for k, v in model.named_parameters()}


def _trl_step(model, tok, tmp_path):
    """One TRL step with SGD(lr=1) on the same batch: returns (loss, parameter change)."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from passband.verifiers import as_trl_reward

    served: dict[str, int] = {}

    def rollout_func(prompts, trainer):  # TRL repeats each prompt G times, in some order
        completions = []
        for p in prompts:
            k = served.get(p, 0)
            served[p] = k + 1
            completions.append(_completion_ids(tok, BATCH[p][1][k]))
        return {
            "prompt_ids": [tok(p)["input_ids"] for p in prompts],
            "completion_ids": completions,
            "logprobs": None,
        }

    args = GRPOConfig(
        output_dir=str(tmp_path / "trl"),
        per_device_train_batch_size=G * len(BATCH),
        num_generations=G,
        max_completion_length=MAX_NEW,
        learning_rate=1.0,
        beta=0.0,
        epsilon=0.2,
        epsilon_high=0.2,
        loss_type="dapo",
        scale_rewards="group",
        max_grad_norm=0.0,
        lr_scheduler_type="constant",
        max_steps=1,
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
    )
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=as_trl_reward("exact", workers=1),
        args=args,
        train_dataset=Dataset.from_list(_rows()),
        processing_class=tok,
        rollout_func=rollout_func,
        optimizers=(optimizer, None),
    )
    trainer.train()
    loss = next(h["loss"] for h in trainer.state.log_history if "loss" in h)
    return loss, {k: v.detach() - before[k] for k, v in model.named_parameters()}


def _tokens(kept_only: bool) -> int:
    tok_counts = [
        len(c.rstrip("|")) + c.endswith("|")
        for p, (_, cs) in BATCH.items()
        for c in cs
        if not (kept_only and p == "2+2=")
    ]
    return sum(tok_counts)


@pytest.fixture
def setup(tiny, monkeypatch):
    from passband.trainer import advantages

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    monkeypatch.setattr(advantages, "EPS", 1e-4)  # TRL's std epsilon (see the module docstring)
    tok = _eos_pad_tokenizer(tiny)
    return tok, tiny.model(tok, seed=3).train()


def _assert_close(a: dict, b: dict, scale: float = 1.0):
    worst = max(float((a[k] - scale * b[k]).abs().max()) for k in a)
    biggest = max(float(b[k].abs().max()) * scale for k in b)
    assert biggest > 1e-4, "the step changed nothing: the comparison would be vacuous"
    assert worst <= 1e-5 * max(1.0, biggest), (
        f"max |difference| {worst:.3g} (largest change {biggest:.3g})"
    )


def test_loss_and_gradient_match_trl_without_the_filter(setup, tmp_path):
    tok, model = setup
    pb_loss, pb_delta = _passband_step(
        copy.deepcopy(model), tok, tmp_path, filter_zero_variance=False, max_refill_rounds=0
    )
    trl_loss, trl_delta = _trl_step(copy.deepcopy(model), tok, tmp_path)
    assert pb_loss == pytest.approx(trl_loss, abs=1e-6)
    _assert_close(pb_delta, trl_delta)


def test_filter_on_differs_from_trl_only_by_the_kept_token_normaliser(setup, tmp_path):
    """The difference on purpose: dropped groups leave the normaliser, so by default a short batch
    takes a full-size step (same direction, larger). With ``weigh_short_batches`` the kept tokens
    count as if the planned batch were whole, which equals TRL's normaliser when the dropped
    answers are as long as the kept ones."""
    tok, model = setup
    _, trl_delta = _trl_step(copy.deepcopy(model), tok, tmp_path)
    everything, kept = _tokens(kept_only=False), _tokens(kept_only=True)
    kept_rows = sum(len(cs) for p, (_, cs) in BATCH.items() if p != "2+2=")
    planned = G * len(BATCH)
    _, pb_delta = _passband_step(
        copy.deepcopy(model),
        tok,
        tmp_path,
        filter_zero_variance=True,
        max_refill_rounds=0,
        weigh_short_batches=True,
    )
    _assert_close(pb_delta, trl_delta, scale=everything / (kept * planned / kept_rows))
    _, full = _passband_step(
        copy.deepcopy(model),
        tok,
        tmp_path / "off",
        filter_zero_variance=True,
        max_refill_rounds=0,
    )
    _assert_close(full, trl_delta, scale=everything / kept)
