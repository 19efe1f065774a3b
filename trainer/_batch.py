"""What one GRPO step carries: rolled-out groups, packed micro-batches, and the update's sums.

Kept apart from the loop in ``grpo.py`` so the loop reads as the algorithm, not as bookkeeping.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from passband.trainer.tis import mismatch_metrics

__all__ = [
    "Group",
    "NO_UPDATE",
    "UpdateStats",
    "collate",
    "pack",
    "packed_batch",
    "first_fit",
    "sequences",
    "micro_batches",
]


@dataclass
class Group:
    """G completions of one prompt and their verdicts, as rolled out (never changed afterwards;
    which groups are trained on is computed by the loop, not written here)."""

    prompt_id: Any  # the dataset id (what the curriculum samples)
    prompt_tokens: list[int]  # the prompt's token ids
    completions: list[list[int]]
    truncated: list[bool]
    verdicts: list[Any]
    policy_version: int
    sampler_logp: list[list[float]] | None = None  # the engine's token log-probs (vLLM only)

    @property
    def prompt_ids(self) -> list[int]:
        """Deprecated alias of ``prompt_tokens`` (token ids; ``prompt_id`` is the dataset id)."""
        warnings.warn("Group.prompt_ids is renamed prompt_tokens", DeprecationWarning, stacklevel=2)
        return self.prompt_tokens

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
        """Fewer than two checkable answers, or all their rewards equal as the advantages see
        them (float32: rewards 1.0 and 1.0 + 1e-8 are one value there, and a group kept for
        them would train with all-zero advantages and only dilute the step)."""
        scores = np.asarray([v.score for v in self.verdicts if v.checkable], dtype=np.float32)
        return len(scores) < 2 or float(scores.max()) - float(scores.min()) < 1e-9


@dataclass
class UpdateStats:
    """Sums over the update, reported as token means in the metrics line."""

    tokens: float = 0.0
    kl: float = 0.0
    clipped: float = 0.0
    entropy: float = 0.0
    loss: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    mismatch: dict[str, float] | None = None  # ``tis.mismatch_sums`` added up (sampled runs)

    def add_mismatch(self, sums: dict[str, float]) -> None:
        """Add one micro-batch's ``tis.mismatch_sums``: sums add, the maximum is the largest."""
        if self.mismatch is None:
            self.mismatch = dict(sums)
            return
        for key, value in sums.items():
            self.mismatch[key] = (
                max(self.mismatch[key], value) if key == "max" else (self.mismatch[key] + value)
            )

    def reduce(self, dist) -> None:
        """Sum the update's statistics over the ranks (``dist``: ``_distributed.Dist``; one
        all-reduce), the mismatch's maximum too when any rank sampled with log-probs."""
        keys = ("tokens", "abs", "kl", "capped")
        mis = self.mismatch or dict.fromkeys((*keys, "max"), 0.0)
        out = dist.sum(
            [self.tokens, self.kl, self.clipped, self.entropy, *(mis[k] for k in keys), *self.loss]
        )
        self.tokens, self.kl, self.clipped, self.entropy = out[:4]
        summed, self.loss = dict(zip(keys, out[4 : 4 + len(keys)])), out[4 + len(keys) :]
        if summed["tokens"] > 0:  # the same on every rank, so all take part in the max
            self.mismatch = {**summed, "max": dist.max([mis["max"]])[0]}
        elif self.mismatch is not None:
            self.mismatch = {**summed, "max": 0.0}

    def result(self, beta: float) -> dict[str, float | None]:
        t = max(self.tokens, 1.0)
        out = {
            "kl": self.kl / t if beta > 0 else None,
            "clip_fraction": self.clipped / t,
            "entropy": self.entropy / t,
            "grad_norm": float(np.mean(self.grad_norm)),
            "loss": float(np.mean(self.loss)),
        }
        if self.mismatch is not None:  # sampled runs (vLLM): rollout/logp_diff_mean...
            out.update(mismatch_metrics(self.mismatch))
        return out


NO_UPDATE = {"kl": None, "clip_fraction": None, "entropy": None, "grad_norm": None, "loss": None}


def sequences(groups: list[Group], mask_truncated: bool) -> list[tuple[list[int], list[int], bool]]:
    """(prompt tokens, completion tokens, in the loss) of every completion, group by group."""
    return [
        (g.prompt_tokens, comp, ok and not (mask_truncated and cut))
        for g in groups
        for comp, ok, cut in zip(g.completions, g.valid, g.truncated)
    ]


def micro_batches(
    seqs: list, adv: torch.Tensor, sampled: list, dist, grad_accum: int, collate_fn
) -> list[dict[str, torch.Tensor]]:
    """This rank's slice of the sequences, split for accumulation and collated by ``collate_fn``.
    A rank left with none runs one fully masked sequence (zero loss), because DDP needs every
    rank in the all-reduce. ``sampled``: the sampler's log-probs per sequence (vLLM), attached
    when all have them."""
    from passband.trainer.tis import rollout_logprobs_tensor

    mine = np.array(dist.shard(len(seqs)), dtype=np.int64)
    count = dist.micro_batch_count(len(seqs), grad_accum)  # FSDP: the same on every rank
    blank = ([(seqs[0][0], seqs[0][1], False)], torch.zeros(1))  # contributes nothing
    chunks = np.array_split(mine, count or min(grad_accum, max(1, len(mine))))
    micro = [
        collate_fn([seqs[i] for i in idx], adv[torch.as_tensor(idx)])
        if len(idx)
        else collate_fn(*blank)
        for idx in chunks
    ]
    for mb, idx in zip(micro, chunks) if sampled and all(x is not None for x in sampled) else ():
        mb["sampler_logp"] = rollout_logprobs_tensor(
            [sampled[i] for i in idx], mb["mask"].shape[1], mb["mask"].device
        )  # [b, C]
    return micro


