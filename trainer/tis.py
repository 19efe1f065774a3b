"""Truncated importance sampling: correct for a sampler whose log-probs differ from the trainer's.

A rollout engine (vLLM) and the trainer never compute exactly the same token probabilities
(kernels, batch shapes, bf16). The policy gradient assumes the tokens came from the trainer's
``pi_old``; weighting each token by ``min(pi_trainer / pi_sampler, cap)`` removes that bias while the
cap bounds its variance. The mismatch itself is logged as ``rollout/*`` metrics.
"""

from __future__ import annotations

import math

import torch

__all__ = [
    "logprob_mismatch",
    "mismatch_metrics",
    "mismatch_sums",
    "rollout_logprobs_tensor",
    "tis_correct",
    "tis_weights",
]


def rollout_logprobs_tensor(
    logprobs: list[list[float]], width: int, device: torch.device | str = "cpu"
) -> torch.Tensor:
    """Right-padded ``[N, width]`` tensor of sampler log-probs (padding 0, masked by the caller)."""
    out = torch.zeros((len(logprobs), width), dtype=torch.float32)  # [N, T]
    for i, row in enumerate(logprobs):
        row = row[:width]
        out[i, : len(row)] = torch.tensor(row, dtype=torch.float32)
    return out.to(device)


def tis_weights(
    trainer_logp: torch.Tensor, rollout_logp: torch.Tensor, cap: float = 2.0
) -> torch.Tensor:
    """Truncated importance weights ``min(pi_trainer / pi_sampler, cap)`` per token, no gradient.

    The tokens were drawn from the sampler's distribution, but the loss assumes they came from
    the trainer's ``pi_old``. Multiplying each token's loss by this ratio corrects the bias; the
    cap bounds the variance a rare, badly mismatched token could add (Yao et al. 2025, as in
    verl's ``tis_imp_ratio_cap`` and TRL's ``vllm_importance_sampling_cap``). Tokens without a
    sampler log-prob (NaN) get weight 1.
    """
    if cap <= 0:
        raise ValueError(f"tis cap = {cap!r} is out of range: > 0 (typical 2 - 5)")
    diff = (trainer_logp.detach() - rollout_logp.detach()).float()  # [N, T]
    diff = torch.nan_to_num(diff, nan=0.0)
    return torch.exp(diff).clamp(max=cap)  # [N, T]


def tis_correct(
    loss_tok: torch.Tensor,
    trainer_logp: torch.Tensor,
    rollout_logp: torch.Tensor,
    mask: torch.Tensor,
    cap: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Per-token loss times ``tis_weights`` (``cap = 0``: unchanged), and ``logprob_mismatch``.

    The mismatch is measured either way, so a run without the correction still shows how far
    the sampler drifts from the trainer.
    """
    stats = logprob_mismatch(trainer_logp, rollout_logp, mask, cap if cap > 0 else math.inf)
    if cap > 0:
        loss_tok = loss_tok * tis_weights(trainer_logp, rollout_logp, cap)  # [N, T]
    return loss_tok, stats


def mismatch_sums(
    trainer_logp: torch.Tensor, rollout_logp: torch.Tensor, mask: torch.Tensor, cap: float = 2.0
) -> dict[str, float]:
    """``logprob_mismatch``'s sums over the masked tokens that have a sampler log-prob:
    ``tokens``, ``abs`` (of |log pi_trainer - log pi_sampler|), ``kl`` (k3), ``capped`` (weights
    over ``cap``) and ``max`` (the largest |difference|). Sums add up over micro-batches and
    ranks, so the logged means are the whole batch's whatever ``grad_accum`` is."""
    keep = mask.bool() & ~torch.isnan(rollout_logp)  # [N, T]
    diff = (trainer_logp.detach().float() - rollout_logp.float())[keep]  # [K]
    if diff.numel() == 0:
        return {"tokens": 0.0, "abs": 0.0, "kl": 0.0, "capped": 0.0, "max": 0.0}
    ratio = torch.exp(diff)  # pi_trainer / pi_sampler on tokens drawn from the sampler
    return {
        "tokens": float(diff.numel()),
        "abs": diff.abs().sum().item(),
        "kl": (ratio - 1 - diff).sum().item(),
        "capped": (ratio > cap).float().sum().item(),
        "max": diff.abs().max().item(),
    }


def mismatch_metrics(sums: dict[str, float]) -> dict[str, float]:
    """The ``rollout/*`` metrics of ``mismatch_sums`` (added up over any number of batches)."""
    n = max(sums["tokens"], 1.0)
    return {
        "rollout/logp_diff_mean": sums["abs"] / n,
        "rollout/logp_diff_max": sums["max"],
        "rollout/kl": sums["kl"] / n,
        "rollout/tis_capped": sums["capped"] / n,
    }


def logprob_mismatch(
    trainer_logp: torch.Tensor, rollout_logp: torch.Tensor, mask: torch.Tensor, cap: float = 2.0
) -> dict[str, float]:
    """How far the sampler's log-probs are from the trainer's, over the masked tokens.

    ``rollout/logp_diff_mean`` and ``_max`` are |log pi_trainer - log pi_sampler|;
    ``rollout/kl`` is the k3 estimate of KL(sampler || trainer) per token; ``rollout/tis_capped``
    is the share of tokens whose weight hit the cap. With ``top_p = 1`` and ``top_k = 0``, a mean
    above ~0.05 nats usually means a dtype or kernel mismatch (bf16 sampler vs fp32 trainer) or
    weights out of sync; under ``top_p`` / ``top_k`` vLLM's log-probs are of the truncated
    distribution, so the difference measures the truncation too (``GRPOConfig`` warns).
    """
    return mismatch_metrics(mismatch_sums(trainer_logp, rollout_logp, mask, cap))
