"""Sharded training (FSDP2, ``torch.distributed.fsdp.fully_shard``) for models that do not fit on one GPU.

With ``distributed = "fsdp"`` (or ``accelerate launch --use_fsdp``, which sets
``ACCELERATE_USE_FSDP``) every rank holds 1/N of the parameters, gradients and AdamW state:
- each decoder layer (the model's ``_no_split_modules`` classes) is one FSDP unit and the root
  (embeddings, final norm, a tied LM head) another, so a forward gathers one layer at a time;
- generation with Hugging Face ``generate`` runs on *gathered* weights (``unsharded``): one
  all-gather before the rollout phase, then every rank decodes on its own, for as many tokens as
  its prompts need, with no collective per token (ranks finish at different lengths; a per-token
  gather would deadlock or force ``synced_gpus``). The full weights are held only while
  generating, as a colocated vLLM engine would hold them anyway;
- every forward is a collective, so every rank runs the same number of micro-batches
  (the trainer pads a short rank with fully masked ones);
- a checkpoint is one full, unsharded ``save_pretrained`` model plus a full optimizer state keyed
  by parameter name: rank 0 writes it, any number of ranks (or one process, or DDP) resumes it;
- vLLM weight sync streams the full tensors one at a time (``full_tensor`` per parameter).
On CUDA with ``bf16`` the gathered parameters are bf16 and gradients are reduced in fp32.
Not supported together with LoRA (adapters are small enough for DDP).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import torch

__all__ = [
    "resolve_strategy",
    "shard_model",
    "is_fsdp",
    "unsharded",
    "full_model_state",
    "full_optimizer_state",
    "load_optimizer_state",
    "load_model_state",
    "full_tensor",
    "STRATEGIES",
]

STRATEGIES = ("auto", "ddp", "fsdp")


def resolve_strategy(name: str) -> str:
    """``ddp`` or ``fsdp``; ``auto`` follows ``accelerate launch`` (``ACCELERATE_USE_FSDP``)."""
    if name not in STRATEGIES:
        raise ValueError(f"distributed = {name!r}: choose one of {', '.join(STRATEGIES)}")
    if name != "auto":
        return name
    use = os.environ.get("ACCELERATE_USE_FSDP", "").strip().lower()
    return "fsdp" if use in ("1", "true", "yes") else "ddp"


def is_fsdp(model: Any) -> bool:
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


def shard_model(model: torch.nn.Module, *, bf16: bool = False) -> torch.nn.Module:
    """Shard ``model`` in place, one unit per decoder layer plus the root; returns it."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    kwargs: dict[str, Any] = {}
    if bf16 and torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        kwargs["mp_policy"] = MixedPrecisionPolicy(
            param_dtype=torch.bfloat16, reduce_dtype=torch.float32
        )
    for layer in _layers(model):
        fully_shard(layer, **kwargs)
    # FSDP2 keeps the root's weights (embeddings, LM head) gathered from forward to backward by
    # default; the reference model never runs backward, so it would hold them gathered for good.
    fully_shard(model, reshard_after_forward=True, **kwargs)
    return model


def _layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The repeated blocks to shard one by one: the model's ``_no_split_modules`` classes."""
    names = set(getattr(model, "_no_split_modules", None) or ())
    found = [m for m in model.modules() if type(m).__name__ in names and m is not model]
    if found:
        return found
    # No declaration: the largest ModuleList (the layer stack of most architectures).
    lists = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList)]
    return list(max(lists, key=len)) if lists else []


def _units(model: torch.nn.Module) -> list:
    from torch.distributed.fsdp import FSDPModule

    return [m for m in model.modules() if isinstance(m, FSDPModule)]


@contextlib.contextmanager
def unsharded(model: torch.nn.Module) -> Iterator[None]:
    """Hold ``model``'s full weights on every rank (one all-gather) so it runs without collectives.

    Every rank must enter together; inside, ranks may call the model any number of times.
    A model that is not sharded passes through unchanged.
    """
    if not is_fsdp(model):
        yield
        return
    units = _units(model)
    for unit in units:
        unit.set_reshard_after_forward(False)
        unit.unshard()
    try:
        yield
    finally:
        for unit in units:
            unit.reshard()
            unit.set_reshard_after_forward(True)


def full_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """A DTensor shard gathered into the whole tensor (collective); plain tensors pass through."""
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor


def _options(**kwargs):
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    return StateDictOptions(full_state_dict=True, **kwargs)


def full_model_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The unsharded state dict on CPU, on rank 0 (other ranks get ``{}``). Collective."""
    from torch.distributed.checkpoint.state_dict import get_model_state_dict

    state = get_model_state_dict(model, options=_options(cpu_offload=True))
    owners = dict(model.named_parameters())  # one name per parameter: tied aliases are left out
    aliases = {n for n, _ in model.named_parameters(remove_duplicate=False) if n not in owners}
    return {k: v for k, v in state.items() if k not in aliases}  # as save_pretrained writes them


def full_optimizer_state(model: torch.nn.Module, optimizer) -> dict[str, Any]:
    """The optimizer state keyed by parameter name, unsharded, on rank 0. Collective."""
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    return get_optimizer_state_dict(model, optimizer, options=_options(cpu_offload=True))


def load_model_state(model: torch.nn.Module, weights: dict[str, torch.Tensor]) -> None:
    """Load a full state dict (every rank holds it) into the sharded model."""
    from torch.distributed.checkpoint.state_dict import set_model_state_dict

    set_model_state_dict(model, weights, options=_options(strict=False))


def load_optimizer_state(model: torch.nn.Module, optimizer, state: dict[str, Any]) -> None:
    """Load a full, name-keyed optimizer state into the sharded optimizer."""
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

    set_optimizer_state_dict(model, optimizer, state, options=_options())
