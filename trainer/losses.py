"""Policy-gradient loss pieces: clipped surrogate, k3 KL, and registered loss aggregations.

Aggregations are written as a micro-batch's *share* of the full-batch loss: they receive the
full-batch token and sequence counts (``BatchNorms``), so summing the micro-batch losses gives
exactly the loss of the whole batch; gradient accumulation changes memory, not the math.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from passband.trainer.registry import AGGREGATION_REGISTRY, register_aggregation

__all__ = [
    "BatchNorms",
    "AGGREGATIONS",
    "get_aggregation",
    "clipped_surrogate",
    "k3_kl",
    "token_logprobs",
    "token_entropy",
]


@dataclass(frozen=True)
class BatchNorms:
    """Normalisers of the whole optimizer batch (not of one micro-batch)."""

    tokens: float  # loss-masked completion tokens in the batch (``weigh_short_batches``: scaled)
    sequences: float  # sequences in the loss (masked ones, e.g. a verifier error, are left out)
    constant: int  # Dr. GRPO's constant per-sequence length (max_new_tokens)


AggregationFn = Callable[[torch.Tensor, torch.Tensor, BatchNorms], torch.Tensor]
AGGREGATIONS: dict[str, AggregationFn] = AGGREGATION_REGISTRY.functions
get_aggregation = AGGREGATION_REGISTRY.get


@register_aggregation("token_mean")
def token_mean(loss: torch.Tensor, mask: torch.Tensor, norms: BatchNorms) -> torch.Tensor:
    """DAPO: every token of the batch weighs the same, so long answers are not down-weighted."""
    return (loss * mask).sum() / max(norms.tokens, 1)


@register_aggregation("seq_mean_token_mean")
def seq_mean_token_mean(loss: torch.Tensor, mask: torch.Tensor, norms: BatchNorms) -> torch.Tensor:
    """Original GRPO: mean over sequences of each sequence's token mean."""
    per_seq = (loss * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)  # [B]
    return per_seq.sum() / max(norms.sequences, 1)


@register_aggregation("constant_norm")
def constant_norm(loss: torch.Tensor, mask: torch.Tensor, norms: BatchNorms) -> torch.Tensor:
    """Dr. GRPO: token sum divided by a constant (sequences x max_new_tokens): no length bias."""
    return (loss * mask).sum() / max(norms.sequences * norms.constant, 1)


def clipped_surrogate(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    clip_low: float,
    clip_high: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token PPO/GRPO loss ``-min(r A, clip(r, 1-el, 1+eh) A)`` and where the clip was active.

    logp, old_logp: [B, T]; advantages: [B] (one per sequence). Returns ([B, T], bool [B, T]).
    """
    ratio = torch.exp(logp - old_logp)  # [B, T]
    adv = advantages.unsqueeze(1)  # [B, 1]
    unclipped = ratio * adv  # [B, T]
    clipped = torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high) * adv  # [B, T]
    loss = -torch.minimum(unclipped, clipped)  # [B, T]
    return loss, clipped < unclipped  # clip active there


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(policy || ref), per token: exp(d) - d - 1 with d = ref - logp."""
    d = ref_logp - logp  # [B, T]
    return torch.exp(d) - d - 1.0  # [B, T], >= 0


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target) per position without materialising the full log-softmax twice.

    logits: [B, T, V] (already divided by the temperature); targets: [B, T] -> [B, T].
    """
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # [B, T]
    return picked - torch.logsumexp(logits, dim=-1)  # [B, T]


@torch.no_grad()
def token_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of the sampling distribution per position: [B, T, V] -> [B, T]."""
    logp = torch.log_softmax(logits.float(), dim=-1)  # [B, T, V]
    return -(logp.exp() * logp).sum(-1)  # [B, T]
