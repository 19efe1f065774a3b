"""The update half of ``GRPOTrainer``: advantages, the clipped surrogate with its k3 KL, mu inner
iterations over packed micro-batches, and the policy sync. A mixin: it reads the trainer's
config, model, optimizer and backend, and is not usable on its own.
"""

from __future__ import annotations

import contextlib
import math

import torch
from torch.nn.utils.rnn import pad_sequence

from passband.trainer._batch import Group, UpdateStats, collate, micro_batches, pack, sequences
from passband.trainer._fsdp import full_tensor
from passband.trainer._logprobs import completion_logprobs
from passband.trainer._prefix_pack import attention_kind, pack_shared
from passband.trainer.lora import adapters_disabled
from passband.trainer.losses import BatchNorms, clipped_surrogate, k3_kl
from passband.trainer.models import same_weights
from passband.trainer.rollout import StalePolicyError
from passband.trainer.tis import mismatch_sums, tis_weights


class UpdateMixin:
    """``_update(groups)`` and its parts, for ``GRPOTrainer``."""

    def _update(self, groups: list[Group]) -> dict[str, float | None]:
        c = self.config
        stale = sorted({g.policy_version for g in groups} - {self.policy_version})
        if stale:
            raise StalePolicyError(
                f"completions from policy version(s) {stale} cannot train policy "
                f"version {self.policy_version}: the ratio would be computed "
                "against other weights. Roll out again after each update."
            )
        adv = self._advantages(groups)  # [B = sum of group sizes]
        seqs = sequences(groups, c.mask_truncated)
        sampled = [lp for g in groups for lp in (g.sampler_logp or [None] * len(g.completions))]
        micro = micro_batches(seqs, adv, sampled, self.dist, c.grad_accum, self._collate)
        norms = batch_norms(seqs, c, len(groups))
        with torch.no_grad():  # mu = 1: the ratio is exp(logp - logp.detach()); no extra pass
            old = [self._logprobs(self.model, mb)[0] for mb in micro] if c.mu > 1 else None
            if c.beta <= 0:
                ref = None
            elif self._reference_unchanged():  # the reference's log-probs are the policy's own:
                ref = old  # these (mu > 1), or None and _micro_step uses the policy's (mu = 1)
            else:
                ref = [self._reference_logprobs(mb) for mb in micro]
        stats, params = UpdateStats(), [p for p in self.model.parameters() if p.requires_grad]
        self.model.train()
        for it in range(c.mu):
            self.optimizer.zero_grad(set_to_none=True)
            loss = 0.0
            for k, mb in enumerate(micro):  # DDP all-reduces the summed gradient after the last
                with self.dist.no_sync(self.policy, skip=k < len(micro) - 1):
                    loss += self._micro_step(
                        mb,
                        old[k] if old else None,
                        ref[k] if ref else None,
                        norms,
                        stats,
                        first=(it == 0),
                    )
            norm = torch.nn.utils.clip_grad_norm_(params, c.max_grad_norm or float("inf"))
            self.optimizer.step()
            stats.loss.append(loss)
            stats.grad_norm.append(float(full_tensor(norm)))  # FSDP: a DTensor
        self.optimizer.zero_grad(set_to_none=True)
        stats.reduce(self.dist)
        self.policy_version += 1
        with self._time("sync"):
            self.backend.sync(self.model, self.policy_version)
        return stats.result(c.beta)

    def _advantages(self, groups: list[Group]) -> torch.Tensor:
        """One advantage per completion, group by group. Groups may differ in size (adaptive G):
        they are padded to the widest as invalid entries, which the estimators leave out of
        every statistic, and the padding is dropped again. Rewards are float32, as estimators
        registered with ``register_advantage`` receive them and as ``Group.zero_variance``
        compares them."""
        rewards = pad_sequence(
            [torch.tensor(g.rewards, dtype=torch.float32) for g in groups], batch_first=True
        )  # [N, G_max]
        valid = pad_sequence(
            [torch.tensor(g.valid, dtype=torch.bool) for g in groups], batch_first=True
        )  # [N, G_max]: padding is False
        sizes = torch.tensor([len(g.verdicts) for g in groups])  # [N]
        real = torch.arange(rewards.shape[1]) < sizes.unsqueeze(1)  # [N, G_max]: rows that exist
        adv = self.advantage_fn(rewards, valid)  # [N, G_max]
        return adv[real]  # [B = sum of group sizes], in group order

    def _micro_step(
        self,
        mb: dict[str, torch.Tensor],
        old_logp: torch.Tensor | None,
        ref_logp: torch.Tensor | None,
        norms: BatchNorms,
        stats: UpdateStats,
        first: bool,
    ) -> float:
        """Forward and backward of one micro-batch; its loss is its share of the batch loss."""
        c = self.config
        logp, entropy = self._logprobs(self.policy, mb, entropy=first)  # [b, C]
        if old_logp is None:
            old_logp = logp.detach()  # [b, C]
        loss_tok, clip_on = clipped_surrogate(
            logp, old_logp, mb["adv"], c.clip_low, c.clip_high
        )  # [b, C]
        mask = mb["mask"]  # [b, C]
        if "sampler_logp" in mb:  # vLLM sampled these tokens: correct (TIS) and log the mismatch
            sampler = mb["sampler_logp"]  # [b, C]
            if first:
                stats.add_mismatch(mismatch_sums(old_logp, sampler, mask, c.tis_cap or math.inf))
            if c.tis_cap > 0:
                loss_tok = loss_tok * tis_weights(old_logp, sampler, c.tis_cap)  # [b, C]
        if c.beta > 0:  # no ref_logp: the weights are the reference's (``_reference_unchanged``)
            kl = k3_kl(logp, ref_logp if ref_logp is not None else logp.detach())  # [b, C]
            loss_tok = loss_tok + c.beta * kl
            stats.kl += float((kl.detach() * mask).sum()) if first else 0.0
        loss = self.aggregate(loss_tok, mask, norms)
        (loss * self.dist.world_size).backward()  # DDP averages over ranks; the losses add up
        stats.clipped += float((clip_on * mask).sum()) / c.mu
        if first:
            stats.tokens += float(mask.sum())
            stats.entropy += float((entropy * mask).sum())
        return float(loss.detach())

    def _collate(self, seqs: list, adv: torch.Tensor) -> dict[str, torch.Tensor]:
        if self._pack and self._share:  # packed, each group's prompt once (_prefix_pack.py)
            additive = attention_kind(self.model) == "additive"
            dtype = next(self.model.parameters()).dtype
            return pack_shared(seqs, adv, self.device, additive=additive, dtype=dtype)
        return (
            pack(seqs, adv, self.device)
            if self._pack  # no padding computed
            else collate(seqs, adv, self.pad_id, self.device)
        )

    def _logprobs(self, model, mb: dict[str, torch.Tensor], entropy: bool = False):
        """Log-probs of the completion tokens under ``model`` at the sampling temperature."""
        with self._autocast():
            return completion_logprobs(model, mb, self.config.temperature, entropy=entropy)

    def _reference_unchanged(self) -> bool:
        """Whether the policy's weights are still the ones the KL reference was copied from (the
        first update of a fresh run): its forward would give the policy's own log-probs."""
        if not same_weights(self.model, self._reference_stamp):
            self._reference_stamp = None  # written since: never the copied weights again
        return self._reference_stamp is not None

    def _reference_logprobs(self, mb: dict[str, torch.Tensor]) -> torch.Tensor:
        with adapters_disabled(self.model) if self.lora else contextlib.nullcontext():
            return self._logprobs(self.model if self.lora else self.reference, mb)[0]

    def _autocast(self):
        if self.config.bf16 and self.device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()


