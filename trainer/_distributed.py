"""Multi-process training (``torchrun`` / ``accelerate launch``): who rolls out what, and what is shared.

The design keeps a run's result independent of the number of processes:
- every rank holds the same sampler (curriculum) and draws the same prompt list each round;
  the list is cut into chunks of ``rollout_batch_size // group_size`` prompts (one ``generate``
  call each, as in one process) and rank r rolls out and scores a contiguous run of whole chunks
  (``Dist.shard_chunks``), so groups stay whole on one rank;
- the groups (token ids, verdicts) are all-gathered, so every rank observes every group in the
  same order, makes the same keep/drop and refill decisions and writes identical curriculum state;
- each prompt is sampled under its own seed, drawn from (seed, step, round, position in the
  round) by ``group_seed``, never from a process-wide stream; every backend's ``rollout`` makes
  a prompt's samples depend on its seed alone (``trainer/rollout.py``), so which rank samples it
  does not matter: N ranks give one process's samples, bit for bit;
- the update is split by sequence across ranks; the loss normaliser (tokens, sequences) is the
  global batch's, each rank's loss is its share of the global loss, and DDP's gradient average is
  undone by scaling that share by the world size: the summed gradient equals one process's;
- logging sums (loss, KL, tokens...) are all-reduced; rank 0 alone writes files and checkpoints,
  and each rank's RNG state is kept in the checkpoint.

One process is the same code with ``world_size == 1``: every collective is then a no-op.
``strategy = "fsdp"`` shards parameters, gradients and optimizer state instead of replicating
them (``passband.trainer._fsdp``); everything above holds for it too. Not here: DeepSpeed.
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from passband.trainer._refill import rollout_rows

__all__ = ["Dist", "init_distributed", "finish_distributed", "warn_if_unbalanced", "group_seed"]


@dataclass(frozen=True)
class Dist:
    """This process's place in the job; ``Dist()`` is a single process."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    strategy: str = "ddp"  # ddp | fsdp (only matters with several ranks)

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def sharded(self) -> bool:
        """Parameters are sharded across ranks (FSDP): every forward is a collective."""
        return self.enabled and self.strategy == "fsdp"

    def device(self) -> torch.device:
        """The accelerator this rank owns (CPU when there is none)."""
        if torch.cuda.is_available():
            return torch.device(
                "cuda", self.local_rank if self.enabled else torch.cuda.current_device()
            )
        return torch.device("cpu")

    def shard(self, n: int) -> range:
        """This rank's contiguous slice of positions ``0..n-1``; slices in rank order cover all."""
        return range(n * self.rank // self.world_size, n * (self.rank + 1) // self.world_size)

    def shard_chunks(self, n: int, per_chunk: int) -> list[range]:
        """This rank's share of positions ``0..n-1`` cut into chunks of ``per_chunk``.

        The chunks do not depend on the number of ranks; only who gets them does. With fewer
        chunks than ranks some ranks roll out nothing that round (see ``warn_if_unbalanced``).
        """
        chunks = [range(i, min(i + per_chunk, n)) for i in range(0, n, per_chunk)]
        return [chunks[i] for i in self.shard(len(chunks))]

    def gather(self, items: list) -> list:
        """Every rank's ``items`` (picklable), concatenated in rank order, on every rank."""
        if not self.enabled:
            return list(items)
        out: list[Any] = [None] * self.world_size
        torch.distributed.all_gather_object(out, list(items))
        return [x for part in out for x in part]

    def sum(self, values: Sequence[float]) -> list[float]:
        """Element-wise sum over ranks (float64, so token counts stay exact)."""
        return self._all_reduce(values, "SUM")

    def max(self, values: Sequence[float]) -> list[float]:
        """Element-wise maximum over ranks."""
        return self._all_reduce(values, "MAX")

    def _all_reduce(self, values: Sequence[float], op: str) -> list[float]:
        if not self.enabled or not values:
            return [float(v) for v in values]
        t = torch.tensor(
            [float(v) for v in values], dtype=torch.float64, device=self._comm_device()
        )
        torch.distributed.all_reduce(t, op=getattr(torch.distributed.ReduceOp, op))
        return t.tolist()

    def broadcast_from_main(self, module: torch.nn.Module) -> None:
        """Give every rank rank 0's parameters and buffers.

        DDP does this when it wraps; FSDP does not, and under ``accelerate launch --use_fsdp``
        (``FSDP_CPU_RAM_EFFICIENT_LOADING``) ``from_pretrained`` loads real weights on rank 0 only
        and zeros elsewhere. Called before the reference copy is taken, so it is right too.
        """
        if not self.enabled:
            return
        with torch.no_grad():
            for tensor in [*module.parameters(), *module.buffers()]:
                torch.distributed.broadcast(tensor.data, src=0)

    def barrier(self) -> None:
        if self.enabled:
            torch.distributed.barrier()

    def wrap(self, model: torch.nn.Module, *, bf16: bool = False) -> torch.nn.Module:
        """The module the loss is computed with: DDP around ``model`` when there are several ranks;
        under FSDP ``model`` itself, sharded in place (so build the optimizer afterwards)."""
        if not self.enabled:
            return model
        if self.sharded:
            from passband.trainer._fsdp import shard_model

            return shard_model(model, bf16=bf16)
        from torch.nn.parallel import DistributedDataParallel

        device = next(model.parameters()).device
        return DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None
        )

    def no_sync(self, module: torch.nn.Module, skip: bool):
        """DDP: accumulate locally (no all-reduce) for every micro-batch but the last one.
        FSDP reduce-scatters every micro-batch instead: skipping would keep whole unsharded
        gradients on each rank, the memory sharding is there to save."""
        if skip and hasattr(module, "no_sync"):
            return module.no_sync()
        return contextlib.nullcontext()

    def generation(self, model: torch.nn.Module, uses_model: bool = True):
        """Around a rollout phase: a sharded model's full weights are gathered once (all ranks
        enter together) so each rank decodes without per-token collectives."""
        if self.sharded and uses_model:
            from passband.trainer._fsdp import unsharded

            return unsharded(model)
        return contextlib.nullcontext()

    def micro_batch_count(self, n_sequences: int, grad_accum: int) -> int | None:
        """Under FSDP every rank must run the same number of forwards: the count all use.
        ``None`` (DDP, one process): each rank splits its own share as it likes."""
        if not self.sharded:
            return None
        return max(1, min(grad_accum, -(-n_sequences // self.world_size)))

    def _comm_device(self) -> torch.device:
        nccl = torch.distributed.get_backend() == "nccl"
        return torch.device("cuda", torch.cuda.current_device()) if nccl else torch.device("cpu")


def init_distributed(strategy: str = "auto") -> Dist:
    """Join the process group that ``torchrun`` / ``accelerate launch`` describe in the environment.

    A group the caller (or accelerate's ``Accelerator``) already initialised is used as it is.
    Without ``WORLD_SIZE`` > 1 this is a single process and nothing is initialised.
    strategy: ``ddp``, ``fsdp`` or ``auto`` (FSDP when ``accelerate launch --use_fsdp`` set
    ``ACCELERATE_USE_FSDP``).
    """
    from passband.trainer._fsdp import resolve_strategy

    strategy = resolve_strategy(strategy)
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        local = int(os.environ.get("LOCAL_RANK", dist.get_rank()))
        return Dist(dist.get_rank(), dist.get_world_size(), local, strategy)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Dist(strategy=strategy)
    if not dist.is_available():
        raise RuntimeError("WORLD_SIZE > 1 but this torch build has no torch.distributed")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        torch.cuda.set_device(local)
        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    else:
        dist.init_process_group("gloo")
    return Dist(dist.get_rank(), dist.get_world_size(), local, strategy)


def finish_distributed(trainer=None) -> None:
    """Leave the process group (``passband train`` calls this once training is over).

    A rank once hung at exit in torch's gloo teardown: the DDP reducer, freed after the group
    was destroyed, took the group down with it and joined gloo's worker threads while holding the
    GIL, and a worker was waiting for the GIL to release the last collective's tensor. So the
    trainer's DDP wrapper is dropped while the group still lives, and the workers get a moment
    without the GIL before the group is destroyed."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        if trainer is not None and getattr(trainer, "policy", None) is not trainer.model:
            trainer.policy = trainer.model  # the reducer goes now, not at the function's return
        gc.collect()
        time.sleep(0.2)  # sleeping releases the GIL: the workers finish with what they hold
        torch.distributed.destroy_process_group()


def warn_if_unbalanced(dist: Dist, config) -> None:
    """Warn (rank 0) when a step's prompts make fewer generation chunks than there are ranks."""
    G, n = config.group_size, config.prompts_per_step
    chunks = -(-n // max(1, rollout_rows(config, dist.world_size) // G))
    if not dist.is_main or chunks >= dist.world_size:
        return
    fit = G * -(-n // dist.world_size)
    warnings.warn(
        f"prompts_per_step = {n} makes {chunks} generation chunk(s) of "
        f"rollout_batch_size // group_size prompts for {dist.world_size} ranks, so some "
        f"ranks sit idle while others generate; set rollout_batch_size <= {fit} to "
        "spread the generation over the ranks"
    )


def group_seed(seed: int, step: int, round_: int, position: int) -> int:
    """The sampling seed of one prompt: a function of where it is, not of who samples it."""
    return int(np.random.SeedSequence([seed, step, round_, position]).generate_state(1)[0])
