"""Load a causal LM and its tokenizer from objects or local paths (nothing is downloaded)."""

from __future__ import annotations

import os
from typing import Any

from passband.errors import ConfigError

__all__ = [
    "load_model_and_tokenizer",
    "disable_dropout",
    "frozen_copy",
    "weights_stamp",
    "same_weights",
]


def load_model_and_tokenizer(
    model: Any, tokenizer: Any = None, no_dropout: bool = False, *, dtype: str = "float32"
) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from objects or local directories.

    A path is loaded with ``AutoModelForCausalLM`` / ``AutoTokenizer`` with ``local_files_only``,
    so a typo fails fast with the path in the message instead of trying the Hub. The tokenizer
    defaults to the model's directory. ``dtype`` defaults to float32 because AdamW needs full
    precision master weights (bf16 autocast gives the speed); pass ``"auto"`` for inference only.
    ``no_dropout``: switch the model's dropout off (``disable_dropout``).
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = model if isinstance(model, (str, os.PathLike)) else None
    if model_dir is not None:
        model = AutoModelForCausalLM.from_pretrained(
            local_dir(model_dir, "model"), local_files_only=True, dtype=dtype
        )
    if tokenizer is None:
        if model_dir is None:
            raise ConfigError("a tokenizer is required when the model is given as an object")
        tokenizer = model_dir
    if isinstance(tokenizer, (str, os.PathLike)):
        tokenizer = AutoTokenizer.from_pretrained(
            local_dir(tokenizer, "tokenizer"), local_files_only=True
        )
    if no_dropout:
        disable_dropout(model)
    return model, tokenizer


def disable_dropout(model: Any) -> int:
    """Switch off, in place, everything that makes ``model`` run differently in train mode:
    dropout modules (p = 0), and numbers above 0 in module attributes and config keys that name a
    dropout or a jitter (Qwen's ``attention_dropout``, OPT's ``dropout``, ``layerdrop``, MoE
    ``router_jitter_noise``). The update then scores completions with the distribution that
    sampled them: with dropout on, the ratio and the KL are noise even when nothing changed
    (``clip_fraction`` 0.35 at a learning rate of 0 with ``attention_dropout = 0.3``). Returns
    how many values it zeroed."""
    import torch

    zeroed = 0
    for module in model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd) and module.p > 0:
            module.p, zeroed = 0.0, zeroed + 1
        for name, value in list(vars(module).items()):
            if _drops(name, value):
                setattr(module, name, 0.0)
                zeroed += 1
    configs = [getattr(model, "config", None)]
    text = getattr(configs[0], "get_text_config", None)
    configs += [text()] if callable(text) else []
    for config in configs:
        for name, value in list(vars(config).items()) if config is not None else []:
            if _drops(name, value):
                setattr(config, name, 0.0)
                zeroed += 1
    return zeroed


def _drops(name: str, value: Any) -> bool:
    key = name.lower()
    return (
        ("drop" in key or "jitter" in key)
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value > 0
    )


def local_dir(path: Any, what: str) -> str:
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise ConfigError(
            f"{what} path {path!r} is not a local directory; passband loads "
            "models from disk only (download it first, e.g. with "
            "`huggingface-cli download`)"
        )
    return path


def frozen_copy(model: Any) -> Any:
    """An independent copy of ``model`` in eval mode with no trainable parameters (the KL reference)."""
    import copy

    ref = copy.deepcopy(model).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    return ref


def weights_stamp(model: Any) -> list | None:
    """What ``same_weights`` compares later: every parameter (a weak reference), its in-place
    version counter, storage address, dtype and device. None when the model may run differently in
    train and eval mode: a dropout module, or any number above 0 under a config key naming a
    dropout or a jitter (OPT's functional ``dropout``, Falcon's ``hidden_dropout``, ``layerdrop``,
    MoE ``router_jitter_noise``, nested configs included), or no config to tell.

    The trainer takes a stamp when it copies the KL reference and compares it at each update: while
    nothing wrote the weights, the reference's log-probs are the policy's own, and its forward is
    skipped. An optimizer step, a checkpoint load and any other in-place write bump a version; a
    cast (``.to(dtype)``, ``.half()``) or ``p.data = t`` changes the storage; replaced parameters
    (FSDP's sharding) are other objects. Not seen: an in-place op through ``p.data`` (its version
    counter is not the parameter's)."""
    import weakref

    import torch

    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "to_dict") or _may_drop(config.to_dict()):
        return None
    if any(isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0 for m in model.modules()):
        return None
    return [(weakref.ref(p), *_state(p)) for p in model.parameters()]


def same_weights(model: Any, stamp: list | None) -> bool:
    """Whether ``model``'s parameters are still the very ones ``stamp`` saw, unwritten."""
    if stamp is None:
        return False
    params = list(model.parameters())
    return len(params) == len(stamp) and all(
        entry[0]() is p and entry[1:] == _state(p) for p, entry in zip(params, stamp)
    )


def _state(p) -> tuple:
    try:
        address = p.data_ptr()
    except (RuntimeError, TypeError):  # a tensor subclass without one storage: never equal
        address = object()
    return p._version, address, p.dtype, p.device


def _may_drop(settings: Any) -> bool:
    """A number above 0 under a key that names a dropout or a jitter, at any depth."""
    if isinstance(settings, dict):
        return any(
            (
                isinstance(k, str)
                and ("drop" in k.lower() or "jitter" in k.lower())
                and isinstance(v, (int, float))
                and v > 0
            )
            or _may_drop(v)
            for k, v in settings.items()
        )
    if isinstance(settings, (list, tuple)):
        return any(_may_drop(v) for v in settings)
    return False