def batch_norms(
    seqs: list[tuple[list[int], list[int], bool]], config, groups: int | None = None
) -> BatchNorms:
    """The loss normalisers of one optimizer batch (``seqs``: the global batch's sequences, of
    ``groups`` groups).

    With ``weigh_short_batches`` (off by default) a batch short of ``prompts_per_step`` groups is
    normalised as if it were whole (its counts scaled up by the missing share), so a step on 7
    informative groups of 16 moves about 7/16 as far as a full one, as in TRL, whose token mean
    counts the zero-advantage groups it keeps. Shortness is counted in groups: with adaptive
    group sizes a full batch of small groups is not short. (Without ``groups``: in sequences,
    against ``prompts_per_step x group_size``.) Without the setting every step is normalised by
    what it trained: a short batch takes a full-size step. BENCHMARKS.md (the spread task, the
    real model) has both measured."""
    tokens = sum(len(x) for _, x, use in seqs if use)  # masked ones are left out entirely
    count = sum(1 for *_, use in seqs if use)
    have, planned = (
        (len(seqs), config.prompts_per_step * config.group_size)
        if groups is None
        else (groups, config.prompts_per_step)
    )
    short = config.weigh_short_batches and 0 < have < planned  # groups were dropped; a
    scale = planned / have if short else 1.0  # masked (truncated) answer shrinks nothing
    return BatchNorms(
        tokens=tokens * scale, sequences=count * scale, constant=config.max_new_tokens
    )
