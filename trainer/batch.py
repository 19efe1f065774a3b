"""What one GRPO step carries: rolled-out groups, padded micro-batches, and the update's sums.

Kept apart from the loop in ``grpo.py`` so the loop reads as the algorithm, not as bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

__all__ = ["Group", "NO_UPDATE", "UpdateStats", "collate"]


@dataclass
class Group:
    """G completions of one prompt, their verdicts, and whether the group is trained on."""

    prompt_id: Any
    prompt_ids: list[int]
    completions: list[list[int]]
    truncated: list[bool]
    verdicts: list[Any]
    policy_version: int
    kept: bool = False
    grad_weight: float = 0.0  # sum of |advantage| x loss tokens, for groups.jsonl
    sampler_logp: list[list[float]] | None = None  # the engine's token log-probs (vLLM only)

    @property
    def valid(self) -> list[bool]:
        return [v.checkable for v in self.verdicts]

    @property
    def rewards(self) -> list[float]:
        return [v.score for v in self.verdicts]

    @property
    def passes(self) -> int:
        return sum(v.passed for v in self.verdicts)

    @property
    def zero_variance(self) -> bool:
        scores = [v.score for v in self.verdicts if v.checkable]
        return len(scores) < 2 or max(scores) - min(scores) < 1e-9


@dataclass
class UpdateStats:
    """Sums over the update, reported as token means in the metrics line."""

    tokens: float = 0.0
    kl: float = 0.0
    clipped: float = 0.0
    entropy: float = 0.0
    loss: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    mismatch: list[dict[str, float]] = field(default_factory=list)  # rollout/*, per micro-batch

    def result(self, beta: float) -> dict[str, float | None]:
        t = max(self.tokens, 1.0)
        out = {"kl": self.kl / t if beta > 0 else None, "clip_fraction": self.clipped / t,
               "entropy": self.entropy / t, "grad_norm": float(np.mean(self.grad_norm)),
               "loss": float(np.mean(self.loss))}
        for key in self.mismatch[0] if self.mismatch else ():  # vLLM runs: rollout/logp_diff_mean...
            out[key] = float(np.mean([m[key] for m in self.mismatch]))
        return out


NO_UPDATE = {"kl": None, "clip_fraction": None, "entropy": None, "grad_norm": None, "loss": None}


def collate(seqs: list, adv: torch.Tensor, pad_id: int, device) -> dict[str, torch.Tensor]:
    """Left-padded prompts, right-padded completions: every completion starts at column P.

    ``seqs`` holds ``(prompt_ids, completion_ids, use)``; ``use`` False masks the completion out.
    """
    P = max(len(p) for p, _, _ in seqs)
    C = max(max(len(x) for _, x, _ in seqs), 1)
    ids = torch.full((len(seqs), P + C), pad_id, dtype=torch.long)  # [b, P+C]
    attn = torch.zeros((len(seqs), P + C), dtype=torch.long)             # [b, P+C]
    mask = torch.zeros((len(seqs), C), dtype=torch.float32)              # [b, C]
    for i, (prompt, comp, use) in enumerate(seqs):
        ids[i, P - len(prompt):P] = torch.tensor(prompt)
        ids[i, P:P + len(comp)] = torch.tensor(comp, dtype=torch.long)
        attn[i, P - len(prompt):P + len(comp)] = 1
        mask[i, :len(comp)] = float(use)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)                              # [b, P+C]
    d = device
    return {"input_ids": ids.to(d), "attention_mask": attn.to(d), "position_ids": pos.to(d),
            "targets": ids[:, P:].to(d), "mask": mask.to(d), "adv": adv.to(d)}
