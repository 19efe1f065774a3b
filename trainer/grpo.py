"""The GRPO loop, top to bottom: ``GRPOTrainer(model, tokenizer, train_dataset, reward, config).train()``.

Each step:
  1. sample prompts (pass-rate curriculum, or uniform) and roll out G completions per prompt;
  2. score them with ``verify_batch`` under hard timeouts; ``error`` / ``timeout`` verdicts are
     masked out of the group statistics and the loss, never trained on as zeros;
  3. tell the curriculum each group's binary pass count (``verdict.passed``);
  4. drop groups with zero reward variance; the first round drew as many extra prompts as the
     curriculum's P(signal) says are needed (``_refill``), so a top-up runs only on a real
     shortfall, at most ``max_refill_rounds``; past that, train on the smaller batch and say so;
  5. advantages per group, clipped surrogate with clip-higher, k3 KL against a frozen reference
     (only when beta > 0), mu inner iterations, micro-batched gradient accumulation, gradient
     clipping, AdamW with warm-up and a constant or cosine schedule;
  6. a metrics line (with each phase's seconds, ``time/sample_s`` ... ``time/sync_s``), one line
     per group, alerts; an atomic checkpoint every ``checkpoint_every``.
The update (``_update``) packs micro-batches without padding and takes log-probs a vocabulary chunk
at a time (``_logprobs``); mu = 1 has no old-policy pass. Resume and checkpoints: ``_runstate``.
Verifier workers start while the model loads.

Under ``torchrun`` / ``accelerate launch`` each rank rolls out its slice of the groups, all ranks see
every group, DDP sums the gradients: one process's result on N (``passband.trainer._distributed``);
``distributed = "fsdp"`` shards parameters, gradients and optimizer state (``passband.trainer._fsdp``).
Rollouts come from Hugging Face ``generate`` or a colocated vLLM engine (``rollout_backend``);
vLLM's token log-probs drive the truncated importance-sampling correction (``tis_cap``) and the
``rollout/*`` mismatch metrics. LoRA: ``lora_r > 0`` or a peft model (``passband.trainer.lora``);
its base with adapters off is then the KL reference, so no copy is made.
Deliberately left out: DeepSpeed, value or reward models.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from passband.trainer._batch import (
    NO_UPDATE,
    Group,
    sequences,
)
from passband.trainer._data import as_rows, check_rows, prompt_of
from passband.trainer._distributed import group_seed, init_distributed, warn_if_unbalanced
from passband.trainer._metrics import (
    MetricsWriter,
    PhaseTimer,
    ProgressBar,
    grad_weights,
    group_lines,
    group_metrics,
    length_metrics,
    reward_metrics,
)
from passband.trainer._outdir import claim_output_dir
from passband.trainer._prefix_pack import layouts_that_work
from passband.trainer._recommended import check_learning_rate
from passband.trainer._refill import (
    draws_for,
    predicted_signal,
    real_shortfall,
    rollout_room,
    rollout_rows,
    short_batch_note,
)
from passband.trainer._runstate import RunStateMixin
from passband.trainer._sampler_api import (
    check_ids,
    check_sampler,
    draw,
    observe_group,
    round_group_sizes,
    sampler_metrics,
)
from passband.trainer._scoring import Scorer
from passband.trainer._startup import start_verifier_workers
from passband.trainer._update import UpdateMixin
from passband.trainer.advantages import get_advantage
from passband.trainer.alerts import AlertMonitor
from passband.trainer.config import GRPOConfig
from passband.trainer.lora import is_lora, lora_from_config
from passband.trainer.losses import get_aggregation
from passband.trainer.models import frozen_copy, load_model_and_tokenizer, weights_stamp
from passband.trainer.rollout import RolloutBackend, check_backend
from passband.trainer.rollout_vllm import make_rollout_backend
from passband.trainer.sampling import make_sampler

__all__ = ["GRPOTrainer"]


class GRPOTrainer(UpdateMixin, RunStateMixin):
    """Group Relative Policy Optimisation for any Hugging Face causal LM.

    model, tokenizer: objects or local directories (``tokenizer=None`` with a model path uses it).
    train_dataset: a ``datasets.Dataset`` or a list of dicts with ``prompt`` (text or chat
        messages) or ``messages``, plus the reference columns the reward needs.
    reward: a ``Reward``, a registered verifier name, or a callable ``(completion, **row)``.
    reference_columns: verifier keyword -> dataset column (for names and ``Reward`` objects).
    rollout_backend: a ``RolloutBackend``; default: the one ``config.rollout_backend`` names.
    priors / sampler: position -> (passes, trials) (default: the rows' pre-scores), or any sampler.
    """

    def __init__(
        self,
        model,
        tokenizer,
        train_dataset,
        reward,
        config: GRPOConfig | None = None,
        *,
        reference_columns: Mapping[str, str] | None = None,
        rollout_backend: RolloutBackend | None = None,
        priors=None,
        sampler=None,
    ):
        self.config = c = GRPOConfig.coerce(config)  # None, a GRPOConfig or a mapping
        check_sampler(sampler, priors, c.group_size)  # before the model loads
        self._own_sampler = sampler is None  # built from the config: resume names its changes
        check_backend(rollout_backend, c)
        self.dist = init_distributed(c.distributed)  # one process unless torchrun / accelerate
        self.rows, _ = as_rows(train_dataset)  # checked in full once the tokenizer is loaded
        self.scorer = Scorer(
            reward,
            reference_columns,
            c.verifier_timeout,
            c.verifier_workers,
            success_threshold=c.curriculum.success_threshold,
        )
        # the verifier workers start while the model loads and the first rollout generates
        self._warm = start_verifier_workers(self.scorer, self.rows, c.verifier_workers)
        self._load_policy(model, tokenizer)  # the model, its reference and their wrappers
        self._own_backend = rollout_backend is None  # close() shuts down only what it started
        self.backend = rollout_backend or make_rollout_backend(
            self.model, self.tokenizer, c, self.dist.world_size
        )
        self.pad_id = self.backend.pad_id
        # packed micro-batches, and a group's prompt once in them, where the model serves them
        self._pack, self._share = (
            (False, False) if self.dist.sharded else layouts_that_work(self.model, self.device)
        )
        self._build_optimizer()
        self._bar: ProgressBar | None = None
        self._write(f"passband: {self.scorer.success_rule}")
        self.sampler = make_sampler(
            self.rows,
            c,
            priors=priors,
            model=model,
            log=self._write,
            kept=self._positions,
            given=sampler,
            reward=self.scorer.reward,  # as scored: a TRL function as passband calls it
        )
        self.advantage_fn = get_advantage(c.advantage)
        self.aggregate = get_aggregation(c.loss_aggregation)
        self.writer = MetricsWriter(
            c.output_dir, tensorboard=c.tensorboard, enabled=self.dist.is_main
        )
        self.alerts = AlertMonitor() if self.dist.is_main else None
        self.step, self.policy_version, self.elapsed_s, self._short_batches = 0, 0, 0.0, 0
        self._time, self._calls = PhaseTimer(), 0  # this step's phases and generate calls

    def _load_policy(self, model, tokenizer) -> None:
        """Load the model and tokenizer, check every row, copy the KL reference (before any
        update or checkpoint load), and wrap the policy for DDP / FSDP."""
        c = self.config
        from_path = not isinstance(model, torch.nn.Module)
        self.model, self.tokenizer = load_model_and_tokenizer(model, tokenizer, c.disable_dropout)
        if torch.cuda.is_available() and (from_path or self.dist.enabled):
            self.model.to(self.dist.device())  # several ranks: each on its own GPU (NCCL)
        self.dist.broadcast_from_main(self.model)  # every rank starts from rank 0's weights
        self.rows, self._positions, self._untruncated = check_rows(  # every row, now
            self.rows, self.scorer, self.tokenizer, self.model, c
        )
        self.device = next(self.model.parameters()).device
        # The reference is the policy as given, copied before any update or checkpoint load;
        # a LoRA policy needs no copy: its base, with the adapters switched off, is the reference.
        self.model = lora_from_config(self.model, c)  # lora_r > 0 and not already a peft model
        self.lora = is_lora(self.model)
        if c.pretrained and not self.lora and self.dist.is_main:  # LoRA recipes run higher
            check_learning_rate(c.learning_rate, sum(p.numel() for p in self.model.parameters()))
        if self.lora and self.dist.sharded:
            raise ValueError(
                "LoRA with FSDP is not supported: launch without --use_fsdp (DDP) "
                'and set distributed = "ddp"'
            )
        self.reference = frozen_copy(self.model) if c.beta > 0 and not self.lora else None
        # while the policy's weights are still those copied, its log-probs are the reference's
        self._reference_stamp = weights_stamp(self.model) if self.reference is not None else None
        if self.reference is not None and self.dist.sharded:
            self.reference = self.dist.wrap(self.reference, bf16=c.bf16)  # sharded like the policy
        if c.gradient_checkpointing:
            self.model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False}
            )
        self.policy = self.dist.wrap(self.model, bf16=c.bf16)  # DDP / FSDP with several ranks
        warn_if_unbalanced(self.dist, c)

    def _build_optimizer(self) -> None:
        c = self.config
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=c.learning_rate, weight_decay=c.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda k: c.lr_factor(k))

    # ------------------------------------------------------------------ the run
    def train(self) -> dict[str, Any]:
        """Run until ``max_steps``; returns the last metrics line."""
        c = self.config
        lock = claim_output_dir(
            c.output_dir, resume=c.resume, overwrite=c.overwrite, enabled=self.dist.is_main
        )  # a second run on it is refused
        self._begin()
        self.dist.barrier()  # rank 0 has reset or cut back the run directory
        self._bar = ProgressBar(c.max_steps, self.step, c.progress and self.dist.is_main)
        if self.dist.enabled:
            self._write(f"passband: {self.dist.world_size} processes, {self.dist.strategy}")
        last: dict[str, Any] = {}
        try:
            while self.step < c.max_steps:
                last = self.train_step()
                if self.step % c.checkpoint_every == 0 or self.step == c.max_steps:
                    self.save()
        finally:
            self._bar.close()
            self.writer.close()
            lock.release()
        return last

    def train_step(self) -> dict[str, Any]:
        """One optimizer step: collect groups (one round, rarely a top-up), update, log."""
        start = time.perf_counter()
        self._time, self._calls = PhaseTimer(), 0
        lr, version = self.optimizer.param_groups[0]["lr"], self.policy_version
        groups, rounds = self._collect_groups()
        kept = self._trained(groups)
        self._say_if_short(len(kept), rounds)
        self.backend.sleep()  # vLLM sleep mode frees its GPU memory; the sync wakes it
        with self._time("update"):
            stats = self._update(kept) if kept else dict(NO_UPDATE)
        tokens = [len(x) if use else 0 for _, x, use in sequences(kept, self.config.mask_truncated)]
        weights = grad_weights(kept, self._advantages(kept), tokens) if kept else []
        with warnings.catch_warnings():  # also after a skipped update: lr follows the step count
            warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step")
            self.scheduler.step()
        self.step, step_s = self.step + 1, time.perf_counter() - start
        self.elapsed_s += step_s
        metrics = {
            "step": self.step,
            "time_s": self.elapsed_s,
            "policy_version": version,
            **reward_metrics(groups),
            **group_metrics(groups, kept, rounds),
            **length_metrics(groups),
            **stats,
            "lr": lr,
            "time/step_s": step_s,
            **self._time.metrics(),
            "generate/calls": self._calls,
            "throughput/tokens_per_s": sum(len(x) for g in groups for x in g.completions) / step_s,
            **{f"curriculum/{k}": v for k, v in sampler_metrics(self.sampler).items()},
        }
        metrics["alerts"] = self._check_alerts(metrics)
        lines = group_lines(self.step, groups, kept, weights, self._positions)
        self.writer.log_step(metrics, lines)
        if self._bar is not None:
            self._bar.update(metrics)
        return metrics

    def close(self) -> None:
        """Release what the trainer started (a vLLM engine it built); safe to call twice."""
        if self._own_backend:
            self.backend.close()
            self._own_backend = False

    def __enter__(self) -> GRPOTrainer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ rollout and scoring
    def _collect_groups(self) -> tuple[list[Group], int]:
        """Roll out enough prompts for ``prompts_per_step`` groups with signal in one round, as
        the sampler predicts (``_refill``); top up only on a shortfall, for a bounded number
        of rounds. Without refills (``max_refill_rounds = 0``) exactly ``prompts_per_step``."""
        c = self.config
        groups, rounds = [], -1  # groups rolled out so far, refill rounds (-1: none yet)
        while rounds < (c.max_refill_rounds if c.filter_zero_variance else 0):
            needed = c.prompts_per_step - len(self._trained(groups))
            room = rollout_room(len(groups), c.prompts_per_step, c.max_oversample)  # budget left
            if not real_shortfall(needed, c.prompts_per_step, first_round=rounds < 0) or not room:
                break
            used = [g.prompt_id for g in groups]
            with self._time("sample"):
                ids = draw(self.sampler, min(needed, room), used)  # first draw empty: an error
                if ids and c.filter_zero_variance and c.max_refill_rounds > 0:
                    chance = predicted_signal(self.sampler, ids)
                    more = draws_for(needed, chance, min(len(self.rows), room), c.max_oversample)
                    ids += draw(self.sampler, more - needed, used + ids) if more > needed else []
            if not ids:  # nothing left to draw: no round
                break
            rounds += 1
            groups += self._rollout_groups(ids, rounds)
        return groups, max(rounds, 0)

    def _trained(self, groups: list[Group]) -> list[Group]:
        """The first ``prompts_per_step`` groups with reward variance (unfiltered: checkable)."""
        c = self.config
        ok = [
            g for g in groups if (not g.zero_variance if c.filter_zero_variance else any(g.valid))
        ]
        return ok[: c.prompts_per_step]

    def _rollout_groups(self, prompt_ids: Sequence[Any], round_: int = 0) -> list[Group]:
        """This rank rolls out and scores its slice; every rank gets all groups and observes them.
        Each prompt is seeded by (seed, step, round, position in the round): its samples do not
        depend on which rank draws it or what shares its batch. Answers per prompt: ``G`` each,
        or the sampler's split of ``G`` x prompts (``[curriculum] adaptive_group_size``)."""
        c, G = self.config, self.config.group_size
        prompt_ids = check_ids(self.sampler, prompt_ids, len(self.rows))  # positions, or an error
        sizes = round_group_sizes(self.sampler, prompt_ids, G)
        per_call = rollout_rows(c, self.dist.world_size) // G  # prompts per generate call
        chunks = self.dist.shard_chunks(len(prompt_ids), max(1, per_call))
        mine = [k for chunk in chunks for k in chunk]  # positions in the round's prompt list
        rows = [self.rows[prompt_ids[k]] for k in mine]
        n = [sizes[k] for k in mine]
        seeds = [group_seed(c.seed, self.step, round_, k) for k in mine]
        with (
            self._time("generate"),
            self._autocast(),
            self.dist.generation(self.model, uses_model=self.backend.shares_policy),
        ):
            same = len(set(n)) == 1  # one number when all groups are alike (the fixed G)
            prompts = [prompt_of(r) for r in rows]
            out = self.backend.rollout(prompts, n[0] if same else n, seeds) if rows else None
            if rows:
                out.check_shape(n, type(self.backend).__name__)
        self._calls += bool(rows)
        with self._time("score"):
            verdicts = (
                self.scorer(
                    out.texts,
                    [r for r, k in zip(rows, n) for _ in range(k)],
                    out.completion_ids,
                )
                if rows
                else []
            )
        logp = out.logprobs if out is not None else None  # engines that report them (vLLM)
        starts = [0, *itertools.accumulate(n)]  # prompt k owns rows starts[i]:starts[i + 1]
        local = [
            Group(
                prompt_ids[k],
                out.prompt_tokens[a],
                out.completion_ids[a:b],
                out.truncated[a:b],
                verdicts[a:b],
                out.policy_version,
                sampler_logp=logp[a:b] if logp else None,
            )
            for k, a, b in zip(mine, starts, starts[1:])
        ]
        groups = self.dist.gather(local)  # in position order: the same list on every rank
        self.scorer.check_first([v for g in groups for v in g.verdicts])
        for g in groups:
            observe_group(self.sampler, g.prompt_id, g.passes, sum(g.valid))
        return groups

    # ------------------------------------------------------------------ messages
    def _say_if_short(self, kept: int, rounds: int) -> None:
        c = self.config
        if not c.filter_zero_variance or kept >= c.prompts_per_step:
            return
        self._short_batches += 1
        if self._short_batches <= 3 or self._short_batches % 50 == 0:
            self._write(short_batch_note(self.step + 1, kept, rounds, self._short_batches, c))

    def _check_alerts(self, metrics: dict[str, Any]) -> list[str]:
        lines = (
            [f"{a.name}: {a.message}" for a in self.alerts.update(metrics)] if self.alerts else []
        )
        for line in lines:
            self._write(f"passband alert (step {self.step}): {line}")
        return lines

    def _write(self, line: str) -> None:
        if self.dist.is_main:
            self._bar.write(line) if self._bar is not None else print(line)
