"""Load a causal LM and its tokenizer from objects or local paths (nothing is downloaded)."""

from __future__ import annotations

import os
from typing import Any

from passband.errors import ConfigError

__all__ = ["load_model_and_tokenizer", "frozen_copy", "weights_stamp"]


def load_model_and_tokenizer(
    model: Any, tokenizer: Any = None, *, dtype: str = "float32"
) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from objects or local directories.

    A path is loaded with ``AutoModelForCausalLM`` / ``AutoTokenizer`` with ``local_files_only``,
    so a typo fails fast with the path in the message instead of trying the Hub. The tokenizer
    defaults to the model's directory. ``dtype`` defaults to float32 because AdamW needs full
    precision master weights (bf16 autocast gives the speed); pass ``"auto"`` for inference only.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = model if isinstance(model, (str, os.PathLike)) else None
    if model_dir is not None:
        model = AutoModelForCausalLM.from_pretrained(
            _local_dir(model_dir, "model"), local_files_only=True, dtype=dtype
        )
    if tokenizer is None:
        if model_dir is None:
            raise ConfigError("a tokenizer is required when the model is given as an object")
        tokenizer = model_dir
    if isinstance(tokenizer, (str, os.PathLike)):
        tokenizer = AutoTokenizer.from_pretrained(
            _local_dir(tokenizer, "tokenizer"), local_files_only=True
        )
    return model, tokenizer


def _local_dir(path: Any, what: str) -> str:
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


def weights_stamp(model: Any) -> tuple | None:
    """Every parameter's identity and in-place version counter, or None for a model with active
    dropout. Two equal stamps of a dropout-free model mean that nothing wrote its weights in
    between: an optimizer step, a checkpoint load and any other in-place write bump a version,
    and replaced parameters (FSDP's sharding, a wrapper) change the identities. The trainer
    compares the policy's stamp with the one taken when the KL reference was copied: while they
    are equal the reference's log-probs are the policy's own, and its forward is skipped. With
    dropout the policy (train mode) and the reference (eval mode) differ even on equal weights."""
    import torch

    config = getattr(model, "config", None)
    if any(isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0 for m in model.modules()):
        return None
    if any(float(getattr(config, k, 0) or 0) > 0 for k in ("attention_dropout", "attn_pdrop")):
        return None
    return tuple((id(p), p._version) for p in model.parameters())
