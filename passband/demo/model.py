"""The demo policy: a tiny Qwen2 causal LM built from a config, so nothing is downloaded.

A few hundred thousand parameters: big enough to learn multi-digit arithmetic, small enough that
rollouts and updates take milliseconds on one CPU core. It is a stock ``Qwen2ForCausalLM``, so
everything the trainer does with it works the same on any Hugging Face causal LM.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ModelSize", "build_model"]


@dataclass(frozen=True)
class ModelSize:
    """Shape of the tiny model; the defaults are what the demo uses."""

    hidden_size: int = 128
    num_layers: int = 2
    num_heads: int = 4
    intermediate_size: int = 384
    max_positions: int = 64

    def __post_init__(self) -> None:
        for name in (
            "hidden_size",
            "num_layers",
            "num_heads",
            "intermediate_size",
            "max_positions",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"ModelSize.{name} must be >= 1, got {getattr(self, name)}")
        if self.hidden_size % self.num_heads:
            raise ValueError(
                f"ModelSize.hidden_size ({self.hidden_size}) must be divisible by num_heads ({self.num_heads})"
            )


def build_model(tokenizer, size: ModelSize = ModelSize(), *, seed: int = 0):
    """A freshly initialised ``Qwen2ForCausalLM`` whose vocabulary matches ``tokenizer``.

    ``seed`` fixes the initial weights, so a demo run is reproducible end to end.
    """
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=size.hidden_size,
        intermediate_size=size.intermediate_size,
        num_hidden_layers=size.num_layers,
        num_attention_heads=size.num_heads,
        num_key_value_heads=size.num_heads,
        max_position_embeddings=size.max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model
