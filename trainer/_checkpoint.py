"""Atomic, resumable checkpoints: everything needed to continue a run bit for bit on CPU.

``checkpoints/step_<N>/`` holds the model (``save_pretrained`` format, usable on its own), the
tokenizer, ``optimizer.pt``, ``scheduler.pt``, ``rng.pt`` (python, numpy, torch, cuda) and
``state.json`` (step, policy version, sampler/curriculum state, data position, elapsed time).
Under several processes rank 0 writes the checkpoint and ``rng_ranks.pt`` holds every rank's RNG
state; each rank restores its own. A sharded (FSDP) run hands in the gathered, full model and
optimizer states; its optimizer state is keyed by parameter name, and loading converts between
that and the index-keyed form, so a checkpoint resumes under FSDP, DDP or one process alike.
A checkpoint is written into a temporary directory and renamed into place, so a run killed
mid-save leaves the previous checkpoint intact; only the newest ``keep`` are kept. Its
``manifest.json`` (``passband.trainer._manifest``) holds every file's size and SHA-256 and is
checked before anything is loaded; ``load_latest_checkpoint`` names a damaged newest checkpoint
in a warning and falls back to the one before it. A write that fails removes its temporary
directory, and a full disk says "no space left on <path>".
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pickle
import random
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from passband.errors import CheckpointError, ConfigError, DiskFullError
from passband.trainer._manifest import verify_manifest, write_manifest

__all__ = [
    "save_checkpoint",
    "latest_checkpoint",
    "load_checkpoint",
    "load_latest_checkpoint",
    "rng_state",
    "set_rng_state",
]

_NAME = re.compile(r"^step_(\d+)$")


def rng_state() -> dict[str, Any]:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    output_dir: str | Path,
    step: int,
    *,
    model,
    tokenizer,
    optimizer,
    scheduler,
    state: dict[str, Any],
    keep: int,
    rank_rngs: list | None = None,
    model_state: dict | None = None,
    optimizer_state: dict | None = None,
) -> Path:
    """Write ``checkpoints/step_<step>`` atomically and prune to the newest ``keep``.

    rank_rngs: ``rng_state()`` of every rank, in rank order (multi-process runs).
    model_state, optimizer_state: full states gathered from a sharded model (FSDP); by default
    the live model's and optimizer's own.
    A write that fails removes its temporary directory; running out of space raises
    ``DiskFullError`` ("no space left on <path>") and leaves the previous checkpoints as they were.
    """
    root = Path(output_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step_{step}"
    tmp = root / f".tmp_step_{step}_{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _write_files(
            tmp,
            model=model,
            tokenizer=tokenizer,
            optimizer=optimizer,
            scheduler=scheduler,
            state=state,
            rank_rngs=rank_rngs,
            model_state=model_state,
            optimizer_state=optimizer_state,
        )
    except (OSError, RuntimeError) as exc:
        full = _out_of_space(exc, root)
        shutil.rmtree(tmp, ignore_errors=True)
        if full:
            raise DiskFullError(
                f"no space left on {root} while writing checkpoint step_{step}; "
                "free some space and rerun with --resume (the previous "
                "checkpoint is intact)"
            ) from exc
        raise
    if final.exists():  # re-saving a step after a resume: move the old one aside first
        old = root / f".old_step_{step}_{os.getpid()}"
        os.rename(final, old)
        shutil.rmtree(old, ignore_errors=True)
    os.rename(tmp, final)
    _prune(root, keep)
    return final


def _write_files(
    tmp: Path,
    *,
    model,
    tokenizer,
    optimizer,
    scheduler,
    state,
    rank_rngs,
    model_state,
    optimizer_state,
) -> None:
    with _quiet_hf_progress():
        if model_state is None:
            model.save_pretrained(tmp / "model")
        else:
            model.save_pretrained(tmp / "model", state_dict=model_state)
            _fix_architectures(tmp / "model", model)
    if tokenizer is not None and hasattr(tokenizer, "save_pretrained"):
        tokenizer.save_pretrained(tmp / "model")
    _save(
        optimizer_state if optimizer_state is not None else optimizer.state_dict(),
        tmp / "optimizer.pt",
    )
    _save(scheduler.state_dict(), tmp / "scheduler.pt")
    _save(rng_state(), tmp / "rng.pt")
    if rank_rngs is not None:
        _save(rank_rngs, tmp / "rng_ranks.pt")
    (tmp / "state.json").write_text(json.dumps(state))
    write_manifest(tmp)


def _save(obj: Any, path: Path) -> None:
    # Through a Python file object, so a full disk surfaces as OSError(ENOSPC) rather than
    # torch's own "basic_ios::clear: iostream error".
    with open(path, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())


def _out_of_space(exc: BaseException, root: Path) -> bool:
    """Did this write fail for lack of space? The errno when there is one; libraries that hide
    it (safetensors, tokenizers) leave a nearly full file system as the evidence."""
    seen = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno == errno.ENOSPC:
            return True
        seen = seen.__cause__ or seen.__context__
    try:
        return shutil.disk_usage(root).free < 1 << 20
    except OSError:
        return False


def _fix_architectures(model_dir: Path, model) -> None:
    """FSDP swaps a module's class for ``FSDP<Name>``; the saved config must name the real one."""
    path = model_dir / "config.json"
    if not path.exists():
        return
    config = json.loads(path.read_text())
    real = [
        c.__name__
        for c in type(model).__mro__
        if c.__name__ != type(model).__name__
        and not c.__name__.startswith("FSDP")
        and c.__module__.startswith("transformers.")
    ]
    if real and config.get("architectures") != real[:1]:
        config["architectures"] = real[:1]
        path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