def collate(seqs: list, adv: torch.Tensor, pad_id: int, device) -> dict[str, torch.Tensor]:
    """Left-padded prompts, right-padded completions: every completion starts at column P.

    ``seqs`` holds ``(prompt_ids, completion_ids, use)``; ``use`` False masks the completion out.
    """
    P = max(len(p) for p, _, _ in seqs)
    C = max(max(len(x) for _, x, _ in seqs), 1)
    ids = torch.full((len(seqs), P + C), pad_id, dtype=torch.long)  # [b, P+C]
    attn = torch.zeros((len(seqs), P + C), dtype=torch.long)  # [b, P+C]
    mask = torch.zeros((len(seqs), C), dtype=torch.float32)  # [b, C]
    for i, (prompt, comp, use) in enumerate(seqs):
        ids[i, P - len(prompt) : P] = torch.tensor(prompt)
        ids[i, P : P + len(comp)] = torch.tensor(comp, dtype=torch.long)
        attn[i, P - len(prompt) : P + len(comp)] = 1
        mask[i, : len(comp)] = float(use)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)  # [b, P+C]
    d = device
    return {
        "input_ids": ids.to(d),
        "attention_mask": attn.to(d),
        "position_ids": pos.to(d),
        "targets": ids[:, P:].to(d),
        "mask": mask.to(d),
        "adv": adv.to(d),
    }


def pack(seqs: list, adv: torch.Tensor, device) -> dict[str, torch.Tensor]:
    """Sequences packed end to end into rows as wide as the longest one: no padding inside a row,
    a little at the ends. Position ids restart at 0 for each sequence, which (with no attention
    mask) makes the model attend within each sequence only (transformers' packed format).

    ``seqs`` holds ``(prompt_ids, completion_ids, use)``. Besides the model inputs it returns where
    each completion token's logit is (``rows``, ``cols``: the position before the token) and where
    it goes in the ``[b, C]`` grid the losses use (``seq``, ``tok``), so the loss math is the
    padded layout's exactly.
    """
    lengths = [len(p) + len(c) for p, c, _ in seqs]
    width = max(lengths)
    bins = first_fit(lengths, width)  # few rows, little padding
    flat_ids, flat_pos = [0] * (len(bins) * width), [0] * (len(bins) * width)  # [R * W]
    where: list[tuple[int, int, int, int]] = []  # (row, col, seq, tok) per token
    for r, members in enumerate(bins):
        start = r * width  # flat offset of this row
        for i in members:
            prompt, comp, _ = seqs[i]
            n = len(prompt) + len(comp)
            flat_ids[start : start + n] = [*prompt, *comp]
            flat_pos[start : start + n] = range(n)
            col = start - r * width + len(prompt) - 1
            where += [(r, col + k, i, k) for k in range(len(comp))]
            start += n
        flat_pos[start : (r + 1) * width] = range((r + 1) * width - start)  # the tail: ignored
    ids = torch.tensor(flat_ids, dtype=torch.long).view(len(bins), width)  # [R, W]
    pos = torch.tensor(flat_pos, dtype=torch.long).view(len(bins), width)  # [R, W]
    index = torch.tensor(where, dtype=torch.long).reshape(-1, 4)  # [K, 4]
    return packed_batch(ids, pos, index, ids[index[:, 0], index[:, 1] + 1], seqs, adv, device)


def first_fit(lengths: list[int], width: int) -> list[list[int]]:
    """Item indices per row of ``width``, longest first, each into the first row with room."""
    rows: list[list[int]] = []
    free: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        r = next((k for k, room in enumerate(free) if room >= lengths[i]), None)
        if r is None:
            rows.append([]), free.append(width)
            r = len(rows) - 1
        rows[r].append(i)
        free[r] -= lengths[i]
    return rows


def packed_batch(ids, pos, index, targets, seqs: list, adv: torch.Tensor, device, **extra) -> dict:
    """A packed micro-batch: inputs ``ids`` / ``pos`` [R, W]; ``index`` [K, 4] (row, column of the
    logit, sequence, token) and ``targets`` [K] of every completion token; the [b, C] loss mask of
    ``seqs``; ``extra`` model inputs (a 4D ``attention_mask``). All moved to ``device``."""
    C = max(max(len(c) for _, c, _ in seqs), 1)
    lengths = torch.tensor([len(c) for _, c, _ in seqs])  # [b]
    use = torch.tensor([float(u) for _, _, u in seqs])  # [b]
    mask = (torch.arange(C) < lengths.unsqueeze(1)).float() * use.unsqueeze(1)  # [b, C]
    out = {"input_ids": ids, "position_ids": pos, **extra}
    out.update(rows=index[:, 0], cols=index[:, 1], seq=index[:, 2], tok=index[:, 3])
    out.update(targets=targets, mask=mask, adv=adv)
    return {k: v.to(device) for k, v in out.items()}
