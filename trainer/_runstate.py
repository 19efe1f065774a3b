"""Run state of ``GRPOTrainer``: a fresh seeded start or a resume from the newest checkpoint, and
the atomic checkpoint itself. A mixin: it reads the trainer's config, model, optimizer, sampler and
writer, and is not usable on its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import signal
import threading
import warnings

import numpy as np
import torch

from passband.errors import ConfigError
from passband.trainer import _resume as resume
from passband.trainer._checkpoint import load_latest_checkpoint, rng_state, save_checkpoint
from passband.trainer._data import prompt_of
from passband.trainer._fsdp import full_model_state, full_optimizer_state
from passband.trainer._sampler_api import sampler_estimates, sampler_state


class RunStateMixin:
    """``_begin()`` and ``save()``, for ``GRPOTrainer``."""

    def _begin(self) -> None:
        """Resume from the newest checkpoint, or start fresh with every RNG seeded."""
        c = self.config
        if loaded := c.resume and load_latest_checkpoint(
            c.output_dir,
            model=self.model,
            optimizer=self.optimizer,
            scheduler=self.scheduler,
            rank=self.dist.rank,
            before_load=self._check_resumable,
        ):
            ckpt, state = loaded
            resume.check_same_data(state, ckpt, self.rows, self._data_digest())
            resume.reconcile(state, ckpt, c, self.optimizer, self.scheduler, say=self._write)
            for line in resume.changed_inputs(state, self._reward_record(), self._rows_digest()):
                self._write(f"passband: resume: {line}")
            seed = state.get("config", {}).get("seed", c.seed)
            if seed != c.seed:  # rollouts are seeded by it: the run goes on with its own seed
                self.config = c = dataclasses.replace(c, seed=seed)
            self.step, self.policy_version = state["step"], state["policy_version"]
            self.elapsed_s, self._short_batches = state["elapsed_s"], state["short_batches"]
            try:
                with warnings.catch_warnings():  # reconcile named each changed setting of a
                    if self._own_sampler:  # sampler the trainer built; a user's own still warns
                        warnings.filterwarnings("ignore", "resuming curriculum with changed")
                    self.sampler.load_state_dict(state["sampler"])
            except ValueError as exc:  # e.g. a curriculum state for other prompts
                raise ConfigError(f"cannot resume {ckpt}: {exc}") from None
            self.backend.sync(self.model, self.policy_version)
            self.writer.truncate_after(self.step)
            if self.alerts is not None:
                self.alerts.replay(self.writer.metrics_path)
            self._write(f"passband: resuming from {ckpt} (step {self.step})")
        else:
            random.seed(c.seed)
            np.random.seed(c.seed)
            torch.manual_seed(c.seed)
            self.writer.start_fresh()
            # the first rollout too comes from the weights being trained, whatever the backend
            # was built from (an engine loaded from a path, a backend handed in)
            self.backend.sync(self.model, self.policy_version)
        self.writer.write_config(c.to_dict())  # on resume: the settings the run continues with

    def _data_digest(self) -> str:
        """SHA-256 of the training prompts in order, as the data gives them (before truncation;
        computed once): the sampler's state is by row position, so a resume on other, reordered
        or more rows must be refused."""
        if getattr(self, "_digest", None) is None:
            whole = getattr(self, "_untruncated", {})
            self._digest = resume.prompts_digest(
                whole.get(i, prompt_of(row)) for i, row in enumerate(self.rows)
            )
        return self._digest

    def _check_resumable(self, state: dict, checkpoint) -> None:
        """Before a checkpoint loads: settings that change what it holds (LoRA, the sampler
        kind) are refused by name, rather than failing the load of every checkpoint as damaged;
        so is a ``max_steps`` below its step (nothing would train, yet config.json would say so)."""
        c = self.config
        resume.check_resumable(
            resume.changed_settings(state.get("config", {}), c.to_dict()), checkpoint
        )
        if state.get("step", 0) > c.max_steps:
            raise ConfigError(
                f"cannot resume {checkpoint}: it is at step {state['step']}, past max_steps = "
                f"{c.max_steps}; raise max_steps to train on, or start a new run"
            )

    def _rows_digest(self) -> str:
        """SHA-256 of every row with all its columns (computed once)."""
        if getattr(self, "_all_digest", None) is None:
            self._all_digest = resume.rows_digest(self.rows)
        return self._all_digest

    def _reward_record(self) -> dict:
        return resume.reward_record(self.scorer.reward, self.scorer.references)

    def save(self) -> None:
        """Atomic checkpoint of what the next step needs; all ranks call, rank 0 writes (all RNGs)."""
        c = self.config
        rngs = self.dist.gather([rng_state()])
        full = {}  # FSDP: every rank takes part in gathering the full states; rank 0 gets them
        if self.dist.sharded:
            full = {
                "model_state": full_model_state(self.model),
                "optimizer_state": full_optimizer_state(self.model, self.optimizer),
            }
        if not self.dist.is_main:
            return self.dist.barrier()
        state = {
            "step": self.step,
            "policy_version": self.policy_version,
            "elapsed_s": self.elapsed_s,
            "short_batches": self._short_batches,
            "sampler": sampler_state(self.sampler),
            "config": c.to_dict(),
            "data": {
                "rows": len(self.rows),
                "prompts_sha256": self._data_digest(),
                "rows_sha256": self._rows_digest(),
            },
            "reward": self._reward_record(),
        }
        with _interrupt_after():  # Ctrl-C mid-write broke torch.save with a RuntimeError
            save_checkpoint(
                c.output_dir,
                self.step,
                model=self.model,
                tokenizer=self.tokenizer,
                optimizer=self.optimizer,
                scheduler=self.scheduler,
                state=state,
                keep=c.keep_checkpoints,
                rank_rngs=rngs if self.dist.enabled else None,
                **full,
            )
            self.writer.write_curriculum(c.band, sampler_estimates(self.sampler))
        self.dist.barrier()


@contextlib.contextmanager
def _interrupt_after():
    """Hold a Ctrl-C (SIGINT) until the block is done, then raise ``KeyboardInterrupt``: a
    checkpoint being written is finished, not broken off. Only the main thread can take signals;
    elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
    if caught:
        raise KeyboardInterrupt
