"""Advantage estimators, registered by name and chosen by ``GRPOConfig.advantage``.

Each takes rewards ``[N, G]`` (N groups of G completions) and a validity mask ``[N, G]`` (False for
completions whose verdict was ``error`` / ``timeout``: they are excluded from the statistics and
get advantage 0, so they contribute nothing to the loss) and returns advantages ``[N, G]``.
Groups of different sizes (adaptive G) arrive padded to the widest with invalid entries, so an
estimator that honours the mask needs nothing else.
Standard deviations are the unbiased (n - 1) estimate over the valid completions.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from passband.trainer.registry import ADVANTAGE_REGISTRY, register_advantage

__all__ = ["ADVANTAGE_FUNCTIONS", "get_advantage", "group_mean_std"]

AdvantageFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
ADVANTAGE_FUNCTIONS: dict[str, AdvantageFn] = ADVANTAGE_REGISTRY.functions
get_advantage = ADVANTAGE_REGISTRY.get
EPS = 1e-6


def group_mean_std(rewards: torch.Tensor, valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and unbiased std over the valid entries of each row: ``[N, 1]`` each."""
    v = valid.to(rewards.dtype)  # [N, G]
    count = v.sum(dim=1, keepdim=True)  # [N, 1]
    mean = (rewards * v).sum(dim=1, keepdim=True) / count.clamp(min=1)  # [N, 1]
    sq = ((rewards - mean) ** 2 * v).sum(dim=1, keepdim=True)  # [N, 1]
    std = (sq / (count - 1).clamp(min=1)).sqrt()  # [N, 1]
    return mean, std


@register_advantage("group")
def group_advantage(rewards: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """GRPO: (r - group mean) / (group std + eps)."""
    mean, std = group_mean_std(rewards, valid)
    return torch.where(valid, (rewards - mean) / (std + EPS), torch.zeros_like(rewards))


@register_advantage("no_std")
def no_std_advantage(rewards: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Dr. GRPO: r - group mean. No std scaling, so easy/hard groups are not up-weighted."""
    mean, _ = group_mean_std(rewards, valid)
    return torch.where(valid, rewards - mean, torch.zeros_like(rewards))


@register_advantage("batch_std")
def batch_std_advantage(rewards: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """(r - group mean) / (std of all valid rewards in the batch + eps)."""
    mean, _ = group_mean_std(rewards, valid)
    _, batch_std = group_mean_std(rewards.reshape(1, -1), valid.reshape(1, -1))  # [1, 1]
    return torch.where(valid, (rewards - mean) / (batch_std + EPS), torch.zeros_like(rewards))