@contextlib.contextmanager
def _quiet_hf_progress():
    """save_pretrained draws its own bar ("Writing model shards"); it would break ours."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


def _steps(root: Path) -> list[tuple[int, Path]]:
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := _NAME.match(p.name))]
    return sorted(f for f in found if (f[1] / "state.json").exists())


def _prune(root: Path, keep: int) -> None:
    for _, path in _steps(root)[:-keep]:
        shutil.rmtree(path, ignore_errors=True)
    for leftover in root.glob(".tmp_step_*"):  # from runs killed mid-save
        if not leftover.name.endswith(f"_{os.getpid()}"):
            shutil.rmtree(leftover, ignore_errors=True)


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    steps = _steps(Path(output_dir) / "checkpoints")
    return steps[-1][1] if steps else None


# What a damaged file raises inside torch / safetensors / json when there is no manifest to check.
_DAMAGE = (
    OSError,
    EOFError,
    ValueError,
    RuntimeError,
    KeyError,
    CheckpointError,
    pickle.UnpicklingError,
)


def load_latest_checkpoint(output_dir: str | Path, **kwargs) -> tuple[Path, dict[str, Any]] | None:
    """Load the newest checkpoint that is whole; a damaged one is named in a warning and skipped.

    Returns ``(path, state)``, or None when there is no checkpoint at all; ``CheckpointError``
    naming every checkpoint and what is wrong with it when none can be loaded. ``kwargs`` go to
    ``load_checkpoint``.
    """
    candidates = [p for _, p in reversed(_steps(Path(output_dir) / "checkpoints"))]
    problems = []
    for i, path in enumerate(candidates):
        try:
            return path, load_checkpoint(path, **kwargs)
        except _DAMAGE as exc:
            if isinstance(exc, ConfigError):  # ``before_load`` refused it: no damage
                raise
            problems.append(f"{path.name}: {exc}")
            fallback = (
                f"falling back to {candidates[i + 1].name}"
                if i + 1 < len(candidates)
                else "no older checkpoint left"
            )
            warnings.warn(f"checkpoint {path} cannot be loaded ({exc}); {fallback}", stacklevel=2)
    if not candidates:
        return None
    raise CheckpointError(
        f"no checkpoint in {Path(output_dir) / 'checkpoints'} can be loaded: " + "; ".join(problems)
    )


def load_checkpoint(
    path: str | Path, *, model, optimizer, scheduler, rank: int = 0, before_load=None
) -> dict[str, Any]:
    """Restore weights, optimizer, scheduler and RNG states in place; return ``state.json``.

    The files are checked against the checkpoint's manifest first (``CheckpointError`` naming the
    damaged file, with nothing loaded). ``rank`` picks this process's RNG state from a
    multi-process checkpoint. ``before_load(state, path)`` may refuse the checkpoint (a
    ``ConfigError``) before anything is loaded: a setting that changes what it holds.
    """
    path = Path(path)
    verify_manifest(path)
    state = json.loads((path / "state.json").read_text())
    if before_load is not None:
        before_load(state, path)
    from passband.trainer import _fsdp as fsdp
    from passband.trainer.lora import is_lora, load_adapter_weights

    sharded = fsdp.is_fsdp(model)
    if is_lora(model):  # a peft checkpoint holds the adapters only
        load_adapter_weights(model, path / "model")
    else:
        _load_weights(model, path / "model")
    saved = torch.load(path / "optimizer.pt", weights_only=False)
    names = [n for n, p in model.named_parameters() if p.requires_grad]  # the optimizer's order
    if sharded:
        fsdp.load_optimizer_state(model, optimizer, _by_name(saved, names))
    else:
        optimizer.load_state_dict(_by_index(saved, names))
    scheduler.load_state_dict(torch.load(path / "scheduler.pt", weights_only=False))
    set_rng_state(_rng_of_rank(path, rank))
    return state


def _rng_of_rank(path: Path, rank: int) -> dict[str, Any]:
    """This rank's saved RNG state; a rank the saving run did not have starts from rank 0's."""
    ranks = path / "rng_ranks.pt"
    if ranks.exists():
        states = torch.load(ranks, weights_only=False)
        if rank < len(states):
            return states[rank]
    return torch.load(path / "rng.pt", weights_only=False)


def _load_weights(model, model_dir: Path) -> None:
    """Load safetensors shards into the live module (the optimizer keeps its parameter objects)."""
    from safetensors.torch import load_file

    files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no *.safetensors weights in {model_dir}")
    weights: dict[str, torch.Tensor] = {}
    for f in files:
        weights.update(load_file(str(f)))
    from passband.trainer import _fsdp as fsdp

    if fsdp.is_fsdp(model):  # every rank read the full weights; each keeps its shard
        expected = set(model.state_dict())
        missing = [k for k in expected if k not in weights]
        unexpected = [k for k in weights if k not in expected]
        fsdp.load_model_state(model, {k: v for k, v in weights.items() if k in expected})
    else:
        missing, unexpected = model.load_state_dict(weights, strict=False)
    tied = _tied_names(model)
    really_missing = [k for k in missing if k not in tied]
    if really_missing or unexpected:
        raise RuntimeError(
            f"checkpoint {model_dir} does not match the model: missing "
            f"{really_missing[:5]}, unexpected {list(unexpected)[:5]}"
        )


def _by_name(state: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """An optimizer state keyed by parameter name (what FSDP loads); index keys are mapped."""
    if all(isinstance(k, str) for k in state["state"]) and all(
        isinstance(p, str) for g in state["param_groups"] for p in g["params"]
    ):
        return state
    return {
        "state": {names[i]: v for i, v in state["state"].items()},
        "param_groups": [
            {**g, "params": [names[i] for i in g["params"]]} for g in state["param_groups"]
        ],
    }


def _by_index(state: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """An optimizer state keyed by position (``Optimizer.load_state_dict``); names are mapped."""
    if all(isinstance(p, int) for g in state["param_groups"] for p in g["params"]):
        return state
    index = {n: i for i, n in enumerate(names)}
    unknown = [n for g in state["param_groups"] for n in g["params"] if n not in index]
    if unknown:
        raise RuntimeError(
            f"the checkpoint's optimizer state names parameters this model does "
            f"not train: {unknown[:5]}"
        )
    return {
        "state": {index[n]: v for n, v in state["state"].items()},
        "param_groups": [
            {**g, "params": [index[n] for n in g["params"]]} for g in state["param_groups"]
        ],
    }


def _tied_names(model) -> set[str]:
    """Parameter names that share storage with another one (save_pretrained writes them once)."""
    seen: dict[int, str] = {}
    tied: set[str] = set()
    for name, p in model.named_parameters(remove_duplicate=False):
        ptr = id(p)  # tied weights are one Parameter (data_ptr is not defined on FSDP's DTensors)
        if ptr in seen:
            tied.update({name, seen[ptr]})
        seen.setdefault(ptr, name)
    return tied
