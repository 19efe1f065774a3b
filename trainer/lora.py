"""LoRA mode: train low-rank adapters only, and use the base model itself as the KL reference.

Full fine-tuning with a KL term holds two copies of the model (policy and frozen reference) plus
fp32 gradients and two AdamW moments for every weight. With LoRA the frozen base weights are
shared: the policy is ``base + adapters``, and the reference is the *same module* run with the
adapters disabled (``peft``'s ``disable_adapter()``), so no second copy exists. Gradients and
optimizer state exist only for the adapters (well under 1% of the weights at r = 16).

What this module does not do: QLoRA (4-bit base weights), DoRA, or several adapters at once.
peft is imported inside the functions, so importing this module needs only torch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "LoraSettings",
    "apply_lora",
    "lora_from_config",
    "is_lora",
    "adapters_disabled",
    "load_adapter_weights",
    "trainable_share",
]


@dataclass(frozen=True)
class LoraSettings:
    """Adapter shape. Defaults follow common GRPO-with-LoRA recipes (r 16-64, alpha = 2r)."""

    r: int = 16
    """Adapter rank."""
    alpha: float = 32.0
    """Scale = alpha / r."""
    dropout: float = 0.0
    """0: the policy and its log-probs stay deterministic."""
    target_modules: tuple[str, ...] = ("all-linear",)
    """peft module names; "all-linear" = every Linear layer except lm_head."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "target_modules", tuple(self.target_modules))
        if not (isinstance(self.r, int) and self.r >= 1):
            raise ValueError(
                f"LoraSettings.r = {self.r!r} is out of range: an integer >= 1 (typical 8 - 64)"
            )
        if not self.alpha > 0:
            raise ValueError(
                f"LoraSettings.alpha = {self.alpha!r} is out of range: > 0 (typical 2 x r)"
            )
        if not 0 <= self.dropout < 1:
            raise ValueError(
                f"LoraSettings.dropout = {self.dropout!r} is out of range: 0 <= dropout < 1"
            )
        names = self.target_modules
        if not names or not all(isinstance(t, str) and t for t in names):
            raise ValueError(
                f"LoraSettings.target_modules = {self.target_modules!r}: give module "
                "names such as ['q_proj', 'v_proj'] or ['all-linear']"
            )


def apply_lora(model, settings: LoraSettings = LoraSettings()):
    """Wrap a causal LM in a peft LoRA model whose only trainable weights are the adapters."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise ImportError("LoRA mode needs peft: pip install 'passband[lora]'") from exc
    targets: Any = settings.target_modules
    if targets == ("all-linear",):
        targets = "all-linear"  # peft's shorthand is a plain string, not a list entry
    config = LoraConfig(
        r=settings.r,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=targets,
        task_type="CAUSAL_LM",
        bias="none",
    )
    return get_peft_model(model, config)


def lora_from_config(model, config):
    """``model`` wrapped by ``apply_lora`` when ``config.lora_r > 0`` (``GRPOConfig`` / TOML).

    A model that already is a peft model is returned as it is: its own adapters win over the
    config's. ``lora_r = 0`` (the default) means full fine-tuning.
    """
    if not config.lora_r or is_lora(model):
        return model
    return apply_lora(
        model,
        LoraSettings(
            r=config.lora_r, alpha=config.lora_alpha, target_modules=config.lora_target_modules
        ),
    )


def is_lora(model) -> bool:
    """True for a peft model (also when wrapped by DDP / accelerate in ``.module``)."""
    model = getattr(model, "module", model)
    return hasattr(model, "disable_adapter") and hasattr(model, "get_base_model")


@contextlib.contextmanager
def adapters_disabled(model) -> Iterator[None]:
    """Run ``model`` as its frozen base (the KL reference) inside the block.

    Raises for a non-peft model: a full fine-tune has no base to fall back to and needs the
    trainer's frozen reference copy instead.
    """
    model = getattr(model, "module", model)
    if not is_lora(model):
        raise ValueError(
            "adapters_disabled needs a peft model; a full fine-tune needs a frozen "
            "reference copy instead"
        )
    with model.disable_adapter():
        yield


def load_adapter_weights(model, model_dir: str | Path) -> None:
    """Load adapters saved by ``PeftModel.save_pretrained`` into a live peft model (resume).

    ``save_pretrained`` strips the adapter name from the keys (``lora_A.weight``), so a plain
    ``load_state_dict`` would miss every adapter; peft's loader maps the names back.
    """
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    path = Path(model_dir) / "adapter_model.safetensors"
    if not path.exists():
        raise FileNotFoundError(
            f"no adapter_model.safetensors in {model_dir}: was this "
            "checkpoint written by a LoRA run?"
        )
    result = set_peft_model_state_dict(getattr(model, "module", model), load_file(str(path)))
    unexpected = list(getattr(result, "unexpected_keys", []) or [])
    if unexpected:
        raise RuntimeError(
            f"adapter checkpoint {model_dir} does not match the model: unexpected {unexpected[:5]}"
        )


def trainable_share(model) -> tuple[int, int]:
    """(trainable, total) parameter counts, for the start-of-run summary line."""
    params = list(getattr(model, "module", model).parameters())
    return sum(p.numel() for p in params if p.requires_grad), sum(p.numel() for p in params)
